package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/runtime/output"
)

// catEvent prints cat(path) through a TextPrinter with limit catMax and
// returns what it printed; it fails the test if the printer takes longer
// than a second (it used to read a FIFO forever).
func catEvent(t *testing.T, path string, catMax int) string {
	t.Helper()
	var buf bytes.Buffer
	spec := &compiler.Spec{Events: []*compiler.Event{{ID: 0, Kind: compiler.EvCat, Format: path}}}
	p := NewTextPrinter(&Output{w: &buf}, output.Text, nil, spec)
	p.CatMax = catMax
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- p.Event(spec.Events[0], nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatalf("cat(%q) still reading after 1 s", path)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("cat(%q) took %v", path, d)
	}
	p.Flush()
	return buf.String()
}

func TestCatBounded(t *testing.T) {
	// /dev/zero has no end: only the limit ends the read.
	if out := catEvent(t, "/dev/zero", DefaultCatMax); strings.Count(out, "\x00") != DefaultCatMax {
		t.Errorf("cat(/dev/zero) printed %d NULs, want %d", strings.Count(out, "\x00"), DefaultCatMax)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, bytes.Repeat([]byte("abcdefghij"), 100), 0o644)
	if out := catEvent(t, file, 25); !strings.HasPrefix(out, "abcdefghijabcdefghijabcde") || strings.Contains(out, "abcdefghijabcdefghijabcdef") {
		t.Errorf("cat with CatMax 25 printed %q", out)
	}
	if out := catEvent(t, file, 0); !strings.Contains(out, strings.Repeat("abcdefghij", 100)) {
		t.Errorf("cat of a small file printed %q", out)
	}
}

func TestCatFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// No writer: open must not block.
	if out := catEvent(t, fifo, DefaultCatMax); strings.TrimSpace(out) != "" {
		t.Errorf("cat of an unopened FIFO printed %q", out)
	}
	// A writer that sends a little and then nothing: what it sent prints,
	// and the read gives up instead of waiting for more.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString("hello")
	if out := catEvent(t, fifo, DefaultCatMax); !strings.Contains(out, "hello") {
		t.Errorf("cat of a FIFO with data printed %q", out)
	}
	if out := catEvent(t, fifo, DefaultCatMax); strings.TrimSpace(out) != "" {
		t.Errorf("cat of a silent FIFO printed %q", out)
	}
}
