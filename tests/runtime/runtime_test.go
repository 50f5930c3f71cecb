package runtime

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestRuntime runs every case of testdata/runtime, a subtest per file and
// case: go test ./tests/runtime -run 'TestRuntime/FILE/CASE'.
func TestRuntime(t *testing.T) {
	byFile := map[string][]Case{}
	var files []string
	for _, c := range All(t) {
		if byFile[c.File] == nil {
			files = append(files, c.File)
		}
		byFile[c.File] = append(byFile[c.File], c)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			for _, c := range byFile[f] {
				t.Run(c.Name, func(t *testing.T) {
					if !c.Serial {
						t.Parallel()
					}
					runCase(t, c)
				})
			}
		})
	}
}

// run is one tracer's run of a case.
type run struct {
	argv []string // the command, for failure messages
	res  testkit.Result
}

func runCase(t *testing.T, c Case) {
	caps := []testkit.Capability{testkit.Root, testkit.BPF, testkit.Tracefs, testkit.Go}
	if usesHelper(c) {
		caps = append(caps, testkit.GCC)
	}
	for _, n := range c.Needs {
		caps = append(caps, needCaps[n])
	}
	testkit.Require(t, caps...)
	withBT := false
	if c.Bpftrace {
		if testkit.Check(testkit.Bpftrace) == nil {
			withBT = true
		} else if len(c.Expect) == 0 {
			// Only the comparison asserts anything: it cannot run.
			testkit.Require(t, testkit.Bpftrace)
		} else {
			t.Run("bpftrace", func(t *testing.T) { testkit.Require(t, testkit.Bpftrace) })
		}
	}
	timeout := 30 * time.Second
	if c.Timeout > 0 {
		timeout = time.Duration(c.Timeout) * time.Second
	}
	// Failures from here on name the case and the command themselves.
	explained := false
	g, b := execute(t, c, withBT, timeout, &explained)
	explained = true
	where := fmt.Sprintf("%s:%d: case %q\ncommand: %s", c.File, c.Line, c.Name, shellQuote(g.argv))
	checkNoCrash(t, where, g.res)
	if g.res.TimedOut {
		t.Fatalf("%s\ntimed out after %v\nstdout:\n%s\nstderr:\n%s", where, timeout, g.res.Stdout, g.res.Stderr)
	}
	if g.res.ExitCode != c.Exit {
		t.Errorf("%s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", where, g.res.ExitCode, c.Exit, g.res.Stdout, g.res.Stderr)
	}
	sub := substituter(t, c, g.pid)
	for _, e := range c.Expect {
		got := g.res.Stdout
		if e.Stream == "stderr" {
			got = g.res.Stderr
		}
		if msg := check(e, c.Norm, sub, got); msg != "" {
			t.Errorf("%s\n%s (%s:%d, %s):\n%s", where, e.Stream, c.File, e.Line, e.Mode, msg)
		}
	}
	if len(c.Expect) == 0 && strings.TrimSpace(attachingRE.ReplaceAllString(g.res.Stdout, "")) == "" {
		// Compared only with bpftrace: a workload nobody traced would
		// compare equal and prove nothing.
		t.Errorf("%s\ngotrace traced nothing of the workload: stdout %q", where, g.res.Stdout)
	}
	if b == nil {
		return
	}
	bwhere := fmt.Sprintf("%s:%d: case %q, compared with bpftrace 0.17\ncommand: %s", c.File, c.Line, c.Name, shellQuote(b.argv))
	if b.res.TimedOut {
		t.Fatalf("%s\nbpftrace timed out\nstdout:\n%s\nstderr:\n%s", bwhere, b.res.Stdout, b.res.Stderr)
	}
	if b.res.ExitCode != g.res.ExitCode {
		t.Errorf("%s\nexit %d, bpftrace %d\ngotrace stderr:\n%s\nbpftrace stderr:\n%s", bwhere, g.res.ExitCode, b.res.ExitCode, g.res.Stderr, b.res.Stderr)
	}
	gs, bs := normalize(c.Norm, g.res.Stdout), normalize(c.Norm, b.res.Stdout)
	if gs != bs {
		t.Errorf("%s\nstdout differs from bpftrace's (- bpftrace, + gotrace):\n%s", bwhere, diff(bs, gs))
	}
	if c.BpftraceStderr && g.res.Stderr != b.res.Stderr {
		t.Errorf("%s\nstderr differs from bpftrace's (- bpftrace, + gotrace):\n%s", bwhere, diff(b.res.Stderr, g.res.Stderr))
	}
	if os.Getenv("RUNTIME_SHOW") != "" {
		t.Logf("gotrace stdout %q\nbpftrace stdout %q", g.res.Stdout, b.res.Stdout)
	}
}

