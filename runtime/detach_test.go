package runtime

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The reaper keeps the handed-off descriptors until the tracer releases
// it, so the tracer never holds the last reference (issue 19, item 3): a
// pipe's write end stands in for a probe; its read end sees EOF only once
// the reaper, the last holder, closes it.
func TestHandoffWaitsForRelease(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	release, err := handoff([]*fdCloser{{fds: []int{fd}, stoppable: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Our copy is closed; the reaper's must still be open.
	r.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 1)
	if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		release()
		t.Fatalf("before release: read = %v, want a timeout (the reaper closed its copy first)", err)
	}
	release()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.Read(buf); err != io.EOF {
		t.Fatalf("after release: read = %v, want EOF (the reaper closes its copy)", err)
	}
}
