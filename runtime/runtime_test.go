package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gotrace/gotrace/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// requireBPF skips (or, under CI, fails) when BPF cannot be used.
func requireBPF(t *testing.T) {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		testkit.Skipf(t, "BPF not usable: %v", err)
	}
	m.Close()
}

// fakePrinter records what the runtime asks to print.
type fakePrinter struct {
	mu       sync.Mutex
	events   []string // "ID:payload-u64" for events with 8-byte payloads
	printed  []*MapData
	exitMaps []*MapData
}

func (f *fakePrinter) Event(ev *compiler.Event, payload []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := uint64(0)
	if len(payload) >= 8 {
		v = binary.LittleEndian.Uint64(payload)
	}
	f.events = append(f.events, ev.Format+":"+itoa(v))
	return nil
}

func (f *fakePrinter) PrintMap(ev *compiler.Event, payload []byte, m *MapData) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.printed = append(f.printed, m)
	return nil
}

func (f *fakePrinter) Maps(maps []*MapData) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exitMaps = maps
	return nil
}

func (f *fakePrinter) Flush() error { return nil }

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

var countInfo = &lang.MapInfo{Name: "@", Value: &types.Type{Kind: types.Count, Size: 8}}

func countMap() *compiler.MapSpec {
	return &compiler.MapSpec{Name: "m_count", Type: ebpf.PerCPUHash, KeySize: 8, ValueSize: 8, MaxEntries: 16, User: countInfo, PerCPU: true}
}

// countInsns counts calls from process tgid into map m_count[0]: lookup,
// then add in place (the slot is per CPU), or insert 1.
// A negative tgid counts every call.
func countInsns(tgid int) asm.Instructions {
	var filter asm.Instructions
	if tgid < -1 {
		// -tid: count one thread only. The Go runtime itself calls getpid
		// from other threads (tgkill(getpid(), ...) for preemption).
		filter = asm.Instructions{
			asm.FnGetCurrentPidTgid.Call(),
			asm.Mov.Reg32(asm.R0, asm.R0),
			asm.JNE.Imm(asm.R0, int32(-tgid), "out"),
		}
	} else if tgid >= 0 {
		filter = asm.Instructions{
			asm.FnGetCurrentPidTgid.Call(),
			asm.RSh.Imm(asm.R0, 32),
			asm.JNE.Imm(asm.R0, int32(tgid), "out"),
		}
	}
	return append(filter, asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.LoadMapPtr(asm.R1, 0).WithReference("m_count"),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "init"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Ja.Label("out"),
		asm.Mov.Imm(asm.R1, 1).WithSymbol("init"),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -16),
		asm.Mov.Imm(asm.R4, 0),
		asm.LoadMapPtr(asm.R1, 0).WithReference("m_count"),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}...)
}

// emitInsns writes one ring-buffer record: event id, then an u64 value.
func emitInsns(id int32, val int32) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R1, id),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, val),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference("ringbuf"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -16),
		asm.Mov.Imm(asm.R3, 16),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
	}
}

func ret0() asm.Instructions { return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()} }

func tp(cat, name string) *lang.AttachPoint {
	return &lang.AttachPoint{Raw: "tracepoint:" + cat + ":" + name, Provider: lang.ProbeTracepoint, Target: cat, Func: name}
}

func getpidSpec(tgid int) *compiler.Spec {
	return &compiler.Spec{
		Maps: []*compiler.MapSpec{countMap()},
		Programs: []*compiler.Program{{
			Name: "t_getpid", Type: ebpf.TracePoint,
			Attach: []*lang.AttachPoint{tp("syscalls", "sys_enter_getpid")},
			Insns:  countInsns(tgid),
		}},
		Source: &lang.Source{Name: "stdin", Text: "tracepoint:syscalls:sys_enter_getpid { @ = count(); }"},
	}
}

// getpids makes exactly n getpid syscalls.
func getpids(n int) {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	for range n {
		syscall.Getpid()
	}
}

// bpfFDs counts this process's BPF program/link and perf event fds.
func bpfFDs(t *testing.T) map[string]int {
	t.Helper()
	quiesce() // a ring discarded in the background is closed by now
	out := map[string]int{}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		l = strings.ReplaceAll(l, "bpf_link", "bpf-link")
		for _, k := range []string{"bpf-prog", "bpf-link", "perf_event", "bpf-map"} {
			if strings.Contains(l, k) {
				out[k]++
			}
		}
	}
	return out
}

func checkNoLeaks(t *testing.T, before map[string]int) {
	t.Helper()
	after := bpfFDs(t)
	for k, n := range after {
		if n > before[k] {
			t.Errorf("leaked %d %s fds", n-before[k], k)
		}
	}
	// No tracefs probe events of ours.
	if dir, err := tracefsDir(); err == nil {
		for _, f := range []string{"uprobe_events", "kprobe_events"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if strings.Contains(string(b), "gotrace") {
				t.Errorf("%s still holds our events:\n%s", f, b)
			}
		}
	}
}

