package runtime

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"os"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/runtime/output"
)

// burstRecord is the size of burstProgram's records: with the 8-byte
// header, 48 bytes, which does not divide the ring's size, so some
// records wrap around its end.
const burstRecord = 40

// burstProgram writes perRun records of burstRecord bytes (event ID 0, a
// counter perRun..1, zeros) each time it runs, counting failed writes in
// lost_events as the compiler does.
func burstProgram(perRun int32) asm.Instructions {
	insns := asm.Instructions{asm.Mov.Imm(asm.R6, perRun)}
	emit := asm.Instructions{
		asm.Mov.Imm(asm.R1, 0).WithSymbol("loop"),
		asm.StoreMem(asm.RFP, -40, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, -32, asm.R6, asm.DWord),
		asm.StoreMem(asm.RFP, -24, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference("ringbuf"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -40),
		asm.Mov.Imm(asm.R3, burstRecord),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
	}
	insns = append(insns, emit...)
	insns = append(insns, lostCountInsns("next")...)
	insns = append(insns,
		asm.Sub.Imm(asm.R6, 1),
		asm.JNE.Imm(asm.R6, 0, "loop"),
	)
	return append(insns, ret0()...)
}

func burstSpec(perRun int32) *compiler.Spec {
	return &compiler.Spec{
		Maps: []*compiler.MapSpec{
			{Name: RingBufMap, Type: ebpf.RingBuf},
			{Name: LostEventsMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Programs: []*compiler.Program{{Name: "BEGIN", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeBegin}}, Insns: burstProgram(perRun)}},
		Events:   []*compiler.Event{{ID: 0, Kind: compiler.EvPrintf, Format: "%d\n"}},
	}
}

// recordChecker checks that records come in the order burstProgram wrote
// them: runs of perRun..1.
type recordChecker struct {
	t      *testing.T
	perRun uint64
	n      int
	bad    int
}

func (c *recordChecker) handle(rec []byte) (bool, error) {
	if len(rec) != burstRecord {
		c.t.Fatalf("record %d: %d bytes, want %d", c.n, len(rec), burstRecord)
	}
	want := c.perRun - uint64(c.n)%c.perRun
	got := binary.LittleEndian.Uint64(rec[8:])
	if binary.LittleEndian.Uint64(rec) != 0 || binary.LittleEndian.Uint64(rec[16:]) != 0 || binary.LittleEndian.Uint64(rec[32:]) != 0 {
		got = ^uint64(0) // torn
	}
	if got != want && c.bad < 5 {
		c.bad++
		c.t.Errorf("record %d: counter %d, want %d (out of order)", c.n, got, want)
	}
	c.n++
	return false, nil
}

// TestRingBurstDelivered: a burst of 60,000 records (2.9 MB with headers,
// more than the 1 MiB ring the default was) written while nothing reads
// fits the default ring and comes out complete and in order, in one batch
// read, none counted lost. Then three such bursts with the reader running
// alongside, waiting in the poller between batches: the ring wraps (8.7 MB
// through 4 MiB), records that wrap around its end included.
func TestRingBurstDelivered(t *testing.T) {
	requireBPF(t)
	const perRun, runs = 3000, 20
	l := loadBurst(t, perRun)
	if size := l.Maps[RingBufMap].MaxEntries(); size < minRingBufBytes {
		t.Fatalf("default ring buffer of %d bytes, want at least %d", size, minRingBufBytes)
	}
	rd := ringReaderOf(t, l)
	prog := l.Programs["BEGIN"]
	burst := func() {
		for range runs {
			if _, err := prog.Run(&ebpf.RunOptions{Context: rawTPContext}); err != nil {
				t.Fatal(err)
			}
		}
	}

	burst()
	c := &recordChecker{t: t, perRun: perRun}
	start := time.Now()
	if err := readNow(rd, c.handle); err != nil {
		t.Fatal(err)
	}
	if c.n != perRun*runs {
		t.Errorf("burst with no reader: read %d records, want %d", c.n, perRun*runs)
	}
	if lost := l.counter(LostEventsMap); lost != 0 {
		t.Errorf("burst with no reader: %d lost", lost)
	}
	t.Logf("%d records read in %v", c.n, time.Since(start))

	// The reader runs while the records come; Flush ends it once it has
	// read what is there.
	c = &recordChecker{t: t, perRun: perRun}
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, _, err := rd.consume(c.handle, 1000); err != nil {
				done <- err
				return
			}
			if rd.empty() {
				if err := rd.wait(); err != nil {
					if errors.Is(err, errRingFlushed) {
						err = readNow(rd, c.handle)
					}
					done <- err
					return
				}
			}
		}
	}()
	for range 3 {
		// Each burst fits the ring even if the reader is starved.
		burst()
		deadline := time.Now().Add(10 * time.Second)
		for !rd.empty() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	// Let the reader block in wait, so that Flush has to wake it.
	time.Sleep(20 * time.Millisecond)
	rd.Flush()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not stop within 10 s of Flush")
	}
	if c.n != 3*perRun*runs {
		t.Errorf("bursts with a reader: read %d records, want %d", c.n, 3*perRun*runs)
	}
	if lost := l.counter(LostEventsMap); lost != 0 {
		t.Errorf("bursts with a reader: %d lost", lost)
	}
	if rd.wrapBuf == nil {
		t.Errorf("no record wrapped around the ring's end")
	}
}

