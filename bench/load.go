package main

// The load benchmark (issue 19): for a count and a printf script, drive the
// highest getpid rate the machine makes for a fixed time, with each tool
// in turn, and check that every event is accounted for: delivered (the
// count in the map, or a printf line) or reported lost by the tool.
//
//	go run ./bench -load                       # 60 s per script and tool
//	go run ./bench -load -load-duration 10s -load-workers 2
//
// The workload is testdata/helpers/getpid run back to back in chunks by
// -load-workers parallel workers (default: one per CPU, each pinned to its
// CPU with taskset so a thread's events reach a per-CPU buffer in order).
// Every chunk makes exactly N getpid calls and exits, so "generated" is the
// workload's own count: the sum of the N of the chunks that ran. Chunk
// sizes adapt to ~0.25 s each, so the run overshoots its duration by at most
// that.
//
// The printf script numbers each thread's events (@s[tid]++) and prints the
// number and nsecs with the tid, so a gap in a thread's numbers is a lost
// event and its neighbour's nsecs says when the first loss happened; the
// harness notes (on the same CLOCK_MONOTONIC) when the first "Lost N
// events" line reached it: the time from the first loss to its report.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// LoadScript is one script of the load benchmark.
type LoadScript struct {
	Name   string
	Text   string
	Printf bool // lines "E <tid> <seq> <nsecs>"; else a count map @[pid]
}

func loadScripts(comm string) []*LoadScript {
	return []*LoadScript{
		{Name: "count", Text: `tracepoint:syscalls:sys_enter_getpid { @[pid] = count(); }`},
		{Name: "printf", Printf: true, Text: fmt.Sprintf(
			`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @s[tid]++; printf("E %%d %%d %%llu\n", tid, @s[tid], nsecs); }`, comm)},
	}
}

// LoadSample is one tool's run of one load script.
type LoadSample struct {
	Err       string `json:",omitempty"`
	Workers   int
	LoadSec   float64 // wall time of the workload, first chunk start to last chunk end
	Chunks    int     // workload processes run
	Generated int64   // getpid calls the workload made (its own count)
	// SeenByProbe is the script's map summed over the workload's pids at
	// exit: @[pid] for count, @s[tid] (the last sequence number) for printf.
	SeenByProbe int64
	Delivered   int64 // count: the map's sum; printf: "E" lines of workload tids
	LostMsg     int64 // sum of the tool's "Lost N events" lines
	LostLines   int   // how many such lines
	Reordered   int64 // printf: lines with a sequence number below one already seen
	// FirstLossToReportMs: from the first lost event (printf: the nsecs of
	// the event before the first gap) to the first "Lost" line read; NaN-free
	// sentinels: -1 no loss seen, -2 a loss never reported.
	FirstLossToReportMs float64
	RSSKiB              []int64 // VmRSS every second while loaded
	PeakRSSKiB          int64   // max of RSSKiB
	FinalRSSKiB         int64   // VmRSS just before SIGINT
	MaxRSSKiB           int64   // the tool's VmHWM, last read ≤ 10 ms before it exited (proc.go)
	ExitMs              float64 // SIGINT to exit
}

// Accounted says whether delivered + reported lost == generated.
func (s *LoadSample) Accounted() bool { return s.Delivered+s.LostMsg == s.Generated }

// LoadResult is both tools' runs of one load script.
type LoadResult struct {
	Script  string
	Text    string
	Samples map[string]*LoadSample
}

// loadWorkload runs the getpid helper in chunks on workers until deadline.
type loadWorkload struct {
	path    string
	workers int
	smoke   bool

	mu     sync.Mutex
	perPID map[int64]int64 // pid -> getpid calls (tid = pid: single-threaded)
	start  map[int64]int64 // pid -> CLOCK_MONOTONIC ns at its start
	chunks int
	gen    int64
}

func monoNs() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// run drives the load for d and returns its wall time.
func (w *loadWorkload) run(d time.Duration) (time.Duration, error) {
	w.perPID, w.start = map[int64]int64{}, map[int64]int64{}
	taskset, _ := exec.LookPath("taskset")
	ncpu := runtime.NumCPU()
	begin := time.Now()
	deadline := begin.Add(d)
	var wg sync.WaitGroup
	errs := make([]error, w.workers)
	for i := 0; i < w.workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n := int64(100_000)
			if w.smoke {
				n = 20_000
			}
			for time.Now().Before(deadline) {
				var cmd *exec.Cmd
				if taskset != "" {
					cmd = exec.Command(taskset, "-c", strconv.Itoa(i%ncpu), w.path, strconv.FormatInt(n, 10))
				} else {
					cmd = exec.Command(w.path, strconv.FormatInt(n, 10))
				}
				var errb bytes.Buffer
				cmd.Stderr = &errb
				t0 := time.Now()
				m0 := monoNs()
				if err := cmd.Start(); err != nil {
					errs[i] = err
					return
				}
				pid := int64(cmd.Process.Pid)
				if err := cmd.Wait(); err != nil {
					errs[i] = fmt.Errorf("getpid %d: %v: %s", n, err, strings.TrimSpace(errb.String()))
					return
				}
				el := time.Since(t0)
				w.mu.Lock()
				w.perPID[pid] += n
				w.start[pid] = m0
				w.chunks++
				w.gen += n
				w.mu.Unlock()
				// Next chunk: ~0.25 s, and no longer than the time left.
				rate := float64(n) / el.Seconds()
				next := rate * 0.25
				if left := time.Until(deadline).Seconds(); left > 0 && rate*left < next {
					next = rate * left
				}
				n = int64(min(max(next, 1000), 50e6))
			}
		}(i)
	}
	wg.Wait()
	return time.Since(begin), errors.Join(errs...)
}

