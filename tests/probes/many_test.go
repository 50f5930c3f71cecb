package probes_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/internal/testkit"
)

var attachingRE = regexp.MustCompile(`Attaching (\d+) probes?\.\.\.`)

func attachedCount(t *testing.T, out string) int {
	t.Helper()
	m := attachingRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"Attaching N probes...\" line in:\n%s", out)
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// TestLibcWildcard: uprobe:libc:* (over 2,000 functions) attaches, counts
// a workload and detaches cleanly, even with 64 file descriptors allowed
// (uprobe_multi: one link per binary, not one fd per function). The
// attach and detach times are logged.
func TestLibcWildcard(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	const calls = 5000
	h := testkit.StartHelper(t, "getpid", strconv.Itoa(calls))
	start := time.Now()
	// ulimit -n 64 through the shell: far fewer fds than probes.
	tr := testkit.StartTracer(t, 120*time.Second, "/bin/sh", "-c",
		fmt.Sprintf(`ulimit -n 64 && GOTRACE_MAX_PROBES=10000 exec %s -p %d -e 'uprobe:libc:* { @ = count(); } uprobe:libc:syscall { @s = count(); }'`, testkit.Gotrace(t), h.Pid))
	attach := time.Since(start)
	h.Go()
	if r := h.Wait(60 * time.Second); r.ExitCode != 0 {
		t.Fatalf("helper: exit %d: %s", r.ExitCode, r.Stderr)
	}
	start = time.Now()
	r := tr.Stop(syscall.SIGINT, 60*time.Second)
	detach := time.Since(start)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	probes := attachedCount(t, r.Stdout)
	if probes < 1001 {
		t.Errorf("attached %d probes, want over 1,000 libc functions", probes)
	}
	if strings.Contains(r.Stderr, "too many open files") || strings.Contains(r.Stderr, "Too many open files") {
		t.Errorf("fd exhaustion:\n%s", r.Stderr)
	}
	var total, sc int
	for _, l := range strings.Split(r.Stdout, "\n") {
		fmt.Sscanf(l, "@: %d", &total)
		fmt.Sscanf(l, "@s: %d", &sc)
	}
	// Each syscall(2) call of the loop is one libc function call at least.
	if sc != calls || total < calls {
		t.Errorf("@s = %d (want %d), @ = %d (want >= %d)\n%s", sc, calls, total, calls, r.Stdout)
	}
	t.Logf("uprobe:libc:* : %d probes attached in %v (process start to attached), detached and exited in %v after SIGINT; %d libc calls counted",
		probes, attach.Round(time.Millisecond), detach.Round(time.Millisecond), total)
}

