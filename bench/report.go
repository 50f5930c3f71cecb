package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Result is every run of one script.
type Result struct {
	Script     string
	Text       string
	Ops        int64               // operations per workload run (0: none)
	UntracedNs []int64             // workload loop times without a tracer
	Samples    map[string][]Sample // by tool name
	// Startups are the start-up-only runs (startupRuns), by tool name:
	// started, attached, stopped, no workload. The start-up row reads
	// them when there are any.
	Startups map[string][]Sample `json:",omitempty"`
}

// Report is a whole bench run.
type Report struct {
	Date, Machine string
	Rounds        int
	Smoke         bool
	Tools         []string // [A, B]: ratios are B/A
	Notes         []string `json:",omitempty"`
	Results       []*Result
	Load          *LoadReport `json:",omitempty"` // smoke runs: the short load run
}

// benchScript runs sc on every usable tool, alternating the order per round
// (A B, B A, …) so drift on the machine falls on both tools alike, with an
// untraced workload run before each pair.
func benchScript(sc *Script, tools []*Tool, rounds, startups int) *Result {
	r := &Result{Script: sc.Name, Text: sc.Text, Samples: map[string][]Sample{}}
	if sc.Workload != nil {
		r.Ops = sc.Workload.Ops
	}
	for i := 0; i < rounds; i++ {
		if sc.Workload != nil {
			if ns, err := runUntraced(sc.Workload); err == nil {
				r.UntracedNs = append(r.UntracedNs, ns)
			}
		}
		var order []*Tool
		for _, t := range tools {
			if !t.Floor || floorScripts[sc.Name] {
				order = append(order, t)
			}
		}
		if i%2 == 1 {
			for l, r := 0, len(order)-1; l < r; l, r = l+1, r-1 {
				order[l], order[r] = order[r], order[l]
			}
		}
		for _, t := range order {
			if t.Err != nil {
				continue
			}
			r.Samples[t.Name] = append(r.Samples[t.Name], runOnce(t, sc))
		}
	}
	startupRuns(r, sc, tools, startups)
	return r
}

// startupRuns measures sc's start-up alone, startups times per tool (not
// the floor, which has no start-up row), interleaved A B B A: each run
// starts the tool, waits for it to attach and stops it, without the
// workload. In the rounds above each start-up follows the previous tool's
// whole run, and after one that printed a million events (printf) the
// next tool's start-up was slower by a varying 0.5-8 ms for either tool;
// these runs measure the start-up itself, and more of them than the
// rounds (a median of 9 moved by 1-2 ms between runs here).
func startupRuns(r *Result, sc *Script, tools []*Tool, startups int) {
	if sc.SelfExit || sc.RoundsStartup || startups <= 0 {
		return // begin-exit's wall time is its run
	}
	quiet := *sc
	quiet.Workload, quiet.During, quiet.Printf = nil, nil, false
	var order []*Tool
	for _, t := range tools {
		if !t.Floor && t.Err == nil {
			order = append(order, t)
		}
	}
	r.Startups = map[string][]Sample{}
	for i := 0; i < startups; i++ {
		for j := range order {
			t := order[j]
			if i%2 == 1 {
				t = order[len(order)-1-j]
			}
			r.Startups[t.Name] = append(r.Startups[t.Name], runOnce(t, &quiet))
		}
	}
}

// startupSamples are the samples tool's start-up is read from: its good
// start-up-only runs if there are any, else its good runs.
func startupSamples(r *Result, tool string) []Sample {
	var out []Sample
	for _, s := range r.Startups[tool] {
		if s.Err == "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return goodSamples(r, tool)
	}
	return out
}

// metric is one table row: how to read it from a tool's good samples.
type metric struct {
	name  string
	get   func(r *Result, ss []Sample) (float64, bool)
	fmt   string
	floor bool // shown for the floor too (per-event work; not the floor process's start-up or exit)
}

// startupRow is the start-up row's name: it reads the start-up-only runs
// (startupSamples).
const startupRow = "start-up to attached ms"

