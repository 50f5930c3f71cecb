package runtime

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ringReader reads the event ring buffer (BPF_MAP_TYPE_RINGBUF) straight
// from its mapped pages, a batch at a time. cilium/ebpf's ringbuf.Reader
// takes a mutex, loads both positions, copies the record out and stores
// the consumer position for every record; at a million records a second
// that is most of the reader's time besides formatting, and every store
// of the consumer position is a cache line the producing CPUs then read
// back. Here a batch hands each record to the handler in place (a slice
// of the mapping, valid until the handler returns; a record wrapping
// around the ring's end is copied out first) and stores the
// consumer position once per storeEvery bytes and at the batch's end.
//
// Records come out in the ring's order, which is the order the programs
// reserved them: per CPU (and across CPUs) as they were written.
//
// Waiting for data goes through Go's network poller (the map's file
// descriptor is duplicated, made non-blocking and registered there), so a
// waiting reader holds no thread in a blocking system call.
type ringReader struct {
	// mu is held while records are read: Close waits for the batch in
	// hand before it unmaps the pages.
	mu     sync.Mutex
	closed atomic.Bool
	// flushed: Flush was called; the reader hands out what is left and
	// stops.
	flushed atomic.Bool

	file *os.File // the map, duplicated, in the poller
	raw  syscall.RawConn
	poll bool // the poller took the descriptor (else: timed polling)

	// The pages are mapped at the first read (mapPages, under mu), not
	// when the reader is made: mapping the 4 MiB ring costs the kernel
	// ~0.3 ms, which then falls on the reader's goroutine once the script
	// is loaded, not on the start-up's busiest stretch; the records that
	// come before are kept in the ring. mapErr is the mapping's failure.
	mapped bool
	mapErr error

	consPage, dataPages []byte
	consPos, prodPos    *atomic.Uint64
	data                []byte // the data pages
	wrapBuf             []byte // a record that wraps around the end, copied out
	mask                uint64
	size                uint64
	// storeEvery: bytes consumed between stores of the consumer position
	// within a batch, so a long batch frees space as it goes.
	storeEvery uint64
}

// Ring buffer record header (include/uapi/linux/bpf.h).
const (
	ringBusyBit    = 1 << 31
	ringDiscardBit = 1 << 30
	ringHdrSize    = 8
)

var (
	errRingClosed  = errors.New("ring buffer closed")
	errRingFlushed = errors.New("ring buffer flushed")
)

