package stacks_test

import (
	"bytes"
	"fmt"
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

// TestDwUstackWithoutFramePointers is the acceptance's dw_ustack check:
// the unofp helper is built without frame pointers (its functions start
// with no push %rbp), so only the .eh_frame rules can find the callers. A
// uprobe at funcD's entry prints funcD+0, then funcC, funcB, funcA and
// main, each at the return address right after its call (read from the
// ELF), then libc's start code.
func TestDwUstackWithoutFramePointers(t *testing.T) {
	requireTracing(t)
	bin := testkit.Helper(t, "unofp")
	fs := readFuncs(t, bin, "funcD", "funcC", "funcB", "funcA", "main")
	for _, name := range []string{"funcD", "funcC", "funcB", "funcA"} {
		code := bytes.TrimPrefix(fs.code[name], []byte{0xf3, 0x0f, 0x1e, 0xfa})
		if bytes.HasPrefix(code, []byte{0x55}) {
			t.Fatalf("%s starts with push %%rbp: the helper has frame pointers", name)
		}
	}
	want := []string{
		"funcD+0",
		fmt.Sprintf("funcC+%d", callReturn(t, fs, "funcC", "funcD")),
		fmt.Sprintf("funcB+%d", callReturn(t, fs, "funcB", "funcC")),
		fmt.Sprintf("funcA+%d", callReturn(t, fs, "funcA", "funcB")),
		fmt.Sprintf("main+%d", callReturn(t, fs, "main", "funcA")),
	}
	h := testkit.StartHelper(t, "unofp", "100000000000")
	h.Go()
	// One event, printed: as map keys, dw_ustack values (a copy of the
	// stack) differ from event to event.
	script := fmt.Sprintf(`config = { show_debug_info=0 } uprobe:%s:funcD { printf("%%s|%%s|\n", dw_ustack, dw_ustack(perf, 3)); exit(); }`, bin)
	gt := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-p", strconv.Itoa(h.Pid), "-e", script)
	r := gt.Wait(15 * time.Second)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	out := r.Stdout
	if i := strings.Index(out, "\n        "); i >= 0 {
		out = out[i:] // after "Attaching 1 probe..." where that is printed
	}
	parts := strings.Split(out, "|")
	if len(parts) < 3 {
		t.Fatalf("stdout:\n%s", r.Stdout)
	}
	prefix := "\n        " + strings.Join(want, "\n        ") + "\n"
	if !strings.HasPrefix(parts[0], prefix) {
		t.Errorf("dw_ustack at funcD:\n%s\nwant it to start with\n%s", parts[0], prefix)
	}
	var frames []string
	for _, l := range strings.Split(strings.TrimSpace(parts[0]), "\n") {
		frames = append(frames, strings.TrimSpace(l))
	}
	if len(frames) < 6 || !strings.HasPrefix(frames[5], "__libc_start") {
		t.Errorf("dw_ustack below main = %v, want libc's start code", frames)
	}
	// perf mode, 3 frames: address, sym+off, binary.
	var re strings.Builder
	re.WriteString(`^\n`)
	for _, w := range want[:3] {
		name, o, _ := strings.Cut(w, "+")
		n, _ := strconv.ParseUint(o, 10, 64)
		re.WriteString(`\t` + strconv.FormatUint(fs.addr[name]+n, 16) + ` ` + regexp.QuoteMeta(w) + ` \(` + regexp.QuoteMeta(bin) + `\)\n`)
	}
	if !regexp.MustCompile(re.String() + "$").MatchString(parts[1]) {
		t.Errorf("dw_ustack(perf, 3):\n%s\nwant to match %s", parts[1], re.String())
	}
}

// TestDwUstackNeedsTarget: without -p or -c there is no process to unwind
// in: bpftrace 0.26's error, at the call.
func TestDwUstackNeedsTarget(t *testing.T) {
	script := `uprobe:/bin/sh:main { $s = dw_ustack(); }`
	r := testkit.RunBounded(t, 20*time.Second, exec.Command(testkit.Gotrace(t), "-e", script))
	want := "stdin:1:28-39: ERROR: dw_ustack requires a target process: give its pid with -p PID or run it with -c CMD\n" +
		script + "\n" + strings.Repeat(" ", 27) + strings.Repeat("~", 11) + "\n"
	if r.ExitCode != 1 || r.Stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and\n%s", r.ExitCode, r.Stderr, want)
	}
}

// markerLine is the line number of the line of helper source name that
// holds marker.
func markerLine(t *testing.T, name, marker string) int {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "testdata", "helpers", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s.c has no line with %s", name, marker)
	return 0
}

