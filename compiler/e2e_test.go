package compiler

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// gotrace runs the gotrace binary with args (bounded) and returns its
// stdout; a failure or timeout fails the test.
func gotrace(t *testing.T, args ...string) string {
	t.Helper()
	testkit.Require(t, testkit.Root, testkit.BPF)
	r := testkit.RunBounded(t, 30*time.Second, exec.Command(testkit.Gotrace(t), args...))
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace %q: exit %d, timed out %v\nstdout:\n%s\nstderr:\n%s", args, r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// expectLine checks that out has a line equal to want.
func expectLine(t *testing.T, out, want string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l == want {
			return
		}
	}
	t.Errorf("no line %q in output:\n%s", want, out)
}

// args on uprobes come from DWARF: parameter i in argument register i.
func TestUprobeArgsDWARF(t *testing.T) {
	bin := testkit.Helper(t, "ufunc")
	out := gotrace(t, "-c", bin+" 1", "-e", `
uprobe:`+bin+`:point_sum { printf("%d %ld %s\n", args->p->x, args->p->y, args->p->name); }
uprobe:`+bin+`:target { printf("%d %ld\n", args->a, args->b); }
uprobe:`+bin+`:greet { printf("%s\n", str(args->s)); }`)
	expectLine(t, out, "-7 1099511627776 gotrace")
	expectLine(t, out, "0 4294967296")
	expectLine(t, out, "hello gotrace")
}

// argN on usdt probes reads what the note's specs say: constants (with the
// spec's size: 1@$-56 is 200), registers, %rip-relative memory.
func TestUSDTArgs(t *testing.T) {
	bin := testkit.Helper(t, "usdt")
	out := gotrace(t, "-c", bin+" 3", "-e", `
usdt:`+bin+`:gotrace:fixed { printf("%d %d %s\n", arg0, arg1, str(arg2)); }
usdt:`+bin+`:gotrace:loop { printf("loop %d %s\n", arg0, str(arg1)); }
usdt:`+bin+`:gotrace:memarg { printf("mem %d\n", arg0); }`)
	for _, want := range []string{"-42 200 gotrace", "loop 0 hello", "loop 2 hello", "mem 123456789"} {
		expectLine(t, out, want)
	}
}

// cpid is the -c command's pid, from BEGIN on.
func TestCpid(t *testing.T) {
	bin := testkit.Helper(t, "ufunc")
	out := gotrace(t, "-c", bin+" 1", "-e", `
BEGIN { printf("begin %d\n", cpid > 0); }
uprobe:`+bin+`:target { printf("same %d\n", cpid == pid); }`)
	expectLine(t, out, "begin 1")
	expectLine(t, out, "same 1")
}

// -k warns about failed map updates and deletes, -kk about lookups of
// absent keys too, with the place in the script, as bpftrace.
func TestHelperCheck(t *testing.T) {
	out := gotrace(t, "-kk", "-e", `i:ms:10 { @[1] = 1; printf("%d\n", @[2]); delete(@[3]); exit(); }`)
	want := `stdin:1:36-40: WARNING: Failed to map_lookup_elem: 0
i:ms:10 { @[1] = 1; printf("%d\n", @[2]); delete(@[3]); exit(); }
                                   ~~~~
0
stdin:1:43-55: WARNING: Failed to map_delete_elem: No such file or directory (-2)
i:ms:10 { @[1] = 1; printf("%d\n", @[2]); delete(@[3]); exit(); }
                                          ~~~~~~~~~~~~
`
	if !strings.Contains(out, want) {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	// -k alone: no lookup warning.
	if out := gotrace(t, "-k", "-e", `i:ms:10 { @[1] = 1; printf("%d\n", @[2]); exit(); }`); strings.Contains(out, "WARNING") {
		t.Errorf("-k warned about a lookup:\n%s", out)
	}
}

// A wildcard tracepoint clause reading args reads each match's own
// offsets: argv is at 24 in sys_enter_execve but 32 in sys_enter_execveat.
// python3's os.execve on a file descriptor calls execveat (glibc fexecve).
func TestWildcardTracepointArgsExec(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if testkit.InCI() {
			t.Fatalf("python3 is required in CI: %v", err)
		}
		t.Skip("no python3")
	}
	script := filepath.Join(t.TempDir(), "run.sh")
	body := "#!/bin/sh\n/bin/true a b\nexec " + py +
		` -c 'import os; os.execve(os.open("/bin/true", os.O_RDONLY), ["true", "c", "d"], {})'` + "\n"
	testkit.WriteExecutable(t, script, []byte(body))
	out := gotrace(t, "-c", script, "-e",
		`tracepoint:syscalls:sys_enter_exec* { printf("%s ", probe); join(args->argv); }`)
	expectLine(t, out, "tracepoint:syscalls:sys_enter_execve /bin/true a b")
	expectLine(t, out, "tracepoint:syscalls:sys_enter_execveat true c d")
}
