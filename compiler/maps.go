package compiler

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

func (g *gen) mapOf(e *lang.MapExpr) (*MapSpec, *mapLayout, error) {
	if e.Info == nil {
		return nil, nil, g.errorf(e, "map %s has no type", e.Name)
	}
	ms, lay, err := g.c.userMap(e.Info)
	if err != nil {
		return nil, nil, g.errorf(e, "%v", err)
	}
	if len(e.Keys) != len(lay.parts) && !tupleKey(e, lay) {
		return nil, nil, g.errorf(e, "map %s used with %d keys, declared with %d", e.Name, len(e.Keys), len(lay.parts))
	}
	return ms, lay, nil
}

// tupleKey reports whether e gives a map of several keys one tuple of
// them, @m[$t] (bpftrace 0.26: @[(1, 2)] is @[1, 2]).
func tupleKey(e *lang.MapExpr, lay *mapLayout) bool {
	if len(e.Keys) != 1 || len(lay.parts) < 2 {
		return false
	}
	t := e.Keys[0].Type()
	return t != nil && t.Kind == types.Tuple && len(t.Fields) == len(lay.parts)
}

// keyExprs are e's key parts, a tuple key split into its elements.
func keyExprs(e *lang.MapExpr, lay *mapLayout) []lang.Expr {
	if !tupleKey(e, lay) {
		return e.Keys
	}
	k := e.Keys[0]
	if tup, ok := k.(*lang.TupleExpr); ok {
		return tup.Elems
	}
	t := k.Type()
	out := make([]lang.Expr, len(t.Fields))
	for i, f := range t.Fields {
		ix := &lang.TupleIndexExpr{Loc: lang.Loc(k.Span()), X: k, Index: i}
		ix.SetType(f.Type)
		out[i] = ix
	}
	return out
}

// buildKey writes the key of map access e (all parts but a hist bucket).
func (g *gen) buildKey(e *lang.MapExpr, lay *mapLayout) (mem, error) {
	km := g.allocMem(lay.key.Size)
	if len(lay.parts) == 0 {
		if lay.array && lay.bucket {
			return km, nil // the bucket index is the whole key
		}
		size := asm.DWord
		if lay.array {
			size = asm.Word
		}
		base, off := g.baseOf(km, asm.R1)
		g.emit(stdlib.StImm(base, off, 0, size))
		return km, nil
	}
	for i, k := range keyExprs(e, lay) {
		if err := g.storeValue(km.plus(lay.offs[i]), lay.parts[i], k); err != nil {
			return mem{}, err
		}
	}
	if lay.key.Kind == types.Tuple && (len(lay.parts) > 1 || lay.bucket) {
		g.zeroPadding(km, lay.key)
	}
	return km, nil
}

func (g *gen) mapPtr(dst asm.Register, ms *MapSpec) {
	g.emit(asm.LoadMapPtr(dst, 0).WithReference(ms.Name))
}

// lookup emits r0 = bpf_map_lookup_elem(ms, &key).
func (g *gen) lookup(ms *MapSpec, key mem) {
	g.mapPtr(asm.R1, ms)
	g.addr(asm.R2, key)
	g.emit(asm.FnMapLookupElem.Call())
}

// update emits bpf_map_update_elem(ms, &key, &val, BPF_ANY).
func (g *gen) update(ms *MapSpec, key, val mem) {
	g.addr(asm.R3, val)
	g.addr(asm.R2, key)
	g.mapPtr(asm.R1, ms)
	g.emit(asm.Mov.Imm(asm.R4, 0), asm.FnMapUpdateElem.Call())
	switch ms.Type {
	case ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash, ebpf.LRUCPUHash:
		// Only keyed hashes fill up (an array's keys all exist; a keyless
		// map's one key is the only one it ever gets).
		if ms.User == nil || ms.User.Key != nil {
			g.countMapFull()
		}
	}
}

