package stacks_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
)

// Stacks with different frame limits in one script each have their own
// stack map (compiler/ABI.md), so neither is cut to the other's limit,
// whichever comes first in the script.

// TestKstackLimitsOneScript: kstack(3) then kstack at one tracepoint: @ is
// the 3 innermost frames, @b the whole stack down to the syscall entry,
// as bpftrace prints them.
func TestKstackLimitsOneScript(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { @[kstack(3)] = count(); @b[kstack] = count(); }
interval:ms:400 { exit(); }`, "getpid", "1000000000")
	short, full := mapEntries(o.gt, "@"), mapEntries(o.gt, "@b")
	if len(short) != 1 || len(full) != 1 {
		t.Fatalf("want one @ and one @b stack, got:\n%s", o.gt)
	}
	s, f := stackFrames(t, short[0]), stackFrames(t, full[0])
	if len(f) <= 3 || f[len(f)-1] != "entry_SYSCALL_64_after_hwframe" {
		t.Errorf("kstack after kstack(3) = %v, want the whole stack down to the syscall entry", f)
	}
	if len(f) < 3 || strings.Join(s, " ") != strings.Join(f[:3], " ") {
		t.Errorf("kstack(3) = %v, want the 3 innermost frames of %v", s, f)
	}
	sameEntries(t, o)
}

// TestUstackLimitsOneScript: ustack(perf, 2), ustack(bpftrace, 5) and
// ustack at the ufunc helper's target: 2, up to 5 and all frames of the
// same stack (target, chain_a, main, libc's start code), as bpftrace.
func TestUstackLimitsOneScript(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `uprobe:BIN:target /pid == PID/ { @[ustack(perf, 2)] = count(); @b[ustack(bpftrace, 5)] = count(); @c[ustack] = count(); @d[ustack(2)] = count(); }
interval:ms:400 { exit(); }`, "ufunc", "100000000000")
	two, five, full, two2 := mapEntries(o.gt, "@"), mapEntries(o.gt, "@b"), mapEntries(o.gt, "@c"), mapEntries(o.gt, "@d")
	if len(two) != 1 || len(five) != 1 || len(full) != 1 || len(two2) != 1 {
		t.Fatalf("want one stack in each map, got:\n%s", o.gt)
	}
	all := stackFrames(t, full[0])
	if len(all) < 4 || all[0] != "target" || all[1] != "chain_a" || all[2] != "main" {
		t.Fatalf("ustack = %v, want target, chain_a, main, then libc's start code", all)
	}
	if got := stackFrames(t, five[0]); strings.Join(got, " ") != strings.Join(all[:min(5, len(all))], " ") {
		t.Errorf("ustack(bpftrace, 5) = %v, want %v", got, all[:min(5, len(all))])
	}
	if got := stackFrames(t, two2[0]); strings.Join(got, " ") != "target chain_a" {
		t.Errorf("ustack(2) = %v, want [target chain_a]", got)
	}
	bin := regexp.QuoteMeta(testkit.Helper(t, "ufunc"))
	want := regexp.MustCompile(`^@\[\n\t[0-9a-f]+ target\+0 \(` + bin + `\)\n\t[0-9a-f]+ chain_a\+[0-9]+ \(` + bin + `\)\n\]: N$`)
	if !want.MatchString(two[0]) {
		t.Errorf("ustack(perf, 2):\n%s\nwant to match %s", two[0], want)
	}
	sameEntries(t, o)
}

// TestProfileKstackMerge: kstack(perf, 2) keys are stack ids of the 2
// innermost frames only, so profile samples of different stacks that share
// them count under one key: @'s keys are exactly the distinct 2-frame
// prefixes of @b's full stacks, each printed once, with the sum of their
// counts — whichever of the two stacks the script takes first.
func TestProfileKstackMerge(t *testing.T) {
	requireTracing(t)
	for _, c := range []struct{ name, body string }{
		{"short-first", `@[kstack(perf, 2)] = count(); @b[kstack(perf)] = count();`},
		{"full-first", `@b[kstack(perf)] = count(); @[kstack(perf, 2)] = count();`},
	} {
		body := c.body
		t.Run(c.name, func(t *testing.T) {
			_, o := traceHelper(t, false, true, `profile:hz:997 /pid == PID/ { `+body+` }
interval:ms:600 { exit(); }`, "getpid", "1000000000")
			checkMerged(t, o)
		})
	}
}

func checkMerged(t *testing.T, o outputs) {
	t.Helper()
	short, full := counted(t, o.gt, "@"), counted(t, o.gt, "@b")
	if len(full) == 0 {
		t.Fatalf("no profile samples:\n%s", o.gt)
	}
	sums := map[string]uint64{}
	deeper := false
	for stack, n := range full {
		lines := strings.Split(stack, "\n")
		deeper = deeper || len(lines) > 2
		if len(lines) > 2 {
			lines = lines[:2]
		}
		sums[strings.Join(lines, "\n")] += n
	}
	if !deeper {
		t.Errorf("no @b stack has more than 2 frames:\n%s", o.gt)
	}
	// A stack lost to a hash collision in one map (gotrace warns) is
	// counted in the other only: then compare the keys only.
	lost := strings.Contains(o.gtErr, "stack traces lost")
	for prefix, n := range sums {
		m, ok := short[prefix]
		switch {
		case !ok && !lost:
			t.Errorf("@b stacks starting with\n%s\nhave no @ key", prefix)
		case ok && m != n && !lost:
			t.Errorf("@ key\n%s\ncounts %d, the @b stacks it starts %d", prefix, m, n)
		}
	}
	for prefix := range short {
		if _, ok := sums[prefix]; !ok && !lost {
			t.Errorf("@ key\n%s\nstarts no @b stack", prefix)
		}
	}
	if t.Failed() {
		t.Logf("gotrace:\n%s\nstderr:\n%s", o.gt, o.gtErr)
	}
}

// counted parses map name's entries with perf-mode stack keys: the stack
// text (frames joined by newlines) → count. A key printed twice fails.
func counted(t *testing.T, out, name string) map[string]uint64 {
	t.Helper()
	entryRE := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\[\n((?:\t[^\n]*\n)*)\]: ([0-9]+)$`)
	m := map[string]uint64{}
	for _, e := range entryRE.FindAllStringSubmatch(out, -1) {
		stack := strings.TrimSuffix(e[1], "\n")
		if _, dup := m[stack]; dup {
			t.Errorf("%s key printed twice:\n%s", name, stack)
		}
		n, _ := strconv.ParseUint(e[2], 10, 64)
		m[stack] = n
	}
	return m
}
