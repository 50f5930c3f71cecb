package stdlib

import (
	"github.com/cilium/ebpf/asm"
	"github.com/gotrace/gotrace/lang"

	"github.com/gotrace/gotrace/lang/types"
)

// dw_ustack (bpftrace 0.26): a user stack unwound from the binaries' DWARF
// call frame information (.eh_frame), for code built without frame
// pointers, where bpf_get_stackid's frame-pointer walk loses the callers.
// The program copies the user registers the unwinder starts from and the
// user stack above sp into the value (types.DwarfStackSize bytes,
// compiler/ABI.md); the runtime unwinds it when printing, with the
// process's memory map, so the process must be known: -p or -c.

func stackRows() []*Builtin {
	return []*Builtin{
		stackRow("kstack", false),
		stackRow("ustack", true),
		&Builtin{Name: "dw_ustack", Gen: genDwStack, Kind: Func, Flags: Bare, Sig: "dw_ustack([mode][, int limit])", MinArgs: 0, MaxArgs: 2,
			Modes:   []string{"bpftrace", "perf", "raw"},
			Probes:  []lang.ProbeKind{lang.ProbeUprobe, lang.ProbeUretprobe, lang.ProbeUSDT},
			Helpers: []string{"bpf_probe_read_user"},
			Doc:     "user stack unwound from DWARF CFI (programs without frame pointers); needs -p or -c",
			Check: func(c Checker, call *Call) *types.Type {
				t := stackRow("dw_ustack", true).Check(c, call)
				if invalid(t) {
					return t
				}
				if t.Stack.Mode == types.StackBuildID {
					c.Errorf(call.Expr, "'build_id' stack mode can only be used for ustack")
					return types.InvalidType
				}
				if c.NoTarget() {
					c.Errorf(call.Expr, "dw_ustack requires a target process: give its pid with -p PID or run it with -c CMD")
					return types.InvalidType
				}
				st := *t
				st.Stack.Dwarf = true
				st.Size = types.DwarfStackSize
				return &st
			}},
	}
}

// pt_regs offsets (x86-64) of the registers the unwinder starts from.
const (
	ptRegsBP = 4 * 8
	ptRegsIP = 16 * 8
	ptRegsSP = 19 * 8
)

// genDwStack fills the value: pid, ip/sp/bp from the probe's pt_regs,
// then the user stack from sp: the rest of sp's page, and the next page
// when that one is readable too (a read that crosses past the top of the
// stack would fail whole). [0:8] is the number of bytes copied.
func genDwStack(g Gen, c *Call) error {
	g.ResultMem(asm.R1, types.DwarfStackSize, false)
	base, err := g.Hold(asm.R1)
	if err != nil {
		return err
	}
	defer g.Free(base)
	g.Emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32), asm.StoreMem(base, 8, asm.R0, asm.DWord))
	g.LoadCtx(asm.R1)
	g.Emit(
		asm.LoadMem(asm.R2, asm.R1, ptRegsIP, asm.DWord), asm.StoreMem(base, 16, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R1, ptRegsBP, asm.DWord), asm.StoreMem(base, 32, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R1, ptRegsSP, asm.DWord), asm.StoreMem(base, 24, asm.R2, asm.DWord),
	)
	sp, err := g.Hold(asm.R2)
	if err != nil {
		return err
	}
	defer g.Free(sp)
	g.Emit(asm.Mov.Imm(asm.R0, 0), asm.StoreMem(base, 0, asm.R0, asm.DWord))
	const page = types.DwarfStackCopy / 2
	done := g.Label("dwstack_done")
	// n1 = page - (sp & (page-1)), in [1, page].
	g.Emit(
		asm.Mov.Reg(asm.R2, sp), asm.And.Imm(asm.R2, page-1),
		asm.Mov.Imm(asm.R0, page), asm.Sub.Reg(asm.R0, asm.R2),
		asm.JGT.Imm(asm.R0, page, done), asm.JEq.Imm(asm.R0, 0, done),
		asm.Mov.Reg(asm.R2, asm.R0),
	)
	n1, err := g.Hold(asm.R0)
	if err != nil {
		return err
	}
	defer g.Free(n1)
	g.Emit(
		asm.Mov.Reg(asm.R1, base), asm.Add.Imm(asm.R1, types.DwarfStackHeader),
		asm.Mov.Reg(asm.R3, sp), asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, done),
		asm.StoreMem(base, 0, n1, asm.DWord),
		// The next page, at base+40+n1 from sp+n1.
		asm.Mov.Reg(asm.R1, base), asm.Add.Imm(asm.R1, types.DwarfStackHeader), asm.Add.Reg(asm.R1, n1),
		asm.Mov.Imm(asm.R2, page),
		asm.Mov.Reg(asm.R3, sp), asm.Add.Reg(asm.R3, n1), asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, done),
		asm.Add.Imm(n1, page), asm.StoreMem(base, 0, n1, asm.DWord),
	)
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	return nil
}

