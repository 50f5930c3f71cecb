package main

import (
	"regexp"
	"strings"
	"testing"
)

// ansi drops the colour codes of bpftrace's test report.
var ansi = regexp.MustCompile("\033\\[[0-9;]*m")

// dur stands for a test's measured time in the report, "(16 μs)".
const dur = `\(\d+ (ns|μs|ms|s)\)`

// TestV026TestMode: --test (--mode test) runs BEGIN, then each test:NAME
// probe once in script order, its output captured and shown only when it
// fails (errorf(), exit() with a code), then END; bpftrace's gtest-style
// report, exit status 1 when a test failed. Other probes do not attach.
func TestV026TestMode(t *testing.T) {
	requireTracing(t)
	prog := `begin { printf("begin\n"); @n = 1; }
kprobe:nonexistent_function_xyz { }
test:counts { printf("hidden\n"); @n++; }
test:sees_counts { if (@n != 2) { errorf("n is %d", @n); } }
test:fails { printf("n=%d\n", @n); errorf("bad %d", @n); }
test:exits { exit(3); }
test:exit0 { exit(); }
end { printf("end\n"); clear(@n); }`
	r := v26(t, "--test", "-e", prog)
	out := ansi.ReplaceAllString(r.Stdout, "")
	want := regexp.MustCompile(`^begin
\[==========\] Running 5 tests\.
\[ RUN      \] counts
\[       OK \] counts ` + dur + `
\[ RUN      \] sees_counts
\[       OK \] sees_counts ` + dur + `
\[ RUN      \] fails
n=2
stdin:5:36-56: ERROR: bad 2
test:fails \{ printf\("n=%d\\n", @n\); errorf\("bad %d", @n\); \}
 +~+
\[  FAILED  \] fails ` + dur + `
\[ RUN      \] exits
\[  FAILED  \] exits ` + dur + `
\[ RUN      \] exit0
\[       OK \] exit0 ` + dur + `
\[==========\] 5 tests ran\.
\[  PASSED  \] 3 tests\.
\[  FAILED  \] 2 tests, listed below:
\[  FAILED  \] fails
\[  FAILED  \] exits
end
`)
	if r.ExitCode != 1 || !want.MatchString(out) || strings.Contains(out, "hidden") {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", r.ExitCode, out, r.Stderr)
	}
	if !strings.HasPrefix(r.Stdout, "begin\n\033[32m[==========]\033[0m Running 5 tests.\n") || !strings.Contains(r.Stdout, "\033[31m[  FAILED  ]\033[0m fails") {
		t.Errorf("colours: %q", r.Stdout)
	}

	r = v26(t, "--mode", "test", "-e", `test:a { printf("a\n"); } test:b { }`)
	if out := ansi.ReplaceAllString(r.Stdout, ""); r.ExitCode != 0 || !strings.Contains(out, "[  PASSED  ] 2 tests.\n") || strings.Contains(out, "FAILED") {
		t.Errorf("all pass: exit %d; stdout:\n%s\nstderr:\n%s", r.ExitCode, out, r.Stderr)
	}

	r = v26(t, "-q", "-f", "json", "--test", "-e", `test:a { printf("x\n"); } test:b { errorf("no"); }`)
	if !regexp.MustCompile(`(?m)^\{"type": "test_result", "data": \{"a": \{"duration": \d+, "passed": true, "output": "\{\\"type\\": \\"printf\\", \\"data\\": \\"x\\\\n\\"\}\\n"\}\}\}$`).MatchString(r.Stdout) ||
		!regexp.MustCompile(`(?m)^\{"type": "test_result", "data": \{"b": \{"duration": \d+, "passed": false, "output": ".*ERROR: no.*"\}\}\}$`).MatchString(r.Stdout) || r.ExitCode != 1 {
		t.Errorf("json: exit %d; stdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}

	r = v26(t, "-e", `test:a { printf("x\n"); }`)
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "ERROR: test:a: test probes run with --mode test (or --test)") {
		t.Errorf("outside test mode: exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
}
