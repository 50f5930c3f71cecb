package main

import (
	"os/exec"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestPIDRangeLikeBpftrace: -p values are read and range-checked as
// bpftrace 0.17 does, with its messages (compared with bpftrace itself).
func TestPIDRangeLikeBpftrace(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	for _, p := range []string{"0", "-1", " -1", "-0", "4194305", "4294967296", "99999999999999999999", "abc", "1x", "1 ", "0x10", ""} {
		args := []string{"-p", p, "-e", "BEGIN { exit(); }"}
		r := gt(t, 20*time.Second, args...)
		b := testkit.RunBounded(t, 20*time.Second, exec.Command(bt, args...))
		if r.ExitCode != b.ExitCode {
			t.Errorf("-p %q: exit %d, bpftrace %d", p, r.ExitCode, b.ExitCode)
		}
		if b.ExitCode != 0 {
			expectOutput(t, "-p "+p+" stderr vs bpftrace", r.Stderr, bpftraceStderr(b.Stderr))
		}
	}
}
