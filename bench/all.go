package main

// -all (issue 20's acceptance run): the per-script table with the floor
// column, then every scale curve, in one run with one header (machine,
// kernel, tool versions, date, duration, load), and at the end an
// acceptance block computed from the run's own numbers: one PASS, MISS,
// ONLY (gotrace ran at a size bpftrace did not) or n/a line per check.
//
//	go run ./bench -all                        # everything (~30-40 min on a quiet 2-CPU machine)
//	go run ./bench -all -json all.json -acceptance acc.json
//	go run ./bench -all -smoke                 # tiny: one round, two sizes a curve
//	go run ./bench -all -only count,printf,map-print   # scripts and curves by name

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// AllReport is everything one -all run measured.
type AllReport struct {
	Started, Ended string
	Duration       string
	Machine        string
	Bpftrace       string
	Gotrace        string // the commit the gotrace binary was built from (or the binary given)
	LoadStart      string
	LoadEnd        string
	Table          *Report
	Curves         []*Curve
	Acceptance     []Check
}

// Check is one acceptance line. Verdict is PASS, MISS, ONLY (gotrace ran
// where bpftrace did not: nothing to compare) or n/a (not measured).
type Check struct {
	Check   string
	Verdict string
	Value   float64 `json:",omitempty"`
	Limit   float64 `json:",omitempty"`
	Detail  string
}

// allRounds is -all's rounds per script when -rounds is not given: three
// interleaved runs per tool (A B F, F B A, A B F).
const allRounds = 3

func runAll(smoke bool, rounds int, only, gotraceBin, bpftraceBin, jsonOut, accOut string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (BPF, run-time stats, tracefs)")
	}
	start := time.Now()
	root, tmp, err := benchDirs()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	_ = rlimit.RemoveMemlock()
	all := &AllReport{Started: start.UTC().Format("2006-01-02 15:04 MST"), Machine: machine(), LoadStart: loadAvg()}
	tools := []*Tool{findBpftrace(bpftraceBin), buildGotrace(root, tmp, gotraceBin), floorTool()}
	all.Bpftrace, all.Gotrace = toolVersion(tools[0]), gotraceCommit(root, gotraceBin)
	scale := 1.0
	if smoke {
		rounds, scale = 1, 0.01
	}
	wls, err := buildWorkloads(root, tmp, scale)
	if err != nil {
		return err
	}

	// Part 1: the per-script table, BPF run-time stats on (its ns/event).
	rep := &Report{Date: all.Started, Machine: all.Machine, Rounds: rounds, Smoke: smoke,
		Tools: []string{tools[0].Name, tools[1].Name, tools[2].Name}}
	for _, t := range tools {
		if t.Err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s unusable: %v\n", t.Name, t.Err)
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", t.Name, t.Err))
		}
	}
	scripts := selectScripts(allScripts(wls), only, smoke)
	if len(scripts) > 0 {
		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: cannot enable BPF run-time stats (ns/event will be n/a): %v\n", err)
		}
		for _, sc := range scripts {
			fmt.Fprintf(os.Stderr, "bench: %s ...\n", sc.Name)
			rep.Results = append(rep.Results, benchScript(sc, tools, rounds, startups))
		}
		if stats != nil {
			stats.Close() // the curves run without the stats' overhead
		}
		all.Table = rep
	}

	// Part 2: the scale curves.
	curves, err := buildCurves(root, tmp, wls, smoke)
	if err != nil {
		return err
	}
	all.Curves = runCurves(curves, tools[:2], only)
	if all.Table == nil && len(all.Curves) == 0 {
		return fmt.Errorf("no script or curve matches -only %q", only)
	}
	all.Acceptance = acceptance(all, tools[0].Name, tools[1].Name, tools[2].Name)
	all.Ended, all.Duration, all.LoadEnd = time.Now().UTC().Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second).String(), loadAvg()

	all.Print(os.Stdout, rounds)
	if jsonOut != "" {
		if err := writeJSON(jsonOut, all); err != nil {
			return err
		}
	}
	if accOut != "" {
		if err := writeJSON(accOut, all.Acceptance); err != nil {
			return err
		}
	}
	if smoke {
		if all.Table != nil {
			if err := smokeVerdict(rep, tools, scripts); err != nil {
				return err
			}
		}
		return curvesSmokeVerdict(all.Curves, tools[1].Name)
	}
	return nil
}

