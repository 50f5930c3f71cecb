package stacks_test

import (
	"strings"
	"testing"
)

// TestStackLossesWarned forces stack losses on the real kernel:
// GOTRACE_STACK_MAP_ENTRIES=1 makes each stack map hold one stack.
// The uchain helper runs 1000 iterations; each takes chain_a's ustack,
// then target's. The first (chain_a's) fills the map, so every one of
// the 1000 target stacks fails (-E2BIG): they count under the empty
// key ("@[]: 1000", as bpftrace prints a failed stack) and gotrace warns at
// exit with the exact number. With the default map the same script loses
// nothing and warns nothing: it prints both stacks. (The helper is gone
// when the maps print; its frames still resolve, from the probed binary,
// where bpftrace prints them as bare addresses; the innermost is the
// probed function's.)
func TestStackLossesWarned(t *testing.T) {
	requireTracing(t)
	chainA, target := "@[\n    chain_a+0\n", "@[\n    target+0\n"
	script := `uprobe:BIN:chain_a /pid == PID/ { @[ustack] = count(); }
uprobe:BIN:target /pid == PID/ { @[ustack] = count(); @t++; if (@t == 1000) { exit(); } }`

	_, o := traceHelper(t, false, false, script, "uchain", "1000")
	if strings.Contains(o.gtErr, "WARNING") {
		t.Errorf("default stack map: unexpected warning:\n%s", o.gtErr)
	}
	es := mapEntries(o.gt, "@")
	if len(es) != 2 || !(strings.HasPrefix(es[0], chainA) && strings.HasPrefix(es[1], target) ||
		strings.HasPrefix(es[1], chainA) && strings.HasPrefix(es[0], target)) {
		t.Errorf("default stack map: want chain_a's and target's stacks, got:\n%s", o.gt)
	}

	t.Setenv("GOTRACE_STACK_MAP_ENTRIES", "1")
	_, o = traceHelper(t, false, false, script, "uchain", "1000")
	const warn = "WARNING: 1000 stack traces lost: stack map full (raise GOTRACE_STACK_MAP_ENTRIES, default 4096)\n"
	if !strings.Contains(o.gtErr, warn) || strings.Count(o.gtErr, "WARNING") != 1 {
		t.Errorf("one-entry stack map: stderr:\n%s\nwant exactly the warning %q", o.gtErr, warn)
	}
	if !strings.Contains(o.gt, "\n@[]: 1000\n") || !strings.Contains(o.gt, "\n"+chainA) ||
		strings.Contains(o.gt, target) || !strings.Contains(o.gt, "\n@t: 1000\n") {
		t.Errorf("one-entry stack map: want chain_a's stack, @[]: 1000 (target's, lost) and @t: 1000, got:\n%s", o.gt)
	}
}