// StackModes are the modes kstack/ustack accept as their first argument.
var StackModes = map[string]types.StackMode{
	"bpftrace": types.StackBpftrace, "perf": types.StackPerf, "raw": types.StackRaw,
	"build_id": types.StackBuildID, // ustack only
}

func stackRow(name string, user bool) *Builtin {
	return &Builtin{Name: name, Gen: genStack(user), Kind: Func, Flags: Bare | CheckBadArgs | Token, Sig: name + "([mode][, int limit])", MinArgs: 0, MaxArgs: 2,
		Modes:   stackModes(user),
		Helpers: []string{"bpf_get_stackid"},
		Doc:     "stack trace as a value; mode bpftrace|perf|raw, limit 1..1024 frames",
		Check: func(c Checker, call *Call) *types.Type {
			mode, limit := c.StackMode(), 127
			args := call.Args
			if len(args) > 0 {
				if id, ok := args[0].(*lang.IdentExpr); ok {
					if m, ok := StackModes[id.Name]; ok {
						if m == types.StackBuildID && !user {
							c.Errorf(call.Expr, "'build_id' stack mode can only be used for ustack")
							return types.InvalidType
						}
						mode = m
						args = args[1:]
					}
				}
			}
			if len(args) > 0 {
				if invalid(args[0].Type()) && !isConstLike(args[0]) {
					c.Errorf(call.Expr, "%s() expects a integer literal (none provided)", name)
					return types.InvalidType
				}
				v, ok := c.ConstInt(args[0])
				if !ok {
					c.Errorf(call.Expr, "%s() expects a integer literal (%s provided)", name, types.KindWord(args[0].Type(), types.AsArg))
					return types.InvalidType
				}
				if v > 1024 {
					c.Errorf(call.Expr, "%s([int limit]): limit shouldn't exceed 1024, %d given", name, v)
					return types.InvalidType
				}
				if v < 1 {
					c.Errorf(call.Expr, "%s([int limit]): limit should be at least 1, %d given", name, v)
					return types.InvalidType
				}
				limit = int(v)
			}
			return StackType(user, mode, limit)
		}}
}

// stackModes are the modes kstack (bpftrace, perf, raw) or ustack (and
// build_id: the frames as build ID and file offset) take.
func stackModes(bool) []string { return []string{"bpftrace", "perf", "raw", "build_id"} }

// StackType is the type of a kstack/ustack value.
func StackType(user bool, mode types.StackMode, limit int) *types.Type {
	return &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: user, Mode: mode, Limit: limit}}
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

// len() of a stack: its depth. A stack value holds only a stack id (the
// frames are in a STACK_TRACE map, which BPF cannot read), so the depth is
// that of the probe's current stack, captured again with the value's
// kind and limit: the argument must be a stack of this probe invocation
// (kstack/ustack or a scratch variable), not one stored in a map.
func checkStackLen(c Checker, call *Call) *types.Type {
	switch a := call.Args[0].(type) {
	case *lang.CallExpr, *lang.BuiltinExpr, *lang.VarExpr:
	default:
		_ = a
		c.Errorf(call.Expr, "len() of a stack needs the stack of this probe (kstack, ustack or a variable holding one), not %s", TypeName(call.Args[0].Type()))
		return types.InvalidType
	}
	return types.S64
}

// genStackLen: bpf_get_stack into scratch memory returns the bytes of the
// frames it wrote (8 per frame), or a negative error (then 0).
func genStackLen(g Gen, c *Call) error {
	info := c.Args[0].Type().Stack
	frames := info.Frames()
	t := g.TempMem(8*frames, false)
	flags := int32(0)
	if info.User {
		flags = 1 << 8 // BPF_F_USER_STACK
	}
	g.LoadCtx(asm.R1)
	g.TempAddr(asm.R2, t, 0)
	g.Emit(asm.Mov.Imm(asm.R3, int32(8*frames)), asm.Mov.Imm(asm.R4, flags), asm.FnGetStack.Call())
	ok := g.Label("stacklen")
	g.Emit(asm.JSGE.Imm(asm.R0, 0, ok), asm.Mov.Imm(asm.R0, 0))
	g.Place(ok)
	g.Emit(asm.RSh.Imm(asm.R0, 3))
	g.SetResult(asm.R0)
	return nil
}