// curvesSmokeVerdict: in a smoke run gotrace must have run every curve point.
func curvesSmokeVerdict(curves []*Curve, dut string) error {
	for _, c := range curves {
		for _, p := range c.Points {
			if s, ok := p.Samples[dut]; ok && s.Err != "" {
				return fmt.Errorf("smoke: %s on curve %s at %s: %s", dut, c.Name, p.Label, s.Err)
			}
		}
	}
	return nil
}

// Print writes the one header, the table, the curves and the acceptance block.
func (all *AllReport) Print(w io.Writer, rounds int) {
	mode := ""
	if all.Table != nil && all.Table.Smoke {
		mode = " (smoke run: tiny workloads, one round, two sizes a curve)"
	}
	fmt.Fprintf(w, "go run ./bench -all%s\n", mode)
	fmt.Fprintf(w, "  machine:  %s\n", all.Machine)
	fmt.Fprintf(w, "  tools:    %s; gotrace %s; floor: bench/floor.go\n", all.Bpftrace, all.Gotrace)
	fmt.Fprintf(w, "  date:     %s to %s, %s; load average %s at the start, %s at the end\n", all.Started, all.Ended, all.Duration, all.LoadStart, all.LoadEnd)
	fmt.Fprintf(w, "  method:   per script, medians of %d run(s) per tool interleaved A B F, F B A, …; per curve size, one run per tool,\n", rounds)
	fmt.Fprintf(w, "            the order alternating; a tool whose run took over %.0f s (less the workload's loop) is not run at the next size\n", refBudget.Seconds())
	if all.Table != nil {
		fmt.Fprintln(w)
		all.Table.printTable(w)
	}
	if len(all.Curves) > 0 {
		fmt.Fprintf(w, "\nscale curves\n")
		printCurves(w, all.Curves, all.Table.toolName(0, "bpftrace"), all.Table.toolName(1, "gotrace"))
	}
	fmt.Fprintf(w, "\nacceptance (issue 20), from this run's numbers\n")
	counts := map[string]int{}
	for _, c := range all.Acceptance {
		counts[c.Verdict]++
		fmt.Fprintf(w, "  %-4s  %s: %s\n", c.Verdict, c.Check, c.Detail)
	}
	fmt.Fprintf(w, "  %d PASS, %d MISS, %d ONLY (gotrace alone at that size), %d n/a\n", counts["PASS"], counts["MISS"], counts["ONLY"], counts["n/a"])
}

func (rep *Report) toolName(i int, def string) string {
	if rep == nil || i >= len(rep.Tools) {
		return def
	}
	return rep.Tools[i]
}

// goodSamples are a tool's samples of r without errors.
func goodSamples(r *Result, tool string) []Sample {
	var out []Sample
	for _, s := range r.Samples[tool] {
		if s.Err == "" {
			out = append(out, s)
		}
	}
	return out
}

