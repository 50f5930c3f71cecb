package runtime

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// The event ring buffer is the costliest object a typical script creates
// (creating the default 4 MiB ring takes the kernel 0.6-1.6 ms here, and
// mapping its pages 0.3 ms more), and nearly every script that runs has
// one. PrepareRing creates it, with its reader, in the background while
// the script is parsed, checked and compiled, on another CPU; LoadWith
// takes it when the compiled ring has that size and closes it otherwise.
// The reader maps the pages at its first read (ring.go).

// earlyRing is a ring buffer being made ahead of LoadWith: the map and its
// reader (made by make, the reader mapping nothing yet), from the
// descriptor fd gives when it is given (adopt).
type earlyRing struct {
	size uint32
	fd   func() (int, error)
	a    *ahead
	m    *ebpf.Map
	rd   *ringReader
	err  error
}

// reader returns the ring's reader, making the ring here if its goroutine
// has not begun; nil if making it failed (the session then makes its own
// and reports the failure).
func (e *earlyRing) reader() *ringReader {
	e.a.wait()
	return e.rd
}

var (
	earlyMu sync.Mutex
	early   *earlyRing
	// background counts the goroutines that make or close kernel objects
	// on their own (a prepared ring, a discarded one, the warm-up):
	// quiesce waits for them.
	background sync.WaitGroup
)

// quiesce waits until no goroutine started here still makes or closes a
// kernel object, so the process's descriptors are what the loads left
// (the leak tests count them).
func quiesce() { background.Wait() }

// PrepareRing starts creating the event ring buffer of the size
// pagesPerCPU gives (0: the default size, see ringBufSize) and mapping its
// pages, for a script about to load, unless one of that size is already
// being made. It returns at once; a failure (not root, no ring buffers) is
// left for LoadWith to meet and report.
func PrepareRing(pagesPerCPU int) { prepareRing(ringBufSize(0, pagesPerCPU), nil) }

// AdoptRing takes, as the ring PrepareRing would make, a ring buffer of
// size bytes the command made before the runtime was ready (fd waits for
// its descriptor, which becomes the runtime's). Once made, it is checked
// to be a ring of that size and the runtime's name; if it is not, or
// making it failed, the ring is made here as PrepareRing makes it. A later
// PrepareRing of the same size is then served by it.
func AdoptRing(size uint32, fd func() (int, error)) { prepareRing(size, fd) }

// prepareRing makes the ring of size bytes the next load takes, from fd's
// descriptor when fd is given; without one, a ring of that size already
// being made serves (the command's guess from the text, then the
// compiler's call).
func prepareRing(size uint32, fd func() (int, error)) {
	e := &earlyRing{size: size, fd: fd}
	e.a = newAhead(e.make)
	earlyMu.Lock()
	old := early
	if fd == nil && old != nil && old.size == size {
		earlyMu.Unlock()
		return
	}
	early = e
	earlyMu.Unlock()
	old.discard()
	e.start()
}

// start makes e's ring and its reader on another goroutine, unless the
// load has made them by the time it runs.
func (e *earlyRing) start() {
	background.Add(1)
	go func() {
		defer background.Done()
		e.a.do()
	}()
}

// make makes e's ring, the one e.fd gives if it is the one (adopt), else a
// new one, and its reader.
func (e *earlyRing) make() {
	if e.fd != nil {
		e.m, e.err = adopt(e.fd, e.size)
	}
	if e.fd == nil || e.err != nil {
		raiseMemlock()
		e.m, e.err = ebpf.NewMap(ringSpec(e.size))
		if e.err != nil {
			return
		}
	}
	// Its pages are mapped by its first read, once loaded.
	if rd, err := newRingReader(e.m); err == nil {
		e.rd = rd
	}
}

// adopt wraps the ring fd gives, if it is the ring ringSpec(size) makes.
func adopt(fd func() (int, error), size uint32) (*ebpf.Map, error) {
	raw, err := fd()
	if err != nil {
		return nil, err
	}
	m, err := ebpf.NewMapFromFD(raw) // which closes raw if it fails
	if err != nil {
		return nil, err
	}
	want := ringSpec(size)
	info, err := m.Info()
	if err != nil || m.Type() != want.Type || m.MaxEntries() != want.MaxEntries || info.Name != want.Name {
		m.Close()
		return nil, fmt.Errorf("the ring made early is not %s of %d bytes", want.Name, size)
	}
	return m, nil
}

// ringSpec is the event ring buffer's map spec for size bytes.
func ringSpec(size uint32) *ebpf.MapSpec {
	return &ebpf.MapSpec{Name: kernelName(RingBufMap), Type: ebpf.RingBuf, MaxEntries: size}
}

// takeEarlyRing returns the prepared ring buffer, and the making of its
// reader, when spec is one (a ring of the prepared size and name), waiting
// for the map if it is still being made; nil when none was prepared, it
// failed, or spec is another (then it is closed).
func takeEarlyRing(spec *ebpf.MapSpec) (*ebpf.Map, *earlyRing) {
	earlyMu.Lock()
	e := early
	early = nil
	earlyMu.Unlock()
	if e == nil {
		return nil, nil
	}
	want := ringSpec(e.size)
	if spec.Type != want.Type || spec.MaxEntries != want.MaxEntries || spec.Name != want.Name || spec.Flags != 0 {
		e.discard()
		return nil, nil
	}
	e.a.wait()
	if e.err != nil {
		return nil, nil
	}
	return e.m, e
}

// discardEarlyRing closes a prepared ring buffer the script did not use.
func discardEarlyRing() {
	earlyMu.Lock()
	e := early
	early = nil
	earlyMu.Unlock()
	e.discard()
}

// discard closes e's map and reader once they are made, or keeps them
// from being made (in the background: nothing waits for a ring no one
// uses).
func (e *earlyRing) discard() {
	if e == nil {
		return
	}
	background.Add(1)
	go func() {
		defer background.Done()
		if e.a.cancel() {
			// Never made: only the adopted descriptor, if any, is open.
			if e.fd != nil {
				if raw, err := e.fd(); err == nil && raw >= 0 {
					unix.Close(raw)
				}
			}
			return
		}
		if e.rd != nil {
			e.rd.Close()
		}
		if e.m != nil {
			e.m.Close()
		}
	}()
}

// PrepareKernel does, on another goroutine, the first-use work of loading
// any script, while the script is parsed and compiled: cilium/ebpf's
// one-time feature probes (object names, at the first map; program
// ext_infos and bpf_probe_read_kernel, at the first program with a helper
// call: three test loads, ~0.4 ms of every start-up), the locked-memory
// limit, the possible CPUs and tracefs's mount point. LoadWith then meets
// their cached answers. Failures are left for the real load to meet.
func PrepareKernel() {
	background.Add(1)
	go func() {
		defer background.Done()
		warmKernel()
	}()
}

func warmKernel() {
	raiseMemlock()
	ebpf.PossibleCPU()
	tracefsDir()
	if m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "gotrace_warm", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}); err == nil {
		m.Close()
	}
	p, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{Name: "gotrace_warm", Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.FnGetPrandomU32.Call(), asm.Mov.Imm(asm.R0, 0), asm.Return()}},
		ebpf.ProgramOptions{LogDisabled: true})
	if err == nil {
		p.Close()
	}
}
