package stacks_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// abcFrameRE is a frame of the ustacks helper's a_X, b_Y or c_Z, in any
// stack mode's text ("    c_3+9", with or without a source line).
var abcFrameRE = regexp.MustCompile(`(?m)^\s+(?:[0-9a-f]+ )?([abc])_([0-9]+)\+`)

// ustacksKeys maps each printed stack of @ to the call k it was taken in
// (k's hex digits are its a_X, b_Y and c_Z frames), failing on a stack
// without them or printed twice.
func ustacksKeys(t *testing.T, out string) map[int]bool {
	t.Helper()
	got := map[int]bool{}
	for _, e := range mapEntries(out, "@") {
		if e == "@[]: N" {
			continue // the lost ones
		}
		digits := map[string]int{}
		for _, m := range abcFrameRE.FindAllStringSubmatch(e, -1) {
			d, _ := strconv.Atoi(m[2])
			digits[m[1]] = d
		}
		if len(digits) != 3 {
			t.Fatalf("stack without its a_X, b_Y, c_Z frames:\n%s", e)
		}
		k := digits["a"]<<8 | digits["b"]<<4 | digits["c"]
		if got[k] {
			t.Fatalf("stack of call %d printed twice:\n%s", k, e)
		}
		got[k] = true
	}
	return got
}

// TestDistinctUserStacksKept: 2,000 distinct user stacks (the ustacks
// helper: one call each through a_X -> b_Y -> c_Z) are all printed, each
// counted once, with no warning. Stacks are stored by their content's
// hash (ABI.md): bpf_get_stackid's STACK_TRACE map of 4096 buckets lost
// about a fifth of them to bucket collisions (-EEXIST; 405 here). With
// GOTRACE_STACK_MAP_ENTRIES=1500 the map holds 1,500 stacks: those are
// printed, the other 500 count under @[] and are warned about.
func TestDistinctUserStacksKept(t *testing.T) {
	requireTracing(t)
	const n = 2000
	script := fmt.Sprintf(`uprobe:BIN:leaf /pid == PID/ { @[ustack] = count(); @n++; if (@n == %d) { exit(); } }`, n)
	_, o := traceHelper(t, false, false, script, "ustacks", strconv.Itoa(n))
	if strings.Contains(o.gtErr, "WARNING") {
		t.Errorf("unexpected warning:\n%s", o.gtErr)
	}
	if !strings.Contains(o.gt, fmt.Sprintf("\n@n: %d\n", n)) {
		t.Fatalf("want @n: %d, got:\n%.2000s", n, o.gt)
	}
	got := ustacksKeys(t, o.gt)
	var missing []int
	for k := 0; k < n; k++ {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 || len(got) != n {
		t.Errorf("%d distinct stacks printed, want %d; missing calls %v", len(got), n, missing[:min(len(missing), 20)])
	}
	if c := strings.Count(o.gt, "\n]: 1\n"); c != n {
		t.Errorf("%d stacks counted 1, want %d", c, n)
	}

	t.Setenv("GOTRACE_STACK_MAP_ENTRIES", "1500")
	_, o = traceHelper(t, false, false, script, "ustacks", strconv.Itoa(n))
	const warn = "WARNING: 500 stack traces lost: stack map full (raise GOTRACE_STACK_MAP_ENTRIES, default 4096)\n"
	if !strings.Contains(o.gtErr, warn) || strings.Count(o.gtErr, "WARNING") != 1 {
		t.Errorf("1500-entry stack map: stderr:\n%s\nwant exactly the warning %q", o.gtErr, warn)
	}
	if !strings.Contains(o.gt, "\n@[]: 500\n") {
		t.Errorf("1500-entry stack map: want @[]: 500 (the lost stacks), got:\n%.2000s", o.gt)
	}
	if got := ustacksKeys(t, o.gt); len(got) != 1500 {
		t.Errorf("1500-entry stack map: %d distinct stacks printed, want 1500", len(got))
	}
}
