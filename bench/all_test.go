package main

import (
	"strings"
	"testing"
)

func TestAcceptanceChecks(t *testing.T) {
	smp := func(ns, startup float64) Sample { return Sample{NsPerEvent: ns, StartupMs: startup} }
	table := &Report{Tools: []string{"bpftrace", "gotrace", "floor"}, Results: []*Result{
		{Script: "count", Samples: map[string][]Sample{
			"bpftrace": {smp(300, 100), smp(310, 120)}, "gotrace": {smp(150, 8), smp(160, 9)}, "floor": {smp(150, 1), smp(150, 1)}}},
		{Script: "hist", Samples: map[string][]Sample{
			"bpftrace": {smp(300, 100)}, "gotrace": {smp(180, 20)}, "floor": {smp(150, 1)}}},
		// The start-up-only runs decide the start-up check (0.055, not the
		// rounds' 0.20), the failed one left out.
		{Script: "comm-filter", Samples: map[string][]Sample{
			"bpftrace": {smp(300, 100)}, "gotrace": {smp(200, 20)}},
			Startups: map[string][]Sample{"bpftrace": {smp(0, 100), smp(0, 100)}, "gotrace": {smp(0, 6), smp(0, 5), {Err: "boom", StartupMs: 90}}}},
		{Script: "printf", Ops: 1000, Samples: map[string][]Sample{
			"bpftrace": {{Delivered: 1000, StartupMs: 100, LoopNs: 1e9}}, "gotrace": {{Delivered: 1000, StartupMs: 9, LoopNs: 1e9}, {Delivered: 990, StartupMs: 9, LoopNs: 1e9}}}},
	}}
	pt := func(size int, b, g *Sample, skipped string) *CurvePoint {
		p := &CurvePoint{Size: size, Label: "1" + strings.Repeat("0", size), Samples: map[string]Sample{}, Skipped: map[string]string{}}
		if b != nil {
			p.Samples["bpftrace"] = *b
		} else {
			p.Skipped["bpftrace"] = skipped
		}
		if g != nil {
			p.Samples["gotrace"] = *g
		}
		return p
	}
	curve := &Curve{Name: "map-print", What: "keys", metrics: []curveMetric{cmExit, cmKeys, cmRSS}, Points: []*CurvePoint{
		pt(1, &Sample{ExitMs: 100, MapLines: 10, RSSKiB: 1024}, &Sample{ExitMs: 10, MapLines: 10, RSSKiB: 512}, ""),
		pt(2, &Sample{ExitMs: 100, MapLines: 100, RSSKiB: 1024}, &Sample{ExitMs: 200, MapLines: 99, RSSKiB: 512}, ""),
		pt(3, nil, &Sample{ExitMs: 900, MapLines: 1000, RSSKiB: 2048}, "not run: bpftrace took 50 s at the previous size"),
	}}
	loss := &Curve{Name: "printf-loss", What: "events/s asked", metrics: []curveMetric{cmOffered, cmDelivered, cmLost, cmLostMsg, cmRSS}, Points: []*CurvePoint{
		pt(1, &Sample{Generated: 10, Delivered: 10, LoopNs: 1e9, RSSKiB: 1}, &Sample{Generated: 10, Delivered: 10, LoopNs: 1e9, RSSKiB: 1}, ""),
		pt(2, &Sample{Generated: 100, Delivered: 100, LoopNs: 1e9, RSSKiB: 1}, &Sample{Generated: 100, Delivered: 90, LostMsg: 10, LoopNs: 1e9, RSSKiB: 1}, ""),
	}}
	got := map[string]Check{}
	for _, c := range acceptance(&AllReport{Table: table, Curves: []*Curve{curve, loss}}, "bpftrace", "gotrace", "floor") {
		got[c.Check] = c
	}
	want := map[string]string{
		"floor count: gotrace/floor ns/event":        "PASS", // 155/150
		"floor hist: gotrace/floor ns/event":         "MISS", // 1.20
		"floor comm-filter: gotrace/floor ns/event":  "n/a",
		"printf table run: gotrace lost":             "MISS", // 10 in one run
		"start-up count: gotrace/bpftrace":           "PASS", // 8.5/110
		"start-up hist: gotrace/bpftrace":            "MISS", // 0.20
		"start-up printf: gotrace/bpftrace":          "PASS",
		"start-up comm-filter: gotrace/bpftrace":     "PASS", // 5.5/100 from the start-up runs
		"curve map-print, Ctrl-C to exit ms":         "MISS", // 200 vs 100 at the largest both ran
		"curve map-print, keys printed":              "MISS", // 99 vs 100
		"curve map-print, peak RSS MiB":              "PASS",
		"curve map-print at 1000 keys":               "ONLY",
		"printf-loss at 10/s asked: gotrace lost":    "PASS",
		"printf-loss at 100/s asked: gotrace lost":   "MISS",
		"curve printf-loss, lost (made - delivered)": "MISS",
		"curve printf-loss, offered k events/s":      "PASS",
	}
	for k, v := range want {
		c, ok := got[k]
		if !ok {
			t.Errorf("no check %q (have %v)", k, got)
			continue
		}
		if c.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", k, c.Verdict, c.Detail, v)
		}
	}
	if c := got["floor count: gotrace/floor ns/event"]; c.Value < 1.03 || c.Value > 1.04 {
		t.Errorf("floor count value %v, want 155/150", c.Value)
	}
	if c := got["curve map-print at 1000 keys"]; !strings.Contains(c.Detail, "Ctrl-C to exit ms 900") || !strings.Contains(c.Detail, "took 50 s") {
		t.Errorf("ONLY line: %q", c.Detail)
	}
	if _, ok := got["curve printf-loss, delivered"]; ok {
		t.Error("printf-loss delivered is compared; it depends on the rate each tool's workload made")
	}
}

