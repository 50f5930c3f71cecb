package main

// bpftrace 0.26.1's builtins and command line (issue 17), run as bpftrace
// 0.26 (--compat 0.26): each asserts the output bpftrace 0.26 documents,
// and, where 0.17 behaves differently, 0.17's under --compat 0.17.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// v26 runs gotrace as bpftrace 0.26 and returns its result.
func v26(t *testing.T, args ...string) testkit.Result {
	t.Helper()
	return gt(t, 20*time.Second, append([]string{"--compat", "0.26"}, args...)...)
}

// stdoutOf is gotrace's stdout without the blank lines it prints at exit.
func stdoutOf(r testkit.Result) string { return strings.Trim(r.Stdout, "\n") }

func TestCountCPUs(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "0-3": 4, "0-3,8,10-11": 7, "x": 0, "3-1": 0} {
		if got := countCPUs(in); got != want {
			t.Errorf("countCPUs(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestV026PidNamespace: in a child pid namespace pid and tid are the ids
// seen from it (1 for its first process) and pid(init)/tid(init) the
// initial namespace's; bpftrace 0.17 has only the initial ones.
func TestV026PidNamespace(t *testing.T) {
	requireTracing(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1)")
	}
	script := `begin { printf("%d %d %d %d\n", pid, tid(curr_ns), pid(init) > 1, tid(init) == pid(init)); exit() }`
	run := func(compatVer, script string) string {
		cmd := exec.Command(unshare, "--fork", "--pid", "--mount-proc", testkit.Gotrace(t), "--compat", compatVer, "-e", script)
		r := testkit.RunBounded(t, 20*time.Second, cmd)
		if r.ExitCode != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
		}
		return stdoutOf(r)
	}
	expectOutput(t, "0.26 stdout", run("0.26", script), "1 1 1 1")
	// 0.17: the ids of the initial namespace (and no pid(...) forms).
	if got := run("0.17", `BEGIN { printf("%d %d\n", pid, tid); exit() }`); strings.HasPrefix(got, "1 ") {
		t.Errorf("--compat 0.17: pid is the namespace's (%q), want the initial namespace's", got)
	}
}

// TestBeginOnMainThread: BEGIN, END and the test and bench probes run on
// the tracer's main thread (tid == pid, as in bpftrace), though the command
// runs on another (onFirstThread: main's goroutine keeps the first thread
// for them).
func TestBeginOnMainThread(t *testing.T) {
	requireTracing(t)
	for _, v := range []string{"0.17", "0.26"} {
		cmd := exec.Command(testkit.Gotrace(t), "--compat", v, "-e",
			`BEGIN { printf("begin %d\n", tid == pid); exit() } END { printf("end %d\n", tid == pid) }`)
		r := testkit.RunBounded(t, 20*time.Second, cmd)
		if r.ExitCode != 0 {
			t.Fatalf("--compat %s: exit %d; stderr:\n%s", v, r.ExitCode, r.Stderr)
		}
		if got := stdoutOf(r); !strings.Contains(got, "begin 1\n") || !strings.Contains(got, "end 1") {
			t.Errorf("--compat %s: stdout %q, want begin 1 and end 1 (tid == pid)", v, got)
		}
	}
	for _, c := range []struct{ mode, script, want string }{
		{"test", `test:a { @main = tid == pid; } END { printf("test %d\n", @main); clear(@main); }`, "test 1"},
		{"bench", `bench:b { @main = tid == pid; } END { printf("bench %d\n", @main); clear(@main); }`, "bench 1"},
	} {
		r := testkit.RunBounded(t, 20*time.Second, exec.Command(testkit.Gotrace(t), "--mode", c.mode, "-e", c.script))
		if got := stdoutOf(r); r.ExitCode != 0 || !strings.Contains(got, c.want) {
			t.Errorf("--mode %s: exit %d, stdout %q, want %q (tid == pid); stderr:\n%s", c.mode, r.ExitCode, got, c.want, r.Stderr)
		}
	}
}

// TestHelpBuiltins: `gotrace --help builtins` is the stdlib table; --help
// lists the 0.26 options and settings.
func TestHelpBuiltins(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--help", "builtins"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"VARIABLES", "    pid([curr_ns|init])\n", "    getopt(string name[, default[, string description]])\n",
		"    write_user(void *dst, src, int n)  [needs --unsafe]\n", "AGGREGATIONS", "MAP FUNCTIONS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help builtins lacks %q", want)
		}
	}
	out.Reset()
	if code := run([]string{"--help"}, nil, &out, &errb); code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"-p, --pid PID", "-o, --output FILE", "--probe-filter REGEX", "--traceable-functions FILE",
		"--no-feature FEATURE[,FEATURE]", "--debuginfo DIR[:DIR]", "BPFTRACE_MAX_STRLEN", "BPFTRACE_MAX_MAP_KEYS", "--help builtins"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestV026Debuginfo: args of a stripped binary come from its debug file,
