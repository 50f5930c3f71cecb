package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// errorScripts fail in the parser, the checker or probe resolution; each
// must print bpftrace's diagnostic on stderr, nothing on stdout, exit 1.
var errorScripts = []struct {
	name, script, want string
	notLikeBpftrace    string // why bpftrace's stderr is not the reference
}{
	{"syntax", `BEGIN { @x = 1 +; }`, "stdin:1:16-18: ERROR: syntax error, unexpected ;\nBEGIN { @x = 1 +; }\n               ~~\n", ""},
	{"eof", `BEGIN { exit(); `, "", ""},
	{"unknown_function", `BEGIN { @x = foo(1); }`, "stdin:1:14-17: ERROR: Unknown function: foo\nBEGIN { @x = foo(1); }\n             ~~~\n", ""},
	{"type_mismatch", `BEGIN { $x = "a"; $x = 1; }`, "", ""},
	{"map_key_mismatch", `BEGIN { @x[1] = 1; @x["a"] = 2; }`, "", ""},
	{"printf_args", `BEGIN { printf("%d\n"); }`, "", ""},
	{"count_args", `BEGIN { @ = count(1); }`, "", ""},
	{"missing_tracepoint", `tracepoint:syscalls:sys_enter_nope { }`, "", ""},
	// "did you mean" for probes (bpftrace 0.17 gives no hint: compared
	// without gotrace's hint line).
	{"misspelt_tracepoint", `tracepoint:syscalls:sys_enter_opnat { }`,
		"stdin:1:1-36: ERROR: tracepoint not found: syscalls:sys_enter_opnat\ntracepoint:syscalls:sys_enter_opnat { }\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nHINT: did you mean \"syscalls:sys_enter_openat\"?\n", ""},
	{"misspelt_category", `tracepoint:shced:sched_switch { }`,
		"stdin:1:1-30: ERROR: tracepoint not found: shced:sched_switch\ntracepoint:shced:sched_switch { }\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nHINT: did you mean \"sched:sched_switch\"?\n", ""},
	{"misspelt_kfunc", `kfunc:vfs_reed { @ = count(); }`,
		"stdin:1:1-15: ERROR: kfunc:vfs_reed: Unknown function: 'vfs_reed' (not in kernel BTF)\nkfunc:vfs_reed { @ = count(); }\n~~~~~~~~~~~~~~\nHINT: did you mean \"vfs_read\"?\n",
		"bpftrace 0.17 says kfunc is not available here, whatever the function"},
	{"misspelt_uprobe_symbol", `uprobe:/bin/bash:readlin { @ = count(); }`,
		"stdin:1:1-25: ERROR: could not resolve symbol: /bin/bash:readlin\nuprobe:/bin/bash:readlin { @ = count(); }\n~~~~~~~~~~~~~~~~~~~~~~~~\nHINT: did you mean \"readline\"?\n",
		"bpftrace 0.17 prints 'No probes to attach'"},
	{"misspelt_provider", `tracepiont:syscalls:sys_enter_openat { }`,
		"stdin:1:1-37: ERROR: invalid provider name: tracepiont\ntracepiont:syscalls:sys_enter_openat { }\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nHINT: did you mean \"tracepoint\"?\n",
		"bpftrace 0.17 aborts: FATAL: Invalid probe type made it to attachpoint parser"},
	{"unknown_field", `tracepoint:syscalls:sys_enter_getpid { @ = args->nope; }`, "", ""},
	{"undefined_variable", `BEGIN { @ = $nope; }`, "", ""},
	{"cpid_without_c", `BEGIN { printf("%d\n", cpid); exit(); }`, "stdin:1:24-28: ERROR: cpid cannot be used without child command\nBEGIN { printf(\"%d\\n\", cpid); exit(); }\n                       ~~~~\n", ""},
	{"bad_probe_type", `nosuchprobe:foo { }`, "stdin:1:1-16: ERROR: invalid provider name: nosuchprobe\nnosuchprobe:foo { }\n~~~~~~~~~~~~~~~\n",
		"bpftrace 0.17 aborts: FATAL: Invalid probe type made it to attachpoint parser"},
	{"two_errors", `BEGIN { @a = foo(); @b = bar(); }`,
		"stdin:1:14-17: ERROR: Unknown function: foo\nBEGIN { @a = foo(); @b = bar(); }\n             ~~~\nstdin:1:26-29: ERROR: Unknown function: bar\nBEGIN { @a = foo(); @b = bar(); }\n                         ~~~\n",
		"gotrace reports every error of a script; bpftrace 0.17 only the first unknown function"},
}