// countOf is the value of getpidSpec's count map, which must hold one key.
func countOf(t *testing.T, l *Loaded) uint64 {
	t.Helper()
	md, err := l.ReadMap(l.UserMaps()[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Entries) != 1 {
		t.Fatalf("entries = %d, want 1", len(md.Entries))
	}
	return binary.LittleEndian.Uint64(md.Entries[0].Value)
}

func TestTracepointCount(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	l, err := Load(getpidSpec(-syscall.Gettid()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pl, err := l.Expand(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := pl.ProbeNames(); len(got) != 1 || got[0] != "tracepoint:syscalls:sys_enter_getpid" {
		t.Fatalf("probes = %v", got)
	}
	if err := l.Attach(pl, nil); err != nil {
		t.Fatal(err)
	}
	const n = 1234
	getpids(n)
	if err := l.Detach(); err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, l); got != n {
		t.Errorf("count = %d, want %d", got, n)
	}
	// zero keeps the key; clear keeps a key-less aggregation at zero.
	ms := l.UserMaps()[0]
	if err := l.ZeroMap(ms); err != nil {
		t.Fatal(err)
	}
	md, _ := l.ReadMap(ms)
	if len(md.Entries) != 1 || binary.LittleEndian.Uint64(md.Entries[0].Value) != 0 {
		t.Errorf("after zero: %+v", md.Entries)
	}
	if err := l.ClearMap(ms); err != nil {
		t.Fatal(err)
	}
	md, _ = l.ReadMap(ms)
	// A key-less count() stays as its zero value, as in bpftrace (`@: 0`).
	if len(md.Entries) != 1 || binary.LittleEndian.Uint64(md.Entries[0].Value) != 0 {
		t.Errorf("after clear: %+v", md.Entries)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoLeaks(t, before)
}

// TestRunAttached026: bpftrace 0.26's behaviour (the default): "Attached N
// probes" on stderr once attached, nothing on stdout before it, and a
// program of BEGIN and END only ends by itself after BEGIN, running END.
func TestRunAttached026(t *testing.T) {
	requireBPF(t)
	begin := append(emitInsns(0, 42), ret0()...)
	end := append(emitInsns(1, 7), ret0()...)
	spec := &compiler.Spec{
		Maps: []*compiler.MapSpec{{Name: "ringbuf", Type: ebpf.RingBuf, MaxEntries: 1 << 16}},
		Programs: []*compiler.Program{
			{Name: "BEGIN", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeBegin}}, Insns: begin},
			{Name: "END", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeEnd}}, Insns: end},
		},
		Events: []*compiler.Event{
			{ID: 0, Kind: compiler.EvPrintf, Format: "begin"},
			{ID: 1, Kind: compiler.EvPrintf, Format: "end"},
		},
	}
	var stdout, stderr strings.Builder
	fp := &fakePrinter{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := Run(ctx, spec, Options{Printer: fp, Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("a BEGIN/END program did not end by itself (%v)", time.Since(start))
	}
	if got, want := strings.Join(fp.events, ","), "begin:42,end:7"; got != want {
		t.Errorf("events = %q, want %q", got, want)
	}
	if got := stderr.String(); got != "Attached 2 probes\n" {
		t.Errorf("stderr = %q, want %q", got, "Attached 2 probes\n")
	}
	if got := stdout.String(); strings.Contains(got, "Attaching") {
		t.Errorf("stdout = %q: 0.17's attach line in 0.26 mode", got)
	}
}

// TestRunBeginEndExit: BEGIN prints and exits, END prints; the maps are
// handed over at exit.
func TestRunBeginEndExit(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	begin := append(emitInsns(0, 42), emitInsns(1, 0)...)
	begin = append(begin, ret0()...)
	end := append(emitInsns(2, 7), ret0()...)
	spec := getpidSpec(os.Getpid())
	spec.Maps = append(spec.Maps, &compiler.MapSpec{Name: "ringbuf", Type: ebpf.RingBuf, MaxEntries: 1 << 16})
	spec.Programs = append(spec.Programs,
		&compiler.Program{Name: "BEGIN", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeBegin}}, Insns: begin},
		&compiler.Program{Name: "END", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeEnd}}, Insns: end},
	)
	spec.Events = []*compiler.Event{
		{ID: 0, Kind: compiler.EvPrintf, Format: "begin"},
		{ID: 1, Kind: compiler.EvExit},
		{ID: 2, Kind: compiler.EvPrintf, Format: "end"},
	}
	var out strings.Builder
	fp := &fakePrinter{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := Run(ctx, spec, Options{Printer: fp, Stdout: &out, Stderr: &out, Compat: compat.V017})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(fp.events, ","), "begin:42,end:7"; got != want {
		t.Errorf("events = %q, want %q", got, want)
	}
	if !strings.HasPrefix(out.String(), "Attaching 3 probes...\n") {
		t.Errorf("stdout = %q", out.String())
	}
	if len(fp.exitMaps) != 1 || fp.exitMaps[0].Spec.User.Name != "@" {
		t.Errorf("exit maps = %+v", fp.exitMaps)
	}
	checkNoLeaks(t, before)
}

