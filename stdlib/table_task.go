package stdlib

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Builtins of bpftrace 0.26 about the current task and probe: pid/tid in a
// pid namespace, nsecs on a named clock, the parent and the thread-group
// leader, user mode, the probe type, the number of CPUs. In bpftrace most
// of these are macros of its standard library over curtask; here each is a
// row.

// PidModes are the namespaces pid(...) and tid(...) accept: curr_ns (the
// tracer's pid namespace, as bare pid) and init (the initial namespace).
var PidModes = []string{"curr_ns", "init"}

// ClockModes are the clocks nsecs(...) accepts.
var ClockModes = []string{"monotonic", "boot", "tai", "sw_tai"}

func pidRow(name, doc string) *Builtin {
	return &Builtin{Name: name, Gen: genPid(name == "pid"), Kind: Var, Flags: Token, Sig: name + "([curr_ns|init])", MaxArgs: 1, Modes: PidModes,
		Helpers: []string{"bpf_get_current_pid_tgid", "bpf_get_ns_current_pid_tgid"}, Doc: doc,
		Check: func(c Checker, call *Call) *types.Type {
			if len(call.Args) == 1 && call.Mode(table()[name]) == "" {
				if id, ok := call.Args[0].(*lang.IdentExpr); ok {
					c.Errorf(call.Expr, "Invalid PID namespace mode: %s (expects: curr_ns or init)", id.Name)
				} else {
					c.Errorf(call.Expr, "%s() only supports curr_ns and init as the argument", name)
				}
				return types.InvalidType
			}
			if _, isVar := call.Expr.(*lang.BuiltinExpr); isVar && c.Compat().PidTid32() {
				// bpftrace 0.26's pid and tid variables are uint32
				// (bpftrace 0.22).
				return types.U32
			}
			return types.U64
		}}
}

// taskRow is a builtin reading the current task's (or its argument's)
// task_struct: path names the pointer members followed from the task,
// then the last member read (an integer or comm).
func taskRow(name, sig, doc string, str bool) *Builtin {
	return &Builtin{Name: name, Gen: genTask(name), Kind: Var, Sig: sig, MaxArgs: 1,
		Helpers: []string{"bpf_get_current_task", "bpf_probe_read_kernel"}, Doc: doc,
		Check: func(c Checker, call *Call) *types.Type {
			if len(call.Args) == 1 {
				t := call.Args[0].Type()
				if t == nil || t.Kind != types.Pointer || t.Elem == nil || t.Elem.Name != "struct task_struct" {
					c.Errorf(call.Expr, "%s() expects a struct task_struct * argument (%s provided)", name, TypeName(t))
					return types.InvalidType
				}
			}
			task, err := c.LookupType("struct task_struct")
			if err != nil || task == nil || task.Kind != types.Record || len(task.Fields) == 0 {
				c.Errorf(call.Expr, "%s needs the kernel's BTF for struct task_struct", name)
				return types.InvalidType
			}
			for _, f := range taskPaths[name] {
				if _, ok := task.Field(f); !ok {
					c.Errorf(call.Expr, "%s: struct task_struct has no member %s", name, f)
					return types.InvalidType
				}
			}
			if str {
				return types.StringType(16)
			}
			return types.U64
		}}
}

// taskPaths are the task_struct members each task builtin follows.
var taskPaths = map[string][]string{
	"ppid":       {"real_parent", "tgid"},
	"pcomm":      {"real_parent", "comm"},
	"leader_pid": {"group_leader", "tgid"},
	"leader_tid": {"group_leader", "pid"},
	// bpftrace 0.26 names a thread-group leader's comm leader_comm.
	"leader_comm": {"group_leader", "comm"},
}

