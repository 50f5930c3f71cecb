package stdlib

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Builtin variables. Types follow bpftrace 0.17 (`bpftrace -d` prints them):
// the process and time counters are unsigned 64-bit.

func u64Var(name string, gen GenFunc, doc string, helpers ...string) *Builtin {
	return &Builtin{Name: name, Gen: gen, Kind: Var, Flags: Token, Sig: name, Helpers: helpers, Doc: doc,
		Check: func(Checker, *Call) *types.Type { return types.U64 }}
}

func varRows() []*Builtin {
	return []*Builtin{
		u64Var("uid", genHalf(asm.FnGetCurrentUidGid, 0), "user id of the current task", "bpf_get_current_uid_gid"),
		u64Var("gid", genHalf(asm.FnGetCurrentUidGid, 32), "group id of the current task", "bpf_get_current_uid_gid"),
		u64Var("elapsed", genElapsed, "nanoseconds since the tracer started", "bpf_ktime_get_ns"),
		u64Var("cpu", genHelper(asm.FnGetSmpProcessorId), "the CPU the probe fired on", "bpf_get_smp_processor_id"),
		u64Var("rand", genHelper(asm.FnGetPrandomU32), "a pseudo-random 32-bit number", "bpf_get_prandom_u32"),
		u64Var("cgroup", genHelper(asm.FnGetCurrentCgroupId), "cgroup v2 id of the current task", "bpf_get_current_cgroup_id"),
		u64Var("numaid", genHelper(asm.FnGetNumaNodeId), "NUMA node of the current CPU", "bpf_get_numa_node_id"),
		u64Var("jiffies", genHelper(asm.FnJiffies64), "kernel jiffies counter", "bpf_jiffies64"),
		&Builtin{Name: "cpid", Gen: genCpid, Kind: Var, Flags: Token, Sig: "cpid", Doc: "pid of the child started with -c",
			Check: func(c Checker, call *Call) *types.Type {
				if c.NoCpid() {
					c.Errorf(call.Expr, "cpid cannot be used without child command")
				}
				return types.U64
			}},
		&Builtin{Name: "comm", Gen: genComm, Kind: Var, Flags: Token, Sig: "comm([uint32 pid])", MaxArgs: 1, ArgsSince: "0.25",
			Helpers: []string{"bpf_get_current_comm", "bpf_probe_read_kernel"},
			Doc:     "name of the current task (16 bytes); comm(pid): of the task pid (bpftrace 0.25, the kfunc bpf_task_from_pid), \"[Unknown]\" if none",
			Check:   checkComm},
		&Builtin{Name: "username", Gen: genHalf(asm.FnGetCurrentUidGid, 0), Kind: Var, Flags: Token, Sig: "username", Helpers: []string{"bpf_get_current_uid_gid"},
			Doc:   "user name of the current task (uid resolved in userspace)",
			Check: func(Checker, *Call) *types.Type { return &types.Type{Kind: types.Username, Size: 8} }},
		// ProbeNameLen (below) is the size of `probe` read as a string in BPF.
		&Builtin{Name: "probe", Gen: genProbe, Kind: Var, Flags: Token, Sig: "probe", Doc: "full name of the probe that fired",
			Check: func(Checker, *Call) *types.Type { return &types.Type{Kind: types.Probe, Size: 8} }},
		&Builtin{Name: "curtask", Gen: genHelper(asm.FnGetCurrentTask), Kind: Var, Flags: Token, Sig: "curtask", Helpers: []string{"bpf_get_current_task"},
			Doc: "the current task_struct, as struct task_struct *",
			Check: func(c Checker, call *Call) *types.Type {
				t, err := c.LookupType("struct task_struct")
				if err != nil || t == nil {
					// bpftrace still types curtask without BTF; fields fail later.
					t = &types.Type{Kind: types.Record, Name: "struct task_struct", Opaque: true}
				}
				return types.PointerTo(t, types.AddrKernel)
			}},
		&Builtin{Name: "ctx", Gen: genCtx, Kind: Var, Flags: Token, Sig: "ctx", Doc: "the probe's context pointer (iter:NAME: struct bpf_iter__NAME *)",
			Check: func(c Checker, call *Call) *types.Type {
				if t := iterCtx(c, call); t != nil {
					return t
				}
				return types.PointerTo(&types.Type{Kind: types.None}, types.AddrKernel)
			}},
		&Builtin{Name: "argN", Gen: genArg, Kind: Var, Flags: Token, Sig: "arg0..argN", Probes: []lang.ProbeKind{lang.ProbeKprobe, lang.ProbeUprobe, lang.ProbeUSDT, lang.ProbeRawTracepoint},
			Doc: "N-th argument of a kprobe/uprobe/usdt probe, or of a raw tracepoint (its u64 args[N])",
			// Raw tracepoints too, as in bpftrace 0.17 (its message names
			// the other three only).
			ProbeError: func(_ Checker, call *Call, _ string) string {
				return "The " + call.Name + " builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes"
			},
			Check: fixed(types.U64)},
		&Builtin{Name: "sargN", Gen: genSarg, Kind: Var, Flags: Token, Sig: "sarg0..sargN", Probes: []lang.ProbeKind{lang.ProbeKprobe, lang.ProbeUprobe},
			Doc: "N-th argument passed on the stack (x86-64)",
			ProbeError: func(_ Checker, call *Call, _ string) string {
				return "The " + call.Name + " builtin can only be used with 'kprobes' and 'uprobes' probes"
			},
			Check: fixed(types.U64)},
		&Builtin{Name: "retval", Gen: genRetval, Kind: Var, Flags: Token | ProbeOnce, Sig: "retval",
			Probes: []lang.ProbeKind{lang.ProbeKretprobe, lang.ProbeUretprobe, lang.ProbeKretfunc},
			Doc:    "return value of a kretprobe/uretprobe/kretfunc",
			ProbeError: func(_ Checker, _ *Call, p string) string {
				msg := "The retval builtin can only be used with 'kretprobe' and 'uretprobe' and 'kfunc' probes"
				if lang.ProbeKindNamed(p) == lang.ProbeTracepoint {
					msg += " (try to use args->ret instead)"
				}
				return msg
			},
			Check: func(c Checker, call *Call) *types.Type {
				return c.ProbeRetval(call.Expr)
			}},
		&Builtin{Name: "args", Gen: genCtx, Kind: Var, Flags: Token | ProbeOnce | DotDeref, Sig: "args",
			Probes: []lang.ProbeKind{lang.ProbeTracepoint, lang.ProbeRawTracepoint, lang.ProbeKfunc, lang.ProbeKretfunc, lang.ProbeUprobe, lang.ProbeUretprobe},
			Doc:    "the probe's typed arguments (tracepoint fields, kfunc/uprobe parameters)",
			ProbeError: func(_ Checker, _ *Call, p string) string {
				if t := lang.ProbeKindNamed(p).Type(); t.Probetype == "special" {
					p = t.Probetype // bpftrace 0.17's name in context messages (BEGIN, END, self)
				}
				return "The args builtin can only be used with tracepoint/kfunc/uprobeprobes (" + p + " used here)"
			},
			Check: func(c Checker, call *Call) *types.Type {
				return c.ProbeArgs(call.Expr)
			}},
		&Builtin{Name: "func", Gen: genFunc, Kind: Var, Flags: Token, Sig: "func",
			Probes:  []lang.ProbeKind{lang.ProbeKprobe, lang.ProbeKretprobe, lang.ProbeUprobe, lang.ProbeUretprobe, lang.ProbeKfunc, lang.ProbeKretfunc},
			Helpers: []string{"bpf_get_func_ip"},
			Doc:     "name of the traced function",
			ProbeError: func(_ Checker, _ *Call, p string) string {
				return "The func builtin can not be used with '" + p + "' probes"
			},
			Check: func(c Checker, call *Call) *types.Type {
				user := false
				for _, p := range c.Providers() {
					if lang.ProbeKindNamed(p).Type().Func == lang.FuncUser {
						user = true
					}
				}
				if user {
					return &types.Type{Kind: types.Usym, Size: 16}
				}
				return &types.Type{Kind: types.Ksym, Size: 8}
			}},
	}
}

