package main

// End-to-end tests: they build the gotrace binary (testkit.Gotrace), run it
// as root against the real kernel on the deterministic C helpers of
// testdata/helpers, and assert exact outputs — against literal expectations
// and, side by side on the same workload, against bpftrace 0.17.

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// knownBugs lists product bugs these tests found and that are not fixed yet,
// by test name (t.Name()). A listed test that fails its comparison logs
// "KNOWN BUG" instead of failing; a listed test that passes logs that the
// entry can go. Report the list to the lead; remove entries once fixed.
var knownBugs = map[string]string{}

// mismatch reports a failed expectation: an error, or a log line when the
// test is a known bug.
func mismatch(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if bug, ok := knownBugs[t.Name()]; ok {
		t.Logf("KNOWN BUG (%s): %s", bug, msg)
		return
	}
	t.Error(msg)
}

// expectOutput compares got with want exactly.
func expectOutput(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		if bug, ok := knownBugs[t.Name()]; ok {
			t.Logf("known bug %q no longer reproduces: remove it from knownBugs", bug)
		}
		return
	}
	mismatch(t, "%s differs:\n%s", what, diffText(want, got))
}

// diffText shows the first differing line and both texts.
func diffText(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	at := func(l []string) string {
		if i < len(l) {
			return strconv.Quote(l[i])
		}
		return "(end)"
	}
	return fmt.Sprintf("first difference at line %d:\n  want %s\n  got  %s\n--- want\n%s--- got\n%s", i+1, at(wl), at(gl), want, got)
}

// requireTracing makes the test need what a real trace needs.
func requireTracing(t *testing.T) {
	t.Helper()
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Go)
}

// requireBpftrace makes a side-by-side test need bpftrace: .ci/run installs
// it, so in CI its absence is a failure.
func requireBpftrace(t *testing.T) string {
	t.Helper()
	testkit.Require(t, testkit.Bpftrace)
	p, err := exec.LookPath("bpftrace")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gt runs gotrace with args to completion (bounded) and returns the result.
func gt(t *testing.T, timeout time.Duration, args ...string) testkit.Result {
	t.Helper()
	r := testkit.RunBounded(t, timeout, exec.Command(testkit.Gotrace(t), args...))
	if r.TimedOut {
		t.Fatalf("gotrace %q timed out after %v:\nstdout:\n%s\nstderr:\n%s", args, timeout, r.Stdout, r.Stderr)
	}
	checkNoPanic(t, r)
	return r
}

// checkNoPanic fails when the Go runtime reported a panic or fatal error
// (at the start of a line: clang's "FILE:L:C: fatal error:" for a missing
// header is a script error).
func checkNoPanic(t *testing.T, r testkit.Result) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:", "runtime error"} {
		if strings.HasPrefix(r.Stderr, s) || strings.Contains(r.Stderr, "\n"+s) {
			t.Errorf("gotrace crashed (%q on stderr):\n%s", s, r.Stderr)
			return
		}
	}
}

// bpftraceStderr drops what bpftrace prints on stderr only because of this
// machine (it cannot raise RLIMIT_MEMLOCK; the kernel accounts memory by
// memcg anyway).
func bpftraceStderr(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.Contains(l, "RLIMIT_MEMLOCK") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

// traced is the output of one tracer run on a helper workload.
type traced struct {
	gotrace, bpftrace testkit.Result
	helperPid         int
}

// traceHelper runs helper (with the ready handshake) under gotrace — and,
// when withBpftrace, under bpftrace too, both attached to the same run of
// the workload. script gets the helper's pid as $1 and extra as further
// arguments. After the helper exits, tracers that have not exited by
// themselves get sig (SIGINT prints the maps).
func traceHelper(t *testing.T, withBpftrace bool, flags []string, script, helper string, helperArgs ...string) traced {
	t.Helper()
	// bpftrace 0.17 now and then ignores SIGINT under load (it then dies
	// by SIGKILL with no output): run the pair again rather than blame
	// gotrace for it.
	for attempt := 1; ; attempt++ {
		r := traceHelperOnce(t, withBpftrace, flags, script, helper, helperArgs...)
		if !withBpftrace || !r.bpftrace.TimedOut {
			return r
		}
		if attempt == 3 {
			t.Fatalf("bpftrace did not exit after SIGINT in %d attempts; stdout:\n%s", attempt, r.bpftrace.Stdout)
		}
		t.Logf("bpftrace ignored SIGINT (attempt %d): running both again", attempt)
	}
}

func traceHelperOnce(t *testing.T, withBpftrace bool, flags []string, script, helper string, helperArgs ...string) traced {
	t.Helper()
	requireTracing(t)
	var bt string
	if withBpftrace {
		bt = requireBpftrace(t)
	}
	h := testkit.StartHelper(t, helper, helperArgs...)
	pid := strconv.Itoa(h.Pid)
	args := append(append([]string{}, flags...), "-e", script, pid)
	tg := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), args...)
	var tb *testkit.Tracer
	if withBpftrace {
		tb = testkit.StartTracer(t, 30*time.Second, bt, args...)
	}
	h.Go()
	hr := h.Wait(20 * time.Second)
	if hr.ExitCode != 0 {
		t.Fatalf("helper %s %q exited %d: %s", helper, helperArgs, hr.ExitCode, hr.Stderr)
	}
	var out traced
	out.helperPid = h.Pid
	out.gotrace = stopTracer(t, tg)
	checkNoPanic(t, out.gotrace)
	if out.gotrace.TimedOut {
		t.Errorf("gotrace did not exit within 10s of SIGINT:\nstdout:\n%s\nstderr:\n%s", out.gotrace.Stdout, out.gotrace.Stderr)
	}
	if tb != nil {
		out.bpftrace = stopTracer(t, tb)
		out.bpftrace.Stderr = bpftraceStderr(out.bpftrace.Stderr)
	}
	return out
}

// stopTracer gives a tracer a moment to exit by itself (scripts that call
// exit()), then sends SIGINT and waits for its maps; the caller checks
// Result.TimedOut.
func stopTracer(t *testing.T, tr *testkit.Tracer) testkit.Result {
	t.Helper()
	// Let the last events of the workload drain from the ring buffer.
	time.Sleep(150 * time.Millisecond)
	return tr.Stop(syscall.SIGINT, 10*time.Second)
}

// runGotraceOn runs the whole trace with gotrace alone and checks exit 0.
func runGotraceOn(t *testing.T, flags []string, script, helper string, helperArgs ...string) testkit.Result {
	t.Helper()
	r := traceHelper(t, false, flags, script, helper, helperArgs...).gotrace
	if r.ExitCode != 0 {
		t.Errorf("gotrace exited %d, want 0; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return r
}

var attachingRE = regexp.MustCompile(`^Attaching \d+ probes?\.\.\.\n`)

// body drops the leading "Attaching N probes..." line.
func body(s string) string { return attachingRE.ReplaceAllString(s, "") }

// nonRoot is a credential for running gotrace as an unprivileged user.
func nonRoot() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}
