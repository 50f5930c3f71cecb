package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
)

// Detaching many perf-event probes is slow, and not because of us.
// Measured on the 6.18 CI kernel with 360 syscalls:sys_enter_* tracepoints:
// releasing one perf link waits for an RCU-tasks-trace grace period inside
// perf_event_detach_bpf_prog (under bpf_event_mutex), then releasing its
// perf event waits for another in perf_trace_event_unreg (under
// event_mutex). Each is ~40 ms and the mutexes serialise every closer, so
// 64 closing goroutines only overlap the two stages: 15.5 s (1 goroutine:
// 29 s; ioctl-attached events, where one close does both stages: 36 s;
// letting process exit close them: 18.9 s; rcu_expedited=1: no change).
//
// So the runtime does not wait for the kernel. Stop makes every probe a
// no-op at once (a flag the programs test first, see stopPrologue); then
// the link and perf-event descriptors are handed to a detached child
// process (the "reaper", this same binary re-executed) that closes them in
// the background, and the tracer prints its maps and exits immediately.

// stopMapName is the one-element array whose value, once non-zero, makes
// every program with the stop prologue return at its first instructions.
const stopMapName = "gotrace_stop"

// handoffMin is the number of slow closers from which detaching is handed
// to the reaper. Even one tracepoint takes 25-90 ms to close (two RCU
// grace periods) while starting the reaper costs us about a millisecond
// (fork and exec; we do not wait for it), so every slow closer goes.
const handoffMin = 1

// reaperArg0 marks the reaper, as its argv[0]; argv[1] carries the number
// of inherited descriptors (fds 3..3+N-1).
const reaperArg0 = "gotrace-internal-detach-reaper"

func init() {
	// The reaper is this binary re-executed, in two stages so that nobody
	// has to wait for it: the first starts the second with the same
	// descriptors and exits at once (its parent reaps it), the second,
	// orphaned and adopted by init, closes them.
	if len(os.Args) != 2 || os.Args[0] != reaperArg0 {
		return
	}
	v := os.Args[1]
	bg := strings.HasPrefix(v, "bg:")
	v = strings.TrimPrefix(v, "bg:")
	v, gated := strings.CutSuffix(v, ":gate")
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		os.Exit(2)
	}
	if gated {
		// fd 3+n is the gate: the tracer closes its end once it has
		// closed every copy of these descriptors it had, so that the
		// reaper's copies are the last and the kernel's slow release
		// happens here, never in the tracer (nor at its exit).
		gate := os.NewFile(uintptr(3+n), "gate")
		io.Copy(io.Discard, gate)
		gate.Close()
	}
	fds := make([]int, n)
	for i := range fds {
		fds[i] = 3 + i
	}
	if !bg {
		files := make([]*os.File, n)
		for i, fd := range fds {
			files[i] = os.NewFile(uintptr(fd), "probe")
		}
		if err := startReaper(files, "bg:"+strconv.Itoa(n)); err != nil {
			closeFDs(fds) // no second stage: close here
		}
		os.Exit(0)
	}
	closeFDs(fds)
	os.Exit(0)
}

// startReaper starts this binary as the reaper with files as fds 3.. and
// val its argument, in a session of its own so the terminal's Ctrl-C
// does not reach it.
func startReaper(files []*os.File, val string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, val)
	cmd.Args[0] = reaperArg0
	cmd.Env = []string{}
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// closeFDs closes fds from 64 goroutines (see above for why that helps).
func closeFDs(fds []int) {
	parallel(len(fds), func(i int) error { return unix.Close(fds[i]) })
}

// parallel runs f(0..n-1) on up to 64 goroutines and joins the errors.
func parallel(n int, f func(i int) error) error {
	workers := min(64, n)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// fdCloser is an attachment made of raw descriptors (a perf event and the
// BPF link on it), which can be handed to the reaper.
type fdCloser struct {
	fds []int
	// stoppable: the attached program has the stop prologue, so the
	// attachment may outlive Stop harmlessly.
	stoppable bool
}

func (c *fdCloser) Close() error {
	var errs []error
	// The link first: it holds a reference to the perf event.
	for _, fd := range c.fds {
		if err := unix.Close(fd); err != nil {
			errs = append(errs, err)
		}
	}
	c.fds = nil
	return errors.Join(errs...)
}

// needsStopSwitch reports whether a program's probes detach slowly:
// every tracepoint (handed to the reaper, see handoffMin) and wildcard
// attach points outside multi links. BEGIN/END never get it (END runs
// after the stop).
func needsStopSwitch(p *compiler.Program, multi bool) bool {
	if multi || p.RawSyscall != "" {
		// A raw tracepoint link detaches at once (no perf event to close).
		return false
	}
	for _, ap := range p.Attach {
		t := ap.Provider.Type()
		if t.StopSwitch || t.StopWildcard && (hasWildcard(ap.Target) || hasWildcard(ap.Func)) {
			return true
		}
	}
	return false
}

// lateCloser is a stop-switched attachment that cilium made (uprobes,
// USDT): its descriptors are not ours to hand over, so the reaper gets
// duplicates of them (attachment.lateFDs) before it is closed.
type lateCloser struct{ io.Closer }

// probeFDs lists this process's perf-event and BPF-link descriptors.
func probeFDs() map[int]bool {
	out := map[int]bool{}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return out
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		t, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue
		}
		if t == "anon_inode:[perf_event]" || t == "anon_inode:bpf_link" {
			out[fd] = true
		}
	}
	return out
}

