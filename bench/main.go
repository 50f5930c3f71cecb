// Command bench runs gotrace and bpftrace side by side on fixed workloads
// (issue 9) and prints a table of gotrace/bpftrace ratios.
//
//	go run ./bench                # full run (a few minutes)
//	go run ./bench -smoke         # tiny run, for CI: checks the harness works
//	go run ./bench -only count,hist -rounds 3 -json out.json
//	go run ./bench -curves        # the scale curves instead (curves.go)
//	go run ./bench -all           # table with floor, every curve, acceptance block (all.go)
//
// Runs are interleaved A B B A … per script, each tool against the same
// workload from testdata/helpers. Per run it measures: in-kernel ns per event
// (BPF run-time stats enabled by the harness; the tool's programs are found
// through its own fds), translated instruction count, workload slowdown and
// added ns per operation (the helper times its own loop), start-up to
// attached (the __BPFTRACE_NOTIFY_PROBES_ATTACHED line), Ctrl-C to exit, peak
// RSS (wait4), and for printf: events generated, delivered, lost, delivered
// per second. A tool that fails shows "n/a" with the reason below the table.
// For count, hist, comm-filter, printf and uprobe a third tool, the floor
// (floor.go: hand-written programs), runs in the same rounds: gotrace/floor.
// Needs root. Numbers are noisy: the table is for reading, never a CI gate.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/internal/testkit/helperbin"
)

func main() {
	if name := os.Getenv(floorEnv); name != "" {
		// A floor process (floor.go), started by the harness.
		if err := runFloor(name); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	smoke := flag.Bool("smoke", false, "tiny workloads, one A B round, no sys_enter_* detach run (for CI)")
	rounds := flag.Int("rounds", 2, "A B pairs per script (alternating order: A B B A …)")
	only := flag.String("only", "", "comma-separated script names to run (default all)")
	gotraceBin := flag.String("gotrace", "", "gotrace binary (default: go build ./cmd/gotrace)")
	bpftraceBin := flag.String("bpftrace", "bpftrace", "bpftrace binary")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	scale := flag.Float64("scale", 1, "multiply workload sizes by this")
	load := flag.Bool("load", false, "run only the load benchmark: count and printf at the highest getpid rate, loss accounting and RSS over time")
	loadDur := flag.Duration("load-duration", 60*time.Second, "how long the load benchmark drives each script per tool (-smoke: 2s unless given)")
	loadWorkers := flag.Int("load-workers", runtime.NumCPU(), "parallel getpid workload processes of the load benchmark")
	curves := flag.Bool("curves", false, "run only the scale curves (curves.go): map printing, attach/detach, script size; -only picks curves by name")
	all := flag.Bool("all", false, "issue 20's acceptance run: the per-script table with the floor (-rounds, default 3), then every scale curve, one header, an acceptance block; -only picks scripts and curves by name")
	accOut := flag.String("acceptance", "", "-all: also write the acceptance checks as JSON to this file")
	flag.IntVar(&startups, "startups", 15, "start-up-only runs per tool and script, interleaved, for the start-up row (-smoke: 1)")
	flag.Parse()
	if *smoke {
		startups = min(startups, 1)
	}
	if *all {
		r := allRounds
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "rounds" {
				r = *rounds
			}
		})
		if err := runAll(*smoke, r, *only, *gotraceBin, *bpftraceBin, *jsonOut, *accOut); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *curves {
		if err := runCurvesMain(*smoke, *only, *gotraceBin, *bpftraceBin, *jsonOut); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	lo := loadOpts{run: *load, dur: *loadDur, workers: *loadWorkers}
	flag.Visit(func(f *flag.Flag) { lo.durGiven = lo.durGiven || f.Name == "load-duration" })
	if err := run(*smoke, *rounds, *only, *gotraceBin, *bpftraceBin, *jsonOut, *scale, lo); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// startups is -startups: the start-up-only runs per tool and script
// (startupRuns).
var startups int

// loadOpts are the load benchmark's flags.
type loadOpts struct {
	run      bool // -load: the load benchmark alone
	dur      time.Duration
	durGiven bool
	workers  int
}

func run(smoke bool, rounds int, only, gotraceBin, bpftraceBin, jsonOut string, scale float64, lo loadOpts) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (BPF, run-time stats, tracefs)")
	}
	if smoke {
		rounds, scale = 1, scale/100
	}
	root, tmp, err := benchDirs()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// Best effort: bpftrace 0.17 complains when it cannot raise the limit,
	// and children inherit ours. Kernels >= 5.11 do not need it.
	_ = rlimit.RemoveMemlock()
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: cannot enable BPF run-time stats (ns/event will be n/a): %v\n", err)
	} else {
		defer stats.Close()
	}

	tools := []*Tool{findBpftrace(bpftraceBin), buildGotrace(root, tmp, gotraceBin), floorTool()}
	wls, err := buildWorkloads(root, tmp, scale)
	if err != nil {
		return err
	}
	if smoke && !lo.durGiven {
		lo.dur = 2 * time.Second
	}
	if lo.workers < 1 {
		return fmt.Errorf("-load-workers %d: want at least 1", lo.workers)
	}
	var loadRep *LoadReport
	runLoads := func() {
		loadRep = runLoadBench(tools, wls["getpid"].Path, lo.workers, lo.dur, only, smoke)
		loadRep.Print(os.Stdout)
	}
	if lo.run {
		for _, t := range tools {
			if t.Err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s unusable: %v\n", t.Name, t.Err)
			}
		}
		runLoads()
		if jsonOut != "" {
			if err := writeJSON(jsonOut, loadRep); err != nil {
				return err
			}
		}
		if smoke {
			return loadVerdict(loadRep, tools[1])
		}
		return nil
	}
	scripts := selectScripts(allScripts(wls), only, smoke)
	if len(scripts) == 0 {
		return fmt.Errorf("no script matches -only %q", only)
	}

	rep := &Report{
		Date:    time.Now().Format("2006-01-02 15:04"),
		Machine: machine(),
		Rounds:  rounds,
		Smoke:   smoke,
		Tools:   []string{tools[0].Name, tools[1].Name, tools[2].Name},
	}
	for _, t := range tools {
		if t.Err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s unusable: %v\n", t.Name, t.Err)
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", t.Name, t.Err))
		}
	}
	for _, sc := range scripts {
		fmt.Fprintf(os.Stderr, "bench: %s ...\n", sc.Name)
		rep.Results = append(rep.Results, benchScript(sc, tools, rounds, startups))
	}
	rep.Print(os.Stdout)
	if smoke {
		// The smoke run covers the load benchmark too, briefly.
		fmt.Println()
		runLoads()
		rep.Load = loadRep
	}
	if jsonOut != "" {
		if err := writeJSON(jsonOut, rep); err != nil {
			return err
		}
	}
	if smoke {
		if err := smokeVerdict(rep, tools, scripts); err != nil {
			return err
		}
		if tools[1].Err == nil {
			return loadVerdict(loadRep, tools[1])
		}
	}
	return nil
}

