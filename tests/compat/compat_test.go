// Package compat_test runs scripts whose output differs between bpftrace
// 0.26.1 (gotrace's default) and bpftrace 0.17 (`--compat 0.17`), once in
// each mode, and compares their exact output: each row of the README's
// compat table has a case here.
package compat_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// A case is a script (ending itself with exit()) and what each release
// prints: stdout, or with a leading "ERROR: " a line its stderr must hold
// (exit status non-zero).
type compatCase struct {
	name   string
	script string
	v026   string
	v017   string
}

var cases = []compatCase{
	{
		name:   "dot on a struct pointer",
		script: `BEGIN { printf("%d\n", curtask.pid == curtask->pid); exit(); }`,
		v026:   "1\n",
		v017:   "ERROR: Can not access field 'pid' on type 'struct task_struct *'. Try dereferencing it first, or using '->'",
	},
}

func run(t *testing.T, version, script string) testkit.Result {
	t.Helper()
	cmd := exec.Command(testkit.Gotrace(t), "--compat", version, "-e", script)
	return testkit.RunBounded(t, 20*time.Second, cmd)
}

// stdout drops 0.17's "Attaching N probes..." line and the blank lines
// printed at exit.
func stdout(version string, r testkit.Result) string {
	out := r.Stdout
	if version == "0.17" && strings.HasPrefix(out, "Attaching ") {
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return strings.TrimRight(out, "\n") + "\n"
}

func TestCompat(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []struct{ version, want string }{{"0.26", c.v026}, {"0.17", c.v017}} {
				r := run(t, v.version, c.script)
				if r.TimedOut {
					t.Fatalf("--compat %s: timed out; stderr:\n%s", v.version, r.Stderr)
				}
				if strings.Contains(r.Stderr, "panic:") {
					t.Fatalf("--compat %s: crashed:\n%s", v.version, r.Stderr)
				}
				if msg, isErr := strings.CutPrefix(v.want, "ERROR: "); isErr {
					if r.ExitCode == 0 || !strings.Contains(r.Stderr, "ERROR: "+msg) {
						t.Errorf("--compat %s: exit %d, stderr:\n%s\nwant an error holding %q", v.version, r.ExitCode, r.Stderr, "ERROR: "+msg)
					}
					continue
				}
				if r.ExitCode != 0 {
					t.Errorf("--compat %s: exit %d; stderr:\n%s", v.version, r.ExitCode, r.Stderr)
				}
				if got := stdout(v.version, r); got != v.want {
					t.Errorf("--compat %s: stdout\n%q\nwant\n%q", v.version, got, v.want)
				}
			}
		})
	}
}
