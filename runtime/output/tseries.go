package output

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang/types"
)

// tseries() maps (bpftrace 0.24): the key is the user key and the slot
// (epoch % num_intervals); each per-CPU value is [value, meta, epoch]
// (compiler: stdlib.genTseries). As bpftrace, a slot's CPUs are combined
// for the latest epoch among them (epoch 0: unused), and a slot without
// any gives epoch 0, value 0.

// tsPoint is one interval of a time series; set is false for an interval
// without a value (printed as "-").
type tsPoint struct {
	epoch uint64
	val   int64
	set   bool
}

// reduceTseriesSlot combines one slot's per-CPU values.
func reduceTseriesSlot(vt *types.Type, e Entry) (epoch uint64, val int64) {
	cpus := e.PerCPU
	if len(cpus) == 0 && e.Value != nil {
		cpus = [][]byte{e.Value}
	}
	le := binary.LittleEndian
	type acc struct{ val, meta int64 }
	byEpoch := map[uint64]*acc{}
	latest := uint64(0)
	agg := vt.Lhist[2]
	for _, v := range cpus {
		if len(v) < 24 {
			continue
		}
		x, meta, ep := int64(le.Uint64(v[0:])), int64(le.Uint64(v[8:])), le.Uint64(v[16:])
		if ep == 0 {
			continue
		}
		latest = max(latest, ep)
		cur := byEpoch[ep]
		if cur == nil {
			byEpoch[ep] = &acc{x, meta}
			continue
		}
		switch agg {
		case types.TseriesLast:
			if uint64(meta) > uint64(cur.meta) {
				cur.val, cur.meta = x, meta
			}
		case types.TseriesAvg:
			cur.val += x
			cur.meta += meta
		case types.TseriesSum:
			cur.val += x
		case types.TseriesMin, types.TseriesMax:
			less := x < cur.val
			if !vt.Signed {
				less = uint64(x) < uint64(cur.val)
			}
			if less == (agg == types.TseriesMin) {
				cur.val = x
			}
		}
	}
	if latest == 0 {
		return 0, 0
	}
	r := byEpoch[latest]
	if agg == types.TseriesAvg && r.meta != 0 {
		if vt.Signed {
			r.val /= r.meta
		} else {
			r.val = int64(uint64(r.val) / uint64(r.meta))
		}
	}
	return latest, r.val
}

// tseriesRows groups a tseries map's slots by user key. Each row keeps the
// intervals within num_intervals of the map's latest epoch, sorted.
func (p *Printer) tseriesRows(m MapData) ([]row, error) {
	vt := m.Info.Value
	n := vt.Lhist[1]
	if vt.Lhist[0] <= 0 || n <= 0 {
		return nil, fmt.Errorf("tseries interval %d, num_intervals %d", vt.Lhist[0], n)
	}
	byKey := map[string]*row{}
	points := map[string]map[uint64]int64{}
	latest := uint64(0)
	for _, e := range m.Entries {
		if len(e.Key) < 8 {
			return nil, fmt.Errorf("tseries key of %d bytes has no slot", len(e.Key))
		}
		uk := e.Key[:len(e.Key)-8]
		r := byKey[string(uk)]
		if r == nil {
			parts, err := keyParts(m.Info, uk)
			if err != nil {
				return nil, err
			}
			r = &row{rawKey: append([]byte(nil), uk...), key: parts}
			byKey[string(uk)] = r
			points[string(uk)] = map[uint64]int64{}
		}
		ep, v := reduceTseriesSlot(vt, e)
		points[string(uk)][ep] = v
		latest = max(latest, ep)
	}
	var rows []row
	for k, r := range byKey {
		for ep, v := range points[k] {
			if ep+uint64(n) > latest {
				r.series = append(r.series, tsPoint{epoch: ep, val: v, set: true})
			}
		}
		sort.Slice(r.series, func(i, j int) bool { return r.series[i].epoch < r.series[j].epoch })
		r.latest = latest
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i].rawKey, rows[j].rawKey) < 0 })
	p.sortByKey(rows, nil)
	return rows, nil
}

// tseriesTime is the wall-clock time of the start of an interval: epochs
// count intervals of CLOCK_TAI (bpf_ktime_get_tai_ns); with bpftrace's
// dummy clock (BPFTRACE_DUMMY_TS_MAP) they are taken as they are.
func tseriesTime(epoch uint64, interval int64, dummy bool) time.Time {
	ns := int64(epoch) * interval
	if !dummy {
		var tai, real unix.Timespec
		if unix.ClockGettime(unix.CLOCK_TAI, &tai) == nil && unix.ClockGettime(unix.CLOCK_REALTIME, &real) == nil {
			ns -= tai.Nano() - real.Nano()
		}
	}
	return time.Unix(0, ns)
}

// durationUnit is the display unit of an interval: the number of digits
// after the seconds (0, 3, 6 or 9) and the unit's name.
func durationUnit(d int64) (int, string) {
	switch {
	case d%1e9 == 0:
		return 0, "s"
	case d%1e6 == 0:
		return 3, "ms"
	case d%1e3 == 0:
		return 6, "us"
	}
	return 9, "ns"
}

