package main

// Scale curves (issue 20): how each tool's cost grows with the work — map
// keys printed at exit and by print(), probes attached and detached, script lines and
// clauses compiled and loaded. One run per tool and size, the tools
// alternating which goes first from size to size; each row is gotrace and
// bpftrace side by side, and below each curve the growth between its two
// largest sizes both tools ran as an exponent k of n^k.
//
//	go run ./bench -curves                     # every curve
//	go run ./bench -curves -only map-print,uprobe-attach
//	go run ./bench -curves -smoke              # the two smallest sizes, tiny workloads

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Curve is one scale curve: a script per size and the metrics it reads.
type Curve struct {
	Name    string
	What    string // what grows, for the table
	Sizes   []int
	Labels  map[int]string // size labels ("all enter"), default the number
	script  func(n int) (*Script, error)
	metrics []curveMetric
	// A tool is not run at the next size when its run at this one took
	// longer than refBudget (a note says so).
	Points []*CurvePoint
	Notes  []string `json:",omitempty"`
	// summary, when set, adds lines under the curve (printf-loss: the
	// rate at which loss begins, per tool).
	summary func(c *Curve, tools []string) []string
	// xOf, when set, is the x of the growth lines, read from each sample
	// (kstack-symbolize: the distinct stacks printed), named xName.
	xOf   func(Sample) float64
	xName string
}

// CurvePoint is one size of a curve.
type CurvePoint struct {
	Size    int
	Label   string
	Samples map[string]Sample
	Skipped map[string]string `json:",omitempty"` // tool -> why not run
}

type curveMetric struct {
	name string
	get  func(Sample) float64
	fmt  string
	// noGrowth: no growth line (counts, rates: not costs).
	noGrowth bool
}

var (
	cmStartup = curveMetric{"start-up to attached ms", func(s Sample) float64 { return s.StartupMs }, "%.0f", false}
	cmWall    = curveMetric{"start to exit ms", func(s Sample) float64 { return s.StartupMs }, "%.0f", false}
	cmExit    = curveMetric{"Ctrl-C to exit ms", func(s Sample) float64 { return s.ExitMs }, "%.0f", false}
	cmDetach  = curveMetric{"Ctrl-C to detached ms", func(s Sample) float64 { return s.ExitMs + s.DetachBgMs }, "%.0f", false}
	cmRSS     = curveMetric{"peak RSS MiB", func(s Sample) float64 { return float64(s.RSSKiB) / 1024 }, "%.1f", false}
	cmKeys    = curveMetric{"keys printed", func(s Sample) float64 { return float64(s.MapLines) }, "%.0f", false}
)

// refBudget: a tool whose run at one size took longer than this, less the
// workload's own loop time, is not run at the next larger size (each step
// is ~10× the work).
const refBudget = 40 * time.Second