// ProbeNameLen is the size of the `probe` builtin read as a string in BPF
// (strcontains(probe, ...)): the probe table's names are kept in an array
// map of values this long (compiler.MapProbeNames), longer names cut.
const ProbeNameLen = 128

// ProbeNamesMax is the number of names that map holds: the compile-time
// names and each expanded probe's (at most max_probes, 1024 by default).
const ProbeNamesMax = 4096

// Code generation of the builtin variables.

// x86-64 struct pt_regs offsets (kprobe/uprobe context).
const (
	regsAX = 80
	regsIP = 128
	regsSP = 152
)

// regsArgs are the pt_regs offsets of the first six integer arguments
// (rdi, rsi, rdx, rcx, r8, r9) in the x86-64 calling convention.
var regsArgs = [...]int16{112, 104, 96, 88, 72, 64}

// ArgRegOffset is the pt_regs offset of integer argument i (x86-64 calling
// convention); false past the sixth, which the caller passes on the stack.
func ArgRegOffset(i int) (int16, bool) {
	if i < 0 || i >= len(regsArgs) {
		return 0, false
	}
	return regsArgs[i], true
}

func genHelper(fn asm.BuiltinFunc) GenFunc {
	return func(g Gen, c *Call) error {
		g.Emit(fn.Call())
		g.SetResult(asm.R0)
		return nil
	}
}