// tracerRun is what execute reports of one tracer.
type tracerRun struct {
	run
	pid int // the helper's pid, or 0
}

// execute runs the case under gotrace (and bpftrace when withBT), both on
// the same run of the workload.
func execute(t *testing.T, c Case, withBT bool, timeout time.Duration, explained *bool) (tracerRun, *run) {
	// bpftrace 0.17 now and then ignores SIGINT under load (it then dies by
	// SIGKILL with no output): run the pair again rather than blame gotrace.
	for attempt := 1; ; attempt++ {
		g, b := executeOnce(t, c, withBT, timeout, explained)
		if b == nil || !b.res.TimedOut || c.Workload == nil || c.Workload[0] != "helper" {
			return g, b
		}
		if attempt == 3 {
			return g, b
		}
		t.Logf("bpftrace did not stop on SIGINT (attempt %d): running both again", attempt)
	}
}

func executeOnce(t *testing.T, c Case, withBT bool, timeout time.Duration, explained *bool) (tracerRun, *run) {
	var h *testkit.HelperProc
	if c.Workload != nil && c.Workload[0] == "helper" {
		args := make([]string, len(c.Workload)-2)
		sub0 := substituter(t, c, 0)
		for i, a := range c.Workload[2:] {
			args[i] = sub0(a)
		}
		h = testkit.StartHelper(t, c.Workload[1], args...)
	}
	pid := 0
	if h != nil {
		pid = h.Pid
	}
	sub := substituter(t, c, pid)
	var tail []string // from -c on
	if c.Workload != nil && c.Workload[0] == "command" {
		var cmd []string
		for _, w := range c.Workload[1:] {
			cmd = append(cmd, sub(w))
		}
		tail = append(tail, "-c", strings.Join(cmd, " "))
	}
	tail = append(tail, "-e", sub(c.Program))
	if h != nil {
		tail = append(tail, strconv.Itoa(pid))
	}
	for _, a := range c.Args {
		tail = append(tail, sub(a))
	}
	var flags []string
	for _, f := range c.Flags {
		flags = append(flags, sub(f))
	}
	compat := c.Compat
	if c.Bpftrace && compat == "" {
		compat = "0.17"
	}
	gargs := flags
	if compat != "" {
		gargs = append([]string{"--compat", compat}, flags...)
	}
	gargv := append(append([]string{testkit.Gotrace(t)}, gargs...), tail...)
	var bargv []string
	if withBT {
		bt, err := exec.LookPath("bpftrace")
		if err != nil {
			t.Fatal(err)
		}
		bargv = append(append([]string{bt}, flags...), tail...)
	}
	var env []string
	for _, e := range c.Env {
		env = append(env, sub(e))
	}
	// The environment goes through env(1), as StartTracer takes a command.
	withEnv := func(argv []string) []string {
		if len(env) == 0 {
			return argv
		}
		return append(append([]string{"/usr/bin/env"}, env...), argv...)
	}
	gargv, bargv = withEnv(gargv), withEnv(bargv)
	// A failure inside testkit (a tracer that does not attach, a helper
	// that fails) names the case and the command too.
	t.Cleanup(func() {
		if t.Failed() && !*explained {
			t.Logf("%s:%d: case %q\ncommand: %s", c.File, c.Line, c.Name, shellQuote(gargv))
		}
	})
	g := tracerRun{run: run{argv: gargv}, pid: pid}
	var b *run
	if withBT {
		b = &run{argv: bargv}
	}
	if h == nil {
		// The tracer ends by itself (exit(), -c's command, an error).
		g.res = testkit.RunBounded(t, timeout, exec.Command(gargv[0], gargv[1:]...))
		if b != nil {
			b.res = testkit.RunBounded(t, timeout+10*time.Second, exec.Command(bargv[0], bargv[1:]...))
			b.res.Stderr = bpftraceStderr(b.res.Stderr)
		}
		return g, b
	}
	tg := testkit.StartTracer(t, 20*time.Second, gargv[0], gargv[1:]...)
	var tb *testkit.Tracer
	if b != nil {
		tb = testkit.StartTracer(t, 30*time.Second, bargv[0], bargv[1:]...)
	}
	h.Go()
	if c.EndsSelf {
		// The script ends itself (the helper may run on: it is killed at
		// the end of the test); a tracer still running at the deadline is
		// a failure (TimedOut), not something to interrupt.
		g.res = tg.Wait(timeout)
		if tb != nil {
			b.res = tb.Wait(timeout)
			b.res.Stderr = bpftraceStderr(b.res.Stderr)
		}
		return g, b
	}
	hr := h.Wait(timeout)
	if hr.ExitCode != 0 {
		t.Fatalf("%s:%d: case %q: helper %q exited %d: %s", c.File, c.Line, c.Name, c.Workload[1:], hr.ExitCode, hr.Stderr)
	}
	// Let the last events of the workload drain, then stop the tracers
	// that have not ended by themselves (SIGINT prints the maps).
	time.Sleep(150 * time.Millisecond)
	g.res = tg.Stop(syscall.SIGINT, 10*time.Second)
	if tb != nil {
		b.res = tb.Stop(syscall.SIGINT, 10*time.Second)
		b.res.Stderr = bpftraceStderr(b.res.Stderr)
	}
	return g, b
}