// TestErrors checks the literal diagnostics, and compares stderr and the
// exit code with bpftrace's when it is installed (always in CI).
func TestErrors(t *testing.T) {
	requireTracing(t)
	withBT := testkit.InCI() || testkit.Check(testkit.Bpftrace) == nil
	for _, tt := range errorScripts {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := gt(t, 20*time.Second, "-e", tt.script)
			if r.ExitCode != 1 || r.Stdout != "" {
				mismatch(t, "exit %d, stdout %q; want exit 1 and no output; stderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
			}
			if tt.want != "" {
				expectOutput(t, "stderr", r.Stderr, tt.want)
			}
			if tt.notLikeBpftrace != "" {
				t.Logf("not compared with bpftrace: %s", tt.notLikeBpftrace)
				return
			}
			if !withBT {
				return
			}
			b := testkit.RunBounded(t, 30*time.Second, exec.Command(requireBpftrace(t), "-e", tt.script))
			if b.ExitCode != r.ExitCode {
				mismatch(t, "exit %d, bpftrace %d", r.ExitCode, b.ExitCode)
			}
			got := r.Stderr
			if !strings.Contains(b.Stderr, "HINT: did you mean") {
				got = withoutHints(got) // gotrace's own "did you mean"
			}
			expectOutput(t, "stderr vs bpftrace", got, bpftraceStderr(b.Stderr))
		})
	}
}

// withoutHints drops "HINT: did you mean ...?" lines.
func withoutHints(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "HINT: did you mean") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// TestCLIErrors: errors of the command line and of the script's file.
func TestCLIErrors(t *testing.T) {
	requireTracing(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing_file", []string{"/nonexistent/gotrace.bt"}, "ERROR: failed to open file '/nonexistent/gotrace.bt': No such file or directory\n"},
		{"bad_pid", []string{"-p", "abc", "-e", "BEGIN {}"}, "ERROR: pid 'abc' is not a valid decimal number\n"},
		{"absent_pid", []string{"-p", "4194304", "-e", "BEGIN {}"}, "ERROR: pid '4194304' does not exist\n"},
		{"bad_format", []string{"-f", "xml", "-e", "BEGIN {}"}, ""},
		{"no_program", []string{}, ""},
		// A header found nowhere is clang's error as bpftrace prints it
		// (the script's C part is "definitions.h", one line down).
		{"missing_include", []string{"-e", "#include <lol/no.h>\nBEGIN { exit(); }"}, "definitions.h:2:10: fatal error: 'lol/no.h' file not found\n"},
		{"missing_include_quoted", []string{"-e", "#include <stdio.h>\n  #include \"nope.h\"\nBEGIN { exit(); }"}, "definitions.h:3:12: fatal error: 'nope.h' file not found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gt(t, 20*time.Second, tt.args...)
			if r.ExitCode == 0 || strings.Contains(r.Stdout, "Attaching") {
				t.Errorf("exit %d, stdout %q: want a failure before attaching; stderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
			}
			if tt.want != "" {
				expectOutput(t, "stderr", r.Stderr, tt.want)
			} else if r.Stderr == "" {
				t.Errorf("no message on stderr")
			}
		})
	}
}

// TestMissingKernelHeader: a kernel header that is not installed is no
// error (bpftrace 0.17 needs it): the kernel's BTF has the same types.
func TestMissingKernelHeader(t *testing.T) {
	requireTracing(t)
	r := gt(t, 20*time.Second, "-e", "#include <linux/gotrace_not_a_header.h>\nBEGIN { printf(\"%d\\n\", sizeof(struct task_struct) > 0); exit(); }")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "\n1\n") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
}

