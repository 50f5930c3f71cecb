package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/runtime/output"
)

// NotifyAttachedEnv is the variable bpftrace's test runner sets to learn
// when every probe is attached (the command sets Options.NotifyAttached
// from it); the line printed is its name.
const NotifyAttachedEnv = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"

// RingBufMap and the loss counters are the internal maps the runtime knows
// by name (compiler/ABI.md). The counters are optional u64 ARRAY or
// PERCPU_ARRAY maps the compiler increments when bpf_ringbuf_output fails
// or a map update fails with E2BIG.
const (
	RingBufMap    = "ringbuf"
	LostEventsMap = "lost_events"
	MapFullMap    = "map_full"
)

type session struct {
	spec *compiler.Spec
	opts Options
	l    *Loaded
	pl   *plan
	mu   sync.Mutex // serialises printer calls

	exited   bool // an exit() record was read
	exitCode int  // its code (0 for exit())
	// testsFailed: a test: probe failed (--mode test exits 1).
	testsFailed bool

	lostSeen uint64 // lost events already reported

	// dropAfter (unix ns, 0: never) bounds the catch-up after Ctrl-C: a
	// flood of queued records (system() on every sched_switch) must not
	// keep the user waiting; records read later are dropped and counted.
	dropAfter atomic.Int64
	dropped   uint64

	// What the phases of run hand on (see run).
	env        *Env
	child      *childProc                   // -c, nil without
	rd         *ringReader                  // nil: the script prints nothing
	exitCh     chan struct{}                // closed by the reader at exit()
	readerDone chan error                   // the reader's end
	sigs       <-chan os.Signal             // SIGINT/SIGTERM, once caught
	sigsCaught chan struct{}                // closed once sigs and usr1 are caught (catchSignals)
	usr1       chan os.Signal               // SIGUSR1, caught, until attach hands it to onSIGUSR1
	holder     interface{ Release() error } // BEGIN's output held (0.26), nil if not
	cleanups   []func() error               // run's cleanups, in the order added
}

// interruptGrace is how long the reader may keep printing queued records
// after SIGINT/SIGTERM.
const interruptGrace = 100 * time.Millisecond

func newSession(spec *compiler.Spec, opts Options) (*session, error) {
	if spec == nil {
		return nil, errors.New("run: no program")
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Printer == nil && !opts.DryRun {
		return nil, errors.New("run: no printer")
	}
	return &session{spec: spec, opts: opts}, nil
}

// run is a script's life, phase by phase: load, (or a dry run's report),
// prepare the attach (the -c child, the probe plan), start the reader,
// BEGIN, attach, wait for a stop condition, then detach, END and the exit
// report. Each phase leaves its cleanups on s.cleanups; they run, last
// first, on every return, before the maps and programs close.
func (s *session) run(ctx context.Context) (err error) {
	timing.mark("before-run")
	defer func() {
		DiscardTracepoints() // a failure before the attach took them
		if uerr := s.unwind(); uerr != nil && err == nil {
			err = uerr
		}
		if s.l == nil {
			return // nothing was loaded
		}
		if cerr := s.l.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("detach: %w", cerr)
		}
		timing.mark("close")
	}()
	if err := s.load(); err != nil {
		return err
	}
	if s.opts.DryRun {
		s.reportUnattachable()
		return nil
	}
	if err := s.prepare(); err != nil {
		return err
	}
	if err := s.startReader(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.attach(); err != nil {
		return err
	}
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.end()
}

// later adds a cleanup for run to do on its way out.
func (s *session) later(f func()) {
	s.cleanups = append(s.cleanups, func() error { f(); return nil })
}

// laterErr adds a cleanup whose error is run's when run had none.
func (s *session) laterErr(f func() error) { s.cleanups = append(s.cleanups, f) }

// unwind runs the cleanups, last added first, and returns the first error.
func (s *session) unwind() error {
	var first error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		if err := s.cleanups[i](); err != nil && first == nil {
			first = err
		}
	}
	s.cleanups = nil
	return first
}

