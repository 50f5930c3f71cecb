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
	"strconv"
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

func TestV026Builtins(t *testing.T) {
	requireTracing(t)
	cases := []struct {
		name, script, want string
		flags              []string
	}{
		// pid(), __builtin_tid ... are the variables (bpftrace 0.26's stdlib
		// macros); pid(init) is pid outside a pid namespace.
		{name: "call_forms", script: `begin { printf("%d %d %d %d %d %d\n", pid() == pid, __builtin_tid == tid(), pid(init) == pid, tid(curr_ns) == tid, comm() == __builtin_comm, uid() == uid); exit() }`,
			want: "1 1 1 1 1 1"},
		{name: "probetype", script: `begin { printf("%s %s\n", probetype, probetype()); }`, want: "special special"},
		{name: "probetype_interval", script: `interval:ms:1 { printf("%s\n", probetype); exit() }`, want: "interval"},
		{name: "usermode", script: `begin { printf("%d\n", usermode); exit() }`, want: "1"},
		{name: "ncpus", script: `begin { printf("%d\n", ncpus); exit() }`, want: strconv.Itoa(possibleCPUs(t))},
		// The tracer's parent is this test; leader_* of a single-threaded
		// BEGIN are the tracer itself.
		{name: "task", script: `begin { printf("%d %d %d %d %d\n", ppid, ppid(curtask), leader_pid == pid, leader_tid == pid, leader_comm == comm); exit() }`,
			want: strconv.Itoa(os.Getpid()) + " " + strconv.Itoa(os.Getpid()) + " 1 1 1"},
		{name: "nsecs", script: `begin { $m = nsecs(monotonic); $b = nsecs(boot); $n = nsecs; $t = nsecs(tai); $s = nsecs(sw_tai); printf("%d %d %d %d\n", $b >= $m, $n >= $b, $t > $b, $s > $b); exit() }`,
			want: "1 1 1 1"},
		{name: "strlen", script: `begin { $s = "hello"; printf("%d %d %d\n", strlen($s), strlen("ab"), strlen(comm) == strlen(comm())); exit() }`,
			want: "5 2 1"},
		{name: "has_cpid", script: `begin { printf("%d\n", has_cpid); exit() }`, want: "0"},
		{name: "has_cpid_c", script: `begin { printf("%d %d\n", has_cpid, cpid > 0); exit() }`, want: "1 1", flags: []string{"-c", "/bin/sleep 0.2"}},
		{name: "enum_printf", script: `enum Foo { ONE = 1, TWO = 2, OTHER = 99999 }; begin { @one = ONE; $x = 100; printf("%d %s|%-5s|%5s|%s %s\n", @one, @one, TWO, ONE, OTHER, (enum Foo)$x); clear(@one); exit() }`,
			want: "1 ONE|TWO  |  ONE|OTHER 100"},
		{name: "hist_k0", script: `begin { @h = hist(3, 0); exit() }`, want: "@h:\n[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|"},
		// syscall_name of a constant and of run-time numbers (x86-64's
		// table), unknown numbers as "", the name as a string (compared,
		// a map key).
		{name: "syscall_name", script: `begin { @nr = 231; $k = 59; printf("%s|%s|%s|%s|%s|%d\n", syscall_name(0), syscall_name(@nr), syscall_name($k), syscall_name(@nr + 100000), syscall_name(-1), syscall_name(@nr) == "exit_group"); @c[syscall_name(@nr - 229)] = count(); clear(@nr); exit() }`,
			want: "read|exit_group|execve|||1\n\n\n@c[open]: 1"},
		// Named program options after "--", typed by getopt's default.
		{name: "getopt", script: `begin { print((getopt("aa", 20), getopt("bb", -1), getopt("ee", "hello"), getopt("ff", 5), getopt("gg", "x"))); if (getopt("cc")) { printf("cc\n") } if (getopt("dd", true)) { printf("dd\n") } exit() }`,
			flags: []string{"--", "--cc", "--aa=0xffffffffffffffff", "--bb=-10", "--dd=False", "--gg=bye"},
			want:  "(18446744073709551615, -10, hello, 5, bye)\ncc"},
		{name: "probe_filter", script: `interval:ms:100 { printf("bad\n"); exit(); } interval:ms:200 { printf("hit\n"); exit(); }`,
			flags: []string{"--probe-filter", ":200"}, want: "hit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-e", c.script}
			if len(c.flags) > 0 && c.flags[0] == "--" {
				args = append(args, c.flags...)
			} else {
				args = append(c.flags, args...)
			}
			r := v26(t, args...)
			if r.ExitCode != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
			}
			expectOutput(t, "stdout", stdoutOf(r), c.want)
		})
	}
}

// possibleCPUs counts /sys/devices/system/cpu/possible.
func possibleCPUs(t *testing.T) int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		t.Fatal(err)
	}
	return countCPUs(strings.TrimSpace(string(b)))
}

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

// TestV026StackLen: len() of a stack is its depth (bounded by its limit).
func TestV026StackLen(t *testing.T) {
	requireTracing(t)
	r := runGotraceOn(t, []string{"--compat", "0.26"},
		`tracepoint:syscalls:sys_enter_getpid /pid == $1/ { @[len(kstack(3))] = count(); $s = kstack(2); @two = len($s); }`, "getpid", "5")
	expectOutput(t, "maps", strings.TrimSpace(r.Stdout), "@[3]: 5\n@two: 2")
}

