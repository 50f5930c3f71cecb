package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

const nGetpid = 1234

// helperComm is the comm of a helper binary: its base name, cut to 15 bytes.
func helperComm(t *testing.T, name string) string {
	c := filepath.Base(testkit.Helper(t, name))
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

// runCommand runs gotrace -c CMD to completion: it must exit when CMD does.
func runCommand(t *testing.T, script, cmd string) testkit.Result {
	t.Helper()
	requireTracing(t)
	r := gt(t, 30*time.Second, "-c", cmd, "-e", script)
	if r.ExitCode != 0 {
		mismatch(t, "gotrace -c exited %d, want 0; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return r
}

// TestCountGetpidCommand traces a command started by -c, filtered by its
// comm; the helper runs without the handshake, so its exact getpid count is
// its whole life's (testdata/runtime/count.txt has the cpid form).
func TestCountGetpidCommand(t *testing.T) {
	t.Run("comm", func(t *testing.T) {
		requireTracing(t)
		// A copy with a name of its own: other packages' tests run getpid
		// helpers at the same time, and the filter is by comm.
		bin := filepath.Join(t.TempDir(), fmt.Sprintf("gpc%d", os.Getpid()))
		b, err := os.ReadFile(testkit.Helper(t, "getpid"))
		if err != nil {
			t.Fatal(err)
		}
		testkit.WriteExecutable(t, bin, b)
		comm := filepath.Base(bin)
		if len(comm) > 15 {
			comm = comm[:15]
		}
		r := runCommand(t, fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @ = count(); }`, comm),
			bin+" "+fmt.Sprint(nGetpid))
		expectOutput(t, "stdout", r.Stdout, fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", nGetpid))
	})
}