func newRingReader(m *ebpf.Map) (*ringReader, error) {
	if m.Type() != ebpf.RingBuf {
		return nil, fmt.Errorf("map %s is not a ring buffer", m.Type())
	}
	size := uint64(m.MaxEntries())
	if size == 0 || size&(size-1) != 0 {
		return nil, fmt.Errorf("ring buffer size %d is not a power of two", size)
	}
	r := &ringReader{mask: size - 1, size: size, storeEvery: max(size/16, uint64(os.Getpagesize()))}
	// The reader's own descriptor of the map: the pages are mapped from
	// it, and the poller waits on it.
	dup, err := unix.FcntlInt(uintptr(m.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err == nil {
		if err = unix.SetNonblock(dup, true); err != nil {
			unix.Close(dup)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ring buffer descriptor: %w", err)
	}
	r.file = os.NewFile(uintptr(dup), "ringbuf")
	if r.raw, err = r.file.SyscallConn(); err != nil {
		r.file.Close()
		return nil, fmt.Errorf("ring buffer descriptor: %w", err)
	}
	// SetReadDeadline works only for a descriptor the poller took.
	r.poll = r.file.SetReadDeadline(time.Time{}) == nil
	return r, nil
}

// mapPages maps the consumer page and the data pages, once; callers hold
// r.mu.
func (r *ringReader) mapPages() error {
	if r.mapped {
		return r.mapErr
	}
	if r.closed.Load() {
		return errRingClosed
	}
	r.mapped = true
	page := os.Getpagesize()
	var cons, data []byte
	// Mapped from within Control: the descriptor stays open meanwhile
	// even if Close runs.
	cerr := r.raw.Control(func(fd uintptr) {
		var err error
		if cons, err = unix.Mmap(int(fd), 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
			r.mapErr = fmt.Errorf("mmap consumer page: %w", err)
			return
		}
		// The kernel maps the data pages twice in a row, so that a
		// record wrapping around the end reads as one slice; the second
		// copy would count again in the tracer's resident set (8 MiB for
		// the 4 MiB default) while saving a copy only for the rare record
		// that wraps. One copy is mapped; a wrapping record is copied out
		// (wrapBuf).
		if data, err = unix.Mmap(int(fd), int64(page), page+int(r.size), unix.PROT_READ, unix.MAP_SHARED); err != nil {
			unix.Munmap(cons)
			r.mapErr = fmt.Errorf("mmap data pages: %w", err)
		}
	})
	if cerr != nil && r.mapErr == nil {
		r.mapErr = fmt.Errorf("ring buffer descriptor: %w", cerr)
	}
	if r.mapErr != nil {
		return r.mapErr
	}
	r.consPage, r.dataPages = cons, data
	r.consPos = (*atomic.Uint64)(unsafe.Pointer(&cons[0]))
	r.prodPos = (*atomic.Uint64)(unsafe.Pointer(&data[0]))
	r.data = data[page:]
	return nil
}

func (r *ringReader) unmap() {
	if r.consPage == nil {
		return // never mapped
	}
	unix.Munmap(r.dataPages)
	unix.Munmap(r.consPage)
	r.consPage, r.dataPages, r.data = nil, nil, nil
}

// empty reports whether every committed record was read; only once the
// pages are mapped (after a consume or wait).
func (r *ringReader) empty() bool {
	return r.prodPos.Load() == r.consPos.Load()
}

// consume hands the records in the ring now to handle, in order, at most
// limit of them (0: no limit). It stops early when handle says stop (an
// exit() record, itself consumed) or fails. more: the limit ended the
// batch with records left. A record the kernel has reserved but not yet
// committed ends the batch unless it is committed within a short spin.
func (r *ringReader) consume(handle func([]byte) (bool, error), limit int) (n int, more, stop bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed.Load() {
		return 0, false, false, errRingClosed
	}
	if err := r.mapPages(); err != nil {
		return 0, false, false, err
	}
	cons := r.consPos.Load()
	stored := cons
	defer func() {
		if cons != stored {
			r.consPos.Store(cons)
		}
	}()
	spins := 0
	for {
		prod := r.prodPos.Load()
		if cons == prod {
			return n, false, false, nil
		}
		for cons != prod {
			hdr := atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[cons&r.mask])))
			if hdr&ringBusyBit != 0 {
				// Reserved, not yet committed: the program is between
				// bpf_ringbuf_reserve and submit (a few instructions).
				// Free what was read and wait for it briefly; later
				// records, even committed ones, come after it.
				if cons != stored {
					r.consPos.Store(cons)
					stored = cons
				}
				if spins++; spins > 1000 {
					return n, true, false, nil
				}
				goruntime.Gosched()
				continue
			}
			spins = 0
			l := uint64(hdr &^ (ringBusyBit | ringDiscardBit))
			start := (cons + ringHdrSize) & r.mask
			next := cons + ringHdrSize + (l+7)&^7
			if next-cons > prod-cons || l > r.size {
				return n, false, false, fmt.Errorf("ring buffer record of %d bytes at %d overruns the data (%d)", l, cons, prod)
			}
			if hdr&ringDiscardBit == 0 {
				n++
				var rec []byte
				if start+l <= r.size {
					rec = r.data[start : start+l : start+l]
				} else {
					// Wraps around the end of the ring.
					r.wrapBuf = append(append(r.wrapBuf[:0], r.data[start:]...), r.data[:start+l-r.size]...)
					rec = r.wrapBuf
				}
				stop, err = handle(rec)
				if err != nil || stop {
					cons = next
					return n, false, stop, err
				}
			}
			cons = next
			if cons-stored >= r.storeEvery {
				r.consPos.Store(cons)
				stored = cons
			}
			if limit > 0 && n >= limit {
				return n, cons != r.prodPos.Load(), false, nil
			}
		}
	}
}

// wait blocks until the ring has a record, Flush is called
// (errRingFlushed) or the reader is closed (errRingClosed). The kernel
// wakes a waiting reader when a record is committed at the consumer
// position (the ring was empty), so a record already there when wait
// starts is seen by the check before blocking.
func (r *ringReader) wait() error {
	r.mu.Lock()
	err := r.mapPages()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	for {
		if r.closed.Load() {
			return errRingClosed
		}
		if r.flushed.Load() {
			return errRingFlushed
		}
		if !r.poll {
			if !r.empty() {
				return nil
			}
			time.Sleep(time.Millisecond)
			continue
		}
		data := false
		err := r.raw.Read(func(uintptr) bool {
			data = !r.empty()
			return data || r.flushed.Load() || r.closed.Load()
		})
		if data {
			return nil
		}
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			continue // Flush
		}
		if err != nil {
			if r.closed.Load() {
				return errRingClosed
			}
			return fmt.Errorf("wait for the ring buffer: %w", err)
		}
	}
}

// Flush makes a waiting (or the next) wait return errRingFlushed; the
// reader then reads what is in the ring and stops.
func (r *ringReader) Flush() {
	r.flushed.Store(true)
	if r.poll {
		r.file.SetReadDeadline(time.Now())
	}
}

// Unflush ends a Flush: wait blocks again.
func (r *ringReader) Unflush() {
	r.flushed.Store(false)
	if r.poll {
		r.file.SetReadDeadline(time.Time{})
	}
}

// Close ends a wait and, once the batch in hand is done, unmaps the ring.
func (r *ringReader) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	err := r.file.Close()
	r.mu.Lock()
	r.unmap()
	r.mu.Unlock()
	return err
}
