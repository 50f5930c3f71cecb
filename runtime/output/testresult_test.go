package output

import (
	"bytes"
	"testing"
	"time"
)

// TestTestResults: bpftrace 0.26's gtest-style report (a failed test's
// output between its RUN and FAILED lines, the summary naming it) and its
// test_result JSON records.
func TestTestResults(t *testing.T) {
	res := []TestResult{
		{Name: "ok", Duration: 1500 * time.Nanosecond, Passed: true, Output: "hidden\n"},
		{Name: "bad", Duration: 42 * time.Nanosecond, Output: "got 1\n\nstdin:1:20-38: ERROR: boom\n"},
		{Name: "slow", Duration: 3 * time.Millisecond, Passed: true},
	}
	var b bytes.Buffer
	if err := New(&b, Text, nil).TestResults(res); err != nil {
		t.Fatal(err)
	}
	want := "\033[32m[==========]\033[0m Running 3 tests.\n" +
		"\033[32m[ RUN      ]\033[0m ok\n" +
		"\033[32m[       OK ]\033[0m ok (1 μs)\n" +
		"\033[32m[ RUN      ]\033[0m bad\n" +
		"got 1\n" +
		"stdin:1:20-38: ERROR: boom\n" +
		"\033[31m[  FAILED  ]\033[0m bad (42 ns)\n" +
		"\033[32m[ RUN      ]\033[0m slow\n" +
		"\033[32m[       OK ]\033[0m slow (3 ms)\n" +
		"\033[32m[==========]\033[0m 3 tests ran.\n" +
		"\033[32m[  PASSED  ]\033[0m 2 tests.\n" +
		"\033[31m[  FAILED  ]\033[0m 1 test, listed below:\n" +
		"\033[31m[  FAILED  ]\033[0m bad\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	if err := New(&b, Text, nil).TestResults(res[:1]); err != nil {
		t.Fatal(err)
	}
	if want := "\033[32m[==========]\033[0m Running 1 tests.\n\033[32m[ RUN      ]\033[0m ok\n\033[32m[       OK ]\033[0m ok (1 μs)\n" +
		"\033[32m[==========]\033[0m 1 test ran.\n\033[32m[  PASSED  ]\033[0m 1 test.\n"; b.String() != want {
		t.Errorf("one test:\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	if err := New(&b, JSON, nil).TestResults(res[:2]); err != nil {
		t.Fatal(err)
	}
	want = `{"type": "test_result", "data": {"ok": {"duration": 1500, "passed": true, "output": "hidden\n"}}}` + "\n" +
		`{"type": "test_result", "data": {"bad": {"duration": 42, "passed": false, "output": "got 1\n\nstdin:1:20-38: ERROR: boom\n"}}}` + "\n"
	if b.String() != want {
		t.Errorf("json:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestDurationUnit(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		v    uint64
		unit string
	}{{0, 0, "ns"}, {999, 999, "ns"}, {1000, 1, "μs"}, {2500 * time.Microsecond, 2, "ms"}, {61 * time.Second, 61, "s"}} {
		if v, u := DurationUnit(c.d); v != c.v || u != c.unit {
			t.Errorf("%v: %d %s, want %d %s", c.d, v, u, c.v, c.unit)
		}
	}
}