// countMapFull follows every bpf_map_update_elem of a user map: an update
// refused because the map holds MapKeysMax keys (r0 == -E2BIG) adds 1 to
// map_full[0] (ABI.md), which the runtime reports at exit. R0 is kept.
func (g *gen) countMapFull() {
	fm := g.c.internalMap(MapFull, ebpf.Array, 4, 8, 1)
	ok := g.label("update_ok")
	g.emit(asm.JNE.Imm(asm.R0, -int32(unix.E2BIG), ok),
		asm.LoadMapValue(asm.R1, 0, 0).WithReference(fm.Name),
		asm.Mov.Imm(asm.R2, 1),
		asm.StoreXAdd(asm.R1, asm.R2, asm.DWord),
		asm.Mov.Imm(asm.R0, -int32(unix.E2BIG)))
	g.place(ok)
}

func (g *gen) mapReadInt(e *lang.MapExpr) (asm.Register, error) {
	ms, lay, err := g.mapOf(e)
	if err != nil {
		return 0, err
	}
	if t := e.Type(); t != nil && t.Kind == types.Int && lay.agg && lay.value.Kind != types.Hist && lay.value.Kind != types.Lhist && lay.value.Kind != types.Tseries {
		// The checker typed the read as an integer (bpftrace 0.26).
		return g.aggReadInt(e, ms, lay)
	}
	switch lay.value.Kind {
	case types.Avg, types.Stats, types.Hist, types.Lhist, types.Tseries:
		return 0, g.errorf(e, "the value of %s (%s) cannot be read in a probe", e.Name, lay.value)
	}
	key, err := g.buildKey(e, lay)
	if err != nil {
		return 0, err
	}
	g.lookup(ms, key)
	if err := g.checkHelper(e, "map_lookup_elem", true); err != nil {
		return 0, err
	}
	r, err := g.reg(e)
	if err != nil {
		return 0, err
	}
	l := g.label("absent")
	g.emit(asm.JEq.Imm(asm.R0, 0, l), asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord))
	g.place(l)
	g.emit(asm.Mov.Reg(r, asm.R0))
	return r, nil
}

func (g *gen) mapReadMem(e *lang.MapExpr) (mem, error) {
	ms, lay, err := g.mapOf(e)
	if err != nil {
		return mem{}, err
	}
	key, err := g.buildKey(e, lay)
	if err != nil {
		return mem{}, err
	}
	m := g.allocMem(lay.value.Size)
	g.lookup(ms, key)
	if err := g.checkHelper(e, "map_lookup_elem", true); err != nil {
		return mem{}, err
	}
	absent, done := g.label("absent"), g.label("read")
	g.emit(asm.JEq.Imm(asm.R0, 0, absent), asm.Mov.Reg(asm.R3, asm.R0))
	db, do := g.baseOf(m, asm.R2)
	n := lay.value.Size
	for at := 0; at < n; {
		c := chunk(n-at, int(do)+at)
		g.emit(asm.LoadMem(asm.R5, asm.R3, int16(at), sizeOf(c)), asm.StoreMem(db, do+int16(at), asm.R5, sizeOf(c)))
		at += c
	}
	g.emit(asm.Ja.Label(done))
	g.place(absent)
	g.zero(m, n)
	g.place(done)
	g.emit(nopJump())
	return m, nil
}

// mapWrite emits @m[k] = rhs.
func (g *gen) mapWrite(e *lang.MapExpr, rhs lang.Expr) error {
	ms, lay, err := g.mapOf(e)
	if err != nil {
		return err
	}
	key, err := g.buildKey(e, lay)
	if err != nil {
		return err
	}
	val := g.allocMem(lay.value.Size)
	if err := g.storeValue(val, lay.value, rhs); err != nil {
		return err
	}
	g.update(ms, key, val)
	// bpftrace's -k warning marks the assignment's "=".
	return g.checkHelper(g.assignOp(e, rhs), "map_update_elem", false)
}

