package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestClearedHistPrintsNothing: print() of a cleared hist/lhist prints
// no header (text) and no record (JSON), as bpftrace; zero() keeps the
// header; a cleared count stays @c: 0.
func TestClearedHistPrintsNothing(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	script := `BEGIN { @h = hist(1); @l = lhist(5, 0, 10, 1); @z = hist(2); @c = count();
	clear(@h); clear(@l); zero(@z); clear(@c);
	print(@h); print(@l); print(@z); print(@c); printf("--\n"); exit(); }`
	for _, tc := range []struct{ format, want string }{
		{"text", "\n\n@z: \n\n@c: 0\n--\n\n\n@c: 0\n\n\n@z: \n\n"},
		{"json", `{"type": "hist", "data": {"@z": []}}
{"type": "map", "data": {"@c": 0}}
{"type": "printf", "data": "--\n"}


{"type": "map", "data": {"@c": 0}}
{"type": "hist", "data": {"@z": []}}
`},
	} {
		g := gt(t, 30*time.Second, "-f", tc.format, "-e", script)
		b := testkit.RunBounded(t, 30*time.Second, exec.Command(bt, "-f", tc.format, "-e", script))
		expectOutput(t, "gotrace -f "+tc.format, dropAttach(g.Stdout), tc.want)
		expectOutput(t, "bpftrace -f "+tc.format, dropAttach(b.Stdout), tc.want)
	}
}

// dropAttach drops the first line of a 0.17 run's stdout (Attaching N
// probes..., or its JSON record).
func dropAttach(s string) string {
	s = body(s)
	if first, rest, ok := strings.Cut(s, "\n"); ok && strings.HasPrefix(first, `{"type": "attached_probes"`) {
		return rest
	}
	return s
}

