package stdlib

import (
	"github.com/gotrace/gotrace/lang/types"
)

// Builtin variables. Types follow bpftrace 0.17 (`bpftrace -d` prints them):
// the process and time counters are unsigned 64-bit.

func u64Var(name, doc string, helpers ...string) *Builtin {
	return &Builtin{Name: name, Kind: Var, Sig: name, Helpers: helpers, Doc: doc,
		Check: func(Checker, *Call) *types.Type { return types.U64 }}
}

// Kernel-probe families bpftrace names in its argN message.
var argProbes = []string{"kprobe", "uprobe", "usdt"}

var _ = rows(
	u64Var("uid", "user id of the current task", "bpf_get_current_uid_gid"),
	u64Var("gid", "group id of the current task", "bpf_get_current_uid_gid"),
	u64Var("elapsed", "nanoseconds since the tracer started", "bpf_ktime_get_ns"),
	u64Var("cpu", "the CPU the probe fired on", "bpf_get_smp_processor_id"),
	u64Var("rand", "a pseudo-random 32-bit number", "bpf_get_prandom_u32"),
	u64Var("cgroup", "cgroup v2 id of the current task", "bpf_get_current_cgroup_id"),
	u64Var("numaid", "NUMA node of the current CPU", "bpf_get_numa_node_id"),
	u64Var("jiffies", "kernel jiffies counter", "bpf_jiffies64"),
	&Builtin{Name: "cpid", Kind: Var, Sig: "cpid", Doc: "pid of the child started with -c",
		Check: func(c Checker, call *Call) *types.Type {
			if c.NoCpid() {
				c.Errorf(call.Expr, "cpid cannot be used without child command")
			}
			return types.U64
		}},
	&Builtin{Name: "comm", Kind: Var, Sig: "comm([uint32 pid])", MaxArgs: 1, ArgsSince: "0.25",
		Helpers: []string{"bpf_get_current_comm", "bpf_probe_read_kernel"},
		Doc:     "name of the current task (16 bytes); comm(pid): of the task pid (bpftrace 0.25, the kfunc bpf_task_from_pid), \"[Unknown]\" if none",
		Check:   checkComm},
	&Builtin{Name: "username", Kind: Var, Sig: "username", Helpers: []string{"bpf_get_current_uid_gid"},
		Doc:   "user name of the current task (uid resolved in userspace)",
		Check: func(Checker, *Call) *types.Type { return &types.Type{Kind: types.Username, Size: 8} }},
	// ProbeNameLen (below) is the size of `probe` read as a string in BPF.
	&Builtin{Name: "probe", Kind: Var, Sig: "probe", Doc: "full name of the probe that fired",
		Check: func(Checker, *Call) *types.Type { return &types.Type{Kind: types.Probe, Size: 8} }},
	&Builtin{Name: "curtask", Kind: Var, Sig: "curtask", Helpers: []string{"bpf_get_current_task"},
		Doc: "the current task_struct, as struct task_struct *",
		Check: func(c Checker, call *Call) *types.Type {
			t, err := c.LookupType("struct task_struct")
			if err != nil || t == nil {
				// bpftrace still types curtask without BTF; fields fail later.
				t = &types.Type{Kind: types.Record, Name: "struct task_struct", Opaque: true}
			}
			return types.PointerTo(t, types.AddrKernel)
		}},
	&Builtin{Name: "ctx", Kind: Var, Sig: "ctx", Doc: "the probe's context pointer (iter:NAME: struct bpf_iter__NAME *)",
		Check: func(c Checker, call *Call) *types.Type {
			if t := iterCtx(c, call); t != nil {
				return t
			}
			return types.PointerTo(&types.Type{Kind: types.None}, types.AddrKernel)
		}},
	&Builtin{Name: "argN", Kind: Var, Sig: "arg0..argN", Probes: []string{"kprobe", "uprobe", "usdt", "rawtracepoint"},
		Doc: "N-th argument of a kprobe/uprobe/usdt probe, or of a raw tracepoint (its u64 args[N])",
		Check: func(c Checker, call *Call) *types.Type {
			// Raw tracepoints too, as in bpftrace 0.17 (its message names
			// the other three only).
			if !onlyProbes(c, call, []string{"kprobe", "uprobe", "usdt", "rawtracepoint"},
				func(string) string {
					return "The " + call.Name + " builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes"
				}) {
				return types.InvalidType
			}
			return types.U64
		}},
	&Builtin{Name: "sargN", Kind: Var, Sig: "sarg0..sargN", Probes: []string{"kprobe", "uprobe"},
		Doc: "N-th argument passed on the stack (x86-64)",
		Check: func(c Checker, call *Call) *types.Type {
			if !onlyProbes(c, call, []string{"kprobe", "uprobe"},
				func(string) string {
					return "The " + call.Name + " builtin can only be used with 'kprobes' and 'uprobes' probes"
				}) {
				return types.InvalidType
			}
			return types.U64
		}},
	&Builtin{Name: "retval", Kind: Var, Sig: "retval",
		Probes: []string{"kretprobe", "uretprobe", "kretfunc"},
		Doc:    "return value of a kretprobe/uretprobe/kretfunc",
		Check: func(c Checker, call *Call) *types.Type {
			return c.ProbeRetval(call.Expr)
		}},
	&Builtin{Name: "args", Kind: Var, Sig: "args",
		Probes: []string{"tracepoint", "rawtracepoint", "kfunc", "kretfunc", "uprobe", "uretprobe"},
		Doc:    "the probe's typed arguments (tracepoint fields, kfunc/uprobe parameters)",
		Check: func(c Checker, call *Call) *types.Type {
			return c.ProbeArgs(call.Expr)
		}},
	&Builtin{Name: "func", Kind: Var, Sig: "func",
		Probes:  []string{"kprobe", "kretprobe", "uprobe", "uretprobe", "kfunc", "kretfunc"},
		Helpers: []string{"bpf_get_func_ip"},
		Doc:     "name of the traced function",
		Check: func(c Checker, call *Call) *types.Type {
			user := false
			for _, p := range c.Providers() {
				switch p {
				case "kprobe", "kretprobe", "kfunc", "kretfunc":
				case "uprobe", "uretprobe":
					user = true
				default:
					c.Errorf(call.Expr, "The func builtin can not be used with '%s' probes", p)
					return types.InvalidType
				}
			}
			if user {
				return &types.Type{Kind: types.Usym, Size: 16}
			}
			return &types.Type{Kind: types.Ksym, Size: 8}
		}},
)

// StackType is the type of a kstack/ustack value.
func StackType(user bool, mode types.StackMode, limit int) *types.Type {
	return &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: user, Mode: mode, Limit: limit}}
}

// ProbeNameLen is the size of the `probe` builtin read as a string in BPF
// (strcontains(probe, ...)): the probe table's names are kept in an array
// map of values this long (compiler.MapProbeNames), longer names cut.
const ProbeNameLen = 128

// ProbeNamesMax is the number of names that map holds: the compile-time
// names and each expanded probe's (at most max_probes, 1024 by default).
const ProbeNamesMax = 4096
