package compiler

import (
	"strings"
	"testing"
)

// TestDenyFamilies: each deny-list rule names its family.
func TestDenyFamilies(t *testing.T) {
	for fn, fam := range map[string]string{
		"_raw_spin_lock": "locking", "queued_spin_lock_slowpath": "locking", "rcu_read_unlock_special": "RCU",
		"default_do_nmi": "NMI", "ftrace_ops_list_func": "tracing", "kprobe_ftrace_handler": "tracing",
		"bpf_prog_run_array": "BPF", "preempt_count_add": "preemption",
	} {
		got, r := denyRule(fn)
		if got != fam || r == "" || r != DenyReason(fn) {
			t.Errorf("%s: family %q reason %q, want family %q", fn, got, r, fam)
		}
	}
}

// TestDeniedWildcard: the refusal names the families, largest first, and
// the first denied function of the largest as the example.
func TestDeniedWildcard(t *testing.T) {
	got := DeniedWildcard("kfunc", "*spin*", []string{"__raw_spin_lock_x", "_raw_spin_lock", "rcu_read_unlock_special"}, 10)
	want := "refusing kfunc:*spin* as a whole: 3 of the 10 functions it matches are in the locking (2) and RCU (1) code, which cannot be traced safely (e.g. __raw_spin_lock_x: "
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "; nothing was attached. HINT: narrow the pattern to leave them out, or name the functions to trace") {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
}