// acceptance computes issue 20's checks from the run: gotrace/floor
// ns/event for count, hist and comm-filter (≤ 1.10), printf 0 lost (the
// table's run and every printf-loss point), start-up gotrace/bpftrace
// (≤ 0.10) for count, hist, comm-filter and printf, and per curve and
// metric gotrace against bpftrace at the largest size both ran, with what
// gotrace did past it alone.
func acceptance(all *AllReport, ref, dut, floor string) []Check {
	var out []Check
	results := map[string]*Result{}
	if all.Table != nil {
		for _, r := range all.Table.Results {
			results[r.Script] = r
		}
	}
	nsEv := func(s Sample) float64 { return s.NsPerEvent }
	for _, name := range []string{"count", "hist", "comm-filter"} {
		c := Check{Check: "floor " + name + ": gotrace/floor ns/event", Limit: 1.10, Verdict: "n/a", Detail: "not measured"}
		if r := results[name]; r != nil {
			g, f := goodSamples(r, dut), goodSamples(r, floor)
			if len(g) > 0 && len(f) > 0 && med(f, nsEv) > 0 && med(g, nsEv) > 0 {
				c.Value = med(g, nsEv) / med(f, nsEv)
				c.Verdict = verdict(c.Value <= c.Limit)
				c.Detail = fmt.Sprintf("%.2f (%.1f / %.1f ns) ≤ %.2f", c.Value, med(g, nsEv), med(f, nsEv), c.Limit)
			}
		}
		out = append(out, c)
	}
	if r := results["printf"]; r != nil {
		c := Check{Check: "printf table run: gotrace lost", Verdict: "n/a", Detail: "gotrace did not run"}
		if g := goodSamples(r, dut); len(g) > 0 {
			var worst int64
			for _, s := range g {
				worst = max(worst, r.Ops-s.Delivered)
			}
			c.Value, c.Verdict = float64(worst), verdict(worst == 0)
			c.Detail = fmt.Sprintf("at most %d of %d lost over %d run(s) (delivered/s median %.0f)", worst, r.Ops, len(g),
				med(g, func(s Sample) float64 { return float64(s.Delivered) / (float64(max(s.LoopNs, 1)) / 1e9) }))
		}
		out = append(out, c)
	} else {
		out = append(out, Check{Check: "printf table run: gotrace lost", Verdict: "n/a", Detail: "not measured"})
	}
	for _, c := range all.Curves {
		if c.Name != "printf-loss" {
			continue
		}
		for _, p := range c.Points {
			chk := Check{Check: fmt.Sprintf("printf-loss at %s/s asked: gotrace lost", p.Label), Verdict: "n/a"}
			s, ok := p.Samples[dut]
			switch {
			case !ok:
				chk.Detail = "not run: " + p.Skipped[dut]
			case s.Err != "":
				chk.Verdict, chk.Detail = "MISS", "failed: "+firstLine(s.Err)
			default:
				lost := s.Generated - s.Delivered
				chk.Value, chk.Verdict = float64(lost), verdict(lost == 0 && s.LostMsg == 0)
				chk.Detail = fmt.Sprintf("%d of %d at %.0f k/s made (\"Lost N events\" sum %d)", lost, s.Generated, offeredKps(s), s.LostMsg)
			}
			out = append(out, chk)
		}
	}
	startup := func(s Sample) float64 { return s.StartupMs }
	for _, name := range []string{"count", "hist", "comm-filter", "printf"} {
		c := Check{Check: "start-up " + name + ": gotrace/bpftrace", Limit: 0.10, Verdict: "n/a", Detail: "not measured"}
		if r := results[name]; r != nil {
			g, b := startupSamples(r, dut), startupSamples(r, ref)
			if len(g) > 0 && len(b) > 0 && med(b, startup) > 0 {
				c.Value = med(g, startup) / med(b, startup)
				c.Verdict = verdict(c.Value <= c.Limit)
				c.Detail = fmt.Sprintf("%.2f (%.1f / %.1f ms) ≤ %.2f", c.Value, med(g, startup), med(b, startup), c.Limit)
			}
		}
		out = append(out, c)
	}
	for _, c := range all.Curves {
		out = append(out, curveChecks(c, ref, dut)...)
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// better says which way a curve metric is good: -1 lower, +1 higher, 0
// not compared (a count that depends on what the workload made, not on
// the tool's cost: the printf-loss curve's delivered and "Lost" sums).
func better(c *Curve, m curveMetric) int {
	switch m.name {
	case cmKeys.name, cmScrapeKey.name, cmOffered.name:
		return +1
	case cmDelivered.name, cmLostMsg.name:
		return 0
	}
	return -1
}

// curveChecks: per metric, gotrace against bpftrace at the largest size
// both ran without error, then one line for the largest size past it that
// gotrace ran alone (ONLY), or failed at (MISS).
func curveChecks(c *Curve, ref, dut string) []Check {
	var out []Check
	last := -1
	for i, p := range c.Points {
		_, okr := curveValue(p, ref, cmRSS)
		_, okd := curveValue(p, dut, cmRSS)
		if okr && okd {
			last = i
		}
	}
	for _, m := range c.metrics {
		dir := better(c, m)
		if dir == 0 {
			continue
		}
		chk := Check{Check: fmt.Sprintf("curve %s, %s", c.Name, m.name), Verdict: "n/a", Detail: "no size both tools ran"}
		if last >= 0 {
			p := c.Points[last]
			vr, _ := curveValue(p, ref, m)
			vd, _ := curveValue(p, dut, m)
			ok, want := vd <= vr, "≤ 1"
			if dir > 0 {
				ok, want = vd >= vr, "≥ 1"
			}
			ratio := "n/a"
			if vr != 0 {
				chk.Value = vd / vr
				ratio = fmt.Sprintf("%.2f", chk.Value)
			}
			chk.Verdict = verdict(ok)
			chk.Detail = fmt.Sprintf("at %s %s (largest both ran) gotrace %s, bpftrace %s: gotrace/bpftrace %s (want %s)",
				p.Label, c.What, showF(m.fmt, vd, true), showF(m.fmt, vr, true), ratio, want)
			if c.xOf != nil && dir < 0 {
				// The tools did different amounts of the work at one
				// size (bpftrace's stack map loses the stacks whose
				// bucket is taken): a cost is compared per unit of the
				// work each did, the curve's x (its growth lines' too).
				xd, xr := c.xOf(p.Samples[dut]), c.xOf(p.Samples[ref])
				if xd > 0 && xr > 0 && vr > 0 {
					chk.Value = (vd / xd) / (vr / xr)
					chk.Verdict = verdict(chk.Value <= 1)
					chk.Detail = fmt.Sprintf("at %s %s (largest both ran) per %s: gotrace %s / %.0f, bpftrace %s / %.0f: gotrace/bpftrace %.2f (want ≤ 1; totals %s)",
						p.Label, c.What, strings.TrimSuffix(c.xName, "s printed")+" printed", showF(m.fmt, vd, true), xd, showF(m.fmt, vr, true), xr, chk.Value, ratio)
				}
			}
		}
		out = append(out, chk)
	}
	// Past the largest size both ran: the largest gotrace ran alone, or
	// the first where gotrace failed.
	for i := len(c.Points) - 1; i > last; i-- {
		p := c.Points[i]
		s, ran := p.Samples[dut]
		why := p.Skipped[ref]
		if rs, ok := p.Samples[ref]; ok && rs.Err != "" {
			why = firstLine(rs.Err)
		}
		if why == "" {
			why = "ran"
		}
		switch {
		case !ran:
			continue
		case s.Err != "":
			if rs, ok := p.Samples[ref]; ok && rs.Err == "" {
				out = append(out, Check{Check: fmt.Sprintf("curve %s at %s %s", c.Name, p.Label, c.What), Verdict: "MISS",
					Detail: "gotrace failed where bpftrace ran: " + firstLine(s.Err)})
				continue
			}
			out = append(out, Check{Check: fmt.Sprintf("curve %s at %s %s", c.Name, p.Label, c.What), Verdict: "n/a",
				Detail: fmt.Sprintf("neither finished: gotrace %s; bpftrace %s", firstLine(s.Err), why)})
			continue
		}
		var vals []string
		for _, m := range c.metrics {
			vals = append(vals, m.name+" "+showF(m.fmt, m.get(s), true))
		}
		out = append(out, Check{Check: fmt.Sprintf("curve %s at %s %s", c.Name, p.Label, c.What), Verdict: "ONLY",
			Detail: fmt.Sprintf("gotrace alone: %s; bpftrace: %s", strings.Join(vals, ", "), why)})
		break
	}
	return out
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func toolVersion(t *Tool) string {
	if t.Err != nil {
		return t.Name + " (unusable)"
	}
	out, err := exec.Command(t.Path, "--version").Output()
	if err != nil {
		return t.Name
	}
	return strings.TrimSpace(string(out))
}

// gotraceCommit names what the gotrace under test was built from: the
// repository's HEAD (and "+changes" when the tree is dirty), or the
// binary given with -gotrace.
func gotraceCommit(root, bin string) string {
	if bin != "" {
		return bin
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "(not a git checkout)"
	}
	c := "at " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "+changes"
	}
	return c
}