// load creates the maps and programs (the verifier's full log on stderr
// with -v when it refuses one), writes the values programs read at start,
// and hands the loaded objects to OnLoad.
func (s *session) load() error {
	if !s.opts.DryRun {
		s.catchSignals() // while the script loads
	}
	l, err := LoadWith(s.spec, LoadOptions{VerifyOnly: s.opts.DryRun, NoFeature: s.opts.NoFeature, RingBufPages: s.opts.RingBufPages, StackMapEntries: s.opts.StackMapEntries})
	if err != nil {
		var ve *VerifierError
		if s.opts.Verbose && errors.As(err, &ve) {
			fmt.Fprintf(s.opts.Stderr, "%s\n", ve.FullLog())
		}
		return err
	}
	s.l = l
	l.runOn = s.opts.RunOn
	timing.mark("load")
	if err := l.writeStart(); err != nil {
		return err
	}
	if err := l.writeTaiOffset(); err != nil {
		return err
	}
	if s.opts.OnLoad != nil {
		s.opts.OnLoad(l)
	}
	if s.opts.Verbose {
		s.reportPrograms()
	}
	return nil
}

// reportUnattachable warns, after a dry run, of the programs that passed
// the verifier only loaded another way (fentry/fexit as kprobes).
func (s *session) reportUnattachable() {
	var names []string
	for _, e := range s.l.Unattachable {
		name := "program"
		var pe *ProbeError
		if errors.As(e, &pe) && pe.AP != nil {
			name = pe.AP.Raw
		}
		names = append(names, name)
	}
	if len(names) > 0 {
		// One line however many functions a wildcard expanded to.
		if len(names) == 1 {
			fmt.Fprintf(s.opts.Stderr, "WARNING: %s: %v; it passed the verifier loaded as a kprobe-type program instead, and cannot attach here\n", names[0], errNoTrampoline)
		} else {
			fmt.Fprintf(s.opts.Stderr, "WARNING: %d programs (%s, ...): %v; they passed the verifier loaded as kprobe-type programs instead, and cannot attach here\n", len(names), names[0], errNoTrampoline)
		}
	}
}

// prepare sets up what attaching needs: the providers' Env, -v's run
// statistics, the -p process checked, the -c child started stopped, and
// the plan of probes (the wildcards expanded); 0.17 says "Attaching N
// probes..." here.
func (s *session) prepare() error {
	l := s.l
	env := &Env{PID: s.opts.PID, Warn: func(msg string) { fmt.Fprintf(s.opts.Stderr, "WARNING: %s\n", msg) },
		Progress: s.opts.Stderr, Verbose: s.opts.Verbose, Stderr: s.opts.Stderr, MissingProbes: s.opts.MissingProbes}
	s.env = env
	if s.opts.Compat.Legacy() {
		env.MissingProbes = "legacy"
	}
	env.TracerOnly = s.opts.Mode == "test" // only BEGIN, the tests and END run
	env.Unsafe = s.opts.Unsafe
	if s.opts.Quiet {
		env.Progress = nil // -q: no progress line, even on a terminal
	}
	if s.opts.Verbose {
		// Run counts and run times for the exit report (-v).
		if c, err := enableStats(); err != nil {
			fmt.Fprintf(s.opts.Stderr, "WARNING: %v\n", err)
		} else {
			s.later(func() { c.Close() })
		}
	}
	if env.PID > 0 {
		if err := syscall.Kill(env.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("ERROR: pid '%d' does not exist", env.PID)
		}
	}
	if len(s.opts.Command) > 0 {
		// The child is not forked while the signals' masks change.
		if s.sigsCaught != nil {
			<-s.sigsCaught
		}
		// The child stays stopped at its first instruction until every
		// probe is attached; its thread must stay ours until released.
		s.later(lockThread())
		child, err := startStopped(s.opts.Command, s.opts.CommandEnv)
		if err != nil {
			return err
		}
		s.child = child
		s.later(child.kill)
		env.PID, env.Command = child.pid, child.path
		if err := l.writeCpid(child.pid); err != nil {
			return err
		}
	}

	pl, err := l.Expand(env, s.opts.MaxProbes)
	if err != nil {
		return err
	}
	s.pl = pl
	if tp, ok := s.opts.Printer.(*TextPrinter); ok {
		tp.sym.programs(pl) // symbols.go
	}
	timing.mark("expand")
	if !s.opts.Compat.AttachedAfter() {
		// bpftrace 0.17: "Attaching N probes..." before anything attaches.
		if err := s.attachMessage(pl.total); err != nil {
			return err
		}
	}
	if f, ok := s.opts.Stdout.(interface{ Flush() error }); ok {
		f.Flush() // before BEGIN's output
	}
	return nil
}

