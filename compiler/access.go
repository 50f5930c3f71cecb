package compiler

import (
	goruntime "runtime"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// isArgs reports whether e is the probe's `args`. With isProbe, the one
// place the compiler names a builtin variable: how a clause is split into
// programs depends on them, and no row field says so.
func isArgs(e lang.Node) bool {
	b, ok := e.(*lang.BuiltinExpr)
	return ok && b.Name == "args"
}

// isProbe reports whether e is `probe`, a constant of each program.
func isProbe(e lang.Node) bool {
	b, ok := e.(*lang.BuiltinExpr)
	return ok && b.Name == "probe"
}

// argsInRegs reports whether ap's `args` are the function's parameters in
// the argument registers of its pt_regs (the probe table: DWARF
// parameters, argN from the registers: a uprobe, not a uretprobe, where
// the registers are gone).
func argsInRegs(ap *lang.AttachPoint) bool {
	t := ap.Provider.Type()
	return t.Args == lang.ArgsDWARF && t.ArgN == lang.ArgNRegs
}

func recordOf(t *types.Type) *types.Type {
	if t != nil && t.Kind == types.Pointer && t.Elem != nil {
		return t.Elem
	}
	return t
}

// argsField returns where field f of `args` sits in the context and whether
// the context is an array of u64 (raw tracepoints, fentry/fexit).
func (g *gen) argsField(f *lang.FieldExpr) (off int, wide bool, err error) {
	switch g.ap.Provider.Type().Context {
	case lang.CtxTracepoint:
		if fl := g.tpField(f); fl != nil {
			return fl.Offset, false, nil
		}
		if g.c.tracepointRecord(g.ap) != nil {
			return 0, false, g.errorf(f, "tracepoint %s:%s has no field %s", g.ap.Target, g.ap.Func, f.Field)
		}
		return f.Offset, false, nil
	case lang.CtxU64Array:
		rec := recordOf(f.X.Type())
		if rec != nil {
			for i, fl := range rec.Fields {
				if fl.Name == f.Field {
					return 8 * i, true, nil
				}
			}
		}
		return 0, false, g.errorf(f, "args has no field %s", f.Field)
	case lang.CtxPtRegs:
		if !argsInRegs(g.ap) {
			break // uretprobe: the argument registers are gone
		}
		// DWARF parameters: the i-th sits in the i-th argument register
		// of the saved pt_regs (the record puts it at offset 8*i).
		rec := recordOf(f.X.Type())
		if rec != nil {
			for i, fl := range rec.Fields {
				if fl.Name != f.Field {
					continue
				}
				off, ok := stdlib.ArgRegOffset(i)
				if !ok {
					return 0, false, g.errorf(f, "args->%s: only the first 6 arguments (passed in registers) can be read", f.Field)
				}
				if fl.Type != nil && fl.Type.Size > 8 {
					return 0, false, g.errorf(f, "args->%s: arguments bigger than 8 bytes (%s) cannot be read", f.Field, fl.Type)
				}
				return int(off), true, nil
			}
		}
		return 0, false, g.errorf(f, "args has no field %s", f.Field)
	}
	return 0, false, g.errorf(f, "args is not available in %s probes", g.ap.Provider)
}

// tpField returns the record field `args->NAME` of a tracepoint names.
func (g *gen) tpField(f *lang.FieldExpr) *types.Field {
	// The program's own tracepoint first (its offsets), then the record
	// the checker typed args with.
	rec := g.c.tracepointRecord(g.ap)
	if rec == nil {
		rec = recordOf(f.X.Type())
	}
	if rec == nil {
		return nil
	}
	for i := range rec.Fields {
		if rec.Fields[i].Name == f.Field {
			return &rec.Fields[i]
		}
	}
	return nil
}

// isDataLoc reports whether f is a tracepoint `__data_loc` field: its value
// is a pointer into the record, computed from the 32-bit locator.
func (g *gen) isDataLoc(f *lang.FieldExpr) bool {
	if g.ap.Provider != lang.ProbeTracepoint || !isArgs(f.X) {
		return false
	}
	fl := g.tpField(f)
	return fl != nil && fl.DataLoc
}

// ptrSpace is where memory reached through a pointer of type t lives.
func (g *gen) ptrSpace(t *types.Type) types.AddrSpace {
	if t != nil && t.Space != types.AddrNone {
		return t.Space
	}
	switch t := g.ap.Provider.Type(); {
	case t.UserMem:
		return types.AddrUser
	case t.Probetype == "special":
		// bpftrace's special probes run in no process's context: a
		// pointer of no known space is read with bpf_probe_read, which
		// picks the space by the address (probeRead).
		if goruntime.GOARCH == "amd64" {
			return types.AddrNone
		}
	}
	return types.AddrKernel
}

// readHelper is the probe-read helper for memory of space: the user or
// kernel one, or for a pointer of no known space (AddrNone, special
// probes on amd64) the original bpf_probe_read, as bpftrace.
func readHelper(space types.AddrSpace) asm.BuiltinFunc {
	switch space {
	case types.AddrUser:
		return asm.FnProbeReadUser
	case types.AddrNone:
		return asm.FnProbeRead
	}
	return asm.FnProbeReadKernel
}

// probeRead emits bpf_probe_read_{kernel,user}(&dst, size, src).
func (g *gen) probeRead(dst mem, size int, src asm.Register, space types.AddrSpace) {
	fn := readHelper(space)
	g.addr(asm.R1, dst)
	g.emit(asm.Mov.Imm(asm.R2, int32(size)), asm.Mov.Reg(asm.R3, src), fn.Call())
}

// kaddr computes the address of memory reached through a pointer (p->f,
// *p, p[i], and fields or elements of those), without emitting anything
// when e is not such an expression.
func (g *gen) kaddr(e lang.Expr) (asm.Register, types.AddrSpace, bool, error) {
	switch e := e.(type) {
	case *lang.FieldExpr:
		if isArgs(e.X) {
			return 0, 0, false, nil
		}
		xt := e.X.Type()
		if e.Arrow || (xt != nil && xt.Kind == types.Pointer) {
			r, err := g.evalInt(e.X)
			if err != nil {
				return 0, 0, false, err
			}
			if e.Offset != 0 {
				g.emit(asm.Add.Imm(r, int32(e.Offset)))
			}
			return r, g.ptrSpace(xt), true, nil
		}
		r, sp, ok, err := g.kaddr(e.X)
		if !ok || err != nil {
			return r, sp, ok, err
		}
		if e.Offset != 0 {
			g.emit(asm.Add.Imm(r, int32(e.Offset)))
		}
		return r, sp, true, nil
	case *lang.IndexExpr:
		xt := e.X.Type()
		if xt == nil || xt.Elem == nil {
			return 0, 0, false, nil
		}
		var r asm.Register
		var sp types.AddrSpace
		switch xt.Kind {
		case types.Pointer:
			var err error
			if r, err = g.evalInt(e.X); err != nil {
				return 0, 0, false, err
			}
			sp = g.ptrSpace(xt)
		case types.Array:
			var ok bool
			var err error
			if r, sp, ok, err = g.kaddr(e.X); !ok || err != nil {
				return r, sp, ok, err
			}
		default:
			return 0, 0, false, nil
		}
		size := int64(xt.Elem.Size)
		if v, ok := g.constInt(e.Index); ok {
			if v*size != 0 {
				g.emit(asm.Add.Imm(r, int32(v*size)))
			}
			return r, sp, true, nil
		}
		ri, err := g.evalInt(e.Index)
		if err != nil {
			return 0, 0, false, err
		}
		if size != 1 {
			g.emit(asm.Mul.Imm(ri, int32(size)))
		}
		g.emit(asm.Add.Reg(r, ri))
		g.free(ri)
		return r, sp, true, nil
	case *lang.UnaryExpr:
		if e.Op == "*" && !e.Postfix {
			r, err := g.evalInt(e.X)
			if err != nil {
				return 0, 0, false, err
			}
			return r, g.ptrSpace(e.X.Type()), true, nil
		}
	}
	return 0, 0, false, nil
}

// bitfield extracts a bitfield from its storage unit in r.
func (g *gen) bitfield(r asm.Register, f *lang.FieldExpr) {
	if f.BitWidth <= 0 {
		return
	}
	if f.BitOff > 0 {
		g.emit(asm.RSh.Imm(r, int32(f.BitOff)))
	}
	if f.BitWidth < 32 {
		g.emit(asm.And.Imm(r, int32(1<<f.BitWidth)-1))
	} else if f.BitWidth < 64 {
		g.emit(asm.LSh.Imm(r, int32(64-f.BitWidth)), asm.RSh.Imm(r, int32(64-f.BitWidth)))
	}
}

// readInt reads an integer through a field, index or dereference.
func (g *gen) readInt(e lang.Expr) (asm.Register, error) {
	t := e.Type()
	if t == nil {
		return 0, g.errorf(e, "expression has no type")
	}
	if f, ok := e.(*lang.FieldExpr); ok && isArgs(f.X) {
		off, wide, err := g.argsField(f)
		if err != nil {
			return 0, err
		}
		r, err := g.reg(e)
		if err != nil {
			return 0, err
		}
		size := t.Size
		if wide || (size != 1 && size != 2 && size != 4) {
			size = 8
		}
		if g.prog.RawSyscall != "" {
			// A lowered syscalls program reads the register itself.
			if err := g.sysArg(r, off, sizeOf(size)); err != nil {
				return 0, g.errorf(f, "args->%s: %v", f.Field, err)
			}
			g.extend(r, size, t.Signed)
			return r, nil
		}
		g.loadCtx(asm.R1)
		if g.isDataLoc(f) {
			// The locator's low 16 bits are the data's offset from the
			// record start (the high 16 its length): ctx + offset.
			g.emit(asm.LoadMem(r, asm.R1, int16(off), asm.Word),
				asm.And.Imm(r, 0xffff),
				asm.Add.Reg(r, asm.R1))
			return r, nil
		}
		g.emit(asm.LoadMem(r, asm.R1, int16(off), sizeOf(size)))
		if f.BitWidth > 0 {
			g.bitfield(r, f)
		} else if wide {
			g.normalize(r, t)
		} else {
			g.extend(r, size, t.Signed)
		}
		return r, nil
	}
	r, sp, ok, err := g.kaddr(e)
	if err != nil {
		return 0, err
	}
	if ok {
		tmp, err := g.allocStack(8)
		if err != nil {
			return 0, err
		}
		size := t.Size
		if size <= 0 || size > 8 {
			size = 8
		}
		g.probeRead(tmp, size, r, sp)
		if err := g.checkRead(e, asm.FnProbeReadKernel, sp); err != nil {
			return 0, err
		}
		g.loadReg(r, tmp, t)
		if f, ok := e.(*lang.FieldExpr); ok {
			g.bitfield(r, f)
		}
		return r, nil
	}
	m, err := g.subMem(e)
	if err != nil {
		return 0, err
	}
	if r, err = g.reg(e); err != nil {
		return 0, err
	}
	g.loadReg(r, m, t)
	if f, ok := e.(*lang.FieldExpr); ok {
		g.bitfield(r, f)
	}
	return r, nil
}

// argsValue builds a uprobe's `args` as a value (bpftrace 0.26's record
// of the function's parameters): each DWARF parameter read from its
// argument register into the record's layout, padding zeroed (the value
// may be a map key).
func (g *gen) argsValue(e lang.Expr, t *types.Type) (mem, error) {
	if !argsInRegs(g.ap) || t == nil || t.Kind != types.Record {
		return mem{}, g.errorf(e, "args can only be used whole in uprobe probes")
	}
	m := g.allocMem(t.Size)
	g.zeroPadding(m, t)
	for i, fl := range t.Fields {
		off, ok := stdlib.ArgRegOffset(i)
		if !ok {
			return mem{}, g.errorf(e, "args: only the first 6 arguments (passed in registers) can be read, %s is not", fl.Name)
		}
		size := fl.Type.Size
		if size > 8 {
			return mem{}, g.errorf(e, "args: arguments bigger than 8 bytes (%s %s) cannot be read", fl.Type, fl.Name)
		}
		g.loadCtx(asm.R1)
		g.emit(asm.LoadMem(asm.R0, asm.R1, int16(off), asm.DWord))
		db, do := g.baseOf(m, asm.R2)
		for done := 0; done < size; {
			c := chunk(size-done, int(do)+fl.Offset+done)
			g.emit(asm.StoreMem(db, do+int16(fl.Offset+done), asm.R0, sizeOf(c)))
			if c < size-done {
				g.emit(asm.RSh.Imm(asm.R0, int32(8*c)))
			}
			done += c
		}
	}
	return m, nil
}

// readMem reads a non-integer value through a field, index or dereference.
func (g *gen) readMem(e lang.Expr) (mem, error) {
	t := e.Type()
	if u, ok := e.(*lang.UnaryExpr); ok && u.Op == "*" && isArgs(u.X) && argsInRegs(g.ap) {
		// *args of a uprobe: its parameters live in registers, not in
		// memory at the context.
		return g.argsValue(e, t)
	}
	if f, ok := e.(*lang.FieldExpr); ok && isArgs(f.X) {
		off, _, err := g.argsField(f)
		if err != nil {
			return mem{}, err
		}
		// Copy out of the context: helpers cannot take context pointers.
		m := g.allocMem(t.Size)
		if g.prog.RawSyscall != "" {
			// Every syscalls field is one 8-byte word (a register).
			if t.Size > 8 {
				return mem{}, g.errorf(f, "args->%s: %d bytes is not a system call argument", f.Field, t.Size)
			}
			if err := g.sysArg(asm.R0, off, asm.DWord); err != nil {
				return mem{}, g.errorf(f, "args->%s: %v", f.Field, err)
			}
			db, do := g.baseOf(m, asm.R2)
			for done := 0; done < t.Size; {
				c := chunk(t.Size-done, int(do)+done)
				g.emit(asm.StoreMem(db, do+int16(done), asm.R0, sizeOf(c)))
				if c < t.Size-done {
					g.emit(asm.RSh.Imm(asm.R0, int32(8*c)))
				}
				done += c
			}
			return m, nil
		}
		g.loadCtx(asm.R1)
		db, do := g.baseOf(m, asm.R2)
		for done := 0; done < t.Size; {
			c := chunk(t.Size-done, off+done, int(do)+done)
			g.emit(asm.LoadMem(asm.R0, asm.R1, int16(off+done), sizeOf(c)),
				asm.StoreMem(db, do+int16(done), asm.R0, sizeOf(c)))
			done += c
		}
		return m, nil
	}
	r, sp, ok, err := g.kaddr(e)
	if err != nil {
		return mem{}, err
	}
	if ok {
		m := g.allocMem(t.Size)
		g.probeRead(m, t.Size, r, sp)
		if err := g.checkRead(e, asm.FnProbeReadKernel, sp); err != nil {
			return mem{}, err
		}
		g.free(r)
		return m, nil
	}
	return g.subMem(e)
}

// subMem locates a field, tuple element or constant-index element of a
// value in memory.
func (g *gen) subMem(e lang.Expr) (mem, error) {
	switch e := e.(type) {
	case *lang.FieldExpr:
		m, err := g.evalMem(e.X)
		if err != nil {
			return mem{}, err
		}
		return m.plus(e.Offset), nil
	case *lang.TupleIndexExpr:
		xt := e.X.Type()
		if xt == nil || e.Index < 0 || e.Index >= len(xt.Fields) {
			return mem{}, g.errorf(e, "tuple index %d out of range", e.Index)
		}
		m, err := g.evalMem(e.X)
		if err != nil {
			return mem{}, err
		}
		return m.plus(xt.Fields[e.Index].Offset), nil
	case *lang.IndexExpr:
		xt := e.X.Type()
		v, ok := g.constInt(e.Index)
		if ok && xt != nil && (xt.Kind == types.Tuple && v >= 0 && int(v) < len(xt.Fields) || xt.Kind == types.String && v >= 0 && int(v) < xt.Size) {
			// A tuple's element, a string's character (the checker
			// checked the constant index).
			m, err := g.evalMem(e.X)
			if err != nil {
				return mem{}, err
			}
			if xt.Kind == types.Tuple {
				return m.plus(xt.Fields[v].Offset), nil
			}
			return m.plus(int(v)), nil
		}
		if !ok || xt == nil || xt.Kind != types.Array || xt.Elem == nil {
			return mem{}, g.errorf(e, "only constant indexes into arrays held in memory are supported")
		}
		if v < 0 || int(v) >= xt.Len {
			return mem{}, g.errorf(e.Index, "index %d out of bounds (array of %d)", v, xt.Len)
		}
		m, err := g.evalMem(e.X)
		if err != nil {
			return mem{}, err
		}
		return m.plus(int(v) * xt.Elem.Size), nil
	}
	return mem{}, g.errorf(e, "cannot read this expression")
}
