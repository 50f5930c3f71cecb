package compiler

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// for ($kv : @m) runs its body in a callback of bpf_for_each_map_elem, a
// BPF subprogram with its own stack frame. The callback's frame mirrors the
// program's: on entry it copies the scratch variables in from the caller's
// frame (reached through the callback context, a pointer into it), so the
// body's R10-relative code is the same as anywhere else, and copies them
// back before returning. Scripts without for loops pay nothing.

// funcRef emits dst = the address of subprogram sym (a BPF_PSEUDO_FUNC load).
func funcRef(dst asm.Register, sym string) asm.Instruction {
	return asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: dst, Src: asm.PseudoFunc, Constant: -1}.WithReference(sym)
}

// forEach emits r0 = bpf_for_each_map_elem(map, callback, &ctx, 0): the
// number of elements visited.
func (g *gen) forEach(ms *MapSpec, cb string, ctx mem) {
	g.mapPtr(asm.R1, ms)
	g.emit(funcRef(asm.R2, cb))
	g.addr(asm.R3, ctx)
	g.emit(asm.Mov.Imm(asm.R4, 0), asm.FnForEachMapElem.Call())
}

// mapLen emits R0 = the number of elements of map e, counted by
// bpf_for_each_map_elem with a callback that does nothing.
func (g *gen) mapLen(e *lang.MapExpr) error {
	ms, _, err := g.c.userMap(e.Info)
	if err != nil {
		return g.errorf(e, "%v", err)
	}
	name := g.prog.Name + "_len"
	if !g.haveSub[name] {
		sub := asm.Instructions{asm.Mov.Imm(asm.R0, 0).WithSymbol(name), asm.Return()}
		if src := g.source(); src != nil {
			// With line info, every function needs its own.
			for i := range sub {
				sub[i] = sub[i].WithSource(src)
			}
		}
		g.subprogs = append(g.subprogs, sub)
		g.haveSub[name] = true
	}
	ctx, err := g.allocStack(8)
	if err != nil {
		return err
	}
	g.zero(ctx, 8)
	g.forEach(ms, name, ctx)
	return nil
}

func (g *gen) forStmt(s *lang.ForStmt) error {
	if s.Map == nil || s.Map.Info == nil || s.Var == nil || s.Var.Info == nil {
		return g.errorf(s, "for loop without a map or variable")
	}
	if err := g.checkHelpers("for ("+s.Var.Name+" : "+s.Map.Name+")", asm.Instructions{asm.FnForEachMapElem.Call()}); err != nil {
		return g.errorf(s, "%v", err)
	}
	ms, lay, err := g.c.userMap(s.Map.Info)
	if err != nil {
		return g.errorf(s.Map, "%v", err)
	}
	switch lay.value.Kind {
	case types.Hist, types.Lhist, types.Tseries, types.Avg, types.Stats, types.Min, types.Max:
		return g.errorf(s.Map, "for loops over %s maps are not supported", lay.value.Kind)
	}
	kvMem, ok := g.vars[s.Var.Info]
	kvT := varType(s.Var)
	if !ok || kvT == nil || kvT.Kind != types.Tuple || len(kvT.Fields) != 2 {
		return g.errorf(s.Var, "for loop variable %s has no (key, value) slot", s.Var.Name)
	}
	keyT := lay.key
	if len(lay.parts) == 0 && !lay.array {
		keyT = types.U64
	}

	// The callback, generated with the program's frame layout.
	g.forN++
	cb := fmt.Sprintf("%s_for%d", g.prog.Name, g.forN)
	saved := *g
	g.insns, g.pending, g.dead = nil, nil, false
	g.used = [len(pool)]bool{}
	g.usesCtx, g.usesScratch = false, false
	brk, cont := g.label("for_break"), g.label("for_next")
	g.loops = []loop{{brk: brk, cont: cont}}
	g.maxStk = g.stack

	// key (R2) and value (R3) into $kv.
	if err := g.fromPtr(kvMem.plus(kvT.Fields[0].Offset), kvT.Fields[0].Type, asm.R2, 0, keyT); err != nil {
		return err
	}
	if lay.agg {
		// count()/sum(): the value is the sum over the CPUs.
		g.sumPerCPU(ms, kvMem.plus(kvT.Fields[1].Offset), kvT.Fields[1].Type)
	} else if err := g.fromPtr(kvMem.plus(kvT.Fields[1].Offset), kvT.Fields[1].Type, asm.R3, 0, lay.value); err != nil {
		return err
	}
	if err := g.block(s.Body); err != nil {
		return err
	}
	g.place(cont)
	g.copyVars(false)
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	g.dead = true
	g.place(brk) // live only if a break jumps here
	g.copyVars(false)
	g.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	body := g.insns
	g.pending = nil // an unused break label
	usesCtx, usesScratch := g.usesCtx, g.usesScratch

	// Its prologue: keep the context pointer, copy the variables in.
	g.insns, g.pending, g.dead = nil, nil, false
	g.emit(asm.StoreMem(asm.R10, int16(g.cbSlot), asm.R4, asm.DWord))
	g.copyVars(true)
	if usesCtx {
		g.emit(asm.LoadMem(asm.R0, asm.R4, int16(ctxSlot-g.varsLow), asm.DWord),
			asm.StoreMem(asm.R10, ctxSlot, asm.R0, asm.DWord))
	}
	if usesScratch {
		g.emit(asm.LoadMem(asm.R0, asm.R4, int16(scratchSlot-g.varsLow), asm.DWord),
			asm.StoreMem(asm.R10, scratchSlot, asm.R0, asm.DWord))
	}
	sub := append(g.insns, body...)
	if l := sub[0].Symbol(); l != "" && l != cb {
		g.alias[l] = cb // a label on the callback's first instruction
	}
	sub[0] = sub[0].WithSymbol(cb)
	subs, labels, maxScr := g.subprogs, g.labelN, g.maxScr

	// Back to the program: the caller's frame must hold what the callback
	// copies from it.
	*g = saved
	g.subprogs = append(subs, sub)
	g.labelN = labels
	if maxScr > g.maxScr {
		g.maxScr = maxScr
	}
	g.usesCtx = g.usesCtx || usesCtx
	g.usesScratch = g.usesScratch || usesScratch
	g.forEach(ms, cb, mem{base: onStack, off: g.varsLow})
	return nil
}

