package metrics

import (
	"fmt"
	"testing"
)

// TestSortSamplesStable: sorted by key; equal keys keep their decode order.
func TestSortSamplesStable(t *testing.T) {
	in := []sample{{sortKey: "b", value: "1"}, {sortKey: "a", value: "2"}, {sortKey: "b", value: "3"}, {sortKey: "a", value: "4"}, {sortKey: "", value: "5"}}
	var got []string
	for _, s := range sortSamples(in) {
		got = append(got, s.sortKey+"="+s.value)
	}
	if g, want := fmt.Sprint(got), "[=5 a=2 a=4 b=1 b=3]"; g != want {
		t.Errorf("sortSamples: got %s, want %s", g, want)
	}
}