// TestMaxProbes: exceeding the probe limit is one error, before anything
// is attached.
func TestMaxProbes(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	r := gt(t, 60*time.Second, []string{"GOTRACE_MAX_PROBES=10"}, "-e", `tracepoint:syscalls:sys_enter_* { @ = count(); }`)
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if r.ExitCode == 0 || !regexp.MustCompile(`^ERROR: Can't attach to \d+ probes because it exceeds the current limit of 10 probes\.$`).MatchString(lines[0]) {
		t.Errorf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	if len(lines) > 2 || strings.Contains(r.Stdout, "Attaching") {
		t.Errorf("more than the one limit error:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	// Without a limit override uprobe:libc:* is refused the same way.
	r = gt(t, 60*time.Second, nil, "-e", `uprobe:libc:* { @ = count(); }`)
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "exceeds the current limit of 512 probes") || strings.Count(r.Stderr, "ERROR") != 1 {
		t.Errorf("uprobe:libc:* without GOTRACE_MAX_PROBES: exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
}

// TestSeedCases: the seed's funccount '*' and '*spin*' on kprobes (and
// kfunc) give one
// clear error each, never a flood of per-probe errors, and attach nothing:
// a wildcard matching functions that cannot be traced safely is refused as
// a whole, naming how many matched, their families and one reason; one
// such function by name is refused with its reason.
func TestSeedCases(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	const spinlock = "spinlock functions are taken by the probe handler itself; probing them can deadlock the machine"
	const hint = "; nothing was attached. HINT: narrow the pattern to leave them out, or name the functions to trace"
	// FAMILIES: "the locking code", or "the tracing (997), ..., locking (55) and BPF (1) code".
	const families = `the \w+(?: \(\d+\))?(?:, \w+ \(\d+\))*(?: and \w+ \(\d+\))? code`
	for _, tc := range []struct {
		script string
		want   string // the whole of stderr, a regexp
	}{
		{`kprobe:* { @[probe] = count(); }`,
			`stdin:1:1-9: ERROR: refusing kprobe:\* as a whole: (\d+) of the (\d+) functions it matches are in ` + families +
				`, which cannot be traced safely \(e\.g\. \S+: [^()]+\)` + regexp.QuoteMeta(hint) + "\n" +
				regexp.QuoteMeta("kprobe:* { @[probe] = count(); }") + "\n~{8}\n"},
		{`kprobe:*spin* { @[probe] = count(); }`,
			`stdin:1:1-14: ERROR: refusing kprobe:\*spin\* as a whole: (\d+) of the (\d+) functions it matches are in ` + families +
				`, which cannot be traced safely \(e\.g\. \S+: ` + regexp.QuoteMeta(spinlock) + `\)` + regexp.QuoteMeta(hint) + "\n" +
				regexp.QuoteMeta("kprobe:*spin* { @[probe] = count(); }") + "\n~{13}\n"},
		{`kretprobe:*spin* { @[probe] = count(); }`,
			`stdin:1:1-17: ERROR: refusing kretprobe:\*spin\* as a whole: (\d+) of the (\d+) functions it matches are in ` + families +
				`, which cannot be traced safely \(e\.g\. \S+: ` + regexp.QuoteMeta(spinlock) + `\)` + regexp.QuoteMeta(hint) + "\n" +
				regexp.QuoteMeta("kretprobe:*spin* { @[probe] = count(); }") + "\n~{16}\n"},
		// kfunc wildcards too (fentry on a spinlock recurses as well).
		{`kfunc:*spin* { @[probe] = count(); }`,
			`stdin:1:1-13: ERROR: refusing kfunc:\*spin\* as a whole: (\d+) of the (\d+) functions it matches are in ` + families +
				`, which cannot be traced safely \(e\.g\. \S+: ` + regexp.QuoteMeta(spinlock) + `\)` + regexp.QuoteMeta(hint) + "\n" +
				regexp.QuoteMeta("kfunc:*spin* { @[probe] = count(); }") + "\n~{12}\n"},
		{`kprobe:_raw_spin_lock { @ = count(); }`,
			regexp.QuoteMeta("stdin:1:1-22: ERROR: refusing to trace _raw_spin_lock: " + spinlock + "\n" +
				"kprobe:_raw_spin_lock { @ = count(); }\n" + strings.Repeat("~", 21) + "\n")},
		{`kprobe:rcu_note_context_switch { @ = count(); }`,
			regexp.QuoteMeta("stdin:1:1-31: ERROR: refusing to trace rcu_note_context_switch: probe handlers run under RCU; probing RCU itself recurses\n" +
				"kprobe:rcu_note_context_switch { @ = count(); }\n" + strings.Repeat("~", 30) + "\n")},
	} {
		t.Run(tc.script, func(t *testing.T) {
			r := gt(t, 120*time.Second, nil, "-e", tc.script)
			if r.ExitCode != 1 {
				t.Errorf("exit %d, want 1:\n%s", r.ExitCode, r.Stdout)
			}
			m := regexp.MustCompile("^" + tc.want + "$").FindStringSubmatch(r.Stderr)
			if m == nil {
				t.Errorf("stderr:\n%s\nwant (regexp):\n%s", r.Stderr, tc.want)
			} else if len(m) == 3 {
				// Some, not all, of the matches are unsafe.
				unsafe, total := atoi(t, m[1]), atoi(t, m[2])
				if unsafe < 1 || unsafe >= total {
					t.Errorf("%d unsafe of %d matches", unsafe, total)
				}
			}
			if r.Stdout != "" {
				t.Errorf("stdout (attached something?):\n%s", r.Stdout)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFDLimit: a plan that needs more file descriptors than RLIMIT_NOFILE
// allows fails before anything is attached, with one error naming the
// probes and the limit (hundreds of perf-event tracepoints under a hard
// limit of 256); a low soft limit alone is raised to the hard one.
func TestFDLimit(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	env := "GOTRACE_MAX_PROBES=1000 GOTRACE_SYSCALL_TRACEPOINTS=perf"
	run := func(limit, script string) testkit.Result {
		cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf(`%s && %s exec %s -e '%s'`, limit, env, testkit.Gotrace(t), script))
		return testkit.RunBounded(t, 120*time.Second, cmd)
	}
	r := run("ulimit -n 256", `tracepoint:syscalls:sys_enter_* { @ = count(); } interval:ms:300 { exit(); }`)
	want := regexp.MustCompile(`^ERROR: Can't attach to (\d+) probes: they need (\d+) file descriptors and \d+ are open already, more than the open files limit of 256 \(RLIMIT_NOFILE, hard limit 256\)\.\n` +
		`Raise the limit with ulimit -n, or trace fewer probes\.\n$`)
	m := want.FindStringSubmatch(r.Stderr)
	if r.ExitCode != 1 || m == nil {
		t.Fatalf("ulimit -n 256: exit %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	// A perf event and a link per sys_enter tracepoint, plus the interval's.
	if probes, fds := atoi(t, m[1]), atoi(t, m[2]); probes < 300 || fds != 2*probes {
		t.Errorf("%d probes need %d descriptors, want %d", probes, fds, 2*probes)
	}
	if r.Stdout != "" {
		t.Errorf("stdout (attached something?):\n%s", r.Stdout)
	}
	// About 30 tracepoints: more descriptors than the soft limit of 64.
	r = run("ulimit -S -n 64", `tracepoint:syscalls:sys_enter_get* { @ = count(); } interval:ms:300 { exit(); }`)
	if r.ExitCode != 0 || !regexp.MustCompile(`(?m)^@: \d+$`).MatchString(r.Stdout) || r.Stderr != "" {
		t.Errorf("ulimit -S -n 64: exit %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
}

// TestSysEnterAll: tracepoint:syscalls:sys_enter_* (hundreds of
// tracepoints) attaches and detaches in bounded time; times are logged.
// Against bpftrace (about 27-30 s to detach here) with GOTRACE_COMPARE=1.
func TestSysEnterAll(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	script := `tracepoint:syscalls:sys_enter_* { @ = count(); }`
	measure := func(name string, argv ...string) (int, time.Duration, time.Duration) {
		pre := linkIDs(t) // other links of the machine, not waited for
		start := time.Now()
		tr := testkit.StartTracer(t, 180*time.Second, argv[0], argv[1:]...)
		attach := time.Since(start)
		time.Sleep(500 * time.Millisecond)
		before := linkIDs(t)
		for id := range pre {
			delete(before, id)
		}
		start = time.Now()
		r := tr.Stop(syscall.SIGINT, 180*time.Second)
		detach := time.Since(start)
		if r.TimedOut {
			t.Fatalf("%s did not exit after SIGINT within 180s", name)
		}
		// The kernel may still be releasing links the tracer dropped:
		// wait for every link that was alive before the stop to go.
		var left []uint32
		for id := range before {
			left = append(left, id)
		}
		for len(left) > 0 && time.Since(start) < 120*time.Second {
			now := linkIDs(t)
			left = left[:0]
			for id := range before {
				if now[id] {
					left = append(left, id)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(left) > 0 {
			t.Errorf("%s: %d of its links still alive 120 s after SIGINT", name, len(left))
		}
		t.Logf("%s: the kernel released its %d links %v after SIGINT", name, len(before), time.Since(start).Round(10*time.Millisecond))
		if !regexp.MustCompile(`(?m)^@: \d+$`).MatchString(r.Stdout) {
			t.Errorf("%s printed no count:\n%s\n%s", name, r.Stdout, r.Stderr)
		}
		return attachedCount(t, r.Stdout), attach, detach
	}
	// By default one raw sys_enter program serves them all
	// (compiler/syscalls.go); the perf tracepoints are the fallback.
	for _, mode := range []string{"raw", "perf"} {
		n, a, d := measure("gotrace "+mode, "/usr/bin/env", "GOTRACE_MAX_PROBES=1000", "GOTRACE_SYSCALL_TRACEPOINTS="+mode, testkit.Gotrace(t), "-e", script)
		t.Logf("gotrace %s: %d tracepoints attached in %v, detached and exited in %v", mode, n, a.Round(time.Millisecond), d.Round(time.Millisecond))
		if n < 300 {
			t.Errorf("%s: attached %d sys_enter tracepoints, want hundreds", mode, n)
		}
		if d > 10*time.Second {
			t.Errorf("%s: detaching %d tracepoints took %v, want well under bpftrace's ~27 s", mode, n, d)
		}
	}
	if os.Getenv("GOTRACE_COMPARE") == "1" {
		testkit.Require(t, testkit.Bpftrace)
		bn, ba, bd := measure("bpftrace", "/bin/sh", "-c", `ulimit -l unlimited 2>/dev/null; BPFTRACE_MAX_PROBES=1000 exec bpftrace -e "$0"`, script)
		t.Logf("bpftrace: %d tracepoints attached in %v, detached and exited in %v", bn, ba.Round(time.Millisecond), bd.Round(time.Millisecond))
	}
}

// linkIDs are the BPF links alive now (the tracer's and the machine's).
func linkIDs(t *testing.T) map[uint32]bool {
	out := map[uint32]bool{}
	var it link.Iterator
	for it.Next() {
		out[uint32(it.ID)] = true
	}
	if err := it.Err(); err != nil {
		t.Fatalf("listing BPF links: %v", err)
	}
	return out
}