// startReader starts reading the ring buffer (and watching for lost
// events) and skboutput()'s packets before BEGIN, so BEGIN's output
// prints while the probes attach. A failure later must not leave the
// reader behind: closing the ring buffer (a cleanup) ends it.
func (s *session) startReader() error {
	s.exitCh = make(chan struct{})
	s.readerDone = make(chan error, 1)
	if m := s.l.Maps[RingBufMap]; m != nil {
		rd := s.l.takeRing() // made while the script compiled (PrepareRing)
		if rd == nil {
			var err error
			if rd, err = newRingReader(m); err != nil {
				return fmt.Errorf("open ring buffer: %w", err)
			}
		}
		s.rd = rd
		s.later(func() { rd.Close() })
	}
	// skboutput()'s pcap files and packet reader (skboutput.go).
	skb, err := startSkbOutput(s.l)
	if err != nil {
		return err
	}
	s.laterErr(skb.stop)
	rd := s.rd
	if rd == nil {
		return nil
	}
	if s.opts.Mode != "test" { // --mode test: after the tests (testprobe.go)
		s.goReadLoop()
	}
	stopLoss := make(chan struct{})
	s.later(func() { close(stopLoss) })
	go s.watchLost(stopLoss)
	return nil
}

// begin runs BEGIN before any other probe is attached, as in bpftrace:
// state it sets (@start = nsecs) predates every event. From 0.26 its
// output is held until "Attached N probes" prints. --mode bench runs the
// bench probes next.
func (s *session) begin() error {
	l, pl := s.l, s.pl
	holder, _ := s.opts.Stdout.(interface {
		Hold()
		Release() error
	})
	if s.opts.Compat.AttachedAfter() && holder != nil {
		holder.Hold()
		s.holder = holder
		s.later(func() { holder.Release() }) // on failure paths too: what BEGIN printed
	}
	if err := l.RunBegin(pl); err != nil {
		return err
	}
	timing.mark("begin")
	if len(pl.bench) > 0 && s.opts.Mode != "bench" {
		return fmt.Errorf("bench:%s: bench probes run with --mode bench (or --bench)", pl.bench[0].name)
	}
	if s.opts.Mode != "test" {
		if err := testsOutsideTestMode(pl); err != nil {
			return err
		}
	} else if err := s.runTestMode(); err != nil {
		return err
	}
	if s.opts.Mode == "bench" {
		res, err := l.RunBench(pl)
		if err != nil {
			return err
		}
		if bp, ok := s.opts.Printer.(interface{ Benchmarks([]output.Bench) error }); ok {
			if err := bp.Benchmarks(res); err != nil {
				return err
			}
		}
	}
	return nil
}

