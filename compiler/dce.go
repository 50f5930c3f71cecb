package compiler

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// Dead-instruction elimination. The verifier refuses a program with an
// instruction that no path from the entry reaches ("unreachable insn N"),
// which a constant condition, a branch ending in exit() or return, or a
// builtin's slow path after a folded test all make. Code generation avoids
// most of it (constant conditions are folded by the checker and cond emits
// no test for them), and this pass is the net under it: every instruction
// that no path from the entry (or from a subprogram reached by a call or a
// function pointer) reaches is dropped. Jumps are symbolic (asm references
// to symbols), so dropping instructions needs no offset fixing; numeric
// jumps are first made symbolic. Line info and function info ride on the
// instructions (asm metadata) and go with them: a subprogram nobody calls
// goes with its BTF function record.

// isJump reports whether ins is a jump (not a call or exit) and whether it
// is conditional.
func isJump(ins *asm.Instruction) (jump, conditional bool) {
	cls := ins.OpCode.Class()
	if cls != asm.JumpClass && cls != asm.Jump32Class {
		return false, false
	}
	switch ins.OpCode.JumpOp() {
	case asm.Call, asm.Exit:
		return false, false
	case asm.Ja:
		return true, false
	}
	return true, true
}

// symbolize gives every jump with a numeric offset (and no reference) a
// symbolic target, so that removing instructions can't break it.
func symbolize(insns asm.Instructions) (asm.Instructions, error) {
	var raw []int // raw (8-byte slot) offset of each instruction
	at := map[int]int{}
	off := 0
	for i := range insns {
		raw = append(raw, off)
		at[off] = i
		off += int(insns[i].Size() / asm.InstructionSize)
	}
	out := insns
	copied := false
	n := 0
	for i := range insns {
		ins := &insns[i]
		if j, _ := isJump(ins); !j || ins.Reference() != "" {
			continue
		}
		target := raw[i] + 1 + int(ins.Offset)
		if ins.OpCode.Class() == asm.Jump32Class && ins.OpCode.JumpOp() == asm.Ja {
			target = raw[i] + 1 + int(ins.Constant)
		}
		ti, ok := at[target]
		if !ok {
			return nil, fmt.Errorf("internal error: instruction %d jumps to %d, not an instruction", i, target)
		}
		if !copied {
			out = append(asm.Instructions(nil), insns...)
			copied = true
		}
		sym := out[ti].Symbol()
		if sym == "" {
			n++
			sym = fmt.Sprintf("dce_target_%d", n)
			for hasSymbol(out, sym) {
				n++
				sym = fmt.Sprintf("dce_target_%d", n)
			}
			out[ti] = out[ti].WithSymbol(sym)
		}
		out[i] = out[i].WithReference(sym)
		out[i].Offset = -1
	}
	return out, nil
}

func hasSymbol(insns asm.Instructions, sym string) bool {
	for i := range insns {
		if insns[i].Symbol() == sym {
			return true
		}
	}
	return false
}

// reachable marks the instructions some path from insns[0] reaches.
func reachable(insns asm.Instructions) ([]bool, error) {
	syms := map[string]int{}
	for i := range insns {
		if s := insns[i].Symbol(); s != "" {
			syms[s] = i
		}
	}
	live := make([]bool, len(insns))
	work := []int{0}
	visit := func(i int) {
		if i >= 0 && i < len(insns) && !live[i] {
			work = append(work, i)
		}
	}
	target := func(i int) (int, error) {
		ref := insns[i].Reference()
		t, ok := syms[ref]
		if !ok {
			return 0, fmt.Errorf("internal error: instruction %d refers to unknown symbol %q", i, ref)
		}
		return t, nil
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if live[i] {
			continue
		}
		live[i] = true
		ins := &insns[i]
		switch jump, cond := isJump(ins); {
		case jump:
			t, err := target(i)
			if err != nil {
				return nil, err
			}
			visit(t)
			if cond {
				visit(i + 1)
			}
			continue
		case ins.OpCode.JumpOp() == asm.Exit && (ins.OpCode.Class() == asm.JumpClass):
			continue
		}
		if ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer() {
			t, err := target(i)
			if err != nil {
				return nil, err
			}
			visit(t)
		}
		visit(i + 1)
	}
	return live, nil
}

// eliminateDead drops the instructions of insns that no path reaches.
func eliminateDead(insns asm.Instructions) (asm.Instructions, error) {
	if len(insns) == 0 {
		return insns, nil
	}
	insns, err := symbolize(insns)
	if err != nil {
		return nil, err
	}
	live, err := reachable(insns)
	if err != nil {
		return nil, err
	}
	out := make(asm.Instructions, 0, len(insns))
	for i := range insns {
		if live[i] {
			out = append(out, insns[i])
		}
	}
	return out, nil
}