// TestV026Diagnostics: errorf and warnf print on stderr as diagnostics at
// the call; --no-warnings drops warnf's.
func TestV026Diagnostics(t *testing.T) {
	requireTracing(t)
	script := `begin { errorf("bad %d, %s", 10, "x"); warnf("careful %d", 1); exit() }`
	r := v26(t, "-e", script)
	want := `stdin:1:9-38: ERROR: bad 10, x
begin { errorf("bad %d, %s", 10, "x"); warnf("careful %d", 1); exit() }
        ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
stdin:1:40-62: WARNING: careful 1
begin { errorf("bad %d, %s", 10, "x"); warnf("careful %d", 1); exit() }
                                       ~~~~~~~~~~~~~~~~~~~~~~
`
	if r.ExitCode != 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("exit %d; stderr:\n%s\nwant it to hold:\n%s", r.ExitCode, r.Stderr, want)
	}
	// assert: the message as an error at the call, then exit(1).
	r = v26(t, "-e", `begin { $x = 1; assert($x == 1, "one"); printf("after\n"); assert($x == 2, "x is not 2"); printf("not here\n"); }`)
	if r.ExitCode != 1 || stdoutOf(r) != "after" || !strings.Contains(r.Stderr, "stdin:1:60-89: ERROR: x is not 2\n") {
		t.Errorf("assert: exit %d, stdout %q, stderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	r = v26(t, "--no-warnings", "-e", script)
	if strings.Contains(r.Stderr, "WARNING") || !strings.Contains(r.Stderr, "ERROR: bad 10, x") {
		t.Errorf("--no-warnings: stderr:\n%s", r.Stderr)
	}
}

// TestV026CommandLineErrors: bpftrace 0.26's messages (and 0.17's under
// --compat 0.17).
func TestV026CommandLineErrors(t *testing.T) {
	requireTracing(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-p", "a1111", "-e", "begin{}"}, "ERROR: Failed to parse pid: invalid integer: a1111\n"},
		{[]string{"--pid", "111a1", "-e", "begin{}"}, "ERROR: Failed to parse pid: invalid trailing bytes: 111a1\n"},
		{[]string{"--compat", "0.17", "-p", "a1111", "-e", "begin{}"}, "ERROR: pid 'a1111' is not a valid decimal number\n"},
		{[]string{"--probe-filter", "[invalid", "-e", "begin { exit(); }"}, "ERROR: Invalid --probe-filter regex: [invalid\n"},
		{[]string{"--traceable-functions", "/dev/null", "-e", "begin { exit(); } kprobe:vfs_read {}"}, "ERROR: No matches for kprobe vfs_read\n"},
		{[]string{"-e", `tracepoint:syscalls:sys_enter_openat { write_user(args.filename, "x", 1); }`},
			"stdin:1:40-73: ERROR: write_user() is unsafe. To use you need the --unsafe flag\n"},
		{[]string{"--compat", "0.17", "-e", `BEGIN { system("ls"); }`},
			"stdin:1:9-21: ERROR: system() is an unsafe function being used in safe mode\n"},
		{[]string{"-e", `begin { print((getopt("aa", 10, "Description of aa"), getopt("bb", 1), getopt("cc"))); }`, "--", "--help"},
			"ERROR: program options help requested\nHINT: expected program options:\n  --aa: Description of aa\n  --bb\n  --cc\n"},
		{[]string{"-e", `begin { print(getopt("aa", 1)); }`, "--", "--zz=1"},
			"ERROR: unexpected program option: --zz\nHINT: expected program options:\n  --aa\n"},
		{[]string{"-e", `begin { print(getopt("aa", 1)); }`, "--", "--aa=x"},
			"stdin:1:9-30: ERROR: program option --aa expects an integer, got 'x'\n"},
		{[]string{"--mode", "test", "-e", "test:a {}"}, "ERROR: --mode test is not supported by gotrace\n"},
		{[]string{"-e", "bench:a { @ = count(); }"}, "ERROR: bench:a: bench probes run with --mode bench (or --bench)\n"},
		{[]string{"--no-feature", "bogus", "-e", "begin {}"}, "ERROR: USAGE: --no-feature can only have values 'kprobe_multi,kprobe_session,uprobe_multi'.\n"},
	}
	for _, c := range cases {
		r := v26(t, c.args...)
		if r.ExitCode == 0 || !strings.HasPrefix(r.Stderr, c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant it to start with:\n%s", c.args, r.ExitCode, r.Stderr, c.want)
		}
	}
}

// TestV026Settings: bpftrace 0.26's setting names beside 0.17's.
func TestV026Settings(t *testing.T) {
	requireTracing(t)
	script := `begin { @[1] = 1; @[2] = 2; @[3] = 3; exit() }`
	for _, name := range []string{"BPFTRACE_MAX_MAP_KEYS", "BPFTRACE_MAP_KEYS_MAX"} {
		cmd := exec.Command(testkit.Gotrace(t), "--compat", "0.26", "-e", script)
		cmd.Env = append(os.Environ(), name+"=2")
		r := testkit.RunBounded(t, 20*time.Second, cmd)
		expectOutput(t, name, strings.TrimSpace(r.Stdout), "@[1]: 1\n@[2]: 2")
	}
	cmd := exec.Command(testkit.Gotrace(t), "--compat", "0.26", "-e", `begin { printf("%s\n", comm); exit() }`)
	cmd.Env = append(os.Environ(), "BPFTRACE_MAX_STRLEN=x")
	if r := testkit.RunBounded(t, 20*time.Second, cmd); r.ExitCode == 0 || !strings.Contains(r.Stderr, "BPFTRACE_MAX_STRLEN") {
		t.Errorf("a bad BPFTRACE_MAX_STRLEN: exit %d, stderr %q", r.ExitCode, r.Stderr)
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
int main(void) { usleep(300000); for (int i = 0; i < 50; i++) { fn(i, 'x'); usleep(20000); } return 0; }
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