var mapLineRe = regexp.MustCompile(`(?m)^@\w*\[(\d+)\]: (\d+)$`)

// tidSeq is what the printf reader knows of one thread's numbered events.
type tidSeq struct {
	n      int64  // lines
	max    int64  // highest sequence number seen
	lastNs uint64 // nsecs of the line with max
	// headLost: the thread's first line had a number above 1.
	headLost bool
}

// parseE parses "E <tid> <seq> <ns>" without allocating.
func parseE(line []byte) (tid, seq int64, ns uint64, ok bool) {
	var f [3]uint64
	i, k := 2, 0
	for k < 3 {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		j := i
		var v uint64
		for j < len(line) && line[j] >= '0' && line[j] <= '9' {
			v = v*10 + uint64(line[j]-'0')
			j++
		}
		if j == i {
			return 0, 0, 0, false
		}
		f[k], i, k = v, j, k+1
	}
	return int64(f[0]), int64(f[1]), f[2], true
}

func runLoad(tool *Tool, ls *LoadScript, wl *loadWorkload, d time.Duration) *LoadSample {
	s := &LoadSample{Workers: wl.workers, FirstLossToReportMs: -1}
	failf := func(err error) *LoadSample { s.Err = err.Error(); return s }
	cmd := exec.Command(tool.Path, "-e", ls.Text)
	cmd.Env = append(os.Environ(), notifyAttached+"=1")
	var (
		attached    = make(chan struct{})
		once        sync.Once
		lines       atomic.Int64
		firstReport atomic.Int64 // mono ns of the first "Lost" line
		seqMu       sync.Mutex
		seqs        = map[int64]*tidSeq{}
		reordered   int64
		firstGapNs  = int64(-1) // mono ns of the first loss seen in the sequence
	)
	take := func(line []byte) bool {
		switch {
		case ls.Printf && bytes.HasPrefix(line, []byte("E ")):
			lines.Add(1)
			tid, seq, ns, ok := parseE(line)
			if !ok {
				return true
			}
			seqMu.Lock()
			st := seqs[tid]
			if st == nil {
				st = &tidSeq{}
				seqs[tid] = st
			}
			st.n++
			switch {
			case seq <= st.max:
				reordered++
			default:
				if seq > st.max+1 && st.max > 0 && (firstGapNs < 0 || int64(st.lastNs) < firstGapNs) {
					firstGapNs = int64(st.lastNs)
				}
				st.max, st.lastNs = seq, ns
				if seq > 1 && st.n == 1 {
					st.headLost = true // placed at the thread's start below
				}
			}
			seqMu.Unlock()
			return true
		case bytes.Equal(bytes.TrimSpace(line), []byte(notifyAttached)):
			once.Do(func() { close(attached) })
			return true
		}
		if bytes.Contains(line, []byte("Lost ")) {
			firstReport.CompareAndSwap(0, monoNs())
		}
		return false
	}
	tp, err := startTool(cmd, 4<<20, take)
	if err != nil {
		return failf(err)
	}
	defer tp.kill()
	pid, exited, output := tp.pid, tp.exited, tp.output
	select {
	case <-attached:
		tp.pollNow()
	case <-exited:
		return failf(fmt.Errorf("exited before attaching (%s): %q", cmd.ProcessState, firstLine(output())))
	case <-time.After(120 * time.Second):
		return failf(errors.New("not attached after 120s"))
	}

	// VmRSS every second while the load runs.
	stopRSS := make(chan struct{})
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopRSS:
				return
			case <-t.C:
				if v := vmRSS(pid); v > 0 {
					s.RSSKiB = append(s.RSSKiB, v)
				}
			}
		}
	}()
	wall, werr := wl.run(d)
	s.LoadSec, s.Chunks, s.Generated = wall.Seconds(), wl.chunks, wl.gen
	if ls.Printf {
		// Let the tool drain: stop when no line came for 300 ms.
		last, deadline := lines.Load(), time.Now().Add(10*time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(300 * time.Millisecond)
			if n := lines.Load(); n == last {
				break
			} else {
				last = n
			}
		}
	}
	close(stopRSS)
	<-rssDone
	s.FinalRSSKiB = vmRSS(pid)
	for _, v := range append(s.RSSKiB, s.FinalRSSKiB) {
		s.PeakRSSKiB = max(s.PeakRSSKiB, v)
	}
	if werr != nil {
		return failf(werr)
	}

	took, _, err := tp.interrupt()
	if err != nil {
		return failf(err)
	}
	s.ExitMs = ms(took)
	waitGone(tool.Path, 60*time.Second)
	s.MaxRSSKiB = tp.peakRSSKiB()
	out := output()
	for _, m := range lostRe.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		s.LostMsg += n
		s.LostLines++
	}
	for _, m := range mapLineRe.FindAllStringSubmatch(out, -1) {
		k, _ := strconv.ParseInt(m[1], 10, 64)
		v, _ := strconv.ParseInt(m[2], 10, 64)
		if _, ok := wl.perPID[k]; ok {
			s.SeenByProbe += v
		}
	}
	if !ls.Printf {
		s.Delivered = s.SeenByProbe
		if s.Delivered < s.Generated && s.LostMsg == 0 && !strings.Contains(out, "@[") {
			return failf(fmt.Errorf("no map printed at exit: %q", firstLine(out)))
		}
	} else {
		seqMu.Lock()
		s.Reordered = reordered
		gap := firstGapNs
		for tid, n := range wl.perPID {
			st := seqs[tid]
			switch {
			case st == nil || st.headLost: // its first events lost
				if t := wl.start[tid]; gap < 0 || t < gap {
					gap = t
				}
			case st.max < n: // its last events lost
				if gap < 0 || int64(st.lastNs) < gap {
					gap = int64(st.lastNs)
				}
			}
			if st != nil {
				s.Delivered += st.n
			}
		}
		seqMu.Unlock()
		if gap >= 0 {
			if r := firstReport.Load(); r > 0 {
				s.FirstLossToReportMs = float64(r-gap) / 1e6
			} else {
				s.FirstLossToReportMs = -2
			}
		}
	}
	return s
}

