package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
)

const notifyAttached = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"

// reaperEnv marks gotrace's background detach process (runtime/detach.go).
const reaperEnv = "GOTRACE_DETACH_REAPER="

// Sample is one run of one tool on one script. Zero values mean "not
// measured" where the metric does not apply.
type Sample struct {
	Err        string  `json:",omitempty"`
	NsPerEvent float64 // in-kernel run time per program run
	ProgRuns   uint64  // program runs during the workload
	Insns      int     // xlated instructions of the programs that ran
	LoopNs     int64   // workload loop time, traced
	StartupMs  float64 // start to "attached" (or to exit for SelfExit)
	ExitMs     float64 // SIGINT to exit
	// ExtraSIGINTs counts SIGINTs sent again because the tool sat idle in
	// epoll_wait 5 s after the previous one: bpftrace 0.17 can miss a
	// SIGINT that lands just before it blocks there with no timeout, as a
	// user would press Ctrl-C again. ExitMs still counts from the first.
	ExtraSIGINTs int `json:",omitempty"`
	// DetachBgMs is how long detaching went on in the background after
	// the tracer exited (gotrace hands slow detaches to a reaper process):
	// from exit until no process of the tool's binary is left.
	DetachBgMs float64
	RSSKiB     int64 // peak RSS of the tracer process
	Delivered  int64 // printf lines received
	MapLines   int64 `json:",omitempty"` // output lines "@[...": map entries printed
	LostMsg    int64 // events the tool itself reported lost
	Generated  int64 `json:",omitempty"` // events the workload made (its Ops)
	// The metrics curve: a scrape of gotrace's --metrics endpoint, or
	// bpftrace's print(@) of the same map, the harness triggering it.
	ScrapeMs    float64 `json:",omitempty"` // median wall time of one scrape or print
	ScrapeCPUMs float64 `json:",omitempty"` // tracer CPU (all threads) per scrape or print
	ScrapeKeys  int64   `json:",omitempty"` // keys in the last scrape or print
	Scrapes     int     `json:",omitempty"`
}

var lostRe = regexp.MustCompile(`Lost (\d+) events`)