// mapDelete emits delete(@m[k]); n is the call, for -k warnings.
func (g *gen) mapDelete(n lang.Node, e *lang.MapExpr) error {
	ms, lay, err := g.mapOf(e)
	if err != nil {
		return err
	}
	if lay.array {
		// An array entry cannot be deleted, and a program sees only its
		// own CPU's slot: the runtime zeroes every CPU's count, as for
		// clear(@), which leaves bpftrace's `@: 0` too.
		_, err := g.Event(stdlib.EvClear, "", ms.Name, nil)
		return err
	}
	key, err := g.buildKey(e, lay)
	if err != nil {
		return err
	}
	g.mapPtr(asm.R1, ms)
	g.addr(asm.R2, key)
	g.emit(asm.FnMapDeleteElem.Call())
	if err := g.checkHelper(n, "map_delete_elem", false); err != nil {
		return err
	}
	if ex, ok := n.(lang.Expr); ok && ex.Type() != nil && ex.Type().Kind == types.Bool {
		// bpftrace 0.26: delete() is true when it deleted an element.
		l := g.label("deleted")
		g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.Mov.Imm(asm.R0, 1), asm.JEq.Imm(asm.R1, 0, l), asm.Mov.Imm(asm.R0, 0))
		g.place(l)
		g.emit(asm.Mov.Reg(asm.R0, asm.R0))
		g.SetResult(asm.R0)
	}
	return nil
}

// mapModify emits @m[k] OP= v (or ++/--): one lookup and an in-place
// update when the key exists, an insert of (0 OP v) otherwise. It returns
// the new value (or the old one for postfix) in a pool register.
func (g *gen) mapModify(n lang.Node, e *lang.MapExpr, op string, rhs lang.Expr, postfix bool) (asm.Register, error) {
	ms, lay, err := g.mapOf(e)
	if err != nil {
		return 0, err
	}
	if !isScalar(lay.value) {
		return 0, g.errorf(n, "%s on a map of %s", op, lay.value)
	}
	key, err := g.buildKey(e, lay)
	if err != nil {
		return 0, err
	}
	// A map of pointers steps by the pointee's size.
	scale := int64(1)
	if op == "+" || op == "-" {
		scale = elemScale(e.Info.Value)
	}
	var rv asm.Register
	imm, isImm := int64(0), false
	if rhs == nil {
		imm, isImm = scale, true
	} else if v, ok := g.constInt(rhs); ok && fitsImm(v*scale) {
		imm, isImm = v*scale, true
	} else if rv, err = g.evalInt(rhs); err != nil {
		return 0, err
	} else if scale != 1 {
		g.emit(asm.Mul.Imm(rv, int32(scale)))
	}
	res, err := g.reg(n)
	if err != nil {
		return 0, err
	}
	signed := g.signedOp(e.Type(), types.S64)
	if rhs != nil {
		signed = g.signedOp(e.Type(), rhs.Type())
	}
	g.lookup(ms, key)
	miss, done := g.label("miss"), g.label("stored")
	g.emit(asm.JEq.Imm(asm.R0, 0, miss), asm.Mov.Reg(asm.R4, asm.R0), asm.LoadMem(res, asm.R0, 0, asm.DWord))
	if err := g.arith(n, op, res, rv, imm, isImm, signed); err != nil {
		return 0, err
	}
	g.normalize(res, lay.value)
	g.emit(asm.StoreMem(asm.R4, 0, res, asm.DWord), asm.Ja.Label(done))
	g.place(miss)
	g.emit(asm.Mov.Imm(res, 0))
	if err := g.arith(n, op, res, rv, imm, isImm, signed); err != nil {
		return 0, err
	}
	g.normalize(res, lay.value)
	val, err := g.allocStack(8)
	if err != nil {
		return 0, err
	}
	g.storeReg(val, res, 8)
	g.update(ms, key, val)
	if err := g.checkHelper(n, "map_update_elem", false); err != nil {
		return 0, err
	}
	g.place(done)
	g.emit(asm.Mov.Reg(res, res))
	if rv != 0 {
		g.free(rv)
	}
	if postfix {
		if op == "+" {
			g.emit(asm.Sub.Imm(res, int32(scale)))
		} else {
			g.emit(asm.Add.Imm(res, int32(scale)))
		}
		g.normalize(res, lay.value)
	}
	return res, nil
}