// found by --debuginfo (relative to the binary's directory).
func TestV026Debuginfo(t *testing.T) {
	requireTracing(t)
	for _, tool := range []string{"gcc", "objcopy", "strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	os.WriteFile(src, []byte(`#include <unistd.h>
__attribute__((noinline)) int fn(int n, char c) { return n + c; }
int main(void) { usleep(300000); for (int i = 0; i < 1000; i++) { fn(i, 'x'); usleep(20000); } return 0; }
`), 0o644)
	bin := filepath.Join(dir, "p")
	dbgDir := filepath.Join(dir, "dbg")
	os.Mkdir(dbgDir, 0o755)
	for _, c := range [][]string{{"gcc", "-g", "-O0", "-o", bin, src},
		{"objcopy", "--only-keep-debug", bin, filepath.Join(dbgDir, "p.debug")}, {"strip", "-g", bin}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	script := `uprobe:` + bin + `:fn { printf("%c %d\n", args.c, args.n >= 0); exit(); }`
	// The tracer is built before the program starts: a first build took
	// longer than the program's calls once (the program now calls fn for
	// 20 s, killed at the end).
	testkit.Gotrace(t)
	prog := exec.Command(bin)
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer prog.Process.Kill()
	r := v26(t, "--debuginfo", "dbg", "-e", script)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", stdoutOf(r), "x 1")
	// Without it the debug file is not found.
	if r := v26(t, "-e", script); r.ExitCode == 0 {
		t.Errorf("without --debuginfo: exit 0, want no debug information")
	}
	// -lv lists the arguments from the debug file too (bpftrace 0.26's
	// dwarf test "parse stripped debuginfo - list args").
	r = v26(t, "--debuginfo", "dbg", "-lv", "uprobe:"+bin+":fn")
	expectOutput(t, "-lv --debuginfo", r.Stdout, "uprobe:"+bin+":fn\n    int n\n    char c\n")
}

// TestDebugStages: bpftrace 0.26's -d STAGE prints that stage only; bare
// -d (0.17) and -d all print every one.
func TestDebugStages(t *testing.T) {
	heads := func(args ...string) string {
		var out, errb bytes.Buffer
		if code := run(append(args, "-e", "BEGIN { @x = 1; }"), nil, &out, &errb); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errb.String())
		}
		var got []string
		for _, l := range strings.Split(out.String(), "\n") {
			if l == "AST" || l == "Typed program" || l == "BPF" {
				got = append(got, l)
			}
		}
		return strings.Join(got, ",")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-d"}, "AST,Typed program,BPF"},
		{[]string{"-d", "all"}, "AST,Typed program,BPF"},
		{[]string{"-d", "types"}, "Typed program"},
		{[]string{"--debug", "ast,codegen"}, "AST,BPF"},
		{[]string{"-dcodegen"}, "BPF"},
	} {
		if got := heads(c.args...); got != c.want {
			t.Errorf("%q: stages %q, want %q", c.args, got, c.want)
		}
	}
}

// TestV026Bench: --mode bench (--bench) runs each bench:NAME probe
// repeatedly after BEGIN and prints bpftrace 0.26's table, or its JSON.
func TestV026Bench(t *testing.T) {
	requireTracing(t)
	r := v26(t, "--bench", "-e", `begin { printf("begin\n"); } bench:a { @a = count(); } bench:b { @b = count(); } end { clear(@a); clear(@b); }`)
	re := regexp.MustCompile(`^begin\nBenchmark {32}Time\(ns\) {7}Iterations\n-{66}\na {40}(\d+) +(\d+)\nb {40}\d+ +\d+\n`)
	if r.ExitCode != 0 || !re.MatchString(strings.TrimLeft(r.Stdout, "\n")) {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	r = v26(t, "-q", "-f", "json", "--mode", "bench", "-e", `bench:a { @ = count(); } end { clear(@); }`)
	if !regexp.MustCompile(`(?m)^\{"type": "benchmark_result", "data": \{"a": \{"average": \d+, "iters": [1-9]\d*\}\}\}$`).MatchString(r.Stdout) {
		t.Errorf("json: stdout:\n%s", r.Stdout)
	}
}

// TestNotifyStream: bpftrace's runner line __BPFTRACE_NOTIFY_PROBES_ATTACHED
// goes to stdout in 0.26 mode, before BEGIN's output (bpftrace 0.26's
// json-output tests drop it with `tail -n +2`), to stderr in 0.17 mode.
func TestNotifyStream(t *testing.T) {
	requireTracing(t)
	for _, c := range []struct{ compat, stdout, stderr string }{
		{"0.26", testkit.NotifyAttached + "\n{\"type\": \"value\", \"data\": 1}\n", ""},
		{"0.17", "{\"type\": \"value\", \"data\": 1}\n", testkit.NotifyAttached + "\n"},
	} {
		cmd := exec.Command(testkit.Gotrace(t), "--compat", c.compat, "-q", "-f", "json", "-e", "BEGIN { print(1); exit(); }")
		cmd.Env = append(os.Environ(), testkit.NotifyAttached+"=1")
		r := testkit.RunBounded(t, 20*time.Second, cmd)
		expectOutput(t, c.compat+" stdout", strings.TrimRight(r.Stdout, "\n")+"\n", c.stdout)
		expectOutput(t, c.compat+" stderr", r.Stderr, c.stderr)
	}
	// BEGIN's output is held until the probes are attached: the line
	// comes before it even when BEGIN printed no newline.
	cmd := exec.Command(testkit.Gotrace(t), "--compat", "0.26", "-e", `begin { printf("%x", 0x1234); }`)
	cmd.Env = append(os.Environ(), testkit.NotifyAttached+"=1")
	r := testkit.RunBounded(t, 20*time.Second, cmd)
	expectOutput(t, "held BEGIN output", strings.TrimRight(r.Stdout, "\n"), testkit.NotifyAttached+"\n1234")
}
