package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestCommandWords: -c's command is split at blanks with its quotes kept,
// as bpftrace 0.26.1 does (its json-output.join_delim case), and the child
// gets gotrace's environment.
func TestCommandWords(t *testing.T) {
	requireTracing(t)
	script := `tracepoint:sched:sched_process_exec /pid == cpid/ { printf("exec %s\n", comm); }`
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e", script, "-c", `/bin/echo 'x y'  "z"`)
	checkNoPanic(t, r)
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "'x y' \"z\"\n") || !strings.Contains(r.Stdout, "exec echo\n") {
		t.Errorf("exit %d; want echo's words with their quotes, and its exec\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	// The command gets gotrace's environment.
	cmd := exec.Command(testkit.Gotrace(t), "--compat", "0.26", "-e", "BEGIN { }", "-c", "/usr/bin/printenv GT_CMD_ENV")
	cmd.Env = append(os.Environ(), "GT_CMD_ENV=from-env")
	r = testkit.RunBounded(t, 30*time.Second, cmd)
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "from-env\n") {
		t.Errorf("environment: exit %d, stdout %q, stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
}

// TestCommandWords017: bpftrace 0.17 splits -c at spaces and passes quotes
// through to the command; so does gotrace in 0.17 mode.
func TestCommandWords017(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	args := []string{"-e", "BEGIN { }", "-c", `/bin/echo 'x y' "z"`}
	r := gt(t, 30*time.Second, append([]string{"--compat", "0.17"}, args...)...)
	b := testkit.RunBounded(t, 30*time.Second, exec.Command(bt, args...))
	if want := "\n'x y' \"z\"\n"; !strings.Contains(b.Stdout, want) {
		t.Fatalf("bpftrace printed %q, want it to hold %q", b.Stdout, want)
	}
	if r.ExitCode != 0 || r.Stdout != b.Stdout {
		t.Errorf("exit %d, stdout %q; bpftrace 0.17 printed %q\nstderr:\n%s", r.ExitCode, r.Stdout, b.Stdout, r.Stderr)
	}
}