// loadBurst loads burstSpec(perRun), closed when the test ends.
func loadBurst(t *testing.T, perRun int32) *Loaded {
	t.Helper()
	l, err := Load(burstSpec(perRun))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// ringReaderOf makes a reader of l's ring buffer, closed when the test
// ends (Close again is a no-op).
func ringReaderOf(t *testing.T, l *Loaded) *ringReader {
	t.Helper()
	rd, err := newRingReader(l.Maps[RingBufMap])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

// TestRingCloseEndsWait: Close wakes a reader waiting on an empty ring.
func TestRingCloseEndsWait(t *testing.T) {
	requireBPF(t)
	rd := ringReaderOf(t, loadBurst(t, 1))
	done := make(chan error, 1)
	go func() { done <- rd.wait() }()
	time.Sleep(20 * time.Millisecond)
	rd.Close()
	select {
	case err := <-done:
		if !errors.Is(err, errRingClosed) {
			t.Errorf("wait after Close: %v, want errRingClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return within 5 s of Close")
	}
	if _, _, _, err := rd.consume(func([]byte) (bool, error) { return false, nil }, 0); !errors.Is(err, errRingClosed) {
		t.Errorf("consume after Close: %v, want errRingClosed", err)
	}
}

// TestRingOutputPrompt: with output to a pipe (buffered, flushed when the
// ring runs empty), one event's line shows while the session runs on, not
// at exit: interactive use (printf, then nothing for a while) sees it.
func TestRingOutputPrompt(t *testing.T) {
	requireBPF(t)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	tid := syscall.Gettid()
	prog := asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg32(asm.R0, asm.R0),
		asm.JNE.Imm(asm.R0, int32(tid), "out"),
	}
	prog = append(prog, emitInsns(0, 42)...)
	prog = append(prog, lostCountInsns("next")...)
	prog = append(prog, asm.Mov.Imm(asm.R0, 0).WithSymbol("out"), asm.Return())
	spec := &compiler.Spec{
		Maps: []*compiler.MapSpec{
			{Name: RingBufMap, Type: ebpf.RingBuf},
			{Name: LostEventsMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Programs: []*compiler.Program{{Name: "t_getpid", Type: ebpf.TracePoint,
			Attach: []*lang.AttachPoint{tp("syscalls", "sys_enter_getpid")}, Insns: prog}},
		// No arguments: the format prints verbatim.
		Events: []*compiler.Event{{ID: 0, Kind: compiler.EvPrintf, Format: "E 42\n"}},
		Source: &lang.Source{Name: "stdin", Text: `tracepoint:syscalls:sys_enter_getpid { printf("E 42\n"); }`},
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	out := &Output{w: pw, buf: bufio.NewWriterSize(pw, 64<<10), drain: true}
	p := NewTextPrinter(out, output.Text, nil, spec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	go func() {
		runDone <- Run(ctx, spec, Options{Printer: p, Stdout: out, Stderr: &lockedWriter{}, Quiet: true, Signals: make(chan os.Signal)})
		pw.Close()
	}()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// getpid until a line shows: the probe is attached.
	deadline := time.After(10 * time.Second)
attached:
	for {
		syscall.Getpid()
		select {
		case <-lines:
			break attached
		case <-deadline:
			t.Fatal("no line within 10 s")
		case <-time.After(20 * time.Millisecond):
		}
	}
	time.Sleep(50 * time.Millisecond)
	for len(lines) > 0 {
		<-lines
	}
	// One event, then nothing: its line must show now.
	start := time.Now()
	syscall.Getpid()
	select {
	case line := <-lines:
		if line != "E 42" {
			t.Errorf("line %q, want %q", line, "E 42")
		}
		t.Logf("line shown %v after the event", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("an event's line did not show within 5 s while the session ran")
	}
	cancel()
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
}

// TestRingMappedAtFirstRead: making a reader maps nothing (the pages are
// mapped by its first read, off the start-up's busiest stretch); records
// written before that read are all there; a reader closed unread closes.
func TestRingMappedAtFirstRead(t *testing.T) {
	requireBPF(t)
	l := loadBurst(t, 10)
	unread := ringReaderOf(t, l)
	if unread.mapped || unread.data != nil {
		t.Fatal("newRingReader mapped the pages")
	}
	if err := unread.Close(); err != nil {
		t.Fatalf("Close of an unread reader: %v", err)
	}
	if _, _, _, err := unread.consume(func([]byte) (bool, error) { return false, nil }, 0); !errors.Is(err, errRingClosed) {
		t.Errorf("consume after Close: %v, want errRingClosed", err)
	}

	rd := ringReaderOf(t, l)
	if _, err := l.Programs["BEGIN"].Run(&ebpf.RunOptions{Context: rawTPContext}); err != nil {
		t.Fatal(err)
	}
	c := &recordChecker{t: t, perRun: 10}
	if err := readNow(rd, c.handle); err != nil {
		t.Fatal(err)
	}
	if !rd.mapped || rd.data == nil {
		t.Error("the first read did not map the pages")
	}
	if c.n != 10 {
		t.Errorf("read %d records written before the first read, want 10", c.n)
	}
}