// runCurvesMain is -curves: the scale curves alone.
func runCurvesMain(smoke bool, only, gotraceBin, bpftraceBin, jsonOut string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (BPF, tracefs)")
	}
	root, tmp, err := benchDirs()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	_ = rlimit.RemoveMemlock()
	tools := []*Tool{findBpftrace(bpftraceBin), buildGotrace(root, tmp, gotraceBin)}
	wls, err := buildWorkloads(root, tmp, 1)
	if err != nil {
		return err
	}
	curves, err := buildCurves(root, tmp, wls, smoke)
	if err != nil {
		return err
	}
	start := time.Now()
	ran := runCurves(curves, tools, only)
	if len(ran) == 0 {
		return fmt.Errorf("no curve matches -only %q", only)
	}
	mode := ""
	if smoke {
		mode = ", smoke run (two smallest sizes)"
	}
	fmt.Printf("scale curves: gotrace vs bpftrace, %s, %s; one run per tool and size%s; %s\n",
		time.Now().Format("2006-01-02 15:04"), machine(), mode, time.Since(start).Round(time.Second))
	printCurves(os.Stdout, ran, tools[0].Name, tools[1].Name)
	if jsonOut != "" {
		if err := writeJSON(jsonOut, ran); err != nil {
			return err
		}
	}
	if smoke {
		for _, c := range ran {
			for _, p := range c.Points {
				if s, ok := p.Samples[tools[1].Name]; ok && s.Err != "" {
					return fmt.Errorf("smoke: gotrace on curve %s at %s: %s", c.Name, p.Label, s.Err)
				}
			}
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Tool is one tracer under test. Err says why it cannot run at all.
type Tool struct {
	Name  string
	Path  string
	Err   error
	Floor bool // the hand-written floor programs (floor.go), not a tracer
}

func findBpftrace(bin string) *Tool {
	t := &Tool{Name: "bpftrace"}
	p, err := exec.LookPath(bin)
	if err != nil && bin == "bpftrace" {
		// The harness installs Debian's bpftrace when it is missing.
		fmt.Fprintln(os.Stderr, "bench: bpftrace not found; apt-get install -y bpftrace")
		cmd := exec.Command("apt-get", "install", "-y", "-qq", "bpftrace")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if ierr := cmd.Run(); ierr == nil {
			p, err = exec.LookPath(bin)
		}
	}
	t.Path, t.Err = p, err
	return t
}

func buildGotrace(root, tmp, bin string) *Tool {
	t := &Tool{Name: "gotrace", Path: bin}
	if bin != "" {
		return t
	}
	t.Path = filepath.Join(tmp, "gotrace")
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	// The release build (deploy/README.md): static, without cgo, whose
	// dynamic loader and libc start cost every run about 1 ms here.
	cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", t.Path, "./cmd/gotrace")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Err = fmt.Errorf("go build ./cmd/gotrace: %v: %s", err, firstLine(string(out)))
	}
	return t
}

func machine() string {
	var u unix.Utsname
	_ = unix.Uname(&u)
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("Linux %s, %d CPUs (%s)", unix.ByteSliceToString(u.Release[:]), runtime.NumCPU(), model)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// smokeVerdict decides a smoke run. gotrace, the tool under test, must
// have run every script. bpftrace is the reference, and version 0.17
// sometimes hangs after SIGINT (seen in CI on the printf script: still
// running 120 s later), so a script bpftrace failed on is run once more
// for bpftrace alone; a second failure is reported but fails the run
// only if bpftrace ran no script at all (then the harness is broken).
func smokeVerdict(rep *Report, tools []*Tool, scripts []*Script) error {
	ref, dut := tools[0], tools[1]
	if dut.Err != nil {
		return fmt.Errorf("smoke: %s unusable: %v", dut.Name, dut.Err)
	}
	for _, r := range rep.Results {
		for _, smp := range r.Samples[dut.Name] {
			if smp.Err != "" {
				return fmt.Errorf("smoke: %s on %s failed: %s", dut.Name, r.Script, smp.Err)
			}
		}
	}
	// The floor programs are the harness's own: they must run too.
	if len(tools) > 2 && tools[2].Floor {
		for _, r := range rep.Results {
			for _, smp := range r.Samples[tools[2].Name] {
				if smp.Err != "" {
					return fmt.Errorf("smoke: floor program of %s failed: %s", r.Script, smp.Err)
				}
			}
		}
	}
	if ref.Err != nil {
		return fmt.Errorf("smoke: %s unusable: %v", ref.Name, ref.Err)
	}
	refOK := 0
	for i, r := range rep.Results {
		failed := ""
		for _, smp := range r.Samples[ref.Name] {
			if smp.Err != "" {
				failed = smp.Err
			}
		}
		if failed != "" {
			fmt.Fprintf(os.Stderr, "bench: smoke: %s on %s failed (%s); once more\n", ref.Name, r.Script, failed)
			again := runOnce(ref, scripts[i])
			if again.Err != "" {
				fmt.Fprintf(os.Stderr, "bench: smoke: %s on %s failed again: %s (a reference-tool failure; not ours)\n", ref.Name, r.Script, again.Err)
				continue
			}
		}
		refOK++
	}
	if refOK == 0 && len(rep.Results) > 0 {
		return fmt.Errorf("smoke: %s failed on every script: the harness is broken", ref.Name)
	}
	return nil
}

// benchDirs finds the repository (the helpers' sources) from the working
// directory and makes the run's temporary directory, which the caller
// removes.
func benchDirs() (root, tmp string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	root, ok := helperbin.FindModule(wd)
	if !ok {
		return "", "", fmt.Errorf("run from inside the gotrace repository (no go.mod found above %s)", wd)
	}
	tmp, err = os.MkdirTemp("", "gotrace-bench")
	return root, tmp, err
}