func buildCurves(root, tmp string, wls map[string]*Workload, smoke bool) ([]*Curve, error) {
	getpid := wls["getpid"]
	keysEnv := func(n int) []string {
		return []string{fmt.Sprintf("BPFTRACE_MAP_KEYS_MAX=%d", n), fmt.Sprintf("BPFTRACE_MAX_MAP_KEYS=%d", n)}
	}
	probesEnv := func(n int) []string { return []string{fmt.Sprintf("BPFTRACE_MAX_PROBES=%d", n+16)} }
	tps, err := syscallTracepoints()
	if err != nil {
		return nil, err
	}
	var enter []string
	for _, t := range tps {
		if strings.HasPrefix(t, "sys_enter_") {
			enter = append(enter, t)
		}
	}
	tpSizes := []int{10, 100, len(enter), len(tps)}
	curves := []*Curve{
		{Name: "map-print", What: "keys", Sizes: []int{1_000, 10_000, 100_000, 1_000_000},
			metrics: []curveMetric{cmExit, cmKeys, cmRSS},
			script: func(n int) (*Script, error) {
				// n getpid calls, each a distinct key (nsecs), printed at exit.
				w := *getpid
				w.Args, w.Ops = []string{fmt.Sprint(n)}, int64(n)
				return &Script{Workload: &w, Env: keysEnv(n + 1024),
					Text: fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @[nsecs] = count(); }`, getpid.Comm())}, nil
			}},
		{Name: "print", What: "keys", Sizes: []int{1_000, 10_000, 100_000, 1_000_000},
			metrics: []curveMetric{cmExit, cmKeys, cmRSS},
			script: func(n int) (*Script, error) {
				// As map-print, but the map is printed by print(@) in END
				// (the print event's path) and cleared, so that nothing is
				// left to print at exit.
				w := *getpid
				w.Args, w.Ops = []string{fmt.Sprint(n)}, int64(n)
				return &Script{Workload: &w, Env: keysEnv(n + 1024),
					Text: fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @[nsecs] = count(); } END { print(@); clear(@); }`, getpid.Comm())}, nil
			}},
		{Name: "ustack-symbolize", What: "user stacks", Sizes: []int{1_000, 10_000, 100_000},
			metrics: []curveMetric{cmExit, cmKeys, cmRSS},
			script: func(n int) (*Script, error) {
				// n distinct user stacks (gtb_leaf called from each of n
				// functions once), symbolized and printed at exit.
				bin, err := manyStacks(tmp, n)
				if err != nil {
					return nil, err
				}
				w := &Workload{Name: fmt.Sprintf("stacks%d", n), Path: bin, Ops: int64(n)}
				env := append(keysEnv(n+1024), fmt.Sprintf("GOTRACE_STACK_MAP_ENTRIES=%d", 2*n+1024))
				return &Script{Workload: w, Env: env, Text: fmt.Sprintf(`uprobe:%s:gtb_leaf { @[ustack] = count(); }`, bin)}, nil
			}},
		{Name: "hist-print", What: "hist keys", Sizes: []int{100, 1_000},
			metrics: []curveMetric{cmExit, cmKeys, cmRSS},
			script: func(n int) (*Script, error) {
				// 200 events per key on average: every key is hit, ~12 buckets each.
				w := *getpid
				ops := 200 * n
				if smoke {
					ops = 20 * n
				}
				w.Args, w.Ops = []string{fmt.Sprint(ops)}, int64(ops)
				return &Script{Workload: &w, Env: keysEnv(20 * n),
					Text: fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @[rand %% %d] = hist(rand %% 4096); }`, getpid.Comm(), n)}, nil
			}},
		{Name: "uprobe-attach", What: "uprobes", Sizes: []int{10, 100, 1_000, 10_000},
			metrics: []curveMetric{cmStartup, cmExit, cmDetach, cmRSS},
			script: func(n int) (*Script, error) {
				bin, err := manyFuncs(tmp, n)
				if err != nil {
					return nil, err
				}
				return &Script{Env: probesEnv(n), Text: fmt.Sprintf(`uprobe:%s:gtb_fn_* { @ = count(); }`, bin)}, nil
			}},
		{Name: "tracepoint-attach", What: "syscall tracepoints", Sizes: tpSizes,
			Labels:  map[int]string{len(enter): fmt.Sprintf("%d (all sys_enter_*)", len(enter)), len(tps): fmt.Sprintf("%d (all)", len(tps))},
			metrics: []curveMetric{cmStartup, cmExit, cmDetach, cmRSS},
			script: func(n int) (*Script, error) {
				var aps []string
				switch {
				case n == len(tps):
					aps = []string{"tracepoint:syscalls:sys_*"}
				case n == len(enter):
					aps = []string{"tracepoint:syscalls:sys_enter_*"}
				default:
					for _, t := range tps[:n] {
						aps = append(aps, "tracepoint:syscalls:"+t)
					}
				}
				return &Script{Env: probesEnv(n), Text: strings.Join(aps, ",\n") + " { @ = count(); }"}, nil
			}},
		{Name: "script-lines", What: "lines", Sizes: []int{10, 100, 1_000, 10_000}, metrics: []curveMetric{cmWall, cmRSS},
			script: func(n int) (*Script, error) {
				// BEGIN with n map assignments, then exit: parse, check,
				// compile, load, run once, print 100 keys, exit.
				var b strings.Builder
				b.WriteString("BEGIN {\n")
				for i := 0; i < n; i++ {
					fmt.Fprintf(&b, "  @m[%d] = %d;\n", i%100, i)
				}
				b.WriteString("  exit();\n}\n")
				return &Script{SelfExit: true, Text: b.String()}, nil
			}},
		{Name: "script-clauses", What: "clauses", Sizes: []int{1, 10, 100, 1_000},
			metrics: []curveMetric{cmStartup, cmExit, cmRSS},
			script: func(n int) (*Script, error) {
				// n clauses, each its own program on its own (idle) timer.
				var b strings.Builder
				for i := 0; i < n; i++ {
					fmt.Fprintf(&b, "interval:s:3600 { @c[%d] = count(); }\n", i)
				}
				return &Script{Env: probesEnv(n), Text: b.String()}, nil
			}},
	}
	curves = append(curves, metricsCurve(getpid, keysEnv), printfLossCurve(tmp, smoke))
	// After ustack-symbolize, as its kernel-stack counterpart.
	for i, c := range curves {
		if c.Name == "ustack-symbolize" {
			curves = append(curves[:i+1], append([]*Curve{kstackCurve(tmp, smoke)}, curves[i+1:]...)...)
			break
		}
	}
	for _, c := range curves {
		if smoke {
			c.Sizes = c.Sizes[:2]
		}
		sort.Ints(c.Sizes)
	}
	return curves, nil
}

// syscallTracepoints lists tracefs's syscalls group (sys_enter_* and sys_exit_*), sorted.
func syscallTracepoints() ([]string, error) {
	for _, dir := range []string{"/sys/kernel/tracing/events/syscalls", "/sys/kernel/debug/tracing/events/syscalls"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		var out []string
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), "sys_") {
				out = append(out, e.Name())
			}
		}
		sort.Strings(out)
		return out, nil
	}
	return nil, fmt.Errorf("no tracefs syscalls group")
}

// manyFuncs builds (once per n) a helper with n functions gtb_fn_<i> for
// uprobes to attach to; it is never run.
func manyFuncs(tmp string, n int) (string, error) {
	bin := filepath.Join(tmp, fmt.Sprintf("gtb_funcs%d", n))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	var b strings.Builder
	b.WriteString("#define F(i) __attribute__((noipa, used)) int gtb_fn_##i(int x) { return x + i; }\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "F(%d)\n", i)
	}
	b.WriteString("int main(void) { return 0; }\n")
	return compileC(bin, b.String(), "-O1")
}

// manyStacks builds (once per n) a helper whose n functions gtb_st_<i>
// each call gtb_leaf once: n distinct user stacks under a uprobe on
// gtb_leaf, made by a child process that stays alive afterwards (60 s at
// most) so that the tracer can symbolize them at exit. With GT_TIME set
// it prints the loop time (loop_ns), as the testdata helpers do. -O0 and
// frame pointers: every frame is unwound.
func manyStacks(tmp string, n int) (string, error) {
	bin := filepath.Join(tmp, fmt.Sprintf("gtb_stacks%d", n))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n")
	b.WriteString("__attribute__((noinline, used)) int gtb_leaf(int x) { return x + 1; }\n")
	b.WriteString("#define F(i) __attribute__((noinline, used)) int gtb_st_##i(int x) { return gtb_leaf(x) + i; }\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "F(%d)\n", i)
	}
	b.WriteString("typedef int (*fn)(int);\nstatic fn fns[] = {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "gtb_st_%d,\n", i)
	}
	// The calls run in a child that then stays alive (60 s at most) so
	// that its stacks can be symbolized at exit; the parent reports the
	// loop time and exits, ending the workload.
	// The child closes stderr: the harness reads it to its end.
	b.WriteString("};\n#include <unistd.h>\nint main(void) {\n  int p[2]; if (pipe(p)) return 1;\n  if (fork() == 0) {\n    close(p[0]); close(1); close(2);\n")
	b.WriteString("    struct timespec a, z; clock_gettime(CLOCK_MONOTONIC, &a);\n    int s = 0;\n")
	fmt.Fprintf(&b, "    for (int i = 0; i < %d; i++) s += fns[i](i);\n", n)
	b.WriteString("    clock_gettime(CLOCK_MONOTONIC, &z);\n    long long ns = (long long)(z.tv_sec - a.tv_sec) * 1000000000LL + (z.tv_nsec - a.tv_nsec) + (s == 0);\n")
	b.WriteString("    write(p[1], &ns, sizeof ns); close(p[1]);\n    alarm(60); for (;;) pause();\n  }\n")
	b.WriteString("  close(p[1]); long long ns = 0;\n  if (read(p[0], &ns, sizeof ns) != sizeof ns) return 1;\n")
	b.WriteString("  if (getenv(\"GT_TIME\")) fprintf(stderr, \"loop_ns %lld\\n\", ns);\n  return 0;\n}\n")
	return compileC(bin, b.String(), "-O0", "-fno-omit-frame-pointer")
}

// runCurves runs every curve (or those -only names) with the tracers
// (tools[0] the reference, tools[1] gotrace).
func runCurves(curves []*Curve, tools []*Tool, only string) []*Curve {
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var ran []*Curve
	for _, c := range curves {
		if len(want) > 0 && !want[c.Name] {
			continue
		}
		ran = append(ran, c)
		slow := map[string]time.Duration{} // tool -> its run at the previous size, when over budget
		slowLoop := map[string]bool{}      // that run's time leaves out a workload loop
		for i, n := range c.Sizes {
			p := &CurvePoint{Size: n, Label: fmt.Sprint(n), Samples: map[string]Sample{}, Skipped: map[string]string{}}
			if l, ok := c.Labels[n]; ok {
				p.Label = l
			}
			c.Points = append(c.Points, p)
			sc, err := c.script(n)
			if err != nil {
				c.Notes = append(c.Notes, fmt.Sprintf("size %s: %v", p.Label, err))
				continue
			}
			sc.Name = c.Name
			order := []*Tool{tools[0], tools[1]}
			if i%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, t := range order {
				if t.Err != nil {
					p.Skipped[t.Name] = t.Err.Error()
					continue
				}
				if d, ok := slow[t.Name]; ok {
					less := ""
					if slowLoop[t.Name] {
						less = " (less the workload's loop)"
					}
					p.Skipped[t.Name] = fmt.Sprintf("not run: %s took %.0f s%s at the previous size", t.Name, d.Seconds(), less)
					c.Notes = append(c.Notes, fmt.Sprintf("%s at %s %s: %s", t.Name, p.Label, c.What, p.Skipped[t.Name]))
					continue
				}
				fmt.Fprintf(os.Stderr, "bench: curve %s, %s %s, %s ...\n", c.Name, p.Label, c.What, t.Name)
				start := time.Now()
				s := runOnce(t, sc)
				// The tool's own time: the workload's loop (the kernel-stack
				// curve samples it for up to minutes) is not the tool's.
				if took := time.Since(start) - time.Duration(s.LoopNs); took > refBudget {
					slow[t.Name] = took
					if s.LoopNs > 0 {
						slowLoop[t.Name] = true
					}
				}
				p.Samples[t.Name] = s
				if s.Err != "" {
					c.Notes = append(c.Notes, fmt.Sprintf("%s at %s %s: %s", t.Name, p.Label, c.What, s.Err))
				}
			}
		}
	}
	return ran
}

// growth names the exponent k of n^k.
func growth(k float64) string {
	switch {
	case k < 0.2:
		return "flat"
	case k < 0.8:
		return "sublinear"
	case k < 1.3:
		return "linear"
	case k < 1.7:
		return "superlinear"
	default:
		return "quadratic or worse"
	}
}

// exponent is the log-log slope of metric m between the two largest
// sizes at which tool ran without error, and those sizes.
func (c *Curve) exponent(tool string, m curveMetric) (k float64, from, to string, ok bool) {
	var xs []float64
	var ys []float64
	var labels []string
	for _, p := range c.Points {
		s, have := p.Samples[tool]
		if !have || s.Err != "" || m.get(s) <= 0 {
			continue
		}
		x, label := float64(p.Size), p.Label
		if c.xOf != nil {
			if x = c.xOf(s); x <= 0 {
				continue
			}
			label = fmt.Sprintf("%.0f", x)
		}
		xs, ys, labels = append(xs, x), append(ys, m.get(s)), append(labels, label)
	}
	if len(xs) < 2 {
		return 0, "", "", false
	}
	i, j := len(xs)-1, len(xs)-2
	if c.xOf != nil {
		// x is measured, not chosen: two sizes can give nearly the same
		// x, whose slope is noise. Take the largest earlier x at most
		// half the last.
		for j >= 0 && xs[j] > xs[i]/2 {
			j--
		}
		if j < 0 {
			return 0, "", "", false
		}
	}
	return math.Log(ys[i]/ys[j]) / math.Log(xs[i]/xs[j]), labels[j], labels[i], true
}

// printCurves writes one table per curve.
func printCurves(w io.Writer, curves []*Curve, a, b string) {
	for _, c := range curves {
		fmt.Fprintf(w, "\n%s (%s)\n", c.Name, c.What)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\tmetric\t%s\t%s\t%s/%s\t\n", c.What, a, b, b, a)
		for _, p := range c.Points {
			for j, m := range c.metrics {
				label := ""
				if j == 0 {
					label = p.Label
				}
				va, oka := curveValue(p, a, m)
				vb, okb := curveValue(p, b, m)
				ratio := "n/a"
				if oka && okb && va != 0 {
					ratio = fmt.Sprintf("%.2f", vb/va)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", label, m.name, showF(m.fmt, va, oka), showF(m.fmt, vb, okb), ratio)
			}
		}
		tw.Flush()
		for _, m := range c.metrics {
			if m.noGrowth || m.name == cmRSS.name || m.name == cmKeys.name {
				continue
			}
			var parts []string
			for _, t := range []string{a, b} {
				if k, from, to, ok := c.exponent(t, m); ok {
					parts = append(parts, fmt.Sprintf("%s n^%.2f (%s, %s→%s)", t, k, growth(k), from, to))
				}
			}
			if len(parts) > 0 && c.xOf != nil {
				fmt.Fprintf(w, "  growth of %s over %s: %s\n", m.name, c.xName, strings.Join(parts, "; "))
			} else if len(parts) > 0 {
				fmt.Fprintf(w, "  growth of %s: %s\n", m.name, strings.Join(parts, "; "))
			}
		}
		if c.summary != nil {
			for _, l := range c.summary(c, []string{a, b}) {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
		for _, n := range dedup(c.Notes) {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
}

func curveValue(p *CurvePoint, tool string, m curveMetric) (float64, bool) {
	s, ok := p.Samples[tool]
	if !ok || s.Err != "" {
		return 0, false
	}
	return m.get(s), true
}

func showF(f string, v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf(f, v)
}
