package compiler

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
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
	if err := g.checkHelpers(s, "for ("+s.Var.Name+" : "+s.Map.Name+")", asm.Instructions{asm.FnForEachMapElem.Call()}); err != nil {
		return err
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
	returned, err := g.callback(cb, asm.R4, func() error {
		// key (R2) and value (R3) into $kv.
		if err := g.fromPtr(kvMem.plus(kvT.Fields[0].Offset), kvT.Fields[0].Type, asm.R2, 0, keyT); err != nil {
			return err
		}
		if lay.agg {
			// count()/sum(): the value is the sum over the CPUs.
			g.sumPerCPU(ms, kvMem.plus(kvT.Fields[1].Offset), kvT.Fields[1].Type)
			return nil
		}
		return g.fromPtr(kvMem.plus(kvT.Fields[1].Offset), kvT.Fields[1].Type, asm.R3, 0, lay.value)
	}, s.Body)
	if err != nil {
		return err
	}
	if returned {
		g.clearReturned()
	}
	g.forEach(ms, cb, mem{base: onStack, off: g.varsLow})
	if returned {
		g.afterCallback()
	}
	return nil
}

// callback generates subprogram cb, a loop body run by a helper
// (bpf_for_each_map_elem, bpf_loop) with the program's frame layout: its
// context argument (in ctxReg) points at the caller's scratch variables,
// which it copies in, runs entry then body, and copies back. It returns 0
// to go on (the end of the body, continue) and 1 to stop (break, and
// return, which also sets the returned flag: afterCallback).
func (g *gen) callback(cb string, ctxReg asm.Register, entry func() error, body *lang.Block) (returned bool, err error) {
	saved := *g
	g.cbReturned = false
	g.insns, g.pending, g.dead = nil, nil, false
	g.used = [len(pool)]bool{}
	g.usesCtx, g.usesScratch = false, false
	brk, cont := g.label("for_break"), g.label("for_next")
	g.loops = []loop{{brk: brk, cont: cont}}
	g.maxStk = g.stack
	g.inCB++

	if err := entry(); err != nil {
		return false, err
	}
	if err := g.block(body); err != nil {
		return false, err
	}
	g.place(cont)
	g.copyVars(false)
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	g.dead = true
	g.place(brk) // live only if a break jumps here
	g.copyVars(false)
	g.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	code := g.insns
	g.pending = nil // an unused break label
	usesCtx, usesScratch := g.usesCtx, g.usesScratch
	returned = g.cbReturned

	// Its prologue: keep the context pointer, copy the variables in.
	g.insns, g.pending, g.dead = nil, nil, false
	g.emit(asm.StoreMem(asm.R10, int16(g.cbSlot), ctxReg, asm.DWord))
	g.copyVars(true)
	if usesCtx {
		g.emit(asm.LoadMem(asm.R0, asm.R4, int16(ctxSlot-g.varsLow), asm.DWord),
			asm.StoreMem(asm.R10, ctxSlot, asm.R0, asm.DWord))
	}
	if usesScratch {
		g.emit(asm.LoadMem(asm.R0, asm.R4, int16(scratchSlot-g.varsLow), asm.DWord),
			asm.StoreMem(asm.R10, scratchSlot, asm.R0, asm.DWord))
	}
	sub := append(g.insns, code...)
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
	return returned, nil
}

// callbackLoop reports whether the loop runs as a callback (bpf_loop or
// bpf_for_each_map_elem): a for loop over a map, or a range loop whose
// bounds are not constant.
func callbackLoop(n lang.Node) bool {
	switch s := n.(type) {
	case *lang.ForStmt:
		return true
	case *lang.WhileStmt:
		if s.From == nil {
			return false
		}
		_, c1 := lang.ConstOf(s.From)
		_, c2 := lang.ConstOf(s.To)
		return !(c1 && c2)
	}
	return false
}

