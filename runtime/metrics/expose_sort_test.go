package metrics

import (
	"fmt"
	"math"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// TestSortSamplesStable: sorted by key; equal keys keep their decode order.
func TestSortSamplesStable(t *testing.T) {
	in := []sample{{sortKey: "b", value: "1"}, {sortKey: "a", value: "2"}, {sortKey: "b", value: "3"}, {sortKey: "a", value: "4"}, {sortKey: "", value: "5"}}
	var got []string
	for _, i := range sortSamples(in, false) {
		got = append(got, in[i].sortKey+"="+in[i].value)
	}
	if g, want := fmt.Sprint(got), "[=5 a=2 a=4 b=1 b=3]"; g != want {
		t.Errorf("sortSamples: got %s, want %s", g, want)
	}
}

// TestIntOrder: integer keys sort by intOrder as their zero-padded texts
// did: unsigned in order; signed the negatives first, by magnitude.
func TestIntOrder(t *testing.T) {
	signed := []int64{-1, -2, -10, math.MinInt64, 0, 1, 9, 10, math.MaxInt64}
	for i := 1; i < len(signed); i++ {
		a, b := output.Value{Type: types.S64, Bits: uint64(signed[i-1])}, output.Value{Type: types.S64, Bits: uint64(signed[i])}
		ta, tb := fmt.Sprintf("%021d", signed[i-1]), fmt.Sprintf("%021d", signed[i])
		if (intOrder(a) < intOrder(b)) != (ta < tb) || !(ta < tb) {
			t.Errorf("%d, %d: intOrder %d, %d; texts %q, %q", signed[i-1], signed[i], intOrder(a), intOrder(b), ta, tb)
		}
	}
	in := []sample{{num: intOrder(output.Value{Type: types.U64, Bits: 1 << 63}), value: "a"}, {num: 3, value: "b"}, {num: 3, value: "c"}, {num: 0, value: "d"}}
	var got []string
	for _, i := range sortSamples(in, true) {
		got = append(got, in[i].value)
	}
	if g := fmt.Sprint(got); g != "[d b c a]" {
		t.Errorf("numeric sort: %s, want [d b c a]", g)
	}
}