// TestRunSignal: tracing stops on a signal; the count is printed at exit.
func TestRunSignal(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	// Count one thread's calls only: the Go runtime calls getpid from
	// other threads of the process (to signal them for preemption).
	tidCh, start, called := make(chan int), make(chan struct{}), make(chan struct{})
	go func() {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		tidCh <- syscall.Gettid()
		<-start
		getpids(100)
		close(called)
	}()
	spec := getpidSpec(-<-tidCh)
	spec.Maps = append(spec.Maps, &compiler.MapSpec{Name: "ringbuf", Type: ebpf.RingBuf, MaxEntries: 1 << 16})
	sigs := make(chan os.Signal, 1)
	fp := &fakePrinter{}
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), spec, Options{Printer: fp, Stdout: pw, Stderr: pw, Signals: sigs, Compat: compat.V017, NotifyAttached: true})
		pw.Close()
	}()
	// Wait for the notify line, as the conformance runner does.
	buf := make([]byte, 4096)
	var got string
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(got, NotifyAttachedEnv) && time.Now().Before(deadline) {
		n, err := pr.Read(buf)
		got += string(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(got, "Attaching 1 probe...\n"+NotifyAttachedEnv+"\n") {
		t.Fatalf("output = %q", got)
	}
	close(start)
	<-called
	sigs <- syscall.SIGTERM
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(fp.exitMaps) != 1 || len(fp.exitMaps[0].Entries) != 1 {
		t.Fatalf("exit maps = %+v", fp.exitMaps)
	}
	if n := binary.LittleEndian.Uint64(fp.exitMaps[0].Entries[0].Value); n != 100 {
		t.Errorf("count = %d, want 100", n)
	}
	checkNoLeaks(t, before)
}

// TestAttachFailureRollsBack: the second probe fails to attach; the first
// must be detached again and the error must name the failing probe.
func TestAttachFailureRollsBack(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	spec := getpidSpec(os.Getpid())
	spec.Programs = append(spec.Programs, &compiler.Program{
		// A socket filter cannot be attached to a tracepoint.
		Name: "bad", Type: ebpf.SocketFilter, Attach: []*lang.AttachPoint{tp("syscalls", "sys_enter_getppid")}, Insns: ret0(),
	})
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := l.Expand(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Attach(pl, nil)
	// The kernel refuses a socket filter on a perf event with EINVAL.
	const want = "ERROR: 1 of 2 probes failed to attach: tracepoint:syscalls:sys_enter_getppid (create link: invalid argument); nothing was attached"
	if err == nil || err.Error() != want {
		t.Fatalf("attach error:\n%v\nwant:\n%s", err, want)
	}
	if !errors.Is(err, unix.EINVAL) {
		t.Errorf("the kernel's error is not reachable through %v", err)
	}
	if n := bpfFDs(t)["bpf-link"] + bpfFDs(t)["perf_event"]; n > before["bpf-link"]+before["perf_event"] {
		t.Errorf("%d links/perf events still attached after a failed attach", n)
	}
	// Count from this thread only: the Go runtime calls getpid itself.
	md, _ := l.ReadMap(l.UserMaps()[0])
	getpids(10)
	md2, _ := l.ReadMap(l.UserMaps()[0])
	if len(md.Entries) != len(md2.Entries) || len(md2.Entries) > 0 && !bytes.Equal(md.Entries[0].Value, md2.Entries[0].Value) {
		t.Errorf("the first probe still fires after rollback")
	}
	l.Close()
	checkNoLeaks(t, before)
}

// TestAttachFailureSummary: several probes of several attach points fail;
// the others (before, between and after them) attach and are all detached
// again, and the one error lists every failure, grouped by reason.
func TestAttachFailureSummary(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	spec := getpidSpec(os.Getpid())
	for i, ev := range []string{"sys_enter_getppid", "sys_enter_getuid", "sys_enter_getgid"} {
		spec.Programs = append(spec.Programs, &compiler.Program{
			Name: fmt.Sprintf("bad%d", i), Type: ebpf.SocketFilter, Attach: []*lang.AttachPoint{tp("syscalls", ev)}, Insns: ret0(),
		})
	}
	// A wildcard of good probes after the failures: attached, then rolled back.
	spec.Programs = append(spec.Programs, &compiler.Program{
		Name: "after", Type: ebpf.TracePoint, Insns: ret0(),
		Attach: []*lang.AttachPoint{{Raw: "tracepoint:syscalls:sys_enter_getr*", Provider: lang.ProbeTracepoint, Target: "syscalls", Func: "sys_enter_getr*", Wildcard: true}},
	})
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := l.Expand(nil, 0)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	err = l.Attach(pl, nil)
	want := fmt.Sprintf("ERROR: 3 of %d probes failed to attach: tracepoint:syscalls:sys_enter_getppid, tracepoint:syscalls:sys_enter_getuid, tracepoint:syscalls:sys_enter_getgid (create link: invalid argument); nothing was attached", pl.total)
	if err == nil || err.Error() != want {
		t.Errorf("attach error:\n%v\nwant:\n%s", err, want)
	}
	var ae *AttachError
	if !errors.As(err, &ae) || len(ae.Failed) != 3 || ae.Untried != 0 {
		t.Errorf("AttachError %+v", ae)
	}
	if pl.total < 6 {
		t.Errorf("plan of %d probes, want the getr* probes too", pl.total)
	}
	if n := bpfFDs(t)["bpf-link"] + bpfFDs(t)["perf_event"]; n > before["bpf-link"]+before["perf_event"] {
		t.Errorf("%d links/perf events still attached after a failed attach", n)
	}
	l.Close()
	checkNoLeaks(t, before)
}

// TestAttachErrorText: failures with several reasons, multi-link groups,
// many names, probes left untried, and one attach point with a source place.
func TestAttachErrorText(t *testing.T) {
	src := &lang.Source{Name: "stdin", Text: "kprobe:a* { }"}
	ap := &lang.AttachPoint{Raw: "kprobe:a*", Provider: lang.ProbeKprobe, Func: "a*"}
	other := &lang.AttachPoint{Raw: "kprobe:b", Provider: lang.ProbeKprobe, Func: "b"}
	e := &AttachError{Src: src, Total: 40}
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5"} {
		e.add(ap, "kprobe:"+n, 1, fmt.Errorf("attach kprobe:%s: %w", n, unix.ENOENT))
	}
	e.add(other, "kprobe:b", 1, errors.New("attach kprobe:b: busy"))
	e.add(ap, "uprobe:libc:*", 7, errors.New("attach 7 uprobes on /lib/libc.so.6: bad"))
	e.add(ap, "kprobe:c", 1, errors.New("one"))
	e.add(ap, "kprobe:d", 1, errors.New("two"))
	e.Untried = 4
	want := "ERROR: 15 of 40 probes failed to attach: kprobe:a1, kprobe:a2, kprobe:a3, and 2 more (no such file or directory), " +
		"kprobe:b (busy), uprobe:libc:* (7 probes) (attach 7 uprobes on /lib/libc.so.6: bad), 2 more for other reasons; " +
		"4 not tried after 9 failures; nothing was attached"
	if got := e.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !errors.Is(e, unix.ENOENT) {
		t.Error("errors.Is does not reach the failures")
	}
	// All on one attach point of the script: its place and line.
	one := &AttachError{Src: src, Total: 1}
	ap.Loc = lang.Loc(lang.Span{Start: lang.Pos{Offset: 0, Line: 1, Col: 1}, End: lang.Pos{Offset: 9, Line: 1, Col: 10}})
	one.add(ap, "kprobe:a1", 1, errors.New("attach kprobe:a1: nope"))
	want = "stdin:1:1-10: ERROR: 1 of 1 probe failed to attach: kprobe:a1 (nope); nothing was attached\nkprobe:a* { }\n~~~~~~~~~"
	if got := one.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestFDsNeeded: a perf event and a link per probe (per CPU for perf
// events), one link per multi-link binary or raw syscall program.
func TestFDsNeeded(t *testing.T) {
	prog := &compiler.Program{Name: "p"}
	raw := &compiler.Program{Name: "r", RawSyscall: "sys_enter"}
	probes := func(p *compiler.Program, n int, f func(*Probe)) []*Probe {
		var out []*Probe
		for i := 0; i < n; i++ {
			pr := &Probe{Program: p, Target: fmt.Sprint("/bin/", i%2)}
			if f != nil {
				f(pr)
			}
			out = append(out, pr)
		}
		return out
	}
	pl := &plan{groups: []probeGroup{
		{ap: &lang.AttachPoint{Provider: lang.ProbeTracepoint}, probes: probes(prog, 300, nil)},
		{ap: &lang.AttachPoint{Provider: lang.ProbeTracepoint}, probes: probes(raw, 300, nil)},
		{ap: &lang.AttachPoint{Provider: lang.ProbeUprobe}, probes: probes(prog, 1000, func(p *Probe) { p.Multi = true })},
		{ap: &lang.AttachPoint{Provider: lang.ProbeKfunc}, probes: probes(prog, 5, nil)},
		{ap: &lang.AttachPoint{Provider: lang.ProbeProfile}, probes: probes(prog, 1, func(p *Probe) { p.CPUs = []int{0, 1, 2, 3} })},
	}}
	if n := fdsNeeded(pl); n != 600+1+2+5+8 {
		t.Errorf("fdsNeeded = %d, want %d", n, 600+1+2+5+8)
	}
}

func TestMaxProbes(t *testing.T) {
	requireBPF(t)
	spec := getpidSpec(os.Getpid())
	spec.Programs[0].Attach = []*lang.AttachPoint{{Raw: "tracepoint:syscalls:sys_enter_*", Provider: lang.ProbeTracepoint, Target: "syscalls", Func: "sys_enter_*", Wildcard: true}}
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Expand(nil, 5)
	if err == nil || !strings.Contains(err.Error(), "exceeds the current limit of 5 probes") {
		t.Fatalf("err = %v", err)
	}
	_, err = l.Expand(nil, 7)
	if err == nil || !strings.Contains(err.Error(), "limit of 7 probes") {
		t.Fatalf("err = %v", err)
	}
}

func TestVerifierErrorNamesLine(t *testing.T) {
	requireBPF(t)
	src := &lang.Source{Name: "stdin", Text: "BEGIN {\n  @x = *(uint64*)0;\n}"}
	spec := &compiler.Spec{Source: src, Programs: []*compiler.Program{{
		Name: "BEGIN", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeBegin}},
		Insns: asm.Instructions{
			asm.Mov.Imm(asm.R1, 0).WithSource(asm.Comment("2:3-20")),
			// Dereferencing a scalar: the verifier refuses this one.
			asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord).WithSource(asm.Comment("2:8-20")),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	}}}
	_, err := Load(spec)
	var ve *VerifierError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want *VerifierError", err, err)
	}
	if ve.Insn != 1 || ve.Span.Start.Line != 2 || ve.Span.Start.Col != 8 {
		t.Errorf("insn %d span %v", ve.Insn, ve.Span)
	}
	msg := ve.Error()
	if !strings.HasPrefix(msg, "stdin:2:8-20: ERROR: the BPF verifier rejected program BEGIN: R1 invalid mem access 'scalar'") ||
		!strings.Contains(msg, "\n  @x = *(uint64*)0;\n       ~~~~~~~~~~~~") {
		t.Errorf("message:\n%s", msg)
	}
	if len(ve.Log) == 0 {
		t.Error("no verifier log")
	}
}