// vmRSS reads VmRSS (KiB) of pid from /proc; 0 if gone.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// LoadReport is a whole load run.
type LoadReport struct {
	Date, Machine string
	Duration      string
	Workers       int
	Smoke         bool
	// UntracedPerSec is the workload's getpid rate with no tracer, over a
	// short run before the others: the machine's ceiling.
	UntracedPerSec float64
	Tools          []string
	Results        []*LoadResult
}

// runLoadBench runs every load script on both tools, one after the other
// (the order alternates per script).
func runLoadBench(tools []*Tool, getpidPath string, workers int, d time.Duration, only string, smoke bool) *LoadReport {
	rep := &LoadReport{
		Date: time.Now().Format("2006-01-02 15:04"), Machine: machine(),
		Duration: d.String(), Workers: workers, Smoke: smoke,
		Tools: []string{tools[0].Name, tools[1].Name},
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	base := &loadWorkload{path: getpidPath, workers: workers, smoke: smoke}
	fmt.Fprintf(os.Stderr, "bench: load untraced, %s ...\n", min(d, 5*time.Second))
	if wall, err := base.run(min(d, 5*time.Second)); err == nil {
		rep.UntracedPerSec = float64(base.gen) / wall.Seconds()
	} else {
		fmt.Fprintf(os.Stderr, "bench: untraced load: %v\n", err)
	}
	for i, ls := range loadScripts(commPrefix + "getpid") {
		if len(want) > 0 && !want[ls.Name] {
			continue
		}
		r := &LoadResult{Script: ls.Name, Text: ls.Text, Samples: map[string]*LoadSample{}}
		order := []*Tool{tools[0], tools[1]}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, t := range order {
			if t.Err != nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "bench: load %s, %s, %s ...\n", ls.Name, t.Name, d)
			wl := &loadWorkload{path: getpidPath, workers: workers, smoke: smoke}
			r.Samples[t.Name] = runLoad(t, ls, wl, d)
		}
		rep.Results = append(rep.Results, r)
	}
	return rep
}