// attach catches SIGINT/SIGTERM (and SIGUSR1), attaches every probe,
// says so ("Attached N probes", the test runner's notify line, BEGIN's
// held output), runs the iterators and lets the -c child run.
func (s *session) attach() error {
	l, pl := s.l, s.pl
	// SIGINT/SIGTERM (and SIGUSR1) are caught from here on at the latest,
	// before the probes attach and the notify line tells a runner it may
	// interrupt: a signal that came during the attach or right after that
	// line still runs END and prints.
	if s.sigsCaught != nil {
		<-s.sigsCaught
		// SIGUSR1 is acted on from here (one that came before waits).
		stop := make(chan struct{})
		s.later(func() { close(stop) })
		s.onSIGUSR1(s.usr1, stop)
		s.usr1 = nil
	}

	start := time.Now()
	if err := l.Attach(pl, s.env); err != nil {
		return err
	}
	timing.mark("attach")
	if s.opts.Verbose {
		fmt.Fprintf(s.opts.Stderr, "attached %d probes in %v\n", pl.total, time.Since(start).Round(time.Millisecond))
	}
	notify := func() {
		if !s.opts.NotifyAttached {
			return
		}
		if s.opts.Compat.NotifyOnStdout() && s.opts.Stdout != nil {
			// bpftrace 0.26 prints it on stdout, before BEGIN's output
			// (its json-output tests drop that first line with tail):
			// in front of what BEGIN printed, which is held until now.
			if p, ok := s.opts.Stdout.(interface{ Prepend([]byte) error }); ok {
				p.Prepend([]byte(NotifyAttachedEnv + "\n"))
				return
			}
			fmt.Fprintln(s.opts.Stdout, NotifyAttachedEnv)
			return
		}
		// bpftrace 0.17: on stderr.
		fmt.Fprintln(s.opts.Stderr, NotifyAttachedEnv)
	}
	if s.opts.Compat.AttachedAfter() {
		// bpftrace 0.26: "Attached N probes" once everything is attached,
		// then the runner's notify line, then BEGIN's output (which may
		// not end in a newline).
		if err := s.attachMessage(pl.total); err != nil {
			return err
		}
		notify()
		if s.holder != nil {
			if err := s.holder.Release(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
	} else {
		notify()
	}
	if f, ok := s.opts.Stdout.(interface{ Flush() error }); ok {
		f.Flush() // the runner waits for these lines
	}

	// Iterators run to their end now, everything attached.
	if err := l.RunIters(s.iterOutput); err != nil {
		return err
	}
	if s.child != nil {
		if err := s.child.release(); err != nil {
			return err
		}
	}
	return nil
}

// wait reads events until the first stop condition: exit(), a reader
// error, the context, a signal, the -c child or -p process ending, or a
// timeout (at once when nothing can fire any more). The probes then go
// quiet and the reader catches up.
func (s *session) wait(ctx context.Context) error {
	l, pl, rd, child := s.l, s.pl, s.rd, s.child
	var childDone <-chan struct{}
	if child != nil {
		childDone = child.done
	}
	// Stop conditions (sigs is registered before attaching).
	var pidDone <-chan struct{}
	if s.opts.PID > 0 {
		stop := make(chan struct{})
		s.later(func() { close(stop) })
		pidDone = watchPID(s.opts.PID, stop)
	}
	var timeout <-chan time.Time
	if s.opts.Mode == "bench" || s.opts.Mode == "test" || s.opts.Compat.ExitAfterBeginEnd() && len(pl.groups) == 0 && len(pl.signal) == 0 && child == nil && s.opts.PID == 0 ||
		pl.onlyIters() && len(pl.signal) == 0 && child == nil && s.opts.PID == 0 {
		// Only BEGIN/END probes: nothing can fire any more, so bpftrace
		// 0.26 ends right after BEGIN (0.17 waits for Ctrl-C); a
		// self:signal probe still can.
		now := make(chan time.Time, 1)
		now <- time.Now()
		timeout = now
	}
	if s.opts.Timeout > 0 && timeout == nil {
		t := time.NewTimer(s.opts.Timeout)
		s.later(func() { t.Stop() })
		timeout = t.C
	}

	var loopErr error
	stopReader := func() {
		// Probes with the stop switch go quiet at once, so the reader
		// catches up with a bounded backlog (the ring's contents) however
		// fast events came.
		if err := l.Stop(); err != nil {
			fmt.Fprintf(s.opts.Stderr, "WARNING: %v\n", err)
		}
		if rd == nil {
			return
		}
		rd.Flush() // hand out what is there, then stop
		if e := <-s.readerDone; e != nil && loopErr == nil {
			loopErr = e
		}
	}
	select {
	case <-s.exitCh:
		if e := <-s.readerDone; e != nil {
			loopErr = e
		}
	case e := <-s.readerDone:
		loopErr = e
	case <-ctx.Done():
		stopReader()
	case <-s.sigs:
		timing.reset()
		s.dropAfter.Store(time.Now().Add(interruptGrace).UnixNano())
		stopReader()
	case <-childDone:
		stopReader()
	case <-pidDone:
		stopReader()
	case <-timeout:
		stopReader()
	}
	timing.mark("stop-reader")
	return loopErr
}

// end stops and detaches first so no more events arrive (slow perf-event
// attachments finish detaching in the background, detach.go), then runs
// END, prints what is left and the maps, and says how the script exited.
func (s *session) end() error {
	l, pl, rd := s.l, s.pl, s.rd
	if s.opts.Verbose {
		if err := l.Stop(); err == nil {
			if st, err := l.Stats(pl); err == nil {
				writeStats(s.opts.Stderr, st)
			}
		}
	}
	if err := l.DetachAsync(); err != nil {
		fmt.Fprintf(s.opts.Stderr, "WARNING: detach: %v\n", err)
	}
	timing.mark("detach")
	if s.exited && rd != nil {
		// bpftrace prints nothing after exit(): records the probes wrote
		// after the exit record, before they were detached, are dropped.
		if err := s.discard(rd); err != nil {
			return err
		}
	}
	s.dropAfter.Store(0) // END's own output always prints
	if s.dropped > 0 {
		fmt.Fprintf(s.opts.Stderr, "WARNING: %d events queued at the interrupt were not printed\n", s.dropped)
	}
	if err := l.RunEnd(pl); err != nil {
		return err
	}
	timing.mark("end")
	if rd != nil {
		if err := s.drain(rd); err != nil {
			return err
		}
	}
	timing.mark("drain")
	if err := s.finish(); err != nil {
		return err
	}
	timing.mark("finish")
	if s.exited && s.exitCode != 0 {
		return &ExitCode{Code: s.exitCode}
	}
	if s.testsFailed {
		return errTestsFailed
	}
	return nil
}

// goReadLoop starts the ring buffer's reader goroutine.
func (s *session) goReadLoop() {
	go func() { s.readerDone <- s.readLoop(s.rd, s.exitCh) }()
}

// batchPause is how long the reader lets records gather once it has
// emptied the ring, when it empties it more often than every 2*batchPause.
// A reader faster than the producer would otherwise take one wakeup (and
// one write) per record: at a million events a second that costs the
// traced workload more than the events themselves. A pause lets at most
// rate*batchPause records wait (2,400 at the printf-loss curve's top rate
// of 1.2 M/s, 58 KiB), far below the ring's size, and adds at most
// batchPause to when a line shows. 2 ms rather than 0.5 ms: at 10^6
// events/s the reader's context switches fell from about 5,000 to 3,000
// a second and its CPU time by about a quarter.
const batchPause = 2 * time.Millisecond

// batchRecords bounds the records dispatched under one hold of s.mu, so
// the loss reporter and SIGUSR1's map printing get their turn during a
// long catch-up.
const batchRecords = 1 << 14

// readLoop dispatches records until exit(), a flush or an error, a batch
// at a time (ringReader.consume). When a batch leaves the ring empty the
// printer may flush (Output.Drained).
func (s *session) readLoop(rd *ringReader, exitCh chan<- struct{}) error {
	drained, _ := s.opts.Printer.(interface{ Drained() error })
	var lastDrain time.Time
	for {
		s.mu.Lock()
		n, more, exit, err := rd.consume(s.dispatchLocked, batchRecords)
		s.mu.Unlock()
		if errors.Is(err, errRingClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read ring buffer: %w", err)
		}
		if exit {
			close(exitCh)
			return nil
		}
		if more {
			continue
		}
		if n > 0 {
			if drained != nil {
				s.mu.Lock()
				err := drained.Drained()
				s.mu.Unlock()
				if err != nil {
					return err
				}
			}
			now := time.Now()
			if now.Sub(lastDrain) < 2*batchPause && !rd.flushed.Load() {
				time.Sleep(batchPause)
			}
			lastDrain = now
			continue // what came meanwhile, before waiting
		}
		switch err := rd.wait(); {
		case errors.Is(err, errRingFlushed):
			// Hand out what is there, then stop.
			return s.drain(rd)
		case errors.Is(err, errRingClosed):
			return nil
		case err != nil:
			return err
		}
	}
}

// discard reads and drops what is in the ring buffer now.
func (s *session) discard(rd *ringReader) error {
	return readNow(rd, func([]byte) (bool, error) { return false, nil })
}

// drain handles what is left in the ring buffer (END's output).
func (s *session) drain(rd *ringReader) error {
	return readNow(rd, s.dispatch)
}

// readNow hands each record in the ring buffer now to handle, until it is
// empty or handle says stop (exit()) or fails.
func readNow(rd *ringReader, handle func([]byte) (stop bool, err error)) error {
	for {
		_, more, stop, err := rd.consume(handle, 0)
		if errors.Is(err, errRingClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read ring buffer: %w", err)
		}
		if stop || !more {
			return nil
		}
	}
}

// dispatch handles one ring-buffer record; it reports whether the record
// was exit().
func (s *session) dispatch(rec []byte) (exit bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dispatchLocked(rec)
}

// dispatchLocked is dispatch for a caller holding s.mu. rec is valid only
// until it returns (it is the ring's memory).
func (s *session) dispatchLocked(rec []byte) (exit bool, err error) {
	if len(rec) < 8 {
		return false, fmt.Errorf("ring buffer record of %d bytes has no event ID", len(rec))
	}
	id := binary.LittleEndian.Uint64(rec)
	if id >= uint64(len(s.spec.Events)) {
		return false, fmt.Errorf("ring buffer record has unknown event ID %d", id)
	}
	ev := s.spec.Events[id]
	payload := rec[8:]
	if d := s.dropAfter.Load(); d != 0 && ev.Kind != compiler.EvExit && time.Now().UnixNano() > d {
		s.dropped++
		return false, nil
	}
	switch ev.Kind {
	case compiler.EvExit:
		// The first exit() decides the status; its payload is the code
		// when exit(code) gave one (compiler/ABI.md).
		if !s.exited {
			s.exited = true
			if len(payload) >= 8 {
				s.exitCode = int(int64(binary.LittleEndian.Uint64(payload)))
			}
			// As bpftrace's reader does on the exit record (its
			// request_finalize detaches every probe there), the probes
			// stop now, from the reader, not after the hand-off to the
			// main loop; until this record was read they ran on.
			if s.l != nil {
				if err := s.l.Stop(); err != nil {
					return true, err
				}
			}
		}
		return true, nil
	case compiler.EvPrint:
		ms := s.l.mapSpecByUserName(ev.Map)
		if ms == nil {
			return false, fmt.Errorf("print: unknown map %s", ev.Map)
		}
		md, err := s.l.ReadMap(ms)
		if err != nil {
			return false, err
		}
		return false, s.opts.Printer.PrintMap(ev, payload, md)
	case compiler.EvClear, compiler.EvZero:
		ms := s.l.mapSpecByUserName(ev.Map)
		if ms == nil {
			return false, fmt.Errorf("clear/zero: unknown map %s", ev.Map)
		}
		if ev.Kind == compiler.EvClear {
			if !s.opts.Compat.CountKeepsZero() {
				return false, s.l.DeleteAll(ms)
			}
			return false, s.l.ClearMap(ms)
		}
		return false, s.l.ZeroMap(ms)
	}
	return false, s.opts.Printer.Event(ev, payload)
}

// catchSignals starts catching SIGINT/SIGTERM (into s.sigs) and SIGUSR1,
// on another goroutine, while the script loads; attach waits for it
// (sigsCaught) before it attaches anything, so they are caught from the
// attach on at the latest, and a -c child is forked only once they are.
// One that comes while the script loads is acted on once the probes are
// attached (SIGINT: END runs and the maps print), as one during the
// attach. Catching a signal not caught before is a round trip to the Go
// runtime's signal-mask thread for each signal, about 0.1 ms apiece here,
// and the first starts that thread: on the main thread, just before the
// attach, the three were most of attaching one tracepoint. With
// Options.Signals (tests) that channel serves and nothing is caught.
func (s *session) catchSignals() {
	if s.opts.Signals != nil {
		s.sigs = s.opts.Signals
		return
	}
	ch, usr1, caught := make(chan os.Signal, 2), make(chan os.Signal, 1), make(chan struct{})
	s.sigs, s.sigsCaught = ch, caught
	go func() {
		defer close(caught)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		signal.Notify(usr1, syscall.SIGUSR1)
	}()
	s.usr1 = usr1
	s.later(func() {
		<-caught
		signal.Stop(ch)
		if s.usr1 != nil {
			signal.Stop(usr1) // attach did not hand it to onSIGUSR1
		}
	})
}

// onSIGUSR1 acts on SIGUSR1, caught into ch, until stop is closed:
// bpftrace 0.17 prints every map each time it arrives; in 0.26 it runs
// the self:signal:SIGUSR1 probes (in script order), and neither prints
// the maps nor ends tracing.
func (s *session) onSIGUSR1(ch chan os.Signal, stop <-chan struct{}) {
	p, ok := s.opts.Printer.(interface{ AllMaps([]*MapData) error })
	dump := ok && s.opts.Compat.SignalPrintsMaps()
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-stop:
				return
			case <-ch:
			}
			if s.pl != nil && len(s.pl.signal) > 0 {
				if err := s.l.RunSignal(s.pl); err != nil {
					fmt.Fprintf(s.opts.Stderr, "WARNING: SIGUSR1: %v\n", err)
				}
			}
			if !dump {
				continue
			}
			if err := s.printAllMaps(p); err != nil {
				fmt.Fprintf(s.opts.Stderr, "WARNING: SIGUSR1: %v\n", err)
			}
		}
	}()
}