// clearReturned zeroes the returned flag before a callback loop runs.
func (g *gen) clearReturned() {
	g.emit(stdlib.StImm(asm.R10, int16(g.retSlot), 0, asm.DWord))
}

// afterCallback follows a callback loop: a return in its body (which
// stopped the loop and set the flag) returns from the program too.
func (g *gen) afterCallback() {
	on := g.label("cbret")
	g.emit(asm.LoadMem(asm.R1, asm.R10, int16(g.retSlot), asm.DWord), asm.JEq.Imm(asm.R1, 0, on))
	g.Return()
	g.place(on)
	g.emit(nopJump())
}

// maxLoops is the kernel's bound on bpf_loop's iterations (BPF_MAX_LOOPS).
const maxLoops = 1 << 23

// rangeLoop runs a lowered range loop (`for $i : a..b`, lang's
// lowerRanges: `$i = a; $end = b; while ($i < $end) { body; $i++ }`)
// whose bounds are not constants with bpf_loop, as bpftrace 0.26 does:
// max(0, b - a) iterations (at most 2^23) of a callback whose $i is a plus
// the iteration's index. The verifier checks such a callback once, where
// it would follow a loop whose bound it cannot see to its limit. $end
// holds a during the loop: $i comes from the index, not from the last
// iteration's $i, so the callback's states converge.
func (g *gen) rangeLoop(s *lang.WhileStmt) error {
	if err := g.checkHelpers(s, "for range loop", asm.Instructions{asm.FnLoop.Call()}); err != nil {
		return err
	}
	cond, ok := s.Cond.(*lang.BinaryExpr)
	var iv, ev *lang.VarExpr
	if ok {
		iv, _ = cond.X.(*lang.VarExpr)
		ev, _ = cond.Y.(*lang.VarExpr)
	}
	if iv == nil || ev == nil {
		return g.errorf(s, "range loop without its variables")
	}
	im, ok1 := g.vars[iv.Info]
	em, ok2 := g.vars[ev.Info]
	if !ok1 || !ok2 {
		return g.errorf(s, "range loop variables have no slots")
	}
	g.forN++
	cb := fmt.Sprintf("%s_for%d", g.prog.Name, g.forN)
	returned, err := g.callback(cb, asm.R2, func() error {
		// R1 is the iteration's index (the prologue keeps it).
		base, off := g.baseOf(em, asm.R0)
		g.emit(asm.LoadMem(asm.R0, base, off, asm.DWord), asm.Add.Reg(asm.R0, asm.R1))
		g.storeReg(im, asm.R0, 8)
		return nil
	}, s.Body)
	if err != nil {
		return err
	}
	// The count: b - a, signed, clamped to [0, maxLoops]; $end = a.
	hi, err := g.reg(s)
	if err != nil {
		return err
	}
	base, off := g.baseOf(em, asm.R1)
	g.emit(asm.LoadMem(hi, base, off, asm.DWord))
	base, off = g.baseOf(im, asm.R1)
	g.emit(asm.LoadMem(asm.R2, base, off, asm.DWord))
	g.storeReg(em, asm.R2, 8)
	skip, clamp := g.label("rnone"), g.label("rcount")
	g.emit(asm.Sub.Reg(hi, asm.R2), asm.JSLE.Imm(hi, 0, skip),
		asm.JSLE.Imm(hi, maxLoops, clamp), asm.Mov.Imm(hi, maxLoops))
	g.place(clamp)
	if returned {
		g.clearReturned()
	}
	g.emit(asm.Mov.Reg(asm.R1, hi))
	g.free(hi)
	g.emit(funcRef(asm.R2, cb))
	g.addr(asm.R3, mem{base: onStack, off: g.varsLow})
	g.emit(asm.Mov.Imm(asm.R4, 0), asm.FnLoop.Call())
	if returned {
		g.afterCallback()
	}
	g.place(skip)
	g.emit(nopJump())
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
