package compiler

import (
	"fmt"
	"sort"
	"strings"
)

// DenyReason says why a kernel function must not be probed, or "". The
// probe handler itself takes these paths (locks, RCU, NMI, the tracing and
// BPF machinery), so probing them recurses or deadlocks: the seed's
// '*spin*' froze the machine.
func DenyReason(fn string) string {
	_, reason := denyRule(fn)
	return reason
}

// denyRule gives the family of kernel code fn belongs to and why it must
// not be probed, or two empty strings.
func denyRule(fn string) (family, reason string) {
	switch {
	case strings.Contains(fn, "spin_lock"), strings.Contains(fn, "spin_unlock"), strings.Contains(fn, "spin_trylock"),
		strings.HasPrefix(fn, "_raw_"), strings.HasPrefix(fn, "queued_spin"), strings.HasPrefix(fn, "native_queued_spin"),
		strings.Contains(fn, "_spin_") && strings.Contains(fn, "lock"):
		return "locking", "spinlock functions are taken by the probe handler itself; probing them can deadlock the machine"
	case strings.HasPrefix(fn, "rcu_") || strings.HasPrefix(fn, "__rcu_"):
		return "RCU", "probe handlers run under RCU; probing RCU itself recurses"
	case strings.Contains(fn, "nmi"):
		return "NMI", "NMI-context functions cannot be probed safely"
	case strings.HasPrefix(fn, "ftrace_") || strings.HasPrefix(fn, "kprobe_") || strings.HasPrefix(fn, "__kprobe") ||
		strings.HasPrefix(fn, "perf_trace_") || strings.HasPrefix(fn, "trace_call_bpf"):
		return "tracing", "part of the tracing machinery that runs the probe"
	case strings.HasPrefix(fn, "bpf_prog_") || strings.HasPrefix(fn, "__bpf_prog_") || strings.HasPrefix(fn, "bpf_dispatcher"):
		return "BPF", "part of the BPF machinery that runs the probe"
	case strings.HasPrefix(fn, "preempt_count") || fn == "preempt_schedule" || strings.HasPrefix(fn, "__preempt"):
		return "preemption", "preemption accounting runs inside every probe"
	}
	return "", ""
}

// DeniedWildcard is the one-line refusal of a kprobe or kfunc wildcard
// (kind:pattern) that matches functions that cannot be traced safely
// (denied, sorted by name, out of total matches): how many, in which
// families (the largest first), one example with its reason, and what to
// do instead. Attaching the rest would leave the user guessing what was
// left out, and the seed's '*spin*' froze the machine.
func DeniedWildcard(kind, pattern string, denied []string, total int) string {
	type family struct {
		name, example, reason string
		n                     int
	}
	byName := map[string]*family{}
	var fams []*family
	for _, f := range denied { // sorted by name: each family's example is its first
		fn, r := denyRule(f)
		fam := byName[fn]
		if fam == nil {
			fam = &family{name: fn, example: f, reason: r}
			byName[fn] = fam
			fams = append(fams, fam)
		}
		fam.n++
	}
	sort.SliceStable(fams, func(i, j int) bool { return fams[i].n > fams[j].n })
	var where string
	if len(fams) == 1 {
		where = "the " + fams[0].name + " code"
	} else {
		parts := make([]string, len(fams))
		for i, f := range fams {
			parts[i] = fmt.Sprintf("%s (%d)", f.name, f.n)
		}
		where = "the " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " code"
	}
	return fmt.Sprintf("refusing %s:%s as a whole: %d of the %d functions it matches are in %s, which cannot be traced safely (e.g. %s: %s); nothing was attached. HINT: narrow the pattern to leave them out, or name the functions to trace",
		kind, pattern, len(denied), total, where, fams[0].example, fams[0].reason)
}

// BpftraceBannedKretprobe reports whether bpftrace itself refuses a
// kretprobe on fn (its banned_kretprobes), which it says as "error:
// kretprobe:FN can't be used as it might lock up your system."; gotrace
// refuses more (denyRule), and these in bpftrace's words.
func BpftraceBannedKretprobe(fn string) bool {
	switch fn {
	case "_raw_spin_lock", "_raw_spin_lock_irqsave", "_raw_spin_unlock_irqrestore", "queued_spin_lock_slowpath":
		return true
	}
	return false
}