func (s *session) printAllMaps(p interface{ AllMaps([]*MapData) error }) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps, err := s.userMaps()
	if err != nil {
		return err
	}
	if err := p.AllMaps(maps); err != nil {
		return err
	}
	return s.opts.Printer.Flush()
}

// userMaps reads every user map, sorted by name (callers hold s.mu).
func (s *session) userMaps() ([]*MapData, error) {
	var maps []*MapData
	for _, ms := range s.l.UserMaps() {
		md, err := s.l.ReadMap(ms)
		if err != nil {
			return nil, err
		}
		maps = append(maps, md)
	}
	sort.SliceStable(maps, func(i, j int) bool { return maps[i].Spec.User.Name < maps[j].Spec.User.Name })
	return maps, nil
}

// finish prints every user map (sorted by name) and the loss counters.
func (s *session) finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps, err := s.userMaps()
	if err != nil {
		return err
	}
	// Losses first, as bpftrace reports them while events stream.
	if err := s.reportLost(); err != nil {
		return err
	}
	if !s.opts.NoExitMaps {
		if err := s.opts.Printer.Maps(maps); err != nil {
			return err
		}
	}
	if err := s.opts.Printer.Flush(); err != nil {
		return err
	}
	if w, ok := s.opts.Printer.(interface{ ExitWarnings() []string }); ok {
		for _, line := range w.ExitWarnings() {
			fmt.Fprintln(s.opts.Stderr, line)
		}
	}
	if n := s.l.counter(MapFullMap); n > 0 {
		if s.opts.Compat.Legacy() {
			fmt.Fprintf(s.opts.Stderr, "WARNING: %d map updates failed because a map was full (raise GOTRACE_MAP_KEYS_MAX)\n", n)
		} else {
			// bpftrace 0.26's wording, with the count.
			fmt.Fprintf(s.opts.Stderr, "WARNING: Map full; can't update element (%d updates failed; raise max_map_keys or the map's declared size)\n", n)
		}
	}
	return nil
}