// filled is the row's series from its first interval to the map's latest,
// the intervals without a value unset (the text graph's rows).
func (r row) filled() []tsPoint {
	if len(r.series) == 0 {
		return nil
	}
	var out []tsPoint
	i := 0
	for ep := r.series[0].epoch; ep <= r.latest; ep++ {
		if i < len(r.series) && r.series[i].epoch == ep {
			out = append(out, r.series[i])
			i++
			continue
		}
		out = append(out, tsPoint{epoch: ep})
	}
	return out
}

// tseriesText draws one time series as bpftrace 0.26 does: a 53-column
// graph per interval, the value's position between the series' minimum
// and maximum, a '.' column at zero when the range spans it.
func (p *Printer) tseriesText(vt *types.Type, r row) string {
	const width, pad = 53, 21
	pts := r.filled()
	if len(pts) == 0 {
		return "<no data>\n"
	}
	num := func(v int64) string {
		if vt.Signed {
			return strconv.FormatInt(v, 10)
		}
		return strconv.FormatUint(uint64(v), 10)
	}
	less := func(a, b int64) bool {
		if vt.Signed {
			return a < b
		}
		return uint64(a) < uint64(b)
	}
	fl := func(v int64) float64 {
		if vt.Signed {
			return float64(v)
		}
		return float64(uint64(v))
	}
	var lo, hi int64
	first := true
	for _, pt := range pts {
		if !pt.set {
			continue
		}
		if first || less(pt.val, lo) {
			lo = pt.val
		}
		if first || less(hi, pt.val) {
			hi = pt.val
		}
		first = false
	}
	if lo == hi {
		// Room on both sides, unless at the end of the type's range.
		if vt.Signed {
			if lo > -1<<63 {
				lo--
			}
			if hi < 1<<63-1 {
				hi++
			}
		} else {
			if uint64(lo) > 0 {
				lo--
			}
			if uint64(hi) < 1<<64-1 {
				hi++
			}
		}
	}
	interval := vt.Lhist[0]
	span := (int64(pts[len(pts)-1].epoch) - int64(pts[0].epoch)) * interval
	if len(pts) > 1 {
		span /= int64(len(pts) - 1)
	}
	digits, unit := durationUnit(span)
	timeFmt := "hh:mm:ss"
	if digits > 0 {
		timeFmt += "." + unit
	}
	tsize := 8
	if digits > 0 {
		tsize += 1 + digits
	}
	var sb strings.Builder
	bounds := func() {
		fmt.Fprintf(&sb, "%-*s%*s\n", pad, num(lo), width-pad, num(hi))
	}
	sb.WriteString(strings.Repeat(" ", tsize+1))
	bounds()
	fmt.Fprintf(&sb, "%-*s|%s|\n", tsize+1, timeFmt, strings.Repeat("_", width-2))
	zero := 0
	if fl(lo) < 0 && fl(hi) > 0 {
		zero = int(float32(width) * float32(-fl(lo)) / float32(fl(hi)-fl(lo)))
	}
	loc := p.Loc
	if loc == nil {
		loc = time.Local
	}
	for _, pt := range pts {
		t := tseriesTime(pt.epoch, interval, p.DummyClock).In(loc)
		sb.WriteString(t.Format("15:04:05"))
		if digits > 0 {
			frac := fmt.Sprintf("%09d", t.Nanosecond())
			sb.WriteString("." + frac[:digits])
		}
		sb.WriteString(" ")
		line := []byte(strings.Repeat(" ", width))
		line[0], line[width-1] = '|', '|'
		if zero > 0 {
			line[zero] = '.'
		}
		if !pt.set {
			sb.Write(line)
			sb.WriteString(" -\n")
			continue
		}
		at := width / 2
		if lo != hi {
			at = int(float32(width-1) * float32(fl(pt.val)-fl(lo)) / float32(fl(hi)-fl(lo)))
		}
		line[max(0, min(width-1, at))] = '*'
		sb.Write(line)
		sb.WriteString(" " + num(pt.val) + "\n")
	}
	bottom := []byte(strings.Repeat("_", width))
	bottom[0], bottom[width-1] = 'v', 'v'
	sb.WriteString(strings.Repeat(" ", tsize) + " " + string(bottom) + "\n")
	sb.WriteString(strings.Repeat(" ", tsize) + " ")
	bounds()
	return sb.String()
}

// tseriesJSON is the intervals that hold a value:
// [{"interval_start": "2025-01-02 10:41:46.700000000", "value": 3}, ...].
func (p *Printer) tseriesJSON(vt *types.Type, r row) string {
	loc := p.Loc
	if loc == nil {
		loc = time.Local
	}
	elems := make([]string, 0, len(r.series))
	for _, pt := range r.series {
		t := tseriesTime(pt.epoch, vt.Lhist[0], p.DummyClock).In(loc)
		start := t.Format("2006-01-02 15:04:05") + fmt.Sprintf(".%09d", t.Nanosecond())
		v := strconv.FormatInt(pt.val, 10)
		if !vt.Signed {
			v = strconv.FormatUint(uint64(pt.val), 10)
		}
		elems = append(elems, `{"interval_start": "`+start+`", "value": `+v+`}`)
	}
	return "[" + strings.Join(elems, ", ") + "]"
}