// copyVars copies the scratch variables between the caller's frame (at
// the context pointer, kept in the callback's cbSlot) and the callback's
// own frame: in when in is set, else back out.
func (g *gen) copyVars(in bool) {
	if g.dead {
		return
	}
	g.emit(asm.LoadMem(asm.R4, asm.R10, int16(g.cbSlot), asm.DWord))
	for off := g.varsLow; off < scratchSlot; off += 8 {
		rel := int16(off - g.varsLow)
		if in {
			g.emit(asm.LoadMem(asm.R0, asm.R4, rel, asm.DWord), asm.StoreMem(asm.R10, int16(off), asm.R0, asm.DWord))
		} else {
			g.emit(asm.LoadMem(asm.R0, asm.R10, int16(off), asm.DWord), asm.StoreMem(asm.R4, rel, asm.R0, asm.DWord))
		}
	}
}

// fromPtr stores the value of type st at src+soff (src is R2 or R3, a map
// key or value pointer) at dst as type dt.
func (g *gen) fromPtr(dst mem, dt *types.Type, src asm.Register, soff int, st *types.Type) error {
	if isScalar(dt) && isScalar(st) {
		size := st.Size
		if size != 1 && size != 2 && size != 4 {
			size = 8
		}
		g.emit(asm.LoadMem(asm.R0, src, int16(soff), sizeOf(size)))
		g.extend(asm.R0, size, st.Signed && st.Kind != types.Bool)
		dsize := dt.Size
		if dsize != 1 && dsize != 2 && dsize != 4 {
			dsize = 8
		}
		base, off := g.baseOf(dst, asm.R5)
		g.emit(asm.StoreMem(base, off, asm.R0, sizeOf(dsize)))
		return nil
	}
	if dt.Kind == types.Tuple && st.Kind == types.Tuple && len(dt.Fields) == len(st.Fields) {
		for i := range dt.Fields {
			if err := g.fromPtr(dst.plus(dt.Fields[i].Offset), dt.Fields[i].Type, src, soff+st.Fields[i].Offset, st.Fields[i].Type); err != nil {
				return err
			}
		}
		g.zeroPadding(dst, dt)
		return nil
	}
	n := min(dt.Size, st.Size)
	base, off := g.baseOf(dst, asm.R5)
	for done := 0; done < n; {
		c := chunk(n-done, int(off)+done)
		g.emit(asm.LoadMem(asm.R0, src, int16(soff+done), sizeOf(c)), asm.StoreMem(base, off+int16(done), asm.R0, sizeOf(c)))
		done += c
	}
	if dt.Size > n {
		g.zero(dst.plus(n), dt.Size-n)
	}
	return nil
}

// maxCPUs bounds the per-CPU sum loop (the lookup fails past the last
// possible CPU first).
const maxCPUs = 1024

// sumPerCPU stores at dst the sum over CPUs of the 8-byte per-CPU values of
// the key at R2 in map ms (bpf_map_lookup_percpu_elem). It uses R6-R9,
// which a callback gets free.
func (g *gen) sumPerCPU(ms *MapSpec, dst mem, dt *types.Type) {
	top, done := g.label("cpu"), g.label("cpudone")
	g.emit(asm.Mov.Reg(asm.R9, asm.R2), asm.Mov.Imm(asm.R7, 0), asm.Mov.Imm(asm.R8, 0))
	g.place(top)
	g.emit(asm.JGE.Imm(asm.R8, maxCPUs, done))
	g.mapPtr(asm.R1, ms)
	g.emit(asm.Mov.Reg(asm.R2, asm.R9), asm.Mov.Reg(asm.R3, asm.R8), asm.FnMapLookupPercpuElem.Call(),
		asm.JEq.Imm(asm.R0, 0, done),
		asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord), asm.Add.Reg(asm.R7, asm.R0),
		asm.Add.Imm(asm.R8, 1), asm.Ja.Label(top))
	g.place(done)
	size := dt.Size
	if size != 1 && size != 2 && size != 4 {
		size = 8
	}
	g.storeReg(dst, asm.R7, size)
	g.emit(asm.Mov.Reg(asm.R2, asm.R9))
}