// lossCheckEvery is how often the loss counter is read while events
// stream (one map lookup). bpftrace reports losses as its reader meets
// them, within about 0.1 s; the counter is read on its own timer, not when
// the ring empties, which under sustained overload it never does (one
// "Lost" line came after 10.9 s).
const lossCheckEvery = 100 * time.Millisecond

// watchLost reports new losses every lossCheckEvery until stop is closed.
// A failed write ends it; the reader reports its own write errors.
func (s *session) watchLost(stop <-chan struct{}) {
	t := time.NewTicker(lossCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		err := s.reportLost()
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// reportLost prints "Lost N events" (bpftrace's words) for the events the
// programs could not put in the full ring buffer since the last report.
// The compiler counts them in the lost_events map (compiler/ABI.md).
// Callers hold s.mu.
func (s *session) reportLost() error {
	if s.l.Maps[LostEventsMap] == nil {
		return nil
	}
	n := s.l.counter(LostEventsMap)
	if n <= s.lostSeen {
		return nil
	}
	d := n - s.lostSeen
	s.lostSeen = n
	if lp, ok := s.opts.Printer.(interface{ LostEvents(uint64) error }); ok {
		return lp.LostEvents(d)
	}
	_, err := fmt.Fprintf(s.opts.Stdout, "Lost %d events\n", d)
	return err
}

// reportPrograms prints each program's instruction counts (-v).
func (s *session) reportPrograms() {
	for _, p := range s.spec.Programs {
		prog := s.l.Programs[p.Name]
		if prog == nil {
			continue
		}
		line := fmt.Sprintf("program %s: %d instructions", p.Name, len(p.Insns))
		if info, err := prog.Info(); err == nil {
			if n, ok := info.VerifiedInstructions(); ok {
				line += fmt.Sprintf(", %d verified", n)
			}
		}
		fmt.Fprintln(s.opts.Stderr, line)
	}
}

var _ interface{ Close() error } = (*ringReader)(nil)
var _ = ebpf.RingBuf

// attachMessage tells how many probes the script has: bpftrace 0.17's
// "Attaching N probes..." on stdout before attaching, or 0.26's "Attached N
// probes" on stderr after (in JSON, the attached_probes record on stdout).
// -q silences both.
func (s *session) attachMessage(n int) error {
	if s.opts.Quiet {
		return nil
	}
	if j, ok := s.opts.Printer.(interface {
		IsJSON() bool
		AttachedRecord(int) string
	}); ok && j.IsJSON() && s.opts.Compat.AttachedAfter() {
		if pre, ok := s.opts.Stdout.(interface{ Prepend([]byte) error }); ok {
			// BEGIN's output, held until now, follows the record.
			return pre.Prepend([]byte(j.AttachedRecord(n)))
		}
	}
	if ap, ok := s.opts.Printer.(interface{ AttachedProbes(int) error }); ok {
		// The printer knows the output format (text or JSON) and the
		// version's wording; in text, 0.26's line goes to stderr.
		return ap.AttachedProbes(n)
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	if s.opts.Compat.AttachedAfter() {
		_, err := fmt.Fprintf(s.opts.Stderr, "Attached %d probe%s\n", n, plural)
		return err
	}
	_, err := fmt.Fprintf(s.opts.Stdout, "Attaching %d probe%s...\n", n, plural)
	return err
}

// iterOutput prints what an iterator wrote to its seq file, as printf
// output of the printer (JSON-wrapped with -f json).
func (s *session) iterOutput(text string) error {
	if p, ok := s.opts.Printer.(interface{ IterOutput(string) error }); ok {
		return p.IterOutput(text)
	}
	_, err := io.WriteString(s.opts.Stdout, text)
	return err
}