// TestStatementProbeCountsLine: uprobe:BIN@FILE:LINE (bpftrace 0.26's
// statement probes, from the DWARF line table) fires once per execution
// of the line: the ulines helper runs its LINE_EVERY line N times and its
// LINE_THIRD line once per k divisible by 3, and the counts are exact.
// The BIN:FILE:LINE spelling attaches to the same place.
func TestStatementProbeCountsLine(t *testing.T) {
	requireTracing(t)
	const n = 3000
	every, third := markerLine(t, "ulines", "LINE_EVERY:"), markerLine(t, "ulines", "LINE_THIRD:")
	bin := testkit.Helper(t, "ulines")
	h := testkit.StartHelper(t, "ulines", strconv.Itoa(n))
	script := fmt.Sprintf(`uprobe:%[1]s@ulines.c:%[2]d /pid == %[4]d/ { @every = count(); }
uprobe:%[1]s:ulines.c:%[3]d /pid == %[4]d/ { @third = count(); }
tracepoint:sched:sched_process_exit /pid == %[4]d/ { exit(); }`, bin, every, third, h.Pid)
	gt := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-e", script)
	h.Go()
	r := gt.Wait(15 * time.Second)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	for _, want := range []string{fmt.Sprintf("@every: %d", n), fmt.Sprintf("@third: %d", (n+2)/3)} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(r.Stdout) {
			t.Errorf("stdout:\n%s\nwant a line %q", r.Stdout, want)
		}
	}
	// A line with no code is refused before anything attaches.
	bad := testkit.RunBounded(t, 20*time.Second, exec.Command(testkit.Gotrace(t), "-e", fmt.Sprintf(`uprobe:%s@ulines.c:1 { }`, bin)))
	if bad.ExitCode != 1 || !strings.Contains(bad.Stderr, "ERROR: no code for ulines.c:1 in "+bin) {
		t.Errorf("line 1: exit %d, stderr:\n%s", bad.ExitCode, bad.Stderr)
	}
}

// TestUstackSourceLinesAndInlinedFrames: by default (bpftrace 0.26) user
// frames end in @FILE:LINE from the DWARF line table, and calls inlined at
// the address are frames of their own, innermost first: "[inlined]
// inner@FILE:INNER_LINE", "[inlined] middle@FILE:MIDDLE_CALL", then
// outer+OFF@FILE:OUTER_CALL. In perf mode an inlined frame is "ADDR inner
// (inlined)"; show_debug_info=0 and --compat 0.17 print plain frames.
func TestUstackSourceLinesAndInlinedFrames(t *testing.T) {
	requireTracing(t)
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "testdata", "helpers", "uinline.c")
	innerL, middleL, outerL := markerLine(t, "uinline", "INNER_LINE:"), markerLine(t, "uinline", "MIDDLE_CALL:"), markerLine(t, "uinline", "OUTER_CALL:")
	bin := testkit.Helper(t, "uinline")
	h := testkit.StartHelper(t, "uinline", "100000000000")
	h.Go()
	run := func(args ...string) string {
		t.Helper()
		gt := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), args...)
		r := gt.Wait(15 * time.Second)
		if r.TimedOut || r.ExitCode != 0 {
			t.Fatalf("gotrace %q: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", args, r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
		}
		return r.Stdout
	}
	probe := fmt.Sprintf("uprobe:%s@uinline.c:%d /pid == %d/", bin, innerL, h.Pid)
	out := run("--compat", "0.26", "-e", probe+` { printf("%s|%s|\n", ustack(3), ustack(perf, 3)); exit(); }`)
	q := regexp.QuoteMeta
	want := `(?s)^\n {8}\[inlined\] inner@` + q(src) + `:` + strconv.Itoa(innerL) + `\n` +
		` {8}\[inlined\] middle@` + q(src) + `:` + strconv.Itoa(middleL) + `\n` +
		` {8}outer\+\d+@` + q(src) + `:` + strconv.Itoa(outerL) + `\n\|` +
		`\n\t([0-9a-f]+) inner \(inlined\)\n\t([0-9a-f]+) middle \(inlined\)\n\t([0-9a-f]+) outer\+\d+ \(` + q(bin) + `\)\n\|`
	m := regexp.MustCompile(want).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("stdout:\n%s\nwant to match\n%s", out, want)
	}
	if m[1] != m[2] || m[2] != m[3] {
		t.Errorf("inlined frames at %s, %s, %s: want one address", m[1], m[2], m[3])
	}
	for _, args := range [][]string{
		{"--compat", "0.26", "-e", "config = { show_debug_info=0 } " + probe + ` { printf("%s|\n", ustack(1)); exit(); }`},
		{"-e", probe + ` { printf("%s|\n", ustack(1)); exit(); }`}, // GOTRACE_COMPAT=0.17
	} {
		out := run(args...)
		if !regexp.MustCompile(`(?m)^\s+outer\+\d+\n\|$`).MatchString(out) {
			t.Errorf("gotrace %q:\n%s\nwant a plain outer+OFF frame", args, out)
		}
	}
}
