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
		Helpers: []string{"bpf_get_stack", "bpf_map_lookup_elem", "bpf_map_update_elem"},
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

// genStack stores the stack by its content (as bpftrace since 0.21),
// not with bpf_get_stackid, whose STACK_TRACE map keeps one stack per
// hash bucket and drops a distinct stack whose bucket is taken (-EEXIST:
// 11% of 10^3 and 17% of 10^5 distinct user stacks here). The frames go
// into scratch memory with bpf_get_stack (which zeroes the rest of the
// buffer), a 63-bit hash of the frames is computed in a loop bounded by
// the frame count (StackHash), and the frames are stored in the HASH map
// of the stack's kind and limit (StackInfo.MapName) under that hash,
// unless already there. The value is [0:8] the hash, the stack's id
// (negative: bpf_get_stack's error, or the map update's when the map is
// full: -E2BIG), [8:16] the pid for ustack (ABI.md). Each (kernel/user,
// limit) has its own map whose value holds exactly limit frames: the
// kernel captures that many, so kstack(3) keys of stacks that share their
// 3 innermost frames are one key, as bpftrace.
func genStack(user bool) GenFunc {
	return func(g Gen, c *Call) error {
		info := types.StackInfo{User: user}
		if t := c.Expr.Type(); t != nil {
			info.Limit = t.Stack.Limit
		}
		size := int32(8 * info.Frames())
		flags := int32(0)
		if user {
			flags = 1 << 8 // BPF_F_USER_STACK
			g.Emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32))
		} else {
			g.Emit(asm.Mov.Imm(asm.R0, 0))
		}
		pid, err := g.Hold(asm.R0)
		if err != nil {
			return err
		}
		defer g.Free(pid)
		key, err := g.StackTemp(8)
		if err != nil {
			return err
		}
		frames := g.TempMem(int(size), false)
		g.LoadCtx(asm.R1)
		g.TempAddr(asm.R2, frames, 0)
		g.Emit(asm.Mov.Imm(asm.R3, size), asm.Mov.Imm(asm.R4, flags), asm.FnGetStack.Call())
		done, ok, fail := g.Label("stack_done"), g.Label("stack_ok"), g.Label("stack_fail")
		// An error is the id; so is no frame at all (-EFAULT, as
		// bpf_get_stackid: no stack of this kind here, a kstack sampled
		// in user mode), which prints as bpftrace prints a failed stack.
		g.Emit(asm.JSGT.Imm(asm.R0, 0, ok), asm.JSLT.Imm(asm.R0, 0, fail), asm.Mov.Imm(asm.R0, -14 /* -EFAULT */))
		g.Place(fail)
		g.Emit(asm.StoreMem(asm.R10, key, asm.R0, asm.DWord), asm.Ja.Label(done))
		g.Place(ok)
		g.TempAddr(asm.R1, frames, 0)
		emitStackHash(g, asm.R0, asm.R1)
		g.Emit(asm.StoreMem(asm.R10, key, asm.R0, asm.DWord))
		// Known already (the common case: one lookup, which the verifier
		// inlines for a hash map), or stored now with BPF_NOEXIST;
		// -EEXIST is another CPU storing the same stack meanwhile.
		m := InternalMap{Type: 1 /* HASH */, KeySize: 8, ValueSize: uint32(size), MaxEntries: 4096, Stacks: true}
		g.MapRef(asm.R1, info.MapName(), m)
		g.Emit(asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, int32(key)), asm.FnMapLookupElem.Call(),
			asm.JNE.Imm(asm.R0, 0, done))
		g.MapRef(asm.R1, info.MapName(), m)
		g.Emit(asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, int32(key)))
		g.TempAddr(asm.R3, frames, 0)
		g.Emit(asm.Mov.Imm(asm.R4, 1 /* BPF_NOEXIST */), asm.FnMapUpdateElem.Call(),
			asm.JEq.Imm(asm.R0, 0, done), asm.JEq.Imm(asm.R0, -17 /* -EEXIST */, done),
			// Not stored (-E2BIG: the map is full): the error is the id.
			asm.StoreMem(asm.R10, key, asm.R0, asm.DWord))
		g.Place(done)
		g.Emit(asm.LoadMem(asm.R0, asm.R10, key, asm.DWord))
		g.ResultMem(asm.R1, 16, false)
		g.Emit(asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord), asm.StoreMem(asm.R1, 8, pid, asm.DWord))
		return nil
	}
}

// Stack hash constants: an odd 64-bit multiplier (2^64/φ) and a seed.
const (
	StackHashMul  = 0x9e3779b97f4a7c15
	StackHashSeed = 0x2545f4914f6cdd1d
)

// StackHash is the id of a stack of frames: h = seed ^ (len·mul); per
// frame f, innermost first: h = (h ^ f)·mul; h ^= h >> 29; then the sign
// bit is cleared (a negative id is an error). Each step is a bijection of
// h for a fixed frame, so two stacks of one length that differ in one
// frame always end in different 64-bit states; any two distinct stacks
// share an id (the 63 bits kept) with a chance of about 2^-63, and then
// count as one. The BPF code (emitStackHash) computes the same.
func StackHash(frames []uint64) uint64 {
	h := uint64(StackHashSeed) ^ uint64(len(frames))*StackHashMul
	for _, f := range frames {
		h = (h ^ f) * StackHashMul
		h ^= h >> 29
	}
	return h &^ (1 << 63)
}

// emitStackHash: h = StackHash of the frames at ptr, whose byte count
// (8 per frame) is in h on entry, at most the buffer's size: the verifier
// knows bpf_get_stack's bound, so the loop, which runs once per frame, is
// a bounded one it accepts (Linux 5.3). h and ptr are R0-R5; the other
// four of R0-R5 are clobbered.
func emitStackHash(g Gen, h, ptr asm.Register) {
	var regs []asm.Register
	for _, r := range []asm.Register{asm.R0, asm.R1, asm.R2, asm.R3, asm.R4, asm.R5} {
		if r != h && r != ptr {
			regs = append(regs, r)
		}
	}
	n, off, mul, f := regs[0], regs[1], regs[2], regs[3]
	loop, out := g.Label("stackhash"), g.Label("stackhash_done")
	g.Emit(
		asm.Mov.Reg(n, h),
		asm.LoadImm(mul, int64(StackHashMul-1<<64), asm.DWord),
		asm.RSh.Imm(h, 3), asm.Mul.Reg(h, mul),
		asm.LoadImm(f, StackHashSeed, asm.DWord), asm.Xor.Reg(h, f),
		asm.Mov.Imm(off, 0),
	)
	g.Place(loop)
	g.Emit(
		asm.JGE.Reg(off, n, out),
		asm.Mov.Reg(f, ptr), asm.Add.Reg(f, off), asm.LoadMem(f, f, 0, asm.DWord),
		asm.Xor.Reg(h, f), asm.Mul.Reg(h, mul),
		asm.Mov.Reg(f, h), asm.RSh.Imm(f, 29), asm.Xor.Reg(h, f),
		asm.Add.Imm(off, 8),
		asm.Ja.Label(loop),
	)
	g.Place(out)
	// Clear the sign bit.
	g.Emit(asm.LSh.Imm(h, 1), asm.RSh.Imm(h, 1))
}

// len() of a stack: its depth. A stack value holds only a stack id (the
// frames are in the stack map), so the depth is
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