func usesHelper(c Case) bool {
	if c.Workload != nil && c.Workload[0] == "helper" {
		return true
	}
	all := c.Program + strings.Join(c.Workload, " ") + strings.Join(c.Flags, " ") + strings.Join(c.Args, " ")
	return strings.Contains(all, "{helper:") || strings.Contains(all, "{comm:")
}

// substituter fills the placeholders of a case (see Fill): {helper:NAME}
// is the C helper's path, {comm:NAME} its comm, {kaddr:SYMBOL} the kernel
// symbol's address as a map key of it prints (a signed decimal: the
// address differs between kernels), {pid} the helper
// workload's pid, {ncpus} the possible CPUs, {testpid} and {testcomm} this
// test process's (the tracer's and the helper's parent).
func substituter(t *testing.T, c Case, pid int) func(string) string {
	return func(s string) string {
		return Fill(s, func(kind, arg string) string {
			switch kind {
			case "helper":
				return testkit.Helper(t, arg)
			case "comm":
				return helperComm(t, arg)
			case "kaddr":
				return strconv.FormatInt(int64(testkit.KallsymsAddr(t, arg)), 10)
			case "pid":
				if pid == 0 {
					t.Fatalf("%s:%d: case %q: {pid} without a helper workload", c.File, c.Line, c.Name)
				}
				return strconv.Itoa(pid)
			case "ncpus":
				return strconv.Itoa(possibleCPUs(t))
			case "testpid":
				return strconv.Itoa(os.Getpid())
			case "testcomm":
				b, err := os.ReadFile("/proc/self/comm")
				if err != nil {
					t.Fatal(err)
				}
				return strings.TrimSuffix(string(b), "\n")
			}
			return ""
		})
	}
}

// helperComm is the comm of a helper binary: its base name, cut to 15
// bytes.
func helperComm(t *testing.T, name string) string {
	c := filepath.Base(testkit.Helper(t, name))
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

// possibleCPUs counts the CPUs of /sys/devices/system/cpu/possible
// ("0-3,8,10-11").
func possibleCPUs(t *testing.T) int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if ok {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			t.Fatalf("bad /sys/devices/system/cpu/possible: %q", b)
		}
		n += z - a + 1
	}
	return n
}