// genHalf calls fn, whose u64 result packs two u32 ids (pid/tgid,
// uid/gid), and keeps the upper half (shift 32) or the lower (shift 0).
func genHalf(fn asm.BuiltinFunc, shift int32) GenFunc {
	return func(g Gen, c *Call) error {
		g.Emit(fn.Call())
		if shift != 0 {
			g.Emit(asm.RSh.Imm(asm.R0, shift))
		} else {
			g.Emit(asm.Mov.Reg32(asm.R0, asm.R0))
		}
		g.SetResult(asm.R0)
		return nil
	}
}

// StartMap is the internal map holding the tracer's start time
// (bpf_ktime_get_ns clock) at key 0; the runtime writes it before
// attaching (ABI.md).
const StartMap = "start"

// CpidMap is the internal ARRAY map (u32 key 0 → u64) holding the -c
// command's pid, written by the runtime before attaching (0 without -c).
const CpidMap = "cpid"

// lookupSlot0 looks up key 0 of the internal one-slot u64 ARRAY map name
// (StartMap, CpidMap): R0 is then the value's address, or 0.
func lookupSlot0(g Gen, name string) error {
	key, err := g.StackTemp(8)
	if err != nil {
		return err
	}
	g.Emit(StImm(asm.R10, key, 0, asm.DWord), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, int32(key)))
	g.MapRef(asm.R1, name, InternalMap{Type: 2 /* ARRAY */, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	g.Emit(asm.FnMapLookupElem.Call())
	return nil
}

func genCpid(g Gen, c *Call) error {
	if err := lookupSlot0(g, CpidMap); err != nil {
		return err
	}
	none := g.Label("nocpid")
	g.Emit(asm.Mov.Reg(asm.R1, asm.R0), asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R1, 0, none),
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord))
	g.Place(none)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.SetResult(asm.R0)
	return nil
}

func genElapsed(g Gen, c *Call) error {
	if err := lookupSlot0(g, StartMap); err != nil {
		return err
	}
	skip := g.Label("nostart")
	g.Emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.JEq.Imm(asm.R0, 0, skip),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
	)
	g.Place(skip)
	start, err := g.Hold(asm.R1)
	if err != nil {
		return err
	}
	g.Emit(asm.FnKtimeGetNs.Call(), asm.Sub.Reg(asm.R0, start))
	g.Free(start)
	g.SetResult(asm.R0)
	return nil
}

func genComm(g Gen, c *Call) error {
	if len(c.Args) == 1 {
		return genCommPid(g, c)
	}
	// Zeroed first: before Linux 6.4 (strscpy_pad) the helper leaves the
	// bytes after the name's NUL as they were, and comm is compared and
	// hashed (map keys) as all 16 bytes.
	g.ResultMem(asm.R1, 16, true)
	g.Emit(asm.Mov.Imm(asm.R2, 16), asm.FnGetCurrentComm.Call())
	return nil
}

