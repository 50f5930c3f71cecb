package compiler

import "strings"

// DenyReason says why a kernel function must not be probed, or "". The
// probe handler itself takes these paths (locks, RCU, NMI, the tracing and
// BPF machinery), so probing them recurses or deadlocks: the seed's
// '*spin*' froze the machine.
func DenyReason(fn string) string {
	switch {
	case strings.Contains(fn, "spin_lock"), strings.Contains(fn, "spin_unlock"), strings.Contains(fn, "spin_trylock"),
		strings.HasPrefix(fn, "_raw_"), strings.HasPrefix(fn, "queued_spin"), strings.HasPrefix(fn, "native_queued_spin"),
		strings.Contains(fn, "_spin_") && strings.Contains(fn, "lock"):
		return "spinlock functions are taken by the probe handler itself; probing them can deadlock the machine"
	case strings.HasPrefix(fn, "rcu_") || strings.HasPrefix(fn, "__rcu_"):
		return "probe handlers run under RCU; probing RCU itself recurses"
	case strings.Contains(fn, "nmi"):
		return "NMI-context functions cannot be probed safely"
	case strings.HasPrefix(fn, "ftrace_") || strings.HasPrefix(fn, "kprobe_") || strings.HasPrefix(fn, "__kprobe") ||
		strings.HasPrefix(fn, "perf_trace_") || strings.HasPrefix(fn, "trace_call_bpf"):
		return "part of the tracing machinery that runs the probe"
	case strings.HasPrefix(fn, "bpf_prog_") || strings.HasPrefix(fn, "__bpf_prog_") || strings.HasPrefix(fn, "bpf_dispatcher"):
		return "part of the BPF machinery that runs the probe"
	case strings.HasPrefix(fn, "preempt_count") || fn == "preempt_schedule" || strings.HasPrefix(fn, "__preempt"):
		return "preemption accounting runs inside every probe"
	}
	return ""
}