// Aggregate implements stdlib.Gen: one lookup and an in-place update on
// the hot path; only a missing key pays for an insert.
func (g *gen) Aggregate(c *stdlib.Call, op stdlib.AggOp) error {
	dest := g.aggDest
	if dest == nil {
		return g.errorf(c.Expr, "%s() must be assigned to a map", c.Name)
	}
	g.aggDest = nil
	ms, lay, err := g.mapOf(dest)
	if err != nil {
		return err
	}
	if lay.value.Size != op.ValueSize {
		return g.errorf(c.Expr, "map %s holds %s, not %s()", dest.Name, dest.Info.Value, c.Name)
	}
	key, err := g.buildKey(dest, lay)
	if err != nil {
		return err
	}
	var arg asm.Register
	if op.Arg != nil {
		if arg, err = g.evalInt(op.Arg); err != nil {
			return err
		}
	}
	var aux asm.Register
	if op.Aux != nil {
		if aux, err = g.reg(c.Expr); err != nil {
			return err
		}
		if err := op.Aux(g, aux); err != nil {
			return err
		}
	}
	update, init := op.Update, op.Init
	if op.UpdateAux != nil {
		update = func(g stdlib.Gen, ptr, arg asm.Register) { op.UpdateAux(g, ptr, arg, aux) }
		init = func(g stdlib.Gen, ptr, arg asm.Register) { op.InitAux(g, ptr, arg, aux) }
	}
	defer func() {
		if aux != 0 {
			g.free(aux)
		}
	}()
	if lay.bucket {
		if op.Bucket == nil {
			return g.errorf(c.Expr, "%s() has no bucket computation", c.Name)
		}
		b, err := g.reg(c.Expr)
		if err != nil {
			return err
		}
		from := arg
		if op.Aux != nil {
			from = aux
		}
		if err := op.Bucket(g, b, from); err != nil {
			return err
		}
		size := 8
		if lay.array {
			size = 4 // a bucket array's u32 index (below its MaxEntries)
		}
		g.storeReg(key.plus(lay.bucketOff), b, size)
		g.free(b)
	}
	g.lookup(ms, key)
	miss, done := g.label("miss"), g.label("agg")
	if lay.array {
		// Index 0 (a bucket array: every bucket index) always exists; the
		// test only satisfies the verifier.
		g.emit(asm.JEq.Imm(asm.R0, 0, done))
		update(g, asm.R0, arg)
		g.place(done)
		if arg != 0 {
			g.free(arg)
		}
		return nil
	}
	g.emit(asm.JEq.Imm(asm.R0, 0, miss))
	update(g, asm.R0, arg)
	g.emit(asm.Ja.Label(done))
	g.place(miss)
	val, err := g.allocStack(op.ValueSize)
	if err != nil {
		return err
	}
	g.addr(asm.R3, val)
	init(g, asm.R3, arg)
	g.update(ms, key, val)
	if err := g.checkHelper(c.Expr, "map_update_elem", false); err != nil {
		return err
	}
	g.place(done)
	if arg != 0 {
		g.free(arg)
	}
	return nil
}

// Event implements stdlib.Gen: it writes [u64 id][args tuple] and submits
// it with bpf_ringbuf_output.
func (g *gen) Event(kind stdlib.EventKind, format, mapName string, args []lang.Expr) (int, error) {
	var elems []*types.Type
	for _, a := range args {
		t := a.Type()
		if t == nil || t.IsInvalid() {
			return 0, g.errorf(a, "argument has no type")
		}
		elems = append(elems, storage(t))
	}
	tup := types.TupleOf(elems...)
	id := g.c.addEvent(&Event{Kind: kind, Format: format, Args: tup, Map: mapName, Pos: g.span})
	size := 8 + tup.Size
	buf := g.allocMem(size)
	base, off := g.baseOf(buf, asm.R1)
	g.emit(stdlib.StImm(base, off, int64(id), asm.DWord))
	for i, a := range args {
		if err := g.storeValue(buf.plus(8+tup.Fields[i].Offset), tup.Fields[i].Type, a); err != nil {
			return 0, err
		}
	}
	if len(args) > 0 {
		g.zeroPadding(buf.plus(8), tup)
	}
	rb := g.c.internalMap(MapRingBuf, ebpf.RingBuf, 0, 0, g.c.opts.RingBufSize)
	g.mapPtr(asm.R1, rb)
	g.addr(asm.R2, buf)
	g.emit(asm.Mov.Imm(asm.R3, int32(size)), asm.Mov.Imm(asm.R4, 0), asm.FnRingbufOutput.Call())
	g.countLost()
	return id, nil
}

