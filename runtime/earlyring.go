package runtime

import (
	"sync"

	"github.com/cilium/ebpf"
)

// The event ring buffer is the costliest object a typical script creates
// (creating the default 8 MiB ring and mapping its pages takes the kernel
// 2-3 ms here, a fifth of gotrace's start-up), and nearly every script
// that runs has one. PrepareRing creates it, with its reader, in the
// background while the script is parsed, checked and compiled, on another
// CPU; LoadWith takes it when the compiled ring has that size and closes
// it otherwise.

// earlyRing is a ring buffer being made ahead of LoadWith.
type earlyRing struct {
	size uint32
	done chan struct{}
	m    *ebpf.Map
	rd   *ringReader
	err  error
}

var (
	earlyMu sync.Mutex
	early   *earlyRing
)

// PrepareRing starts creating the event ring buffer of the size
// pagesPerCPU gives (0: the default size, see ringBufSize) and mapping its
// pages, for a script about to load, unless one of that size is already
// being made. It returns at once; a failure (not root, no ring buffers) is
// left for LoadWith to meet and report.
func PrepareRing(pagesPerCPU int) {
	e := &earlyRing{size: ringBufSize(0, pagesPerCPU), done: make(chan struct{})}
	earlyMu.Lock()
	old := early
	if old != nil && old.size == e.size {
		// Asked again (the command's guess from the text, then the
		// compiler): the one being made serves.
		earlyMu.Unlock()
		return
	}
	early = e
	earlyMu.Unlock()
	old.discard()
	go func() {
		defer close(e.done)
		raiseMemlock()
		e.m, e.err = ebpf.NewMap(ringSpec(e.size))
		if e.err != nil {
			return
		}
		if e.rd, e.err = newRingReader(e.m); e.err != nil {
			e.m.Close()
			e.m = nil
		}
	}()
}

// ringSpec is the event ring buffer's map spec for size bytes.
func ringSpec(size uint32) *ebpf.MapSpec {
	return &ebpf.MapSpec{Name: kernelName(RingBufMap), Type: ebpf.RingBuf, MaxEntries: size}
}

// takeEarlyRing returns the prepared ring buffer and its reader when spec
// is one (a ring of the prepared size and name), waiting for it if it is
// still being made; nil when none was prepared, it failed, or spec is
// another (then it is closed).
func takeEarlyRing(spec *ebpf.MapSpec) (*ebpf.Map, *ringReader) {
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
	<-e.done
	if e.err != nil {
		return nil, nil
	}
	return e.m, e.rd
}

// discardEarlyRing closes a prepared ring buffer the script did not use.
func discardEarlyRing() {
	earlyMu.Lock()
	e := early
	early = nil
	earlyMu.Unlock()
	e.discard()
}

// discard closes e's map and reader once they are made (in the
// background: nothing waits for a ring no one uses).
func (e *earlyRing) discard() {
	if e == nil {
		return
	}
	go func() {
		<-e.done
		if e.rd != nil {
			e.rd.Close()
		}
		if e.m != nil {
			e.m.Close()
		}
	}()
}
