package stdlib

import (
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang/types"
)

// dw_ustack (bpftrace 0.26): a user stack unwound from the binaries' DWARF
// call frame information (.eh_frame), for code built without frame
// pointers, where bpf_get_stackid's frame-pointer walk loses the callers.
// The program copies the user registers the unwinder starts from and the
// user stack above sp into the value (types.DwarfStackSize bytes,
// compiler/ABI.md); the runtime unwinds it when printing, with the
// process's memory map, so the process must be known: -p or -c.

var _ = rows(&Builtin{Name: "dw_ustack", Kind: Func, Sig: "dw_ustack([mode][, int limit])", MinArgs: 0, MaxArgs: 2,
	Modes:   []string{"bpftrace", "perf", "raw"},
	Probes:  []string{"uprobe", "uretprobe", "usdt"},
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
	}})

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

func init() {
	Gens["dw_ustack"] = genDwStack
	attachGens()
}
