package runtime

import (
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

// TestEarlyTracepointTaken: the events PrepareTracepoints opens ahead are
// the ones the probes attach to (the attach opens no perf event of its
// own), the probe counts every call made after it attached and none
// before (the event opened ahead records nothing without its program),
// an event no probe took is closed by the attach, and nothing leaks.
// Wildcards, parameters and other providers are not opened ahead.
func TestEarlyTracepointTaken(t *testing.T) {
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
	PrepareTracepoints([]*lang.AttachPoint{
		tp("syscalls", "sys_enter_getpid"),
		tp("syscalls", "sys_enter_getppid"), // no probe takes it
		tp("syscalls", "sys_enter_getpid"),  // one event per tracepoint
		tp("syscalls", "sys_enter_*"),
		tp("syscalls", "sys_enter_$1"),
		{Provider: lang.ProbeRawTracepoint, Func: "sys_enter"},
	})
	earlyTPMu.Lock()
	n := len(earlyTPs)
	for _, e := range earlyTPs {
		e.a.wait() // opened (the fds below)
	}
	getpidEv, getppidEv := earlyTPs["syscalls:sys_enter_getpid"], earlyTPs["syscalls:sys_enter_getppid"]
	earlyTPMu.Unlock()
	if n != 2 || getpidEv == nil || getppidEv == nil || getpidEv.err != nil || getppidEv.err != nil {
		t.Fatalf("%d tracepoints opened ahead, want 2 (sys_enter_getpid, sys_enter_getppid), both opened", n)
	}
	getpids(100) // before the attach: not counted
	opened := bpfFDs(t)["perf_event"]
	if err := l.Attach(pl, nil); err != nil {
		t.Fatal(err)
	}
	// The probe holds the very event opened ahead, and no other.
	var held []int
	for _, c := range l.att.closers {
		if fc, ok := c.(*fdCloser); ok {
			held = append(held, fc.fds...)
		}
	}
	if !slices.Contains(held, getpidEv.fd) {
		t.Errorf("the probe holds fds %v, not the sys_enter_getpid event opened ahead (fd %d)", held, getpidEv.fd)
	}
	if got := bpfFDs(t)["perf_event"]; got != opened-1 {
		t.Errorf("%d perf events after the attach, %d before it: want the one opened ahead taken and the other closed, none opened", got, opened)
	}
	if l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", getppidEv.fd)); err == nil && strings.Contains(l, "perf_event") {
		t.Errorf("the sys_enter_getppid event no probe took is still open (fd %d)", getppidEv.fd)
	}
	earlyTPMu.Lock()
	n = len(earlyTPs)
	earlyTPMu.Unlock()
	if n != 0 {
		t.Errorf("%d tracepoints still held after the attach", n)
	}
	const calls = 321
	getpids(calls)
	if err := l.Detach(); err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, l); got != calls {
		t.Errorf("count = %d, want %d", got, calls)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoLeaks(t, before)
}

// TestEarlyTracepointDiscarded: events opened ahead for a script that
// never attaches (it failed first) are closed by DiscardTracepoints,
// and a failed opening (no such tracepoint) leaves the attach to report it.
func TestEarlyTracepointDiscarded(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	PrepareTracepoints([]*lang.AttachPoint{tp("syscalls", "sys_enter_getpid"), tp("syscalls", "no_such_tracepoint_gotrace")})
	if _, ok := takeEarlyTracepoint("syscalls", "no_such_tracepoint_gotrace"); ok {
		t.Errorf("a tracepoint that does not exist was opened ahead")
	}
	DiscardTracepoints()
	checkNoLeaks(t, before)
	if _, ok := takeEarlyTracepoint("syscalls", "sys_enter_getpid"); ok {
		t.Errorf("an event was taken after the discard")
	}
}
