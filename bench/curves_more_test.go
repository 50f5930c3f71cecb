package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestCountPrefix(t *testing.T) {
	body := "# TYPE gotrace_map_total counter\ngotrace_map_total{key=\"1\"} 3\ngotrace_up 1\ngotrace_map_total{key=\"2\"} 1"
	n, err := countPrefix(strings.NewReader(body), []byte("gotrace_map_total{"))
	if err != nil || n != 2 {
		t.Fatalf("countPrefix = %d, %v; want 2 series", n, err)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{9, 1, 5, 3, 7}); m != 5 {
		t.Errorf("median = %v, want 5", m)
	}
	if m := median(nil); m != 0 {
		t.Errorf("median(nil) = %v, want 0", m)
	}
}

func TestLossOnset(t *testing.T) {
	pt := func(size int, made, got, lostMsg int64) *CurvePoint {
		return &CurvePoint{Size: size, Label: fmt.Sprint(size),
			Samples: map[string]Sample{"a": {Generated: made, Delivered: got, LostMsg: lostMsg, LoopNs: 1e9}}}
	}
	c := &Curve{Points: []*CurvePoint{pt(1000, 1000, 1000, 0), pt(10000, 10000, 9000, 1000), pt(100000, 100000, 50000, 50000)}}
	got := lossOnset(c, []string{"a", "b"})
	want := "a loses events from 10000/s asked (10 k/s made, 10.00% lost); none lost up to 1 k/s made"
	if len(got) != 1 || got[0] != want {
		t.Errorf("lossOnset = %q, want [%q]", got, want)
	}
	c = &Curve{Points: []*CurvePoint{pt(1000, 1000, 1000, 0)}}
	if got := lossOnset(c, []string{"a"}); len(got) != 1 || got[0] != "a lost nothing up to 1 k/s made" {
		t.Errorf("lossOnset without loss = %q", got)
	}
}
