package runtime

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Output is where a run's text goes (-o FILE or stdout) with -B buffering.
// The printer and the runtime both write to it.
type Output struct {
	// mu serialises writers and flushes: the ring-buffer reader prints and
	// flushes on its goroutine while the session flushes the "Attaching"
	// and notify lines on its own; an unguarded bufio.Writer then writes
	// the same buffered bytes twice.
	mu   sync.Mutex
	w    io.Writer
	buf  *bufio.Writer // nil for unbuffered
	line bool
	// drain: flush whenever the runtime has no more events in hand
	// (Drained), so output is as timely as line buffering while a burst
	// goes out in few large writes.
	drain bool
	file  *os.File // non-nil when we opened it
	// held collects what is written between Hold and Release.
	held    bytes.Buffer
	holding bool
	// capture, when set, receives everything written instead (a test:
	// probe's output, see TextPrinter.StartCapture).
	capture *bytes.Buffer
}

// setCapture sends what is written from now on to b (nil: to the output
// again).
func (o *Output) setCapture(b *bytes.Buffer) {
	o.mu.Lock()
	o.capture = b
	o.mu.Unlock()
}

// Hold keeps everything written from now on in memory until Release:
// bpftrace 0.26 prints BEGIN's output after "Attached N probes", which
// gotrace prints once every probe is attached, while BEGIN ran before.
func (o *Output) Hold() {
	o.mu.Lock()
	o.holding = true
	o.mu.Unlock()
}

// Prepend puts b before what is held (or writes it when not holding): the
// JSON attached_probes record, printed once attached, precedes BEGIN's
// output.
func (o *Output) Prepend(b []byte) error {
	o.mu.Lock()
	if o.holding {
		rest := append([]byte(nil), o.held.Bytes()...)
		o.held.Reset()
		o.held.Write(b)
		o.held.Write(rest)
		o.mu.Unlock()
		return nil
	}
	o.mu.Unlock()
	_, err := o.Write(b)
	return err
}

// Release writes what was held, in order, and ends holding.
func (o *Output) Release() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.holding {
		return nil
	}
	o.holding = false
	b := o.held.Bytes()
	o.held = bytes.Buffer{}
	if len(b) == 0 {
		return nil
	}
	if o.buf == nil {
		_, err := o.w.Write(b)
		return err
	}
	if _, err := o.buf.Write(b); err != nil {
		return err
	}
	return o.buf.Flush()
}

// OpenOutput opens path (empty: stdout) with the -B mode. BufferDefault
// is line buffering on a terminal; otherwise lines are buffered and
// written whenever the ring buffer runs empty (see Drained), which shows
// every event as soon as line buffering would unless events come faster
// than they are printed.
func OpenOutput(path string, mode Buffering) (*Output, error) {
	o := &Output{}
	f := os.Stdout
	if path != "" {
		var err error
		f, err = os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("ERROR: failed to open output file %s: %w", path, err)
		}
		o.file = f
	}
	o.w = f
	if mode == BufferDefault {
		mode = BufferFull
		o.drain = true
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			mode, o.drain = BufferLine, false
		}
	}
	switch mode {
	case BufferLine:
		o.buf, o.line = bufio.NewWriterSize(f, 64<<10), true
	case BufferFull:
		o.buf = bufio.NewWriterSize(f, 64<<10)
	}
	return o, nil
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.capture != nil {
		return o.capture.Write(p)
	}
	if o.holding {
		return o.held.Write(p)
	}
	if o.buf == nil {
		return o.w.Write(p)
	}
	n, err := o.buf.Write(p)
	if err == nil && o.line && bytes.IndexByte(p, '\n') >= 0 {
		err = o.buf.Flush()
	}
	return n, err
}

// Flush writes buffered output.
func (o *Output) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flush()
}

func (o *Output) flush() error {
	if o.buf == nil || o.holding {
		return nil
	}
	return o.buf.Flush()
}

// Drained tells the output that no more events are waiting: in the
// default mode for files and pipes it flushes.
func (o *Output) Drained() error {
	if o.drain {
		return o.Flush()
	}
	return nil
}

// Close flushes and closes a file opened by OpenOutput.
func (o *Output) Close() error {
	err := o.Flush()
	if o.file != nil {
		if cerr := o.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