// MapCall implements stdlib.Gen for the map functions.
func (g *gen) MapCall(c *stdlib.Call, op stdlib.MapOp) error {
	if len(c.Args) == 0 {
		return g.errorf(c.Expr, "%s() needs a map argument", c.Name)
	}
	me, ok := c.Args[0].(*lang.MapExpr)
	if !ok {
		return g.errorf(c.Args[0], "%s() expects a map", c.Name)
	}
	switch op {
	case stdlib.MapDelete:
		if len(c.Args) == 2 && len(me.Keys) == 0 {
			// delete(@m, key): the key as a separate argument.
			k := *me
			k.Keys = []lang.Expr{c.Args[1]}
			if tup, ok := c.Args[1].(*lang.TupleExpr); ok && me.Info != nil && len(me.Info.KeyParts) > 1 {
				k.Keys = tup.Elems
			}
			return g.mapDelete(c.Expr, &k)
		}
		return g.mapDelete(c.Expr, me)
	case stdlib.MapHasKey:
		k := *me
		if len(c.Args) == 2 {
			k.Keys = []lang.Expr{c.Args[1]}
			if tup, ok := c.Args[1].(*lang.TupleExpr); ok && me.Info != nil && len(me.Info.KeyParts) > 1 {
				k.Keys = tup.Elems
			}
		}
		ms, lay, err := g.mapOf(&k)
		if err != nil {
			return err
		}
		key, err := g.buildKey(&k, lay)
		if err != nil {
			return err
		}
		g.lookup(ms, key)
		l := g.label("has")
		g.emit(asm.JEq.Imm(asm.R0, 0, l), asm.Mov.Imm(asm.R0, 1))
		g.place(l)
		g.emit(nopJump())
		g.SetResult(asm.R0)
		return nil
	case stdlib.MapFind:
		// find(@m[key], $v), as the checker rewrote it: the key's lookup,
		// then (found) the assignment $v = @m[key].
		if len(c.Args) != 2 || len(me.Keys) == 0 {
			return g.errorf(c.Expr, "find(): unexpected arguments")
		}
		ms, lay, err := g.mapOf(me)
		if err != nil {
			return err
		}
		key, err := g.buildKey(me, lay)
		if err != nil {
			return err
		}
		g.lookup(ms, key)
		missing := g.label("find_missing")
		done := g.label("find_done")
		g.emit(asm.JEq.Imm(asm.R0, 0, missing))
		if err := g.stmt(&lang.AssignStmt{Loc: lang.Loc(c.Expr.Span()), Lhs: c.Args[1], Op: "=", Rhs: me}); err != nil {
			return err
		}
		g.emit(asm.Mov.Imm(asm.R0, 1), asm.Ja.Label(done))
		g.place(missing)
		g.emit(asm.Mov.Imm(asm.R0, 0))
		g.place(done)
		g.emit(nopJump())
		g.SetResult(asm.R0)
		return nil
	case stdlib.MapLen:
		if err := g.mapLen(me); err != nil {
			return err
		}
		g.SetResult(asm.R0)
		return nil
	case stdlib.MapClear, stdlib.MapZero, stdlib.MapPrint:
		ms, _, err := g.c.userMap(me.Info)
		if err != nil || me.Info == nil {
			return g.errorf(me, "map %s has no type", me.Name)
		}
		kind := map[stdlib.MapOp]stdlib.EventKind{stdlib.MapClear: stdlib.EvClear, stdlib.MapZero: stdlib.EvZero, stdlib.MapPrint: stdlib.EvPrint}[op]
		_, err = g.Event(kind, "", ms.Name, c.Args[1:])
		return err
	}
	return g.errorf(c.Expr, "%s() cannot be compiled to BPF", c.Name)
}

func (g *gen) String() string { return fmt.Sprintf("gen(%s)", g.prog.Name) }

// checkHelper, under -k, emits a warning record when the helper call just
// made failed: a lookup (under -kk) that found nothing, or an update or
// delete that returned an error. R0 is kept (0 after a failed lookup).
func (g *gen) checkHelper(n lang.Node, helper string, lookup bool) error {
	level := 1
	if lookup {
		level = 2
	}
	if g.c.opts.HelperCheck < level {
		return nil
	}
	if lookup {
		return g.helperErrorIf(n.Span(), helper, asm.JNE)
	}
	return g.helperErrorIf(n.Span(), helper, asm.JEq)
}

