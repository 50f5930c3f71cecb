package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

const nGetpid = 1234

// TestCountGetpidByPid: the first acceptance example.
func TestCountGetpidByPid(t *testing.T) {
	r := runGotraceOn(t, nil, `tracepoint:syscalls:sys_enter_getpid /pid == $1/ { @ = count(); }`,
		"getpid", fmt.Sprint(nGetpid))
	expectOutput(t, "stdout", r.Stdout, fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", nGetpid))
}

// helperComm is the comm of a helper binary: its base name, cut to 15 bytes.
func helperComm(t *testing.T, name string) string {
	c := filepath.Base(testkit.Helper(t, name))
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

// runCommand runs gotrace -c CMD to completion: it must exit when CMD does.
func runCommand(t *testing.T, script, cmd string) testkit.Result {
	t.Helper()
	requireTracing(t)
	r := gt(t, 30*time.Second, "-c", cmd, "-e", script)
	if r.ExitCode != 0 {
		mismatch(t, "gotrace -c exited %d, want 0; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return r
}

// TestCountGetpidCommand traces a command started by -c; the helper runs
// without the handshake, so its exact getpid count is its whole life's.
func TestCountGetpidCommand(t *testing.T) {
	t.Run("comm", func(t *testing.T) {
		requireTracing(t)
		// A copy with a name of its own: other packages' tests run getpid
		// helpers at the same time, and the filter is by comm.
		bin := filepath.Join(t.TempDir(), fmt.Sprintf("gpc%d", os.Getpid()))
		b, err := os.ReadFile(testkit.Helper(t, "getpid"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		comm := filepath.Base(bin)
		if len(comm) > 15 {
			comm = comm[:15]
		}
		r := runCommand(t, fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @ = count(); }`, comm),
			bin+" "+fmt.Sprint(nGetpid))
		expectOutput(t, "stdout", r.Stdout, fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", nGetpid))
	})
	t.Run("cpid", func(t *testing.T) {
		requireTracing(t)
		r := runCommand(t, `tracepoint:syscalls:sys_enter_getpid /pid == cpid/ { @ = count(); }`,
			testkit.Helper(t, "getpid")+" "+fmt.Sprint(nGetpid))
		expectOutput(t, "stdout", r.Stdout, fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", nGetpid))
	})
}

// TestCountGetpidPidFlag traces with -p PID; the script filters by $1, the
// same pid, because tracepoints are system-wide in bpftrace.
func TestCountGetpidPidFlag(t *testing.T) {
	requireTracing(t)
	h := testkit.StartHelper(t, "getpid", fmt.Sprint(nGetpid))
	pid := fmt.Sprint(h.Pid)
	tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-p", pid, "-e",
		`tracepoint:syscalls:sys_enter_getpid /pid == $1/ { @ = count(); }`, pid)
	h.Go()
	if hr := h.Wait(20 * time.Second); hr.ExitCode != 0 {
		t.Fatalf("helper exited %d: %s", hr.ExitCode, hr.Stderr)
	}
	// The traced process is gone: gotrace may exit by itself (as with -c) or
	// wait for SIGINT as bpftrace 0.17 does; both must print the map.
	r := stopTracer(t, tr)
	checkNoPanic(t, r)
	if r.TimedOut {
		t.Errorf("gotrace -p did not exit within 10s of SIGINT")
	}
	if r.ExitCode != 0 {
		t.Errorf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", r.Stdout, fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", nGetpid))
}

// readSizes are the reads helper's sizes: buckets 0, 1, [2,4) x2, [4,8),
// [64,128), [512,1K) x3, [1K,2K), [4K,8K).
var readSizes = []string{"0", "1", "2", "3", "7", "100", "512", "600", "1023", "1024", "4100"}

// TestAggregations checks every aggregation over the exact sizes of the
// reads helper, in text and in JSON, against literal expected output.
func TestAggregations(t *testing.T) {
	const pred = `tracepoint:syscalls:sys_exit_read /pid == $1/ `
	tests := []struct {
		name, script, text, json string
	}{
		{"hist", pred + `{ @bytes = hist(args->ret); }`,
			`@bytes: 
[0]                    1 |@@@@@@@@@@@@@@@@@                                   |
[1]                    1 |@@@@@@@@@@@@@@@@@                                   |
[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@                  |
[4, 8)                 1 |@@@@@@@@@@@@@@@@@                                   |
[8, 16)                0 |                                                    |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)              1 |@@@@@@@@@@@@@@@@@                                   |
[128, 256)             0 |                                                    |
[256, 512)             0 |                                                    |
[512, 1K)              3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[1K, 2K)               1 |@@@@@@@@@@@@@@@@@                                   |
[2K, 4K)               0 |                                                    |
[4K, 8K)               1 |@@@@@@@@@@@@@@@@@                                   |

`,
			`{"type": "hist", "data": {"@bytes": [{"min": 0, "max": 0, "count": 1}, {"min": 1, "max": 1, "count": 1}, {"min": 2, "max": 3, "count": 2}, {"min": 4, "max": 7, "count": 1}, {"min": 8, "max": 15, "count": 0}, {"min": 16, "max": 31, "count": 0}, {"min": 32, "max": 63, "count": 0}, {"min": 64, "max": 127, "count": 1}, {"min": 128, "max": 255, "count": 0}, {"min": 256, "max": 511, "count": 0}, {"min": 512, "max": 1023, "count": 3}, {"min": 1024, "max": 2047, "count": 1}, {"min": 2048, "max": 4095, "count": 0}, {"min": 4096, "max": 8191, "count": 1}]}}
`},
		{"lhist", pred + `{ @l = lhist(args->ret, 0, 1000, 250); }`,
			`@l: 
[0, 250)               6 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[250, 500)             0 |                                                    |
[500, 750)             2 |@@@@@@@@@@@@@@@@@                                   |
[750, 1000)            0 |                                                    |
[1000, ...)            3 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |

`,
			`{"type": "hist", "data": {"@l": [{"min": 0, "max": 249, "count": 6}, {"min": 250, "max": 499, "count": 0}, {"min": 500, "max": 749, "count": 2}, {"min": 750, "max": 999, "count": 0}, {"min": 1000, "count": 3}]}}
`},
		{"lhist_below", pred + `{ @l = lhist(args->ret, 10, 700, 300); }`,
			`@l: 
(..., 10)              5 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[10, 310)              1 |@@@@@@@@@@                                          |
[310, 610)             2 |@@@@@@@@@@@@@@@@@@@@                                |
[700, ...)             3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@                     |

`, ""},
		{"stats", pred + `{ @s = stats(args->ret); }`, "@s: count 11, average 670, total 7372\n\n",
			`{"type": "stats", "data": {"@s": {"count": 11, "average": 670, "total": 7372}}}
`},
		{"avg", pred + `{ @a = avg(args->ret); }`, "@a: 670\n\n", `{"type": "stats", "data": {"@a": 670}}
`},
		{"min_max_sum_count", pred + `{ @mi = min(args->ret); @ma = max(args->ret); @su = sum(args->ret); @c = count(); }`,
			"@c: 11\n@ma: 4100\n@mi: 0\n@su: 7372\n",
			`{"type": "map", "data": {"@c": 11}}
{"type": "map", "data": {"@ma": 4100}}
{"type": "map", "data": {"@mi": 0}}
{"type": "map", "data": {"@su": 7372}}
`},
		{"string_keys", pred + `{ @[comm] = count(); if (args->ret > 500) { @sz["big"] = sum(args->ret); } else { @sz["small"] = sum(args->ret); } }`,
			"@[COMM]: 11\n@sz[small]: 113\n@sz[big]: 7259\n",
			`{"type": "map", "data": {"@": {"COMM": 11}}}
{"type": "map", "data": {"@sz": {"small": 113, "big": 7259}}}
`},
		{"multi_keys", pred + `{ @[comm, args->ret / 512, "r"] = sum(args->ret); }`,
			"@[COMM, 0, r]: 113\n@[COMM, 2, r]: 1024\n@[COMM, 1, r]: 2135\n@[COMM, 8, r]: 4100\n",
			`{"type": "map", "data": {"@": {"COMM,0,r": 113, "COMM,2,r": 1024, "COMM,1,r": 2135, "COMM,8,r": 4100}}}
`},
		{"hist_keyed", pred + `{ @h[args->ret < 8 ? "small" : "large"] = hist(args->ret); }`,
			`@h[small]: 
[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |

@h[large]: 
[64, 128)              1 |@@@@@@@@@@@@@@@@@                                   |
[128, 256)             0 |                                                    |
[256, 512)             0 |                                                    |
[512, 1K)              3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[1K, 2K)               1 |@@@@@@@@@@@@@@@@@                                   |
[2K, 4K)               0 |                                                    |
[4K, 8K)               1 |@@@@@@@@@@@@@@@@@                                   |

`, ""},
	}
	requireTracing(t)
	comm := helperComm(t, "reads")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := "Attaching 1 probe...\n\n\n" + strings.ReplaceAll(tt.text, "COMM", comm)
			checkBoth(t, nil, tt.script, want)
			if tt.json == "" {
				return
			}
			want = `{"type": "attached_probes", "data": {"probes": 1}}` + "\n\n\n" + strings.ReplaceAll(tt.json, "COMM", comm)
			checkBoth(t, []string{"-f", "json"}, tt.script, want)
		})
	}
}

// TestMapOps checks print, clear, zero and delete in text and JSON. The
// operations are events: BEGIN finishes before userspace prints, so each
// print shows the map as BEGIN left it, as in bpftrace.
func TestMapOps(t *testing.T) {
	requireTracing(t)
	tests := []struct {
		name, script, text, json string
	}{
		{"print_then_exit",
			`BEGIN { @a["x"] = 1; @a["y"] = 2; print(@a); @n = 5; print(@n); exit(); }`,
			"@a[x]: 1\n@a[y]: 2\n@n: 5\n\n\n@a[x]: 1\n@a[y]: 2\n@n: 5\n",
			`{"type": "map", "data": {"@a": {"x": 1, "y": 2}}}
{"type": "map", "data": {"@n": 5}}


{"type": "map", "data": {"@a": {"x": 1, "y": 2}}}
{"type": "map", "data": {"@n": 5}}
`},
		{"delete_clear_zero",
			`BEGIN { @a["x"] = 1; @a["y"] = 2; delete(@a["x"]); @b["k", 3] = 5; zero(@b); @c[1] = 1; clear(@c); exit(); }`,
			"\n\n@a[y]: 2\n@b[k, 3]: 0\n\n",
			`

{"type": "map", "data": {"@a": {"y": 2}}}
{"type": "map", "data": {"@b": {"k,3": 0}}}
`},
		{"interval_print_clear",
			`interval:ms:50 { @t = @t + 1; @c[@t] = count(); print(@c); clear(@c); if (@t == 3) { exit(); } }`,
			"@c[1]: 1\n@c[2]: 1\n@c[3]: 1\n\n\n\n@t: 3\n",
			`{"type": "map", "data": {"@c": {"1": 1}}}
{"type": "map", "data": {"@c": {"2": 1}}}
{"type": "map", "data": {"@c": {"3": 1}}}


{"type": "map", "data": {"@t": 3}}
`},
		{"interval_print_clear_typed",
			`BEGIN { @t = 0; } interval:ms:50 { @t = @t + 1; @c[@t] = count(); print(@c); clear(@c); if (@t == 3) { exit(); } }`,
			"@c[1]: 1\n@c[2]: 1\n@c[3]: 1\n\n\n\n@t: 3\n", ""},
		{"zero_aggregations",
			`BEGIN { @h = hist(5); @s = stats(4); @c = count(); zero(@h); zero(@s); zero(@c); exit(); }`,
			"\n\n@c: 0\n@h: \n\n@s: count 0, average 0, total 0\n\n",
			`

{"type": "map", "data": {"@c": 0}}
{"type": "hist", "data": {"@h": []}}
{"type": "stats", "data": {"@s": {"count": 0, "average": 0, "total": 0}}}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gt(t, 20*time.Second, "-e", tt.script)
			if r.ExitCode != 0 {
				mismatch(t, "exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
			}
			expectOutput(t, "text output", body(r.Stdout), tt.text)
			if tt.json == "" {
				return
			}
			r = gt(t, 20*time.Second, "-f", "json", "-e", tt.script)
			got := strings.TrimPrefix(r.Stdout, `{"type": "attached_probes", "data": {"probes": 1}}`+"\n")
			if r.ExitCode != 0 {
				mismatch(t, "-f json: exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
			}
			expectOutput(t, "json output", got, tt.json)
		})
	}
}

// TestMapOpsLikeBpftrace runs the map-operation scripts under bpftrace too
// and compares stdout byte for byte.
func TestMapOpsLikeBpftrace(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	scripts := []string{
		`BEGIN { @a["x"] = 1; @a["y"] = 2; print(@a); @n = 5; print(@n); exit(); }`,
		`BEGIN { @a["x"] = 1; @a["y"] = 2; delete(@a["x"]); @b["k", 3] = 5; zero(@b); @c[1] = 1; clear(@c); exit(); }`,
		`BEGIN { @h = hist(5); @s = stats(4); @c = count(); zero(@h); zero(@s); zero(@c); exit(); }`,
		`BEGIN { @h = hist(5); @l = lhist(3, 0, 10, 2); @s = stats(4); @v = avg(3); @m[1, "a"] = max(4); @m[2, "b"] = min(-3); @str = "s"; exit(); }`,
	}
	for i, s := range scripts {
		for _, format := range []string{"text", "json"} {
			t.Run(fmt.Sprintf("%d_%s", i, format), func(t *testing.T) {
				want := testkit.RunBounded(t, 30*time.Second, exec.Command(bt, "-f", format, "-e", s))
				got := gt(t, 20*time.Second, "-f", format, "-e", s)
				if want.ExitCode != got.ExitCode {
					mismatch(t, "exit %d, bpftrace %d; stderr:\n%s", got.ExitCode, want.ExitCode, got.Stderr)
				}
				expectOutput(t, "stdout vs bpftrace", got.Stdout, want.Stdout)
			})
		}
	}
}

// checkBoth traces the reads helper with gotrace — and bpftrace, when it
// is installed (always in CI) — and compares both with want: the literal
// expectation is bpftrace 0.17's output, so a bpftrace mismatch is a bug in
// the test.
func checkBoth(t *testing.T, flags []string, script, want string) {
	t.Helper()
	withBT := testkit.InCI() || testkit.Check(testkit.Bpftrace) == nil
	r := traceHelper(t, withBT, flags, script, "reads", readSizes...)
	if r.gotrace.ExitCode != 0 {
		mismatch(t, "gotrace %q exited %d; stderr:\n%s", flags, r.gotrace.ExitCode, r.gotrace.Stderr)
	}
	expectOutput(t, fmt.Sprintf("gotrace %q output", flags), r.gotrace.Stdout, want)
	if os.Getenv("E2E_DUMP") != "" {
		t.Logf("gotrace %q\nbpftrace %q", r.gotrace.Stdout, r.bpftrace.Stdout)
	}
	if withBT && r.bpftrace.Stdout != want {
		t.Errorf("test bug: bpftrace %q output is not the expected one:\n%s", flags, diffText(want, r.bpftrace.Stdout))
	}
}

// TestCommandOwnExec: -c starts the command stopped before its execve, so
// probes on execve and sched_process_exec see the command's own exec, as
// in bpftrace (which gets the same output).
func TestCommandOwnExec(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	script := `tracepoint:syscalls:sys_enter_execve /pid == cpid/ { printf("execve %s\n", str(args->filename)); }
tracepoint:sched:sched_process_exec /pid == cpid/ { printf("exec %s\n", comm); }`
	want := "execve /usr/bin/true\nexec true\n\n\n"
	r := runCommand(t, script, "/usr/bin/true")
	expectOutput(t, "gotrace stdout", body(r.Stdout), want)
	b := testkit.RunBounded(t, 30*time.Second, exec.Command(bt, "-c", "/usr/bin/true", "-e", script))
	expectOutput(t, "bpftrace stdout", body(b.Stdout), want)
}