func genProbe(g Gen, c *Call) error {
	if g.ProbeCookie() {
		// The expanded probe's index in the probe table, set at attach.
		g.LoadCtx(asm.R1)
		g.Emit(asm.FnGetAttachCookie.Call())
		g.SetResult(asm.R0)
		return nil
	}
	g.Emit(asm.Mov.Imm(asm.R0, int32(g.ProbeID())))
	g.SetResult(asm.R0)
	return nil
}

func genCtx(g Gen, c *Call) error {
	g.LoadCtx(asm.R0)
	g.SetResult(asm.R0)
	return nil
}

// argIndex parses N from argN/sargN.
func argIndex(name, prefix string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, prefix))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad argument builtin %s", name)
	}
	return n, nil
}

func genArg(g Gen, c *Call) error {
	n, err := argIndex(c.Name, "arg")
	if err != nil {
		return err
	}
	switch p := g.AttachPoint().Provider; p.Type().ArgN {
	case lang.ArgNUSDT:
		if err := genUSDTArg(g, c.Name, n); err != nil {
			return err
		}
	case lang.ArgNRegs:
		if n >= len(regsArgs) {
			return fmt.Errorf("%s: x86-64 passes only 6 arguments in registers", c.Name)
		}
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsArgs[n], asm.DWord))
	case lang.ArgNArray:
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, int16(8*n), asm.DWord))
	default:
		return fmt.Errorf("%s is not available in %s probes", c.Name, p)
	}
	g.SetResult(asm.R0)
	return nil
}

// genSarg reads the N-th stack argument: *(sp + 8*(N+1)) in user or kernel
// memory (the return address is at sp).
func genSarg(g Gen, c *Call) error {
	n, err := argIndex(c.Name, "sarg")
	if err != nil {
		return err
	}
	fn := asm.FnProbeReadKernel
	if g.AttachPoint().Provider.Type().UserMem {
		fn = asm.FnProbeReadUser
	}
	tmp, err := g.StackTemp(8)
	if err != nil {
		return err
	}
	g.LoadCtx(asm.R3)
	g.Emit(asm.LoadMem(asm.R3, asm.R3, regsSP, asm.DWord), asm.Add.Imm(asm.R3, int32(8*(n+1))),
		asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, int32(tmp)),
		asm.Mov.Imm(asm.R2, 8), fn.Call(),
		asm.LoadMem(asm.R0, asm.R10, tmp, asm.DWord))
	g.SetResult(asm.R0)
	return nil
}

func genRetval(g Gen, c *Call) error {
	switch p := g.AttachPoint().Provider; p.Type().Retval {
	case lang.RetvalRegs:
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsAX, asm.DWord))
	case lang.RetvalArray:
		n := g.ArgsCount()
		if n < 0 {
			return fmt.Errorf("retval: the function's arguments are unknown")
		}
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, int16(8*n), asm.DWord))
	default:
		return fmt.Errorf("retval is not available in %s probes", p)
	}
	g.SetResult(asm.R0)
	return nil
}

func genFunc(g Gen, c *Call) error {
	switch p := g.AttachPoint().Provider; p.Type().Func {
	case lang.FuncIP:
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsIP, asm.DWord))
		g.SetResult(asm.R0)
	case lang.FuncHelper:
		g.LoadCtx(asm.R1)
		g.Emit(asm.FnGetFuncIp.Call())
		g.SetResult(asm.R0)
	case lang.FuncUser:
		// Usym: [0:8] address, [8:16] pid.
		g.Emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32), asm.Mov.Reg(asm.R5, asm.R0))
		g.LoadCtx(asm.R1)
		if p == lang.ProbeUretprobe && g.Compat().UretprobeFuncEntry() {
			// The probed function (the uprobe's address, as the kernel
			// gives it since 6.6; 0 before), not the return address in
			// its caller; the pid is held across the helper call.
			pid, err := g.Hold(asm.R5)
			if err != nil {
				return err
			}
			g.Emit(asm.FnGetFuncIp.Call(), asm.Mov.Reg(asm.R5, pid))
			g.Free(pid)
		} else {
			g.Emit(asm.LoadMem(asm.R0, asm.R1, regsIP, asm.DWord))
		}
		g.ResultMem(asm.R1, 16, false)
		g.Emit(asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord), asm.StoreMem(asm.R1, 8, asm.R5, asm.DWord))
	default:
		return fmt.Errorf("func is not available in %s probes", p)
	}
	return nil
}