// runOnce runs tool on sc once: start, wait for attach, run the workload,
// stop with SIGINT, and measure.
func runOnce(tool *Tool, sc *Script) Sample {
	var s Sample
	text, args := sc.Text, []string(nil)
	if sc.PerTool != nil {
		args, text = sc.PerTool(tool.Name)
	}
	cmd := exec.Command(tool.Path, append(args, "-e", text)...)
	if len(text) > 64<<10 {
		// Past the kernel's 128 KiB limit of one argument: a script file.
		f, err := os.CreateTemp("", "gotrace-bench-*.bt")
		if err != nil {
			return fail(s, err)
		}
		defer os.Remove(f.Name())
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(s, err)
		}
		cmd = exec.Command(tool.Path, append(args, f.Name())...)
	}
	cmd.Env = append(os.Environ(), notifyAttached+"=1")
	if tool.Floor {
		cmd = exec.Command(tool.Path)
		cmd.Env = append(os.Environ(), floorCmdEnv(sc)...)
	}
	cmd.Env = append(cmd.Env, sc.Env...)
	var (
		attached  = make(chan time.Time, 1)
		once      sync.Once
		delivered atomic.Int64 // every "E" line
		mapLines  atomic.Int64 // every "@[" line
		tidMu     sync.Mutex
		byTID     = map[int64]int64{} // "E" lines by the tid they name
	)
	take := func(line []byte) bool {
		switch {
		case bytes.Equal(bytes.TrimSpace(line), []byte(notifyAttached)):
			once.Do(func() { attached <- time.Now() })
		case sc.Printf && bytes.HasPrefix(line, []byte("E ")):
			delivered.Add(1)
			tid, _ := strconv.ParseInt(string(bytes.TrimSpace(line[2:])), 10, 64)
			tidMu.Lock()
			byTID[tid]++
			tidMu.Unlock()
		case bytes.HasPrefix(line, []byte("@[")):
			mapLines.Add(1)
		default:
			return false // non-event output, for errors and "Lost" lines
		}
		return true
	}
	start := time.Now()
	tp, err := startTool(cmd, 1<<20, take)
	if err != nil {
		return fail(s, err)
	}
	defer tp.kill() // whatever is left of its group
	pid, exited, output := tp.pid, tp.exited, tp.output
	// The tool's own peak (VmHWM, proc.go), not wait4's maxrss, which
	// starts at the harness's size.
	rss := tp.peakRSSKiB

	if sc.SelfExit {
		// Exits by itself, maybe within milliseconds: polled from the
		// start, or its peak would not be read at all.
		tp.pollNow()
		select {
		case err := <-exited:
			s.StartupMs = ms(time.Since(start))
			s.RSSKiB = rss()
			if err != nil {
				return fail(s, fmt.Errorf("%v: %s", err, firstLine(output())))
			}
			// Both tools announce their probes (bpftrace 0.17 and gotrace
			// --compat 0.17: "Attaching N probes...", gotrace by default as
			// bpftrace 0.26: "Attached N probes"); a tool that printed
			// nothing did not run the script, however fast it exited.
			if out := output(); !strings.Contains(out, "Attaching ") && !strings.Contains(out, "Attached ") {
				return fail(s, fmt.Errorf("exited without attaching anything: %q", firstLine(output())))
			}
		case <-time.After(60 * time.Second):
			return fail(s, errors.New("did not exit within 60s"))
		}
		return s
	}

	select {
	case t := <-attached:
		s.StartupMs = ms(t.Sub(start))
		tp.pollNow()
	case <-exited:
		return fail(s, fmt.Errorf("exited before attaching (%s): %q", cmd.ProcessState, firstLine(output())))
	case <-time.After(120 * time.Second):
		return fail(s, errors.New("not attached after 120s"))
	}

	progs := tracerPrograms(pid)
	defer func() {
		for _, p := range progs {
			p.Close()
		}
	}()
	before := progStats(progs)
	wpid := 0
	if w := sc.Workload; w != nil {
		loop, pid, err := w.Run()
		if err != nil {
			return fail(s, err)
		}
		s.LoopNs, wpid, s.Generated = loop.Nanoseconds(), pid, w.Ops
	}
	after := progStats(progs)
	var runs uint64
	var rt time.Duration
	for i, p := range progs {
		dr := after[i].RunCount - before[i].RunCount
		if dr == 0 {
			continue // BEGIN/END and probes the workload did not hit
		}
		runs += dr
		rt += after[i].Runtime - before[i].Runtime
		if info, err := p.Info(); err == nil {
			if n, err := info.TranslatedSize(); err == nil {
				s.Insns += n / 8
			}
		}
	}
	s.ProgRuns = runs
	if runs > 0 {
		s.NsPerEvent = float64(rt.Nanoseconds()) / float64(runs)
	}
	if sc.Printf {
		// Let the tool drain its buffer: stop when no line came for 300 ms.
		last, deadline := delivered.Load(), time.Now().Add(10*time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(300 * time.Millisecond)
			n := delivered.Load()
			if n == last {
				break
			}
			last = n
		}
	}
	if sc.During != nil {
		if err := sc.During(tool.Name, pid, mapLines.Load, &s); err != nil {
			return fail(s, err)
		}
	}

	took, resent, err := tp.interrupt()
	s.ExtraSIGINTs += resent
	if err != nil {
		return fail(s, err)
	}
	s.ExitMs = ms(took)
	// The next run starts once the kernel has let go of this one's probes:
	// a background detach holds the tracing mutexes, and the next tool's
	// start-up would pay for it.
	s.DetachBgMs = ms(waitGone(tool.Path, 60*time.Second))
	s.RSSKiB = rss()
	s.MapLines = mapLines.Load()
	tidMu.Lock()
	s.Delivered = byTID[int64(wpid)]
	if sc.AnyTID {
		s.Delivered = delivered.Load()
	}
	tidMu.Unlock()
	for _, m := range lostRe.FindAllStringSubmatch(output(), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		s.LostMsg += n
	}
	return s
}

// waitGone waits until no background reaper of the executable path is
// left and returns how long that took.
func waitGone(path string, limit time.Duration) time.Duration {
	start := time.Now()
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0
	}
	for time.Since(start) < limit {
		if !running(want) {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func running(exe string) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if p, err := os.Readlink("/proc/" + e.Name() + "/exe"); err != nil || p != exe {
			continue
		}
		// Only a reaper: other instances of the tool may run on the machine.
		if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(env, []byte(reaperEnv)) {
			return true
		}
	}
	return false
}

func fail(s Sample, err error) Sample {
	s.Err = err.Error()
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// tracerPrograms opens the BPF programs the tracer process holds, found
// through its fds: a program fd's or a link fd's fdinfo names a prog_id.
func tracerPrograms(pid int) []*ebpf.Program {
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	seen := map[ebpf.ProgramID]bool{}
	var progs []*ebpf.Program
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			v, ok := strings.CutPrefix(l, "prog_id:")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if err != nil || seen[ebpf.ProgramID(n)] {
				continue
			}
			seen[ebpf.ProgramID(n)] = true
			if p, err := ebpf.NewProgramFromID(ebpf.ProgramID(n)); err == nil {
				progs = append(progs, p)
			}
		}
	}
	sort.Slice(progs, func(i, j int) bool { return progs[i].FD() < progs[j].FD() })
	return progs
}

func progStats(progs []*ebpf.Program) []ebpf.ProgramStats {
	out := make([]ebpf.ProgramStats, len(progs))
	for i, p := range progs {
		if st, err := p.Stats(); err == nil {
			out[i] = *st
		}
	}
	return out
}

// Untraced workload runs give the baseline for slowdown.
func runUntraced(w *Workload) (int64, error) {
	d, _, err := w.Run()
	return d.Nanoseconds(), err
}
