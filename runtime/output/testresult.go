package output

import (
	"fmt"
	"strings"
	"time"
)

// TestResult is the result of one test:NAME probe (--mode test).
type TestResult struct {
	Name     string
	Duration time.Duration
	Passed   bool
	// Output is what the test printed (stdout and its errorf()
	// diagnostics); text output shows it only for a failed test.
	Output string
}

// The colours of bpftrace's test report (gtest's layout).
const (
	green = "\033[32m"
	red   = "\033[31m"
	reset = "\033[0m"
)

// TestResults prints test results as bpftrace 0.26 does: a gtest-style
// report (text), or one test_result record per test (JSON).
func (p *Printer) TestResults(res []TestResult) error {
	if p.format == JSON {
		var sb strings.Builder
		for _, r := range res {
			fmt.Fprintf(&sb, `{"type": "test_result", "data": {"%s": {"duration": %d, "passed": %t, "output": "%s"}}}`+"\n",
				jsonEscape(r.Name), r.Duration.Nanoseconds(), r.Passed, jsonEscape(r.Output))
		}
		return p.write(sb.String())
	}
	if len(res) == 0 {
		return nil
	}
	plural := func(n int) string {
		if n == 1 {
			return "test"
		}
		return "tests"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s[==========]%s Running %d tests.\n", green, reset, len(res))
	var failed []string
	for _, r := range res {
		fmt.Fprintf(&sb, "%s[ RUN      ]%s %s\n", green, reset, r.Name)
		if r.Passed {
			fmt.Fprintf(&sb, "%s[       OK ]%s %s", green, reset, r.Name)
		} else {
			// A failed test's output goes between its RUN and FAILED lines.
			for _, line := range strings.Split(r.Output, "\n") {
				if line != "" {
					sb.WriteString(line + "\n")
				}
			}
			fmt.Fprintf(&sb, "%s[  FAILED  ]%s %s", red, reset, r.Name)
			failed = append(failed, r.Name)
		}
		val, unit := DurationUnit(r.Duration)
		fmt.Fprintf(&sb, " (%d %s)\n", val, unit)
	}
	fmt.Fprintf(&sb, "%s[==========]%s %d %s ran.\n", green, reset, len(res), plural(len(res)))
	passed := len(res) - len(failed)
	fmt.Fprintf(&sb, "%s[  PASSED  ]%s %d %s.\n", green, reset, passed, plural(passed))
	if len(failed) > 0 {
		fmt.Fprintf(&sb, "%s[  FAILED  ]%s %d %s, listed below:\n", red, reset, len(failed), plural(len(failed)))
		for _, n := range failed {
			fmt.Fprintf(&sb, "%s[  FAILED  ]%s %s\n", red, reset, n)
		}
	}
	return p.write(sb.String())
}

// DurationUnit is d in the largest of s, ms, μs and ns that it reaches,
// truncated, as bpftrace shows durations.
func DurationUnit(d time.Duration) (uint64, string) {
	ns := uint64(d.Nanoseconds())
	switch {
	case ns >= uint64(time.Second):
		return ns / uint64(time.Second), "s"
	case ns >= uint64(time.Millisecond):
		return ns / uint64(time.Millisecond), "ms"
	case ns >= uint64(time.Microsecond):
		return ns / uint64(time.Microsecond), "μs"
	}
	return ns, "ns"
}