// iterCtx is the type of ctx in an iter:NAME clause: a pointer to the
// kernel's struct bpf_iter__NAME (meta, then the object the iterator
// visits: task, task and file, task and vma ...), nil elsewhere.
func iterCtx(c Checker, call *Call) *types.Type {
	if call.Probe == nil {
		return nil
	}
	name := ""
	for _, ap := range call.Probe.Attach {
		if ap.Provider != lang.ProbeIter {
			return nil
		}
		if name != "" && ap.Func != name {
			c.Errorf(call.Expr, "ctx: iter:%s and iter:%s have different contexts; use one iterator per probe", name, ap.Func)
			return types.InvalidType
		}
		name = ap.Func
	}
	if name == "" {
		return nil
	}
	t, err := c.LookupType("struct bpf_iter__" + name)
	if err != nil || t == nil || t.Kind != types.Record || len(t.Fields) == 0 {
		c.Errorf(call.Expr, "ctx: the kernel's BTF has no struct bpf_iter__%s (iterator %s unknown)", name, name)
		return types.InvalidType
	}
	return types.PointerTo(t, types.AddrKernel)
}

// UnknownComm is comm(pid) of a pid no task has.
const UnknownComm = "[Unknown]"

func checkComm(c Checker, call *Call) *types.Type {
	if len(call.Args) == 1 {
		if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
			c.Errorf(call.Expr, "comm() only supports an integer pid as the argument (%s provided)", types.KindWord(t, types.AsArg))
			return types.InvalidType
		}
		task, err := c.LookupType("struct task_struct")
		if err != nil || task == nil || task.Kind != types.Record {
			c.Errorf(call.Expr, "comm(pid) needs the kernel's BTF for struct task_struct")
			return types.InvalidType
		}
		if _, ok := task.Field("comm"); !ok {
			c.Errorf(call.Expr, "comm(pid): struct task_struct has no member comm")
			return types.InvalidType
		}
	}
	return types.StringType(16)
}

// genCommPid is comm(pid) as bpftrace 0.25's stdlib does it: the task of
// pid (in the initial pid namespace) from the kfunc bpf_task_from_pid
// (Linux 6.1), its comm read, the reference dropped with bpf_task_release;
// "[Unknown]" when no task has that pid.
func genCommPid(g Gen, c *Call) error {
	task, err := g.KernelType("struct task_struct")
	if err != nil {
		return err
	}
	comm, ok := task.Field("comm")
	if !ok {
		return fmt.Errorf("struct task_struct has no member comm")
	}
	from, err := g.Kfunc("comm(pid)", "bpf_task_from_pid")
	if err != nil {
		return err
	}
	release, err := g.Kfunc("comm(pid)", "bpf_task_release")
	if err != nil {
		return err
	}
	pid, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	t := g.TempMem(16, true)
	g.Emit(asm.Mov.Reg32(asm.R1, pid), from)
	g.Free(pid)
	ref, err := g.Hold(asm.R0)
	if err != nil {
		return err
	}
	unknown := g.Label("comm_unknown")
	done := g.Label("comm_done")
	g.Emit(asm.JEq.Imm(ref, 0, unknown))
	g.TempAddr(asm.R1, t, 0)
	g.Emit(asm.Mov.Imm(asm.R2, 16), asm.Mov.Reg(asm.R3, ref), asm.Add.Imm(asm.R3, int32(comm.Offset)),
		asm.FnProbeReadKernel.Call(),
		asm.Mov.Reg(asm.R1, ref), release, asm.Ja.Label(done))
	g.Place(unknown)
	g.TempAddr(asm.R1, t, 0)
	storeName(g, UnknownComm)
	g.Place(done)
	g.Emit(asm.Mov.Imm(asm.R0, 0)) // carries the label; R0-R5 are dead here
	g.Free(ref)
	g.SetResultTemp(t)
	return nil
}
