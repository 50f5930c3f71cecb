package runtime

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultCatMax is how many bytes cat() prints at most, as bpftrace's
// cat_bytes_max (BPFTRACE_CAT_BYTES_MAX).
const DefaultCatMax = 10 << 10

// catTimeout bounds how long one cat() may wait for data: a FIFO, a
// socket or a terminal may never send any, and cat() runs on the reader
// that prints every other event.
const catTimeout = 100 * time.Millisecond

// readCat returns up to limit bytes of path. It never reads more than
// limit (cat("/dev/zero") costs limit bytes, not memory without end),
// opens without blocking (a FIFO with no writer) and gives up waiting
// for data after catTimeout (a FIFO whose writer stays silent).
func readCat(path string, limit int) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// A non-blocking descriptor goes to Go's poller where it can
	// (FIFOs, sockets, terminals), so the deadline below applies.
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	_ = f.SetReadDeadline(time.Now().Add(catTimeout)) // not pollable: reads never block
	buf := make([]byte, 0, min(limit, 64<<10))
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, unix.EAGAIN) {
				return buf, nil
			}
			if len(buf) > 0 {
				return buf, nil
			}
			return nil, &os.PathError{Op: "read", Path: path, Err: unwrapPathErr(err)}
		}
	}
	return buf, nil
}