// check compares got (a stream, normalized as the case says when it is
// stdout) with e, and returns what differs, or "".
func check(e Expect, norms []string, sub func(string) string, got string) string {
	lines := make([]ExpLine, len(e.Lines))
	texts := make([]string, len(e.Lines))
	hasRE := false
	for i, l := range e.Lines {
		if l.Regex {
			hasRE = true
			// A placeholder in a regular expression stands for its text.
			l.Text = PlaceholderRE.ReplaceAllStringFunc(l.Text, func(m string) string { return regexp.QuoteMeta(sub(m)) })
		} else {
			l.Text = sub(l.Text)
		}
		lines[i], texts[i] = l, l.Text
	}
	if e.Stream != "stdout" {
		norms = nil
	}
	got = normalize(norms, got)
	switch e.Mode {
	case "contains", "lacks":
		// A fragment: the lines joined, without a final newline (an empty
		// last line asks for one).
		want := strings.Join(texts, "\n")
		if hasRE {
			return "regular expression lines are for exact and prefix expectations"
		}
		if strings.Contains(got, want) != (e.Mode == "contains") {
			if e.Mode == "contains" {
				return fmt.Sprintf("does not contain %q; it is:\n%s", want, got)
			}
			return fmt.Sprintf("contains %q; it is:\n%s", want, got)
		}
		return ""
	}
	want := ""
	if len(texts) > 0 {
		want = strings.Join(texts, "\n") + "\n"
	}
	want = normalize(norms, want)
	if !hasRE {
		if e.Mode == "exact" && got == want || e.Mode == "prefix" && strings.HasPrefix(got, want) {
			return ""
		}
		if e.Mode == "prefix" && len(got) > len(want) {
			return fmt.Sprintf("does not start with the expected text (- want, + got):\n%s\nwhole stream:\n%s", diff(want, got[:min(len(got), len(want))]), got)
		}
		return "(- want, + got):\n" + diff(want, got)
	}
	// Line by line: a regular expression matches a whole line. The
	// normalizations apply to the text lines only.
	gl := strings.Split(got, "\n")
	ok := true
	if e.Mode == "exact" && len(gl) != len(lines)+1 || len(gl) < len(lines) {
		ok = false
	}
	var shown []string
	for i, l := range lines {
		g := "(end)"
		if i < len(gl) {
			g = gl[i]
		}
		match := g == l.Text
		if l.Regex {
			match = i < len(gl) && regexp.MustCompile(`^(?:`+l.Text+`)$`).MatchString(g)
		}
		if !match {
			ok = false
			shown = append(shown, fmt.Sprintf("line %d: want %s %q\n         got %q", i+1, map[bool]string{true: "match of", false: "text"}[l.Regex], l.Text, g))
		}
	}
	if e.Mode == "exact" && len(gl) > len(lines)+1 {
		shown = append(shown, fmt.Sprintf("%d lines more than expected", len(gl)-len(lines)-1))
	}
	if ok {
		return ""
	}
	return strings.Join(shown, "\n") + "\nwhole stream:\n" + got
}

// checkNoCrash fails when the Go runtime reported a panic or fatal error.
func checkNoCrash(t *testing.T, where string, r testkit.Result) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:", "runtime error"} {
		if strings.HasPrefix(r.Stderr, s) || strings.Contains(r.Stderr, "\n"+s) {
			t.Errorf("%s\ngotrace crashed (%q on stderr):\n%s", where, s, r.Stderr)
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
		if !strings.Contains(l, "RLIMIT_MEMLOCK") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// shellQuote prints argv as a shell command line.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// diff is a line diff of want and got: unchanged lines with "  ", lines
// only in want with "- ", only in got with "+ " (a longest common
// subsequence; line ends shown as in the text).
func diff(want, got string) string {
	a, b := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	if len(a) > 0 && a[len(a)-1] == "" {
		a = a[:len(a)-1]
	}
	if len(b) > 0 && b[len(b)-1] == "" {
		b = b[:len(b)-1]
	}
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	line := func(p, s string) {
		sb.WriteString(p)
		if q := strconv.Quote(strings.TrimSuffix(s, "\n")); strings.HasSuffix(s, "\n") {
			sb.WriteString(q[1:len(q)-1] + "\n")
		} else {
			sb.WriteString(strconv.Quote(s) + " (no newline)\n")
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			line("  ", a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			line("- ", a[i])
			i++
		default:
			line("+ ", b[j])
			j++
		}
	}
	return sb.String()
}
