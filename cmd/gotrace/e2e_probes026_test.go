package main

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestSelfSignal: self:signal:SIGUSR1 probes run, in script order, each
// time the tracer receives SIGUSR1 (bpftrace 0.22+); a program with only
// such probes keeps running until then; probe and probetype name them.
func TestSelfSignal(t *testing.T) {
	requireTracing(t)
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--compat", "0.26", "-e",
		`self:signal:SIGUSR1 { @n++; printf("first %d\n", @n); }
		 self:signal:SIGUSR1 { printf("second %s %s\n", probe, probetype); if (@n == 2) { exit(); } }`)
	for i := 1; i <= 2; i++ {
		tr.Cmd.Process.Signal(syscall.SIGUSR1)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if out, _ := tr.Output(); strings.Count(out, "second") >= i {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	r := tr.Wait(10 * time.Second)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", r.Stdout,
		"first 1\nsecond self:signal:SIGUSR1 special\nfirst 2\nsecond self:signal:SIGUSR1 special\n\n\n@n: 2\n")
}

// TestSoftwareClockOrder: two probes on a software clock event run in
// script order (each perf event has its own timer, so the first attached
// fires first), as bpftrace 0.26's probe.software_order test requires.
func TestSoftwareClockOrder(t *testing.T) {
	requireTracing(t)
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e",
		`software:cpu:1e6 { printf("first"); } software:cpu:1e6 { printf(" second\n"); exit(); }`)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	if !regexp.MustCompile(`^(first)+ second\n`).MatchString(r.Stdout) {
		mismatch(t, "stdout %q, want (first)+ second", r.Stdout)
	}
}