// stopMapSpec is the flag array.
func stopMapSpec() *ebpf.MapSpec {
	return &ebpf.MapSpec{Name: stopMapName, Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
}

// stopPrologue prepends "if (stop) return 0;" to insns. It uses only r0,
// so r1 (the context) reaches the original code untouched, and a direct
// map-value load (no helper call): about 1 ns per event. The original
// first instruction's metadata (the program's symbol) moves to the new
// entry.
func stopPrologue(insns asm.Instructions) asm.Instructions {
	if len(insns) == 0 {
		return insns
	}
	ld := asm.LoadMapValue(asm.R0, 0, 0).WithReference(stopMapName)
	first := insns[0]
	entry := ld
	entry.Metadata = first.Metadata
	entry = entry.WithReference(stopMapName)
	// The function info (BTF func, needed when the program has
	// subprograms) moves to the entry too: two would not match the kernel's
	// count of subprograms.
	first = btf.WithFuncMetadata(first.WithSymbol(""), nil)
	skip := asm.JEq.Imm(asm.R0, 0, "")
	skip.Offset = 2 // over "r0 = 0; exit"
	out := make(asm.Instructions, 0, len(insns)+5)
	out = append(out,
		entry,
		asm.LoadMem(asm.R0, asm.R0, 0, asm.Word),
		skip,
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		first,
	)
	return append(out, insns[1:]...)
}

// Stop makes every program with the stop prologue return immediately. It
// takes effect for the next event on every CPU: a map write is visible at
// once.
func (l *Loaded) Stop() error {
	m := l.Maps[stopMapName]
	if m == nil {
		return nil
	}
	if err := m.Update(uint32(0), uint32(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("stop probes: %w", err)
	}
	return nil
}

// DetachAsync stops the probes and detaches them without waiting for the
// kernel: when there are many slow perf-event attachments, they are handed
// to a background process that closes them; everything else is closed
// here. After it returns no probe runs (programs without the stop switch
// are detached synchronously) and the caller may exit at once.
func (l *Loaded) DetachAsync() error {
	if l.att == nil {
		return nil
	}
	if l.Maps[stopMapName] == nil {
		return l.Detach()
	}
	if err := l.Stop(); err != nil {
		return errors.Join(err, l.Detach())
	}
	timing.mark("stop")
	var slow []*fdCloser
	var late, rest []io.Closer
	for _, c := range l.att.closers {
		if fc, ok := c.(*fdCloser); ok && fc.stoppable {
			slow = append(slow, fc)
		} else if lc, ok := c.(*lateCloser); ok {
			late = append(late, lc)
		} else {
			rest = append(rest, c)
		}
	}
	if len(slow)+len(late) < handoffMin {
		return l.Detach()
	}
	// Duplicates of the late closers' descriptors go to the reaper, so
	// closing the closers here drops references that are not the last.
	var dups []int
	if len(late) > 0 {
		for _, fd := range l.att.lateFDs {
			if d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0); err == nil {
				dups = append(dups, d)
			}
		}
	}
	l.att.closers = rest
	err := l.Detach()
	timing.mark("detach-rest")
	release, herr := handoff(slow, dups)
	err = errors.Join(err, herr, parallel(len(late), func(i int) error { return late[i].Close() }))
	release() // every reference of ours is closed: the reaper's are the last
	return err
}

// handoff gives the closers' descriptors to the reaper and closes ours.
// It does not wait for the reaper. The reaper holds its copies until the
// returned release is called (or this process exits): the caller calls it
// once it has closed every other reference it holds to the attachments
// (the late closers), so the reaper's copies are always the last ones and
// the kernel's slow release never happens in this process. Without the
// gate, a reaper closing first left the tracer holding the last
// references: SIGTERM to exit took 24-52 s instead of milliseconds. The
// reaper starts in its own session, so Ctrl-C does not reach it.
func handoff(cs []*fdCloser, extra []int) (release func(), _ error) {
	var files []*os.File
	for _, c := range cs {
		for _, fd := range c.fds {
			files = append(files, os.NewFile(uintptr(fd), "probe"))
		}
		c.fds = nil // the files own them now
	}
	for _, fd := range extra {
		files = append(files, os.NewFile(uintptr(fd), "probe"))
	}
	closeHere := func(err error) (func(), error) {
		// No reaper: this is the slow close.
		parallel(len(files), func(i int) error { return files[i].Close() })
		return func() {}, fmt.Errorf("detach process (closed here instead): %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return closeHere(err)
	}
	gateR, gateW, err := os.Pipe() // close-on-exec: only the reaper gets gateR
	if err != nil {
		return closeHere(err)
	}
	cmd := exec.Command(exe, "bg:"+strconv.Itoa(len(files))+":gate")
	cmd.Args[0] = reaperArg0
	cmd.Env = []string{}
	cmd.ExtraFiles = append(files[:len(files):len(files)], gateR)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	startErr := cmd.Start()
	gateR.Close()
	timing.mark("reaper-start")
	if startErr != nil {
		gateW.Close()
		return closeHere(startErr)
	}
	go cmd.Wait()
	for _, f := range files {
		f.Close() // cheap: the reaper holds a reference
	}
	return func() { gateW.Close() }, nil
}
