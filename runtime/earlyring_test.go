package runtime

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
)

// TestPrepareRing: a ring buffer made by PrepareRing is the one LoadWith
// uses (with its reader, which then reads what a program writes); one of
// another size is not used, and a script without a ring buffer leaves it
// unused.
func TestPrepareRing(t *testing.T) {
	requireBPF(t)
	PrepareRing(0)
	earlyMu.Lock()
	e := early
	earlyMu.Unlock()
	if e == nil {
		t.Fatal("PrepareRing prepared nothing")
	}
	e.a.wait()
	if e.err != nil {
		t.Fatal(e.err)
	}
	l, err := Load(burstSpec(10))
	if err != nil {
		t.Fatal(err)
	}
	if l.Maps[RingBufMap] != e.m || l.ring != e {
		t.Errorf("LoadWith made its own ring buffer instead of the prepared one")
	}
	rd := l.takeRing()
	if rd == nil || rd != e.rd || l.takeRing() != nil {
		t.Fatalf("takeRing: %v, then not nil", rd)
	}
	if err := l.RunOnce(l.Spec.Programs[0]); err != nil {
		t.Fatal(err)
	}
	c := &recordChecker{t: t, perRun: 10}
	if _, _, _, err := rd.consume(c.handle, 0); err != nil {
		t.Fatal(err)
	}
	if c.n != 10 {
		t.Errorf("read %d records through the prepared reader, want 10", c.n)
	}
	rd.Close()
	l.Close()

	// Another size (GOTRACE_PERF_RB_PAGES given after all): made again.
	PrepareRing(0)
	l2, err := LoadWith(burstSpec(10), LoadOptions{RingBufPages: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.ring != nil || l2.Maps[RingBufMap].MaxEntries() == ringBufSize(0, 0) {
		t.Errorf("a prepared ring of another size was used")
	}

	// No ring buffer in the script: the prepared one is dropped.
	PrepareRing(0)
	l3, err := Load(&compiler.Spec{Maps: []*compiler.MapSpec{{Name: "m", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	earlyMu.Lock()
	left := early
	earlyMu.Unlock()
	if left != nil || l3.ring != nil {
		t.Errorf("the prepared ring buffer outlived a load without one")
	}
}

// TestWarmKernel: the start-up warm-up loads a map and a program and
// leaves nothing open, and a script loads after it.
func TestWarmKernel(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	warmKernel()
	checkNoLeaks(t, before)
	l, err := Load(getpidSpec(1))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// TestAdoptRing: a ring the command made before the runtime (AdoptRing) is
// the one LoadWith uses, and events reach its reader; a descriptor that is
// not the ring PrepareRing would make is closed and a ring made instead.
func TestAdoptRing(t *testing.T) {
	requireBPF(t)
	before := bpfFDs(t)
	size := ringBufSize(0, 0)
	made, err := ebpf.NewMap(ringSpec(size))
	if err != nil {
		t.Fatal(err)
	}
	madeInfo, _ := made.Info()
	madeID, _ := madeInfo.ID()
	fd, err := unix.FcntlInt(uintptr(made.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	made.Close()
	AdoptRing(size, func() (int, error) { return fd, nil })
	PrepareRing(0) // the command's later call: served by the adopted one
	l, err := Load(burstSpec(10))
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Maps[RingBufMap].Info()
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := info.ID(); id != madeID || l.ring == nil {
		t.Errorf("the loaded ring is map %d (prepared: %v), want the adopted map %d", id, l.ring != nil, madeID)
	}
	rd := l.takeRing()
	if rd == nil {
		t.Fatal("no reader for the adopted ring")
	}
	if err := l.RunOnce(l.Spec.Programs[0]); err != nil {
		t.Fatal(err)
	}
	c := &recordChecker{t: t, perRun: 10}
	if _, _, _, err := rd.consume(c.handle, 0); err != nil {
		t.Fatal(err)
	}
	if c.n != 10 || c.bad != 0 {
		t.Errorf("read %d records (%d bad) from the adopted ring, want 10", c.n, c.bad)
	}
	rd.Close()
	l.Close()

	// Not a ring: closed, and a ring made.
	afd := rawMapFD(t, &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	AdoptRing(size, func() (int, error) { return afd, nil })
	l2, err := Load(burstSpec(10))
	if err != nil {
		t.Fatal(err)
	}
	if m := l2.Maps[RingBufMap]; m.Type() != ebpf.RingBuf || m.MaxEntries() != size || l2.ring == nil {
		t.Errorf("after a wrong descriptor: %v of %d bytes (prepared: %v), want the prepared ring of %d", m.Type(), m.MaxEntries(), l2.ring != nil, size)
	}
	l2.Close()
	checkNoLeaks(t, before) // the wrong descriptor was closed too
}

// TestEarlyRingMadeByLoad: a prepared ring whose goroutine has not begun
// by the load is made by the load itself (no goroutine runs it here: a
// load that waited for one would never return), and is the load's ring.
func TestEarlyRingMadeByLoad(t *testing.T) {
	requireBPF(t)
	e := &earlyRing{size: ringBufSize(0, 0)}
	e.a = newAhead(e.make) // not started
	earlyMu.Lock()
	early = e
	earlyMu.Unlock()
	type loaded struct {
		l   *Loaded
		err error
	}
	got := make(chan loaded, 1)
	go func() { l, err := Load(burstSpec(10)); got <- loaded{l, err} }()
	var r loaded
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the load waited for a ring no goroutine makes")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.l.Close()
	if e.m == nil || r.l.Maps[RingBufMap] != e.m || r.l.ring != e {
		t.Fatalf("the load did not use the ring it made for the prepared one (%v)", e.err)
	}
	if e.a.do() {
		t.Error("the prepared ring's goroutine, late, made it again")
	}
	rd := r.l.takeRing()
	if rd == nil {
		t.Fatal("no reader made with the ring")
	}
	rd.Close()
}

// TestEarlyRingDiscardUnstarted: discarding an adopted ring whose
// goroutine never began closes the adopted descriptor and makes nothing.
func TestEarlyRingDiscardUnstarted(t *testing.T) {
	requireBPF(t)
	raw := rawMapFD(t, ringSpec(ringBufSize(0, 0)))
	e := &earlyRing{size: ringBufSize(0, 0), fd: func() (int, error) { return raw, nil }}
	e.a = newAhead(e.make)
	e.discard()
	quiesce()
	if e.m != nil || e.rd != nil {
		t.Error("a discarded ring was made")
	}
	if _, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", raw)); err == nil {
		unix.Close(raw)
		t.Errorf("the adopted descriptor %d is still open after the discard", raw)
	}
}

// rawMapFD makes a map of spec and returns a descriptor of it the caller
// owns, as the command's first init hands one over (AdoptRing).
func rawMapFD(t *testing.T, spec *ebpf.MapSpec) int {
	t.Helper()
	m, err := ebpf.NewMap(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fd, err := unix.FcntlInt(uintptr(m.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}