func taskRows() []*Builtin {
	return []*Builtin{
		pidRow("pid", "process id (tgid) of the current task, in the tracer's pid namespace; pid(init): in the initial one"),
		pidRow("tid", "thread id of the current task, in the tracer's pid namespace; tid(init): in the initial one"),
		&Builtin{Name: "nsecs", Gen: genNsecs, Kind: Var, Flags: Token, Sig: "nsecs([monotonic|boot|tai|sw_tai])", MaxArgs: 1, Modes: ClockModes,
			Helpers: []string{"bpf_ktime_get_ns"},
			Doc:     "nanoseconds of a clock: boot (the default: since boot, with suspend), monotonic (without suspend), tai, sw_tai",
			Check: func(c Checker, call *Call) *types.Type {
				if len(call.Args) == 1 && call.Mode(table()["nsecs"]) == "" {
					if id, ok := call.Args[0].(*lang.IdentExpr); ok {
						c.Errorf(call.Expr, "Invalid timestamp mode: %s (expects: monotonic, boot, tai or sw_tai)", id.Name)
					} else {
						c.Errorf(call.Expr, "nsecs() only supports monotonic, boot, tai and sw_tai as the argument")
					}
					return types.InvalidType
				}
				return types.U64
			}},
		taskRow("ppid", "ppid([struct task_struct *task])", "parent's process id of the current task (or of task)", false),
		taskRow("pcomm", "pcomm([struct task_struct *task])", "parent's name of the current task (or of task)", true),
		taskRow("leader_pid", "leader_pid([struct task_struct *task])", "process id of the thread-group leader", false),
		taskRow("leader_tid", "leader_tid([struct task_struct *task])", "thread id of the thread-group leader", false),
		taskRow("leader_comm", "leader_comm([struct task_struct *task])", "name of the thread-group leader", true),
		&Builtin{Name: "usermode", Gen: genUsermode, Kind: Var, Flags: Token, Sig: "usermode",
			Doc: "1 if the probe fired in user mode, else 0 (BEGIN/END: 1)",
			Check: func(c Checker, call *Call) *types.Type {
				for _, p := range c.Providers() {
					if !usermodeIn(lang.ProbeKindNamed(p).Type()) {
						c.Errorf(call.Expr, "usermode can not be used with \"%s\" probes", p)
						return types.InvalidType
					}
				}
				if _, ok := Registers[runtime.GOARCH]; !ok {
					c.Errorf(call.Expr, "usermode is not supported on %s", runtime.GOARCH)
					return types.InvalidType
				}
				return types.U8
			}},
		&Builtin{Name: "probetype", Gen: genProbetype, Kind: Var, Sig: "probetype",
			Doc:   "the type of the probe that fired, as bpftrace names it (special for BEGIN/END, fentry, kprobe ...)",
			Check: func(Checker, *Call) *types.Type { return types.StringType(16) }},
		&Builtin{Name: "ncpus", Gen: genNcpus, Kind: Var, Flags: Token, Sig: "ncpus", Doc: "the number of CPUs (possible CPUs)",
			Check: func(Checker, *Call) *types.Type { return types.U64 }},
	}
}

// ProbeType is bpftrace 0.26's name of a provider's probe type.
func ProbeType(provider lang.ProbeKind) string { return provider.Type().Probetype }

// genLen is len(@m) (the map's element count) or len(kstack|ustack)
// (the stack's frame count).
func genLen(g Gen, c *Call) error {
	if t := c.Args[0].Type(); t != nil && t.Kind == types.Stack {
		return genStackLen(g, c)
	}
	return g.MapCall(c, MapLen)
}

// genPid: pid/tid in the tracer's pid namespace (bpf_get_ns_current_pid_tgid
// with its device and inode), or in the initial one (pid(init), or when the
// tracer runs in it).
func genPid(pid bool) GenFunc {
	return func(g Gen, c *Call) error {
		host := g.Host()
		if c.Mode(table()[c.Name]) == "init" || host.PidNSIno == 0 {
			if pid {
				return genHalf(asm.FnGetCurrentPidTgid, 32)(g, c)
			}
			return genHalf(asm.FnGetCurrentPidTgid, 0)(g, c)
		}
		// struct bpf_pidns_info { u32 pid; u32 tgid; }, zero if the task
		// is not in the tracer's namespace.
		info, err := g.StackTemp(8)
		if err != nil {
			return err
		}
		g.Emit(StImm(asm.R10, info, 0, asm.DWord),
			asm.LoadImm(asm.R1, int64(host.PidNSDev), asm.DWord),
			asm.LoadImm(asm.R2, int64(host.PidNSIno), asm.DWord),
			asm.Mov.Reg(asm.R3, asm.R10), asm.Add.Imm(asm.R3, int32(info)),
			asm.Mov.Imm(asm.R4, 8), asm.FnGetNsCurrentPidTgid.Call())
		off := info // pid
		if pid {
			off += 4 // tgid
		}
		g.Emit(asm.LoadMem(asm.R0, asm.R10, off, asm.Word))
		g.SetResult(asm.R0)
		return nil
	}
}

func genNsecs(g Gen, c *Call) error {
	fn := asm.FnKtimeGetNs
	mode := c.Mode(table()["nsecs"])
	if mode == "" && g.Compat().NsecsBoot() {
		mode = "boot"
	}
	switch mode {
	case "boot":
		fn = asm.FnKtimeGetBootNs
	case "tai":
		fn = asm.FnKtimeGetTaiNs
	case "sw_tai":
		// CLOCK_BOOTTIME plus the TAI-to-boot offset the runtime measures
		// at start (TaiOffsetMap), for kernels without bpf_ktime_get_tai_ns.
		if err := lookupSlot0(g, TaiOffsetMap); err != nil {
			return err
		}
		none := g.Label("notai")
		g.Emit(asm.Mov.Imm(asm.R1, 0), asm.JEq.Imm(asm.R0, 0, none), asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord))
		g.Place(none)
		off, err := g.Hold(asm.R1)
		if err != nil {
			return err
		}
		g.Emit(asm.FnKtimeGetBootNs.Call(), asm.Add.Reg(asm.R0, off))
		g.Free(off)
		g.SetResult(asm.R0)
		return nil
	}
	g.Emit(fn.Call())
	g.SetResult(asm.R0)
	return nil
}

// TaiOffsetMap is the internal one-slot ARRAY map (u32 key 0 → u64)
// holding CLOCK_TAI minus CLOCK_BOOTTIME in nanoseconds, written by the
// runtime before attaching; nsecs(sw_tai) adds it to the boot clock.
const TaiOffsetMap = "tai_offset"

