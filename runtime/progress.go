package runtime

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// progressMin is the number of probes from which attaching and detaching
// report progress (on a terminal, or always with -v).
const progressMin = 100

// progress prints "\rAttaching probes: 150/360" at most every 100 ms to w.
type progress struct {
	w     io.Writer
	verb  string
	total int
	done  atomic.Int64
	last  time.Time
	stop  chan struct{}
	ended chan struct{}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// newProgress returns nil (no reporting) below progressMin probes or when
// w is neither a terminal nor verbose.
func newProgress(w io.Writer, verbose bool, verb string, total int) *progress {
	if w == nil || total <= progressMin || !(verbose || isTerminal(w)) {
		return nil
	}
	p := &progress{w: w, verb: verb, total: total, stop: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(p.ended)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprintf(p.w, "\r%s probes: %d/%d\n", p.verb, p.done.Load(), p.total)
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r%s probes: %d/%d", p.verb, p.done.Load(), p.total)
			}
		}
	}()
	return p
}

func (p *progress) add(n int) {
	if p != nil {
		p.done.Add(int64(n))
	}
}

func (p *progress) end() {
	if p != nil {
		close(p.stop)
		<-p.ended
	}
}

// enableStats turns on the kernel's run-time statistics for BPF programs
// (kernel.bpf_stats_enabled) while the returned closer is open.
func enableStats() (io.Closer, error) {
	c, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return nil, fmt.Errorf("enable BPF run-time statistics: %w", err)
	}
	return c, nil
}

// ProbeStat is one program's hits and in-kernel cost.
type ProbeStat struct {
	Program string
	Probes  []string // the attach points it serves
	Hits    uint64
	Runtime time.Duration
	// RawSyscall: the program runs on every system call of the machine
	// (raw sys_enter/sys_exit, compiler/syscalls.go), so Hits counts runs,
	// most of them filtered out at once.
	RawSyscall string
}

// NsPerHit is the average run time per hit.
func (s ProbeStat) NsPerHit() float64 {
	if s.Hits == 0 {
		return 0
	}
	return float64(s.Runtime.Nanoseconds()) / float64(s.Hits)
}

// Stats reads each attached program's run count and run time (non-zero
// only while run-time statistics are enabled), sorted by program name.
func (l *Loaded) Stats(pl *plan) ([]ProbeStat, error) {
	var out []ProbeStat
	for _, g := range pl.groups {
		prog := l.Programs[g.prog.Name]
		if prog == nil {
			continue
		}
		st, err := prog.Stats()
		if err != nil {
			return nil, fmt.Errorf("stats of %s: %w", g.prog.Name, err)
		}
		ps := ProbeStat{Program: g.prog.Name, Hits: st.RunCount, Runtime: st.Runtime, RawSyscall: g.prog.RawSyscall}
		for _, ap := range g.prog.Attach {
			ps.Probes = append(ps.Probes, apName(ap))
		}
		if len(out) > 0 && out[len(out)-1].Program == ps.Program {
			continue // one program, several attach points: listed once
		}
		out = append(out, ps)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Program < out[j].Program })
	return out, nil
}

// writeStats prints the -v exit report.
func writeStats(w io.Writer, stats []ProbeStat) {
	for _, s := range stats {
		if s.RawSyscall != "" {
			fmt.Fprintf(w, "%s (%s, raw tracepoint %s): %d runs (every system call), %.0f ns/run\n", strings.Join(s.Probes, ", "), s.Program, s.RawSyscall, s.Hits, s.NsPerHit())
			continue
		}
		fmt.Fprintf(w, "%s (%s): %d hits, %.0f ns/hit\n", strings.Join(s.Probes, ", "), s.Program, s.Hits, s.NsPerHit())
	}
}
