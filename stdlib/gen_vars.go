package stdlib

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang/types"
)

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

func init() {
	Gens["uid"] = genHalf(asm.FnGetCurrentUidGid, 0)
	Gens["gid"] = genHalf(asm.FnGetCurrentUidGid, 32)
	Gens["username"] = genHalf(asm.FnGetCurrentUidGid, 0)
	Gens["cpu"] = genHelper(asm.FnGetSmpProcessorId)
	Gens["rand"] = genHelper(asm.FnGetPrandomU32)
	Gens["cgroup"] = genHelper(asm.FnGetCurrentCgroupId)
	Gens["numaid"] = genHelper(asm.FnGetNumaNodeId)
	Gens["jiffies"] = genHelper(asm.FnJiffies64)
	Gens["curtask"] = genHelper(asm.FnGetCurrentTask)
	Gens["elapsed"] = genElapsed
	Gens["cpid"] = genCpid
	Gens["comm"] = genComm
	Gens["probe"] = genProbe
	Gens["ctx"] = genCtx
	Gens["argN"] = genArg
	Gens["sargN"] = genSarg
	Gens["retval"] = genRetval
	Gens["func"] = genFunc
	Gens["kstack"] = genStack(false)
	Gens["ustack"] = genStack(true)
	attachGens()
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
	switch p := g.AttachPoint().Provider; p {
	case "usdt":
		if err := genUSDTArg(g, c.Name, n); err != nil {
			return err
		}
	case "kprobe", "kretprobe", "uprobe", "uretprobe":
		if n >= len(regsArgs) {
			return fmt.Errorf("%s: x86-64 passes only 6 arguments in registers", c.Name)
		}
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsArgs[n], asm.DWord))
	case "rawtracepoint", "kfunc", "kretfunc":
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
	switch g.AttachPoint().Provider {
	case "uprobe", "uretprobe":
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
	switch p := g.AttachPoint().Provider; p {
	case "kretprobe", "uretprobe":
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsAX, asm.DWord))
	case "kretfunc":
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
	switch p := g.AttachPoint().Provider; p {
	case "kprobe", "kretprobe":
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsIP, asm.DWord))
		g.SetResult(asm.R0)
	case "kfunc", "kretfunc":
		g.LoadCtx(asm.R1)
		g.Emit(asm.FnGetFuncIp.Call())
		g.SetResult(asm.R0)
	case "uprobe", "uretprobe":
		// Usym: [0:8] address, [8:16] pid.
		g.Emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32), asm.Mov.Reg(asm.R5, asm.R0))
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, regsIP, asm.DWord))
		g.ResultMem(asm.R1, 16, false)
		g.Emit(asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord), asm.StoreMem(asm.R1, 8, asm.R5, asm.DWord))
	default:
		return fmt.Errorf("func is not available in %s probes", p)
	}
	return nil
}

// genStack: [0:8] stack id from bpf_get_stackid (negative on error),
// [8:16] pid for ustack (ABI.md). Each (kernel/user, limit) has its own
// STACK_TRACE map whose value holds exactly limit frames: the kernel
// captures and hashes that many, so kstack(3) keys of stacks that share
// their 3 innermost frames are one key, and a deeper stack elsewhere in
// the script is not cut to a shorter limit (as bpftrace).
func genStack(user bool) GenFunc {
	return func(g Gen, c *Call) error {
		info := types.StackInfo{User: user}
		if t := c.Expr.Type(); t != nil {
			info.Limit = t.Stack.Limit
		}
		flags := int32(0)
		if user {
			flags = 1 << 8 // BPF_F_USER_STACK
			g.Emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32))
		} else {
			g.Emit(asm.Mov.Imm(asm.R0, 0))
		}
		hold, err := g.Hold(asm.R0)
		if err != nil {
			return err
		}
		g.LoadCtx(asm.R1)
		g.MapRef(asm.R2, info.MapName(), InternalMap{Type: 7 /* STACK_TRACE */, KeySize: 4, ValueSize: uint32(8 * info.Frames()), MaxEntries: 4096})
		g.Emit(asm.Mov.Imm(asm.R3, flags), asm.FnGetStackid.Call())
		g.ResultMem(asm.R1, 16, false)
		g.Emit(asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord), asm.StoreMem(asm.R1, 8, hold, asm.DWord))
		g.Free(hold)
		return nil
	}
}

func init() {
	// `args` as a value is the context pointer (a tracepoint's record).
	Gens["args"] = genCtx
	attachGens()
}