// TestDebugWithoutRoot: -d prints the stages and needs no privilege.
func TestDebugWithoutRoot(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.Go)
	// A copy nobody can run: the build dir may be private to root.
	dir, err := os.MkdirTemp("", "gotrace-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "gotrace")
	if err := exec.Command("cp", testkit.Gotrace(t), bin).Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", "-e", `tracepoint:syscalls:sys_enter_getpid /pid == 1/ { @[comm] = count(); }`)
	cmd.SysProcAttr = nonRoot()
	r := testkit.RunBounded(t, 20*time.Second, cmd)
	checkNoPanic(t, r)
	if r.ExitCode != 0 {
		t.Fatalf("gotrace -d as uid 65534: exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	for _, stage := range []string{"AST\nProgram\n", "\nTyped program\nProgram\n", "BPF", "program ", "Call FnMapLookupElem"} {
		if !strings.Contains(r.Stdout, stage) {
			t.Errorf("-d output lacks %q:\n%s", stage, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "Attaching") {
		t.Errorf("-d attached probes:\n%s", r.Stdout)
	}
}

// TestDryRun: --dry-run loads into the verifier and attaches nothing: no
// probe fires (BEGIN's printf), nothing stays loaded.
func TestDryRun(t *testing.T) {
	requireTracing(t)
	testkit.NoBPFLeaks(t)
	r := gt(t, 20*time.Second, "--dry-run", "-e", `BEGIN { printf("fired\n"); exit(); } tracepoint:syscalls:sys_enter_getpid { @ = count(); }`)
	if r.ExitCode != 0 {
		t.Errorf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	if strings.Contains(r.Stdout, "fired") || strings.Contains(r.Stdout, "Attaching") {
		t.Errorf("--dry-run ran probes:\n%s", r.Stdout)
	}
	// A program the verifier refuses must fail the dry run.
	r = gt(t, 20*time.Second, "--dry-run", "-e", `BEGIN { @[1] = 1; } END { printf("%d\n", @[1]); }`)
	if r.ExitCode != 0 {
		t.Errorf("valid program refused by --dry-run: exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
}

// TestInfoFlags: --version, -h and -l.
func TestInfoFlags(t *testing.T) {
	requireTracing(t)
	t.Run("version", func(t *testing.T) {
		for _, f := range []string{"--version", "-V"} {
			r := gt(t, 10*time.Second, f)
			if r.ExitCode != 0 || !regexp.MustCompile(`^gotrace v\d+\.\d+\.\d+`).MatchString(r.Stdout) {
				t.Errorf("%s: exit %d, stdout %q", f, r.ExitCode, r.Stdout)
			}
		}
	})
	t.Run("help", func(t *testing.T) {
		for _, f := range []string{"-h", "--help"} {
			r := gt(t, 10*time.Second, f)
			if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout+r.Stderr, "USAGE:\n    gotrace [options] filename") {
				t.Errorf("%s: exit %d, output %q", f, r.ExitCode, r.Stdout+r.Stderr)
			}
			for _, opt := range []string{"-e 'program'", "-c 'CMD'", "-p PID", "-l [search]", "--dry-run", "-f FORMAT"} {
				if !strings.Contains(r.Stdout+r.Stderr, opt) {
					t.Errorf("%s: help lacks %q", f, opt)
				}
			}
		}
	})
	t.Run("list", func(t *testing.T) {
		const pattern = "tracepoint:syscalls:sys_enter_open*"
		r := gt(t, 20*time.Second, "-l", pattern)
		if r.ExitCode != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
		}
		// What tracefs has: events/syscalls/sys_enter_open*.
		dir, _ := testkit.TracefsDir()
		names, _ := filepath.Glob(filepath.Join(dir, "events", "syscalls", "sys_enter_open*"))
		var want strings.Builder
		for _, n := range names {
			want.WriteString("tracepoint:syscalls:" + filepath.Base(n) + "\n")
		}
		if len(names) == 0 {
			t.Fatal("tracefs has no sys_enter_open* events")
		}
		expectOutput(t, "-l output", r.Stdout, want.String())
		if testkit.InCI() || testkit.Check(testkit.Bpftrace) == nil {
			b := testkit.RunBounded(t, 30*time.Second, exec.Command(requireBpftrace(t), "-l", pattern))
			expectOutput(t, "-l vs bpftrace", r.Stdout, b.Stdout)
		}
	})
	t.Run("stdin_program", func(t *testing.T) {
		cmd := exec.Command(testkit.Gotrace(t), "-")
		cmd.Stdin = strings.NewReader(`BEGIN { printf("from stdin\n"); exit(); }`)
		r := testkit.RunBounded(t, 20*time.Second, cmd)
		checkNoPanic(t, r)
		expectOutput(t, "stdout", r.Stdout, "Attaching 1 probe...\nfrom stdin\n\n\n")
	})
	t.Run("positional_and_file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "p.bt")
		if err := os.WriteFile(f, []byte("BEGIN { printf(\"%d\\n\", $1 + 1); exit(); }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := gt(t, 20*time.Second, f, "41")
		expectOutput(t, "stdout", r.Stdout, "Attaching 1 probe...\n42\n\n\n")
	})
	for _, arg := range []string{"word", "12"} {
		t.Run("str_positional_"+arg, func(t *testing.T) {
			r := gt(t, 20*time.Second, "-e", `BEGIN { printf("%s\n", str($1)); exit(); }`, arg)
			if r.ExitCode != 0 {
				mismatch(t, "exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
			}
			expectOutput(t, "stdout", r.Stdout, "Attaching 1 probe...\n"+arg+"\n\n\n")
		})
	}
	t.Run("output_file_quiet", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "out.txt")
		r := gt(t, 20*time.Second, "-q", "-o", f, "-e", `BEGIN { printf("to file\n"); @ = 3; exit(); }`)
		b, _ := os.ReadFile(f)
		// As bpftrace 0.17 (even with -q): the two newlines before the
		// exit maps go to stdout, not into the file.
		if r.Stdout != "\n\n" {
			t.Errorf("stdout with -o: %q, want the two newlines before the maps", r.Stdout)
		}
		expectOutput(t, "-o file", string(b), "to file\n@: 3\n")
	})
}

// nobodyCopy copies gotrace where uid 65534 can run it (the build dir may
// be private to root).
func nobodyCopy(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gotrace-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "gotrace")
	if err := exec.Command("cp", testkit.Gotrace(t), bin).Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestNotRoot: run as uid 65534 (setpriv), tracing and -l of tracepoints
// fail with one line naming the missing privilege and how to get it, where
// bpftrace says only that it needs root; with CAP_BPF + CAP_PERFMON (and no
// root) a BEGIN probe runs.
func TestNotRoot(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.Go)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv (util-linux)")
	}
	bin := nobodyCopy(t)
	nobody := []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
	run := func(pre []string, args ...string) testkit.Result {
		t.Helper()
		a := append(append(append([]string{}, pre...), bin), args...)
		r := testkit.RunBounded(t, 30*time.Second, exec.Command(a[0], a[1:]...))
		checkNoPanic(t, r)
		return r
	}
	oneLine := func(what string, r testkit.Result, want ...string) {
		t.Helper()
		if r.ExitCode != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "ERROR: ") || r.Stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want exit 1 and one ERROR line", what, r.ExitCode, r.Stdout, r.Stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", what, r.Stderr, w)
			}
		}
	}
	oneLine("run", run(nobody, "-e", "BEGIN { exit(); }"),
		"ERROR: tracing needs root, or CAP_BPF + CAP_PERFMON", "uid 65534", "sudo setcap cap_bpf,cap_perfmon", "=ep "+bin)
	oneLine("-l", run(nobody, "-l", "tracepoint:syscalls:sys_enter_open*"),
		"tracefs", "CAP_DAC_READ_SEARCH", "uid 65534", "sudo setcap cap_dac_read_search=ep "+bin)
	caps := append(append([]string{}, nobody...), "--inh-caps=+bpf,+perfmon", "--ambient-caps=+bpf,+perfmon")
	if r := run(caps, "-e", `BEGIN { printf("hi\n"); exit(); }`); r.ExitCode != 0 || body(r.Stdout) != "hi\n\n\n" && body(r.Stdout) != "hi\n" {
		t.Errorf("with CAP_BPF + CAP_PERFMON: exit %d, stdout %q, stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	if testkit.Check(testkit.Bpftrace) == nil {
		b := testkit.RunBounded(t, 30*time.Second, exec.Command(nobody[0], append(nobody[1:], "bpftrace", "-e", "BEGIN { exit(); }")...))
		if b.ExitCode == 0 || !strings.Contains(b.Stderr, "root") {
			t.Errorf("bpftrace as uid 65534: exit %d, stderr %q", b.ExitCode, b.Stderr)
		}
	}
}