// TestOutputFileNoExitGap: with -o FILE the two newlines before the exit
// maps go to stdout, as in bpftrace; the file holds the output alone.
func TestOutputFileNoExitGap(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	script := `BEGIN { @c = count(); printf("p\n"); exit(); }`
	for _, tc := range []struct{ format, file string }{
		{"text", "Attaching 1 probe...\np\n@c: 1\n"},
		{"json", "{\"type\": \"attached_probes\", \"data\": {\"probes\": 1}}\n{\"type\": \"printf\", \"data\": \"p\\n\"}\n{\"type\": \"map\", \"data\": {\"@c\": 1}}\n"},
	} {
		for _, tool := range []string{"gotrace", "bpftrace"} {
			f := filepath.Join(t.TempDir(), "out")
			args := []string{"-f", tc.format, "-o", f, "-e", script}
			var r testkit.Result
			if tool == "gotrace" {
				r = gt(t, 30*time.Second, args...)
			} else {
				r = testkit.RunBounded(t, 30*time.Second, exec.Command(bt, args...))
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			expectOutput(t, tool+" -f "+tc.format+" -o file: the file", string(b), tc.file)
			expectOutput(t, tool+" -f "+tc.format+" -o file: stdout", r.Stdout, "\n\n")
		}
	}
}

// TestDiagnosticTabsAsBpftrace: a script indented with tabs gets its error
// echoed with each tab as 4 spaces, byte for byte as bpftrace.
func TestDiagnosticTabsAsBpftrace(t *testing.T) {
	testkit.Require(t, testkit.Go)
	bt := requireBpftrace(t)
	f := filepath.Join(t.TempDir(), "tabs.bt")
	if err := os.WriteFile(f, []byte("BEGIN {\n\t\tif (1) { @x =\tfoo(1); }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := f + ":2:17-20: ERROR: Unknown function: foo\n        if (1) { @x =    foo(1); }\n                         ~~~\n"
	g := gt(t, 30*time.Second, f)
	expectOutput(t, "gotrace stderr", g.Stderr, want)
	b := testkit.RunBounded(t, 30*time.Second, exec.Command(bt, f))
	expectOutput(t, "bpftrace stderr", bpftraceStderr(b.Stderr), want)
}

// TestAmbiguousTarget: a uprobe target named without a path that matches
// two different binaries in $PATH is attached in the first, with
// bpftrace's warning at the attach point.
func TestAmbiguousTarget(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	root := t.TempDir()
	src, err := os.ReadFile(testkit.Helper(t, "ufunc"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i, d := range []string{"a", "b"} {
		dir := filepath.Join(root, d)
		os.Mkdir(dir, 0o755)
		// Two different files: the second has a byte more at the end.
		testkit.WriteExecutable(t, filepath.Join(dir, "gtambig"), append(src, make([]byte, i)...))
		dirs = append(dirs, dir)
	}
	path := dirs[0] + ":" + dirs[1] + ":" + os.Getenv("PATH")
	script := `uprobe:gtambig:target { exit(); } BEGIN { exit(); }`
	want := "stdin:1:1-22: WARNING: attaching to uprobe target file '" + filepath.Join(dirs[0], "gtambig") + "' but matched 2 binaries\n" +
		"uprobe:gtambig:target { exit(); } BEGIN { exit(); }\n" + strings.Repeat("~", 21) + "\n"
	for _, tool := range []string{testkit.Gotrace(t), bt} {
		cmd := exec.Command(tool, "-e", script)
		cmd.Env = append(os.Environ(), "PATH="+path)
		r := testkit.RunBounded(t, 30*time.Second, cmd)
		if r.ExitCode != 0 {
			t.Errorf("%s exited %d: %s", tool, r.ExitCode, r.Stderr)
		}
		expectOutput(t, filepath.Base(tool)+" stderr", bpftraceStderr(r.Stderr), want)
	}
}

// TestCommandUSDTWithoutPath: with -c, usdt probes without a path are the
// command's (it is not running yet when they are resolved: no process to
// look in).
func TestCommandUSDTWithoutPath(t *testing.T) {
	requireTracing(t)
	testkit.Require(t, testkit.SDT)
	bin := testkit.Helper(t, "usdt")
	for _, script := range []string{`usdt:gotrace:loop { @ = count(); }`, `usdt:*:loop { @ = count(); }`} {
		r := runCommand(t, script, bin+" 5")
		expectOutput(t, script, body(r.Stdout), "guarded 0\n\n\n@: 5\n") // the helper prints its semaphore's count
	}
}

// TestHelpPidFlag: -p's help says what it does: it scopes uprobes and
// USDT probes, not the other probes.
func TestHelpPidFlag(t *testing.T) {
	testkit.Require(t, testkit.Go)
	r := gt(t, 30*time.Second, "-h")
	help := r.Stdout + r.Stderr
	for _, want := range []string{"-p, --pid PID  limit uprobes and USDT probes to process PID", "every process (filter with /pid == PID/)"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "trace only PID") {
		t.Errorf("help still says -p traces only PID:\n%s", help)
	}
}

// TestProgressLine: attaching over 100 probes shows a progress line when
// stderr is a terminal (script(1) gives it one), not with -q, and never
// in a pipe.
func TestProgressLine(t *testing.T) {
	requireTracing(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) (bsdutils)")
	}
	script := `tracepoint:syscalls:sys_enter_* { @ = count(); } interval:ms:100 { exit(); }`
	onTTY := func(flags string) string {
		t.Helper()
		cmd := exec.Command("script", "-qec", "'"+testkit.Gotrace(t)+"' "+flags+" -e '"+script+"'", "/dev/null")
		cmd.Env = append(os.Environ(), "GOTRACE_COMPAT=0.17")
		r := testkit.RunBounded(t, 60*time.Second, cmd)
		if r.ExitCode != 0 {
			t.Fatalf("script: exit %d: %s%s", r.ExitCode, r.Stdout, r.Stderr)
		}
		return r.Stdout
	}
	if out := onTTY(""); !strings.Contains(out, "\rAttaching probes: ") {
		t.Errorf("no progress line on a terminal:\n%q", out)
	}
	if out := onTTY("-q"); strings.Contains(out, "Attaching probes: ") {
		t.Errorf("progress line with -q:\n%q", out)
	}
	if r := gt(t, 60*time.Second, "-e", script); strings.Contains(r.Stderr+r.Stdout, "Attaching probes: ") {
		t.Errorf("progress line in a pipe:\n%q", r.Stderr)
	}
}