// TestKprobeLoadsButNoKernelSupport: kprobe programs pass the verifier;
// attaching reports the missing kernel support once, before attaching.
func TestKprobeLoadsButNoKernelSupport(t *testing.T) {
	requireBPF(t)
	spec := getpidSpec(os.Getpid())
	spec.Programs = append(spec.Programs, &compiler.Program{
		Name: "k", Type: ebpf.Kprobe, Insns: ret0(),
		Attach: []*lang.AttachPoint{{Raw: "kprobe:vfs_read", Provider: lang.ProbeKprobe, Func: "vfs_read"}},
	})
	before := bpfFDs(t)
	l, err := Load(spec)
	if err != nil {
		t.Fatalf("kprobe program must load: %v", err)
	}
	defer l.Close()
	_, err = l.Expand(nil, 0)
	if kprobeSupport() == nil {
		if err != nil {
			t.Fatalf("kernel has kprobes, expand: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "kprobe:vfs_read: this kernel has no kprobe support (CONFIG_KPROBES/CONFIG_KPROBE_EVENTS not set") {
		t.Fatalf("err = %v", err)
	}
	if n := bpfFDs(t)["bpf-link"]; n > before["bpf-link"] {
		t.Errorf("links attached despite the error")
	}
}

func TestKprobeDenyList(t *testing.T) {
	if _, err := kernelFuncs(); err != nil {
		testkit.Skipf(t, "%v", err)
	}
	funcs, _ := kernelFuncs()
	// What the message must count: the matches, and among them the unsafe.
	count := func(pat string) (total, denied int, first string) {
		seen := map[string]bool{}
		for _, f := range funcs { // sorted by name
			if glob(pat, f.name) && !seen[f.name] {
				seen[f.name] = true
				total++
				if compiler.DenyReason(f.name) != "" {
					if denied == 0 {
						first = f.name
					}
					denied++
				}
			}
		}
		return total, denied, first
	}
	total, denied, first := count("*spin_lock*")
	if denied == 0 {
		t.Fatalf("no *spin_lock* function in the kernel's list")
	}
	_, err := expandKernelFuncs("kprobe", &lang.AttachPoint{Raw: "kprobe:*spin_lock*", Provider: lang.ProbeKprobe, Func: "*spin_lock*", Wildcard: true}, &Env{})
	// Every *spin_lock* function is a locking one: one family, its first
	// function the example.
	want := fmt.Sprintf("refusing kprobe:*spin_lock* as a whole: %d of the %d functions it matches are in the locking code, which cannot be traced safely "+
		"(e.g. %s: spinlock functions are taken by the probe handler itself; probing them can deadlock the machine); nothing was attached. "+
		"HINT: narrow the pattern to leave them out, or name the functions to trace", denied, total, first)
	if err == nil || err.Error() != want {
		t.Errorf("err:\n%v\nwant:\n%s", err, want)
	}
	// Several families: counted each, the largest first.
	_, err = expandKernelFuncs("kretprobe", &lang.AttachPoint{Raw: "kretprobe:*", Provider: lang.ProbeKretprobe, Func: "*", Wildcard: true}, &Env{})
	if err == nil || !regexp.MustCompile(`^refusing kretprobe:\* as a whole: \d+ of the \d+ functions it matches are in the (\w+ \(\d+\), )+\w+ \(\d+\) and \w+ \(\d+\) code, which cannot be traced safely \(e\.g\. \S+: [^)]+\); nothing was attached\. HINT: `).MatchString(err.Error()) {
		t.Errorf("kretprobe:*: %v", err)
	}
	// A module pattern is part of what is refused.
	_, err = expandKernelFuncs("kprobe", &lang.AttachPoint{Raw: "kprobe:*:_raw_spin_*", Provider: lang.ProbeKprobe, Target: "*", Func: "_raw_spin_*", Wildcard: true}, &Env{})
	if err == nil || !strings.HasPrefix(err.Error(), "refusing kprobe:*:_raw_spin_* as a whole: ") {
		t.Errorf("kprobe:*:_raw_spin_*: %v", err)
	}
	// One function by name: its reason alone.
	_, err = expandKernelFuncs("kprobe", &lang.AttachPoint{Raw: "kprobe:rcu_note_context_switch", Provider: lang.ProbeKprobe, Func: "rcu_note_context_switch"}, &Env{})
	if _, d, _ := count("rcu_note_context_switch"); d == 1 && (err == nil || err.Error() != "refusing to trace rcu_note_context_switch: probe handlers run under RCU; probing RCU itself recurses") {
		t.Errorf("rcu_note_context_switch: %v", err)
	}
}

// TestKernelFuncHint: a kernel function that does not exist gets the
// closest traceable one as its hint.
func TestKernelFuncHint(t *testing.T) {
	requireBPF(t) // root: kallsyms addresses and tracefs
	if _, err := kernelFuncs(); err != nil {
		t.Fatalf("kernel functions: %v", err)
	}
	_, err := expandKernelFuncs("kprobe", &lang.AttachPoint{Raw: "kprobe:vfs_reed", Provider: lang.ProbeKprobe, Func: "vfs_reed"}, &Env{})
	var he *lang.HintError
	if !errors.As(err, &he) || he.Msg != "kernel function not found or not traceable: vfs_reed" || he.Hint != `did you mean "vfs_read"?` {
		t.Errorf("err = %v, hint %+v", err, he)
	}
}

// TestUntraceableSymbols: the kallsyms fallback leaves out what is not a
// function entry.
func TestUntraceableSymbols(t *testing.T) {
	for _, n := range []string{"__pfx_vfs_read", "__cfi_vfs_read", "__pi_memcpy", "vfs_read.cold", "foo.part.0", "__SCT__preempt_schedule",
		"__x86_indirect_thunk_rax", "__x86_return_thunk", "srso_alias_return_thunk", "entry_SYSCALL_64", "_stext", "__entry_text_start", "__sched_text_end",
		"__ftrace_invalid_address___64"} {
		if !untraceableSym(n) {
			t.Errorf("%s kept", n)
		}
	}
	for _, n := range []string{"vfs_read", "do_sys_open", "tcp_v4_connect.isra.0", "foo.constprop.0", "core_kernel_text", "schedule"} {
		if untraceableSym(n) {
			t.Errorf("%s left out", n)
		}
	}
	funcs, err := kernelFuncs()
	if err != nil {
		testkit.Skipf(t, "%v", err)
	}
	for _, f := range funcs {
		if strings.HasPrefix(f.name, "__pfx_") || strings.Contains(f.name, ".part.") {
			t.Fatalf("kernelFuncs lists %s", f.name)
		}
	}
}

const helperC = `
#include <stdlib.h>
__attribute__((noinline)) int target(int x) { __asm__ volatile(""); return x * 3 + 1; }
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 0, s = 0;
	for (int i = 0; i < n; i++) s += target(i);
	return s == -1;
}
`

// buildHelper compiles a tiny C program with a function called N times.
func buildHelper(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "helper.c")
	if err := os.WriteFile(src, []byte(helperC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "helper")
	if out, err := exec.Command("cc", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		testkit.Skipf(t, "cc: %v\n%s", err, out)
	}
	return bin
}

// TestUprobeCommand: -c starts the helper stopped, a uprobe limited to it
// counts exactly its calls, and the run ends when it exits.
func TestUprobeCommand(t *testing.T) {
	requireBPF(t)
	bin := buildHelper(t)
	before := bpfFDs(t)
	spec := getpidSpec(-1)
	spec.Programs[0].Type = ebpf.Kprobe
	spec.Programs[0].Attach = []*lang.AttachPoint{{Raw: "uprobe:" + bin + ":target", Provider: lang.ProbeUprobe, Target: bin, Func: "target"}}
	fp := &fakePrinter{}
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := Run(ctx, spec, Options{Printer: fp, Stdout: &out, Stderr: &out, Command: []string{bin, "77"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.exitMaps) != 1 || len(fp.exitMaps[0].Entries) != 1 {
		t.Fatalf("exit maps = %+v", fp.exitMaps)
	}
	if n := binary.LittleEndian.Uint64(fp.exitMaps[0].Entries[0].Value); n != 77 {
		t.Errorf("count = %d, want 77", n)
	}
	checkNoLeaks(t, before)
}

// TestUprobeWildcardMulti: a wildcard over libc symbols attaches through
// uprobe_multi and detaches cleanly.
func TestUprobeWildcardMulti(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	spec := getpidSpec(os.Getpid())
	spec.Programs[0].Type = ebpf.Kprobe
	spec.Programs[0].Attach = []*lang.AttachPoint{{Raw: "uprobe:libc:str*", Provider: lang.ProbeUprobe, Target: "libc", Func: "str*", Wildcard: true}}
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pl, err := l.Expand(&Env{}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if pl.total < 10 {
		t.Fatalf("only %d probes", pl.total)
	}
	if err := l.Attach(pl, &Env{}); err != nil {
		t.Fatal(err)
	}
	if l.multi["t_getpid"] && bpfFDs(t)["bpf-link"]-before["bpf-link"] != 1 {
		t.Errorf("uprobe_multi should use one link, got %d", bpfFDs(t)["bpf-link"]-before["bpf-link"])
	}
	l.Close()
	checkNoLeaks(t, before)
}

// TestCommand: -c starts the command, and tracing ends when it exits.
func TestCommand(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	spec := getpidSpec(os.Getpid())
	fp := &fakePrinter{}
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err := Run(ctx, spec, Options{Printer: fp, Stdout: &out, Stderr: &out, Command: []string{"/bin/sh", "-c", "exit 0"}, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("Run did not end when the command exited")
	}
	if out.String() != "" {
		t.Errorf("quiet run printed %q", out.String())
	}
	checkNoLeaks(t, before)
}

func TestPerfProviders(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	spec := getpidSpec(0)
	// Count every profile tick (tgid filter off: compare against 0 fails
	// only for the idle task, fine for a smoke test).
	spec.Programs[0].Type = ebpf.PerfEvent
	spec.Programs[0].Insns = countInsns(-1)
	spec.Programs[0].Attach = []*lang.AttachPoint{
		{Raw: "profile:hz:99", Provider: lang.ProbeProfile, Unit: "hz", Freq: 99},
		{Raw: "interval:ms:10", Provider: lang.ProbeInterval, Unit: "ms", Freq: 10},
		{Raw: "software:cs", Provider: lang.ProbeSoftware, Func: "cs"},
	}
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pl, err := l.Expand(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"interval:ms:10", "profile:hz:99", "software:cs:1000"}
	if got := strings.Join(pl.ProbeNames(), ","); got != strings.Join(want, ",") {
		t.Errorf("probes = %s", got)
	}
	if err := l.Attach(pl, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	checkNoLeaks(t, before)

	_, err = hardwareProvider{}.Expand(&lang.AttachPoint{Raw: "hardware:cycles", Provider: lang.ProbeHardware, Func: "cycles"}, &Env{})
	if _, serr := os.Stat("/sys/bus/event_source/devices/cpu"); serr != nil && (err == nil || !strings.Contains(err.Error(), "no hardware performance counter")) {
		t.Errorf("hardware on a machine without PMU: %v", err)
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"sys_enter_*", "sys_enter_read", true},
		{"sys_enter_*", "sys_exit_read", false},
		{"*spin*", "_raw_spin_lock", true},
		{"sys_enter_{read,write}", "sys_enter_write", true},
		{"sys_enter_{read,write}", "sys_enter_open", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*", "", true},
	} {
		if glob(c.p, c.s) != c.ok {
			t.Errorf("glob(%q, %q) = %v", c.p, c.s, !c.ok)
		}
	}
	cpus, err := parseCPUList("0-2,5")
	if err != nil || len(cpus) != 4 || cpus[3] != 5 {
		t.Errorf("parseCPUList = %v, %v", cpus, err)
	}
}

func TestList(t *testing.T) {
	if _, err := tracefsDir(); err != nil {
		t.Skip(err)
	}
	var b strings.Builder
	if err := List(&b, "tracepoint:syscalls:sys_enter_openat", true); err != nil {
		t.Fatal(err)
	}
	want := "tracepoint:syscalls:sys_enter_openat\n    int __syscall_nr\n    int dfd\n    const char * filename\n    int flags\n    umode_t mode\n"
	if b.String() != want {
		t.Errorf("-lv:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := List(&b, "t:syscalls:sys_enter_getp*", false); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"tracepoint:syscalls:sys_enter_getpid\n", "tracepoint:syscalls:sys_enter_getppid\n"} {
		if !strings.Contains(b.String(), n) {
			t.Errorf("missing %q in %q", n, b.String())
		}
	}
	b.Reset()
	if err := List(&b, "uprobe:libc:malloc", false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "uprobe:/") || !strings.HasSuffix(b.String(), ":malloc\n") {
		t.Errorf("uprobe list = %q", b.String())
	}
}

// TestTracepointWildcardDetach attaches every syscalls:sys_enter_*
// tracepoint, checks that Stop silences them at once and that DetachAsync
// returns quickly while the kernel objects still go away in the
// background.
func TestTracepointWildcardDetach(t *testing.T) {
	requireBPF(t)
	spec := getpidSpec(os.Getpid())
	spec.Programs[0].Attach = []*lang.AttachPoint{tp("syscalls", "sys_enter_*")}
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.stopSwitch["t_getpid"] {
		t.Fatal("wildcard tracepoint program has no stop switch")
	}
	pl, err := l.Expand(nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if pl.total < handoffMin {
		t.Fatalf("only %d syscalls tracepoints", pl.total)
	}
	info, err := l.Programs["t_getpid"].Info()
	if err != nil {
		t.Fatal(err)
	}
	progID, _ := info.ID()
	start := time.Now()
	if err := l.Attach(pl, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("attached %d tracepoints in %v", pl.total, time.Since(start))
	read := func() uint64 {
		md, err := l.ReadMap(l.UserMaps()[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Entries) == 0 {
			return 0
		}
		return binary.LittleEndian.Uint64(md.Entries[0].Value)
	}
	getpids(1000)
	if got := read(); got < 1000 {
		t.Fatalf("count = %d before stop, want >= 1000", got)
	}
	start = time.Now()
	if err := l.DetachAsync(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("DetachAsync of %d tracepoints: %v", pl.total, took)
	if took > 2*time.Second {
		t.Errorf("DetachAsync took %v, want <= 2s", took)
	}
	n := read()
	getpids(1000)
	if got := read(); got != n {
		t.Errorf("count moved from %d to %d after stop", n, got)
	}
	// Our program fd closes now; the reaper's links hold the program until
	// it has closed them all, then the program disappears.
	l.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := ebpf.NewProgramFromID(progID)
		if err != nil {
			break
		}
		p.Close()
		if time.Now().After(deadline) {
			t.Fatal("program still referenced 60s after detach")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("kernel released everything %v after DetachAsync", time.Since(start))
}

func TestStatsAndProgress(t *testing.T) {
	requireBPF(t)
	c, err := enableStats()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	spec := getpidSpec(-syscall.Gettid())
	spec.Programs[0].Attach = []*lang.AttachPoint{tp("syscalls", "sys_enter_get*")}
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var prog strings.Builder
	env := &Env{Progress: &prog, Verbose: true}
	pl, err := l.Expand(env, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Attach(pl, env); err != nil {
		t.Fatal(err)
	}
	getpids(500)
	st, err := l.Stats(pl)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Hits < 500 || st[0].Runtime <= 0 {
		t.Fatalf("stats = %+v", st)
	}
	var b strings.Builder
	writeStats(&b, st)
	if !strings.Contains(b.String(), "tracepoint:syscalls:sys_enter_get* (t_getpid): ") || !strings.Contains(b.String(), " ns/hit") {
		t.Errorf("report = %q", b.String())
	}
	if err := l.Detach(); err != nil {
		t.Fatal(err)
	}
	// Fewer than 100 probes: no progress lines.
	if prog.Len() != 0 {
		t.Errorf("progress for %d probes: %q", pl.total, prog.String())
	}
	// A progress over 150 items ends with the total.
	var pb strings.Builder
	p := newProgress(&pb, true, "Attaching", 150)
	p.add(150)
	p.end()
	if !strings.HasSuffix(pb.String(), "\rAttaching probes: 150/150\n") {
		t.Errorf("progress = %q", pb.String())
	}
}

// lostCountInsns is what the compiler emits right after a
// bpf_ringbuf_output call (compiler/ABI.md): a failed output (r0 != 0: the
// ring is full) adds 1 to lost_events[0] with an atomic add through a
// direct map-value address, so the success path costs one jump.
func lostCountInsns(label string) asm.Instructions {
	return asm.Instructions{
		asm.JEq.Imm(asm.R0, 0, label),
		asm.LoadMapValue(asm.R1, 0, 0).WithReference(LostEventsMap),
		asm.Mov.Imm(asm.R2, 1),
		asm.StoreXAdd(asm.R1, asm.R2, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(label),
	}
}

// TestLostEventsReported: BEGIN writes far more records than the smallest
// ring holds; every record is either delivered or counted lost, and the
// runtime prints bpftrace's "Lost N events".
func TestLostEventsReported(t *testing.T) {
	requireBPF(t)
	const n = 3000
	begin := asm.Instructions{asm.Mov.Imm(asm.R6, n)}
	emit := emitInsns(0, 7)
	emit[0] = emit[0].WithSymbol("loop")
	begin = append(begin, emit...)
	begin = append(begin, lostCountInsns("next")...)
	begin = append(begin,
		asm.Sub.Imm(asm.R6, 1),
		asm.JNE.Imm(asm.R6, 0, "loop"),
	)
	begin = append(begin, emitInsns(1, 0)...) // exit(), may itself be lost
	begin = append(begin, lostCountInsns("done")...)
	begin = append(begin, ret0()...)
	spec := &compiler.Spec{
		Maps: []*compiler.MapSpec{
			{Name: "ringbuf", Type: ebpf.RingBuf},
			{Name: LostEventsMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Programs: []*compiler.Program{{Name: "BEGIN", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeBegin}}, Insns: begin}},
		Events: []*compiler.Event{
			{ID: 0, Kind: compiler.EvPrintf, Format: "e"},
			{ID: 1, Kind: compiler.EvExit},
		},
	}
	var out strings.Builder
	fp := &fakePrinter{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := Run(ctx, spec, Options{Printer: fp, Stdout: &out, Stderr: &out, Timeout: 300 * time.Millisecond, Compat: compat.V017, RingBufPages: 1}); err != nil {
		t.Fatal(err)
	}
	// Losses are reported as they happen, each line the new ones since
	// the last: add them up.
	ms := regexp.MustCompile(`Lost (\d+) events`).FindAllStringSubmatch(out.String(), -1)
	if ms == nil {
		t.Fatalf("no loss reported; output %q, %d events delivered", out.String(), len(fp.events))
	}
	lost := 0
	for _, m := range ms {
		n, _ := strconv.Atoi(m[1])
		lost += n
	}
	t.Logf("%d delivered, %d lost", len(fp.events), lost)
	// The exit record is either delivered (not an event) or lost.
	if got := len(fp.events) + lost; got != n && got != n+1 {
		t.Errorf("delivered %d + lost %d = %d, want %d (or %d with exit lost)", len(fp.events), lost, got, n, n+1)
	}
}
