package main

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestBufferingModes: -B line and -B none write each event as it comes
// (a reader of the pipe sees it while gotrace runs); -B full holds output
// in the buffer until it fills or gotrace exits. The events are getpid
// calls of a thread of this test, made after the probe attached.
func TestBufferingModes(t *testing.T) {
	requireTracing(t)
	for _, mode := range []string{"line", "none", "full"} {
		t.Run(mode, func(t *testing.T) {
			goruntime.LockOSThread() // the subtest's goroutine makes the call
			defer goruntime.UnlockOSThread()
			tid := syscall.Gettid()
			script := fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /tid == %d/ { printf("event %%d\n", tid); }`, tid)
			want := fmt.Sprintf("event %d\n", tid)
			tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-B", mode, "-e", script)
			// Right after the notify line gotrace flushes what it printed
			// before the probes attached (BEGIN's output comes after that
			// line, as in bpftrace): an event in that instant would go out
			// with it. Let that flush pass first.
			time.Sleep(200 * time.Millisecond)
			syscall.Getpid()
			// Line and unbuffered output arrive while gotrace runs: wait for
			// it. Full buffering must still hold the event a while later.
			var out string
			deadline := time.Now().Add(10 * time.Second)
			if mode == "full" {
				deadline = time.Now().Add(700 * time.Millisecond)
			}
			for time.Now().Before(deadline) {
				if out, _ = tr.Output(); strings.Contains(out, want) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			running := strings.Contains(out, want)
			r := tr.Stop(syscall.SIGINT, 10*time.Second)
			switch {
			case mode != "full" && !running:
				t.Errorf("-B %s: the event was not written while gotrace ran; output so far %q", mode, out)
			case mode == "full" && running:
				t.Errorf("-B full: the event was written before exit: %q", out)
			}
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("-B %s: stdout at exit %q lacks %q; stderr:\n%s", mode, r.Stdout, want, r.Stderr)
			}
		})
	}
}
