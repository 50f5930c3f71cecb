package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The reader goroutine prints and flushes while the session flushes its own
// lines: every line must reach the file exactly once (an unguarded
// bufio.Writer wrote BEGIN's printf twice in about 1 run of 10).
func TestOutputConcurrentFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	o, err := OpenOutput(path, BufferDefault)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			if _, err := o.Write([]byte("line\n")); err != nil {
				t.Error(err)
				return
			}
			if err := o.Drained(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			if err := o.Flush(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "line\n"); got != n || len(b) != n*len("line\n") {
		t.Errorf("%d lines (%d bytes), want exactly %d", got, len(b), n)
	}
}
