// Package builtins_test runs every row of the stdlib table on the real
// kernel and asserts its exact output, side by side with bpftrace 0.17
// where bpftrace has the builtin and its output is deterministic.
//
// The rows' plain script-and-output tests are cases of the runtime suite
// (testdata/runtime/builtins.txt, run by tests/runtime); the tests here
// need Go (clocks, cgroups, kallsyms, BTF offsets, signals, sets of lines).
// Each script a test here runs is registered with scriptOf, naming the
// test; TestTableCovered parses every registered script and every runtime
// case, and fails when a row of stdlib.Rows() is used by none, lacks a type
// rule, code generation (or a documented reason) or a printer for its
// values.
package builtins_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// script is one registered script: the test that runs it and its text.
type script struct {
	test, text string
	unsafe     bool
	runtime    bool // a case of testdata/runtime (test is its file:line)
}

var scripts []script

// scriptOf registers text as run by test (for the coverage walk) and
// returns it.
func scriptOf(test, text string) string {
	scripts = append(scripts, script{test: test, text: text})
	return text
}

// unsafeScriptOf is scriptOf for scripts that need --unsafe.
func unsafeScriptOf(test, text string) string {
	scripts = append(scripts, script{test: test, text: text, unsafe: true})
	return text
}

func requireTracing(t *testing.T, more ...testkit.Capability) {
	t.Helper()
	testkit.Require(t, append([]testkit.Capability{testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Go}, more...)...)
}

// body drops the "Attaching N probes..." line and trailing blank lines.
func body(out string) string {
	if strings.HasPrefix(out, "Attaching ") {
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return strings.TrimRight(out, "\n") + "\n"
}

func noCrash(t *testing.T, r testkit.Result) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:"} {
		if strings.Contains(r.Stderr, s) {
			t.Fatalf("crash (%q on stderr):\n%s", s, r.Stderr)
		}
	}
}

// run runs bin (gotrace or bpftrace) with args until it exits by itself.
func run(t *testing.T, bin string, args ...string) testkit.Result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	r := testkit.RunBounded(t, 60*time.Second, cmd)
	if r.TimedOut {
		t.Fatalf("%s %q timed out:\nstdout:\n%s\nstderr:\n%s", bin, args, r.Stdout, r.Stderr)
	}
	noCrash(t, r)
	return r
}

// gt runs a self-ending gotrace script and wants exit 0.
func gt(t *testing.T, args ...string) string {
	t.Helper()
	r := run(t, testkit.Gotrace(t), args...)
	if r.ExitCode != 0 {
		t.Fatalf("gotrace %q: exit %d; stderr:\n%s", args, r.ExitCode, r.Stderr)
	}
	return body(r.Stdout)
}

// gtErr runs a script gotrace must refuse, and returns its stderr.
func gtErr(t *testing.T, args ...string) string {
	t.Helper()
	r := run(t, testkit.Gotrace(t), args...)
	if r.ExitCode != 1 || strings.TrimSpace(r.Stdout) != "" && !strings.HasPrefix(r.Stdout, "Attaching") {
		t.Fatalf("gotrace %q: exit %d (want 1); stdout %q; stderr:\n%s", args, r.ExitCode, r.Stdout, r.Stderr)
	}
	return r.Stderr
}

// bpftraceSame runs the script with bpftrace too (a self-ending one) and
// wants the same stdout.
func bpftraceSame(t *testing.T, got string, args ...string) {
	t.Helper()
	testkit.Require(t, testkit.Bpftrace)
	r := run(t, "bpftrace", args...)
	if r.ExitCode != 0 {
		t.Fatalf("bpftrace %q: exit %d; stderr:\n%s", args, r.ExitCode, r.Stderr)
	}
	if b := body(r.Stdout); b != got {
		t.Errorf("gotrace and bpftrace differ for %q:\n--- gotrace\n%s--- bpftrace\n%s", args, got, b)
	}
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n--- got\n%s--- want\n%s", what, got, want)
	}
}

// traceHelper runs script (PID replaced by the helper's pid) while helper
// runs with args; the script ends itself with exit() unless stop is set,
// when the tracer gets SIGINT after the helper is done.
func traceHelper(t *testing.T, script string, extra []string, stop bool, helper string, args ...string) (string, *testkit.HelperProc) {
	t.Helper()
	h := testkit.StartHelper(t, helper, args...)
	script = strings.ReplaceAll(script, "PID", fmt.Sprint(h.Pid))
	script = strings.ReplaceAll(script, "BIN", testkit.Helper(t, helper))
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), append(extra, "-e", script)...)
	h.Go()
	var r testkit.Result
	if stop {
		if hr := h.Wait(30 * time.Second); hr.ExitCode != 0 {
			t.Fatalf("helper %s exited %d: %s", helper, hr.ExitCode, hr.Stderr)
		}
		time.Sleep(200 * time.Millisecond)
		r = tr.Stop(syscall.SIGINT, 10*time.Second)
	} else {
		r = tr.Wait(30 * time.Second)
		if r.TimedOut {
			t.Fatalf("gotrace did not exit; stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		}
	}
	noCrash(t, r)
	if r.ExitCode != 0 {
		t.Fatalf("gotrace exited %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return body(r.Stdout), h
}

// helperComm is a helper's comm: its file name cut to 15 bytes.
func helperComm(t *testing.T, name string) string {
	c := testkit.Helper(t, name)
	if i := strings.LastIndexByte(c, '/'); i >= 0 {
		c = c[i+1:]
	}
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

func mustStat(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}