// helperErrorIf emits a helper_error record for helper at sp unless
// "R0 okJump 0" holds. R0 is kept.
func (g *gen) helperErrorIf(sp lang.Span, helper string, okJump asm.JumpOp) error {
	ok := g.label("helper_ok")
	g.emit(okJump.Imm(asm.R0, 0, ok))
	id := g.c.addEvent(&Event{Kind: EvHelperError, Format: helper, Args: types.TupleOf(types.S64), Pos: sp})
	rec, err := g.allocStack(16)
	if err != nil {
		return err
	}
	g.emit(stdlib.StImm(asm.R10, int16(rec.off), int64(id), asm.DWord),
		asm.StoreMem(asm.R10, int16(rec.off+8), asm.R0, asm.DWord))
	rb := g.c.internalMap(MapRingBuf, ebpf.RingBuf, 0, 0, g.c.opts.RingBufSize)
	g.mapPtr(asm.R1, rb)
	g.addr(asm.R2, rec)
	g.emit(asm.Mov.Imm(asm.R3, 16), asm.Mov.Imm(asm.R4, 0), asm.FnRingbufOutput.Call())
	g.countLost()
	g.emit(asm.LoadMem(asm.R0, asm.R10, int16(rec.off+8), asm.DWord))
	g.place(ok)
	g.emit(nopJump())
	return nil
}

// probeReadName is the name bpftrace 0.17 reports a failed read helper by
// (-kk), "" for other helpers.
func probeReadName(fn asm.BuiltinFunc) string {
	switch fn {
	case asm.FnProbeRead, asm.FnProbeReadKernel:
		return "probe_read"
	case asm.FnProbeReadUser:
		return "probe_read_user"
	case asm.FnProbeReadStr, asm.FnProbeReadKernelStr:
		return "probe_read_str"
	case asm.FnProbeReadUserStr:
		return "probe_read_user_str"
	}
	return ""
}

// checkRead, under -kk, emits a helper_error record when the probe read
// just made (R0 < 0) failed, placed as bpftrace places it: a dereference
// at its '*', anything else on the whole expression. R0 is kept.
func (g *gen) checkRead(n lang.Node, fn asm.BuiltinFunc, space types.AddrSpace) error {
	if g.c.opts.HelperCheck < 2 {
		return nil
	}
	if fn == asm.FnProbeReadKernel {
		fn = readHelper(space)
	}
	sp := n.Span()
	if u, ok := n.(*lang.UnaryExpr); ok && u.Op == "*" && sp.Start.IsValid() {
		sp.End = sp.Start
		sp.End.Col++
		sp.End.Offset++
	} else if g.c.res.Opts.Compat.HelperErrorLexerStart() {
		sp = lang.LexerStart(g.c.res.Prog.Src, sp, nil)
	}
	if g.c.res.Opts.Compat.Legacy() {
		sp = lang.ShiftColumns(g.c.res.Prog.Src, sp)
	}
	return g.helperErrorIf(sp, probeReadName(fn), asm.JSGE)
}

// spanNode is a node that is only a place in the script.
type spanNode struct{ sp lang.Span }

func (n spanNode) Span() lang.Span { return n.sp }

// assignOp is the "=" between a map and its assigned value, found in the
// script's text (lhs itself when it cannot be).
func (g *gen) assignOp(lhs *lang.MapExpr, rhs lang.Expr) lang.Node {
	src := g.c.res.Prog.Src
	if src == nil || rhs == nil {
		return lhs
	}
	end, next := lhs.Span().End, rhs.Span().Start
	if end.File != nil {
		src = end.File // in an imported script
	}
	if !end.IsValid() || !next.IsValid() || end.Offset > next.Offset || next.Offset > len(src.Text) {
		return lhs
	}
	between := src.Text[end.Offset:next.Offset]
	i := strings.IndexByte(between, '=')
	if i < 0 || strings.ContainsRune(between[:i], '\n') {
		return lhs
	}
	at := lang.Pos{Offset: end.Offset + i, Line: end.Line, Col: end.Col + i, File: end.File}
	return spanNode{lang.Span{Start: at, End: lang.Pos{Offset: at.Offset + 1, Line: at.Line, Col: at.Col + 1, File: end.File}}}
}