func med(ss []Sample, f func(Sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func medInt(v []int64) float64 {
	ss := make([]Sample, len(v))
	for i := range v {
		ss[i].LoopNs = v[i]
	}
	return med(ss, func(s Sample) float64 { return float64(s.LoopNs) })
}

func field(f func(Sample) float64) func(*Result, []Sample) (float64, bool) {
	return func(_ *Result, ss []Sample) (float64, bool) { return med(ss, f), true }
}

func metricsFor(sc *Result) []metric {
	hasWork := sc.Ops > 0
	var m []metric
	if sc.Script == "begin-exit" {
		return []metric{
			{"wall ms", field(func(s Sample) float64 { return s.StartupMs }), "%.0f", false},
			{"peak RSS MiB", field(func(s Sample) float64 { return float64(s.RSSKiB) / 1024 }), "%.1f", false},
		}
	}
	if hasWork {
		m = append(m,
			metric{"ns/event (in kernel)", func(_ *Result, ss []Sample) (float64, bool) {
				v := med(ss, func(s Sample) float64 { return s.NsPerEvent })
				return v, v > 0
			}, "%.1f", true},
			metric{"xlated insns", func(_ *Result, ss []Sample) (float64, bool) {
				v := med(ss, func(s Sample) float64 { return float64(s.Insns) })
				return v, v > 0
			}, "%.0f", true},
			metric{"workload slowdown", func(r *Result, ss []Sample) (float64, bool) {
				if len(r.UntracedNs) == 0 {
					return 0, false
				}
				return med(ss, func(s Sample) float64 { return float64(s.LoopNs) }) / medInt(r.UntracedNs), true
			}, "%.2fx", true},
			metric{"added ns/op", func(r *Result, ss []Sample) (float64, bool) {
				if len(r.UntracedNs) == 0 {
					return 0, false
				}
				return (med(ss, func(s Sample) float64 { return float64(s.LoopNs) }) - medInt(r.UntracedNs)) / float64(r.Ops), true
			}, "%.1f", true},
		)
	}
	m = append(m,
		metric{startupRow, field(func(s Sample) float64 { return s.StartupMs }), "%.0f", false},
		metric{"Ctrl-C to exit ms", field(func(s Sample) float64 { return s.ExitMs }), "%.0f", false},
		metric{"detach after exit ms", field(func(s Sample) float64 { return s.DetachBgMs }), "%.0f", false},
		metric{"peak RSS MiB", field(func(s Sample) float64 { return float64(s.RSSKiB) / 1024 }), "%.1f", false},
	)
	if sc.Script == "printf" {
		m = append(m,
			metric{"events generated", func(r *Result, _ []Sample) (float64, bool) { return float64(r.Ops), true }, "%.0f", false},
			metric{"events delivered", field(func(s Sample) float64 { return float64(s.Delivered) }), "%.0f", true},
			metric{"events lost", field(func(s Sample) float64 { return float64(sc.Ops - s.Delivered) }), "%.0f", true},
			metric{"lost (tool's report)", field(func(s Sample) float64 { return float64(s.LostMsg) }), "%.0f", false},
			metric{"delivered/s", field(func(s Sample) float64 {
				if s.LoopNs == 0 {
					return 0
				}
				return float64(s.Delivered) / (float64(s.LoopNs) / 1e9)
			}), "%.0f", true},
		)
	}
	return m
}

// Print writes the table of both tools' medians and their ratio.
func (rep *Report) Print(w io.Writer) {
	mode := ""
	if rep.Smoke {
		mode = ", smoke run"
	}
	fmt.Fprintf(w, "gotrace vs bpftrace, %s, %s; medians of %d run(s) per tool, interleaved A B B A%s\n\n",
		rep.Date, rep.Machine, rep.Rounds, mode)
	rep.printTable(w)
}

// printTable writes the table without the header line (-all prints one
// header for everything).
func (rep *Report) printTable(w io.Writer) {
	a, b := rep.Tools[0], rep.Tools[1]
	f := ""
	if len(rep.Tools) > 2 {
		f = rep.Tools[2]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if f != "" {
		fmt.Fprintf(tw, "script\tmetric\t%s\t%s\t%s/%s\t%s\t%s/%s\t\n", a, b, b, a, f, b, f)
	} else {
		fmt.Fprintf(tw, "script\tmetric\t%s\t%s\t%s/%s\t\n", a, b, b, a)
	}
	var errs, notes []string
	for _, r := range rep.Results {
		good := map[string][]Sample{}
		for _, tool := range rep.Tools {
			for _, s := range r.Samples[tool] {
				if s.ExtraSIGINTs > 0 {
					notes = append(notes, fmt.Sprintf("%s on %s: idle in epoll_wait 5 s after SIGINT (missed it), sent it %d more time(s); Ctrl-C to exit counts from the first", tool, r.Script, s.ExtraSIGINTs))
				}
				if s.Err == "" {
					good[tool] = append(good[tool], s)
				} else {
					errs = append(errs, fmt.Sprintf("%s on %s: %s", tool, r.Script, s.Err))
				}
			}
		}
		for i, m := range metricsFor(r) {
			name := ""
			if i == 0 {
				name = r.Script
			}
			ga, gb, gf := good[a], good[b], good[f]
			if m.name == startupRow {
				ga, gb, gf = startupSamples(r, a), startupSamples(r, b), startupSamples(r, f)
			}
			va, oka := value(m, r, ga)
			vb, okb := value(m, r, gb)
			ratio := "n/a"
			if oka && okb && va != 0 {
				ratio = fmt.Sprintf("%.2f", vb/va)
			}
			if f == "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", name, m.name, show(m, va, oka), show(m, vb, okb), ratio)
				continue
			}
			fv, fr := "", ""
			if m.floor && len(r.Samples[f]) > 0 {
				vf, okf := value(m, r, gf)
				fv, fr = show(m, vf, okf), "n/a"
				if okb && okf && vf != 0 {
					fr = fmt.Sprintf("%.2f", vb/vf)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, m.name, show(m, va, oka), show(m, vb, okb), ratio, fv, fr)
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if len(rep.Notes)+len(errs) > 0 {
		fmt.Fprintln(w, "\nn/a because:")
		for _, n := range append(rep.Notes, dedup(errs)...) {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
}

func value(m metric, r *Result, ss []Sample) (float64, bool) {
	if len(ss) == 0 {
		return 0, false
	}
	return m.get(r, ss)
}

func show(m metric, v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf(m.fmt, v)
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if len(x) > 200 {
			x = x[:200] + "…"
		}
		x = strings.ReplaceAll(x, "\n", " ")
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