// Print writes the load table: one column per tool.
func (rep *LoadReport) Print(w io.Writer) {
	mode := ""
	if rep.Smoke {
		mode = ", smoke run"
	}
	fmt.Fprintf(w, "load: gotrace vs bpftrace, %s, %s; %s per script and tool, %d getpid worker(s), untraced %.0f getpid/s%s\n\n",
		rep.Date, rep.Machine, rep.Duration, rep.Workers, rep.UntracedPerSec, mode)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "script\tmetric\t%s\t%s\t\n", rep.Tools[0], rep.Tools[1])
	mib := func(k int64) string { return fmt.Sprintf("%.1f", float64(k)/1024) }
	rows := []struct {
		name   string
		printf bool // printf only
		get    func(s *LoadSample) string
	}{
		{"load s", false, func(s *LoadSample) string { return fmt.Sprintf("%.1f", s.LoadSec) }},
		{"events generated", false, func(s *LoadSample) string { return fmt.Sprint(s.Generated) }},
		{"generated/s", false, func(s *LoadSample) string { return fmt.Sprintf("%.0f", float64(s.Generated)/s.LoadSec) }},
		{"seen by probe (map)", false, func(s *LoadSample) string { return fmt.Sprint(s.SeenByProbe) }},
		{"events delivered", false, func(s *LoadSample) string { return fmt.Sprint(s.Delivered) }},
		{"delivered/s", true, func(s *LoadSample) string { return fmt.Sprintf("%.0f", float64(s.Delivered)/s.LoadSec) }},
		{"lost (generated - delivered)", false, func(s *LoadSample) string { return fmt.Sprint(s.Generated - s.Delivered) }},
		{"lost (tool's report)", false, func(s *LoadSample) string {
			return fmt.Sprintf("%d in %d line(s)", s.LostMsg, s.LostLines)
		}},
		{"every event accounted", false, func(s *LoadSample) string {
			if s.Accounted() {
				return "yes"
			}
			return fmt.Sprintf("no (%+d)", s.Delivered+s.LostMsg-s.Generated)
		}},
		{"first loss to report ms", true, func(s *LoadSample) string {
			switch s.FirstLossToReportMs {
			case -1:
				return "no loss"
			case -2:
				return "never reported"
			}
			return fmt.Sprintf("%.1f", s.FirstLossToReportMs)
		}},
		{"out-of-order lines", true, func(s *LoadSample) string { return fmt.Sprint(s.Reordered) }},
		{"peak RSS MiB (1 s samples)", false, func(s *LoadSample) string { return mib(s.PeakRSSKiB) }},
		{"final RSS MiB", false, func(s *LoadSample) string { return mib(s.FinalRSSKiB) }},
		{"max RSS MiB (VmHWM)", false, func(s *LoadSample) string { return mib(s.MaxRSSKiB) }},
		{"Ctrl-C to exit ms", false, func(s *LoadSample) string { return fmt.Sprintf("%.0f", s.ExitMs) }},
	}
	var errs []string
	for _, r := range rep.Results {
		first := true
		for _, row := range rows {
			if row.printf && r.Script != "printf" {
				continue
			}
			name := ""
			if first {
				name, first = r.Script, false
			}
			fmt.Fprintf(tw, "%s\t%s\t", name, row.name)
			for _, t := range rep.Tools {
				s := r.Samples[t]
				if s == nil || s.Err != "" {
					fmt.Fprint(tw, "n/a\t")
					continue
				}
				fmt.Fprintf(tw, "%s\t", row.get(s))
			}
			fmt.Fprintln(tw)
		}
		for _, t := range rep.Tools {
			if s := r.Samples[t]; s != nil && s.Err != "" {
				errs = append(errs, fmt.Sprintf("%s on %s: %s", t, r.Script, s.Err))
			}
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nRSS MiB over time (VmRSS, every 10th 1 s sample and the last):")
	for _, r := range rep.Results {
		for _, t := range rep.Tools {
			s := r.Samples[t]
			if s == nil || s.Err != "" {
				continue
			}
			var v []string
			for i, k := range s.RSSKiB {
				if i%10 == 9 || i == len(s.RSSKiB)-1 {
					v = append(v, mib(k))
				}
			}
			fmt.Fprintf(w, "  %-7s %-8s %s\n", r.Script, t, strings.Join(v, " "))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintln(w, "\nn/a because:")
		for _, e := range dedup(errs) {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// loadVerdict fails a smoke run when gotrace failed a load script or did
// not account for every event (delivered + reported lost == generated):
// that is a correctness property, not a noisy number.
func loadVerdict(rep *LoadReport, dut *Tool) error {
	for _, r := range rep.Results {
		s := r.Samples[dut.Name]
		if s == nil {
			return fmt.Errorf("smoke: load %s: %s did not run", r.Script, dut.Name)
		}
		if s.Err != "" {
			return fmt.Errorf("smoke: load %s: %s failed: %s", r.Script, dut.Name, s.Err)
		}
		if !s.Accounted() {
			return fmt.Errorf("smoke: load %s: %s: %d generated, %d delivered, %d reported lost: events unaccounted",
				r.Script, dut.Name, s.Generated, s.Delivered, s.LostMsg)
		}
	}
	return nil
}
