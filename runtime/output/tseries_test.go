package output

import (
	"encoding/binary"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

func tsCPU(val, meta int64, epoch uint64) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint64(b[0:], uint64(val))
	binary.LittleEndian.PutUint64(b[8:], uint64(meta))
	binary.LittleEndian.PutUint64(b[16:], epoch)
	return b
}

// TestReduceTseriesSlot: a slot's CPUs combine for the latest epoch among
// them (older epochs and unused CPUs, epoch 0, are ignored), as bpftrace's
// reduce_tseries_value: the last value by timestamp, avg as the sum over
// the count, min/max/sum over the CPUs; no epoch at all gives (0, 0).
func TestReduceTseriesSlot(t *testing.T) {
	cpus := [][]byte{tsCPU(5, 100, 7), tsCPU(9, 90, 7), tsCPU(-4, 300, 6), tsCPU(0, 0, 0), tsCPU(2, 200, 7)}
	for _, c := range []struct {
		agg    int64
		signed bool
		want   int64
	}{
		{types.TseriesLast, true, 2}, // meta 200 is the latest write of epoch 7
		{types.TseriesSum, true, 16},
		{types.TseriesMin, true, 2},
		{types.TseriesMax, true, 9},
	} {
		vt := &types.Type{Kind: types.Tseries, Signed: c.signed, Lhist: [3]int64{1, 4, c.agg}}
		ep, v := reduceTseriesSlot(vt, Entry{PerCPU: cpus})
		if ep != 7 || v != c.want {
			t.Errorf("agg %d: (%d, %d), want (7, %d)", c.agg, ep, v, c.want)
		}
	}
	avg := &types.Type{Kind: types.Tseries, Lhist: [3]int64{1, 4, types.TseriesAvg}}
	if ep, v := reduceTseriesSlot(avg, Entry{PerCPU: [][]byte{tsCPU(10, 3, 2), tsCPU(5, 2, 2)}}); ep != 2 || v != 3 {
		t.Errorf("avg: (%d, %d), want (2, 3)", ep, v)
	}
	if ep, v := reduceTseriesSlot(avg, Entry{PerCPU: [][]byte{tsCPU(10, 3, 0)}}); ep != 0 || v != 0 {
		t.Errorf("unused slot: (%d, %d), want (0, 0)", ep, v)
	}
}