func TestKstackGrowthOverKeys(t *testing.T) {
	c := &Curve{xOf: func(s Sample) float64 { return float64(s.MapLines) }, Points: []*CurvePoint{
		{Size: 1, Label: "1", Samples: map[string]Sample{"g": {ExitMs: 10, MapLines: 1000}}},
		{Size: 4, Label: "4", Samples: map[string]Sample{"g": {ExitMs: 100, MapLines: 10000}}},
	}}
	k, from, to, ok := c.exponent("g", cmExit)
	if !ok || k < 0.99 || k > 1.01 || from != "1000" || to != "10000" {
		t.Errorf("exponent over keys = %v %q %q %v, want 1 from 1000 to 10000", k, from, to, ok)
	}
}

func TestKstackGrowthSkipsCloseX(t *testing.T) {
	c := &Curve{xOf: func(s Sample) float64 { return float64(s.MapLines) }, Points: []*CurvePoint{
		{Size: 1, Label: "1", Samples: map[string]Sample{"g": {ExitMs: 10, MapLines: 1000}}},
		{Size: 4, Label: "4", Samples: map[string]Sample{"g": {ExitMs: 100, MapLines: 10000}}},
		{Size: 16, Label: "16", Samples: map[string]Sample{"g": {ExitMs: 150, MapLines: 12000}}},
	}}
	// 12000 is within 2x of 10000: the slope is taken from 1000.
	k, from, to, ok := c.exponent("g", cmExit)
	if !ok || from != "1000" || to != "12000" || k < 0.99 || k > 1.1 {
		t.Errorf("exponent = %v %q→%q %v, want ~1.06 from 1000 to 12000", k, from, to, ok)
	}
}

// TestAcceptancePerUnit: a curve whose tools did different amounts of the
// work at a size (xOf: the kernel stacks each printed) compares costs per
// unit of work, not totals; counts stay totals.
func TestAcceptancePerUnit(t *testing.T) {
	c := &Curve{Name: "kstack-symbolize", What: "s of workload sampled", metrics: []curveMetric{cmExit, cmKeys, cmRSS},
		xOf: func(s Sample) float64 { return float64(s.MapLines) }, xName: "distinct kernel stacks printed",
		Points: []*CurvePoint{{Size: 128, Label: "128", Samples: map[string]Sample{
			// gotrace printed 3x the stacks in 2x the time with 3.3x the memory.
			"bpftrace": {ExitMs: 1000, MapLines: 1000, RSSKiB: 1000},
			"gotrace":  {ExitMs: 2000, MapLines: 3000, RSSKiB: 3300},
		}}}}
	got := map[string]Check{}
	for _, k := range curveChecks(c, "bpftrace", "gotrace") {
		got[k.Check] = k
	}
	for name, want := range map[string]struct {
		verdict string
		value   float64
	}{
		"curve kstack-symbolize, Ctrl-C to exit ms": {"PASS", 2.0 / 3},
		"curve kstack-symbolize, peak RSS MiB":      {"MISS", 1.1},
		"curve kstack-symbolize, keys printed":      {"PASS", 3},
	} {
		k, ok := got[name]
		if !ok {
			t.Errorf("no check %q", name)
			continue
		}
		if k.Verdict != want.verdict || k.Value < want.value-0.001 || k.Value > want.value+0.001 {
			t.Errorf("%s: %s %.3f (%s), want %s %.3f", name, k.Verdict, k.Value, k.Detail, want.verdict, want.value)
		}
	}
	if d := got["curve kstack-symbolize, Ctrl-C to exit ms"].Detail; !strings.Contains(d, "per distinct kernel stack printed") {
		t.Errorf("detail %q does not say per what", d)
	}
}