// genTask follows the task builtin's members from the current task (or
// the argument) with bpf_probe_read_kernel.
func genTask(name string) GenFunc {
	return func(g Gen, c *Call) error {
		task, err := g.KernelType("struct task_struct")
		if err != nil {
			return err
		}
		path := taskPaths[name]
		first, ok1 := task.Field(path[0])
		last, ok2 := task.Field(path[1])
		if !ok1 || !ok2 {
			return fmt.Errorf("struct task_struct has no member %s or %s", path[0], path[1])
		}
		var r asm.Register
		if len(c.Args) == 1 {
			if r, err = g.EvalInt(c.Args[0]); err != nil {
				return err
			}
		} else {
			g.Emit(asm.FnGetCurrentTask.Call())
			if r, err = g.Hold(asm.R0); err != nil {
				return err
			}
		}
		ptr, err := g.StackTemp(8)
		if err != nil {
			return err
		}
		// ptr = task->first (a task_struct pointer)
		g.Emit(StImm(asm.R10, ptr, 0, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, int32(ptr)), asm.Mov.Imm(asm.R2, 8),
			asm.Mov.Reg(asm.R3, r), asm.Add.Imm(asm.R3, int32(first.Offset)), asm.FnProbeReadKernel.Call())
		g.Free(r)
		if path[1] == "comm" {
			t := g.TempMem(16, true)
			g.TempAddr(asm.R1, t, 0)
			g.Emit(asm.Mov.Imm(asm.R2, 16), asm.LoadMem(asm.R3, asm.R10, ptr, asm.DWord),
				asm.Add.Imm(asm.R3, int32(last.Offset)), asm.FnProbeReadKernel.Call())
			g.SetResultTemp(t)
			return nil
		}
		size := 4
		if last.Type != nil && last.Type.Size > 0 && last.Type.Size <= 8 {
			size = last.Type.Size
		}
		val, err := g.StackTemp(8)
		if err != nil {
			return err
		}
		g.Emit(StImm(asm.R10, val, 0, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, int32(val)), asm.Mov.Imm(asm.R2, int32(size)),
			asm.LoadMem(asm.R3, asm.R10, ptr, asm.DWord), asm.Add.Imm(asm.R3, int32(last.Offset)),
			asm.FnProbeReadKernel.Call(),
			asm.LoadMem(asm.R0, asm.R10, val, asm.DWord))
		g.SetResult(asm.R0)
		return nil
	}
}

// genUsermode: BEGIN/END run from the tracer (user mode, as bpftrace's
// uprobe-triggered ones); elsewhere the saved registers' privilege level
// (x86-64: cs & 3 == 3; arm64: pstate's mode bits, EL0 == 0).
// usermodeIn reports whether usermode may be used in probes of type t:
// those whose context holds the registers (pt_regs, or perf event data
// beginning with them) and BEGIN, END and self, where it is 1 (bench and
// test probes refuse it, as bpftrace does).
func usermodeIn(t *lang.ProbeType) bool {
	switch {
	case t.Context == lang.CtxPtRegs, t.Context == lang.CtxPerfEvent:
		return true
	case t.Trigger == lang.TriggerBegin, t.Trigger == lang.TriggerEnd, t.Trigger == lang.TriggerSignal:
		return true
	}
	return false
}

func genUsermode(g Gen, c *Call) error {
	if g.AttachPoint().Provider.Type().Special() {
		g.Emit(asm.Mov.Imm(asm.R0, 1))
		g.SetResult(asm.R0)
		return nil
	}
	regs := Registers[runtime.GOARCH]
	reg := "cs"
	if runtime.GOARCH == "arm64" {
		reg = "pstate"
	}
	idx := -1
	for i, n := range regs {
		if n == reg {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("usermode is not supported on %s", runtime.GOARCH)
	}
	// perf_event programs get struct bpf_perf_event_data, whose first
	// member is the registers; the others get pt_regs itself.
	g.LoadCtx(asm.R1)
	g.Emit(asm.LoadMem(asm.R0, asm.R1, int16(8*idx), asm.DWord))
	yes := g.Label("user")
	done := g.Label("mode")
	if runtime.GOARCH == "arm64" {
		g.Emit(asm.And.Imm(asm.R0, 0xf), asm.JEq.Imm(asm.R0, 0, yes))
	} else {
		g.Emit(asm.And.Imm(asm.R0, 3), asm.JEq.Imm(asm.R0, 3, yes))
	}
	g.Emit(asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done))
	g.Place(yes)
	g.Emit(asm.Mov.Imm(asm.R0, 1))
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.SetResult(asm.R0)
	return nil
}

func genProbetype(g Gen, c *Call) error {
	g.ConstResult(ProbeType(g.AttachPoint().Provider))
	return nil
}

func genNcpus(g Gen, c *Call) error {
	n := g.Host().NCPUs
	if n <= 0 {
		n = runtime.NumCPU()
	}
	g.Emit(asm.Mov.Imm(asm.R0, int32(n)))
	g.SetResult(asm.R0)
	return nil
}
