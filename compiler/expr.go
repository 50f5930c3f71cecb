package compiler

import (
	"math"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// constInt returns the value of a constant integer expression, as the
// checker folded it (lang/check's fold.go, the one evaluator).
func (g *gen) constInt(e lang.Expr) (int64, bool) { return lang.ConstOf(e) }

// constStr returns the text of a constant string expression, as the checker
// folded it (lang.ConstStrOf). A call (str($1)) is compiled through its row,
// which reads the same folded text.
func constStr(e lang.Expr) (string, bool) {
	if _, isCall := e.(*lang.CallExpr); isCall {
		return "", false
	}
	return lang.ConstStrOf(e)
}

// nopJump is "goto pc+0".
func nopJump() asm.Instruction {
	ins := asm.Ja.Label("")
	ins.Offset = 0
	return ins
}

func fitsImm(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// movConst emits r = v.
func (g *gen) movConst(r asm.Register, v int64) {
	if fitsImm(v) {
		g.emit(asm.Mov.Imm(r, int32(v)))
	} else {
		g.emit(asm.LoadImm(r, v, asm.DWord))
	}
}

// reg allocates a pool register, or fails with a clear error.
func (g *gen) reg(n lang.Node) (asm.Register, error) {
	r, ok := g.alloc()
	if !ok {
		return 0, g.errorf(n, "expression too complex: out of registers")
	}
	return r, nil
}

// evalInt evaluates an integer or pointer expression into a pool register,
// extended to 64 bits as its type says.
func (g *gen) evalInt(e lang.Expr) (asm.Register, error) {
	defer g.restore(g.at(e))
	if v, ok := g.constInt(e); ok {
		r, err := g.reg(e)
		if err != nil {
			return 0, err
		}
		g.movConst(r, v)
		return r, nil
	}
	switch e := e.(type) {
	case *lang.VarExpr:
		m, ok := g.vars[e.Info]
		if !ok {
			return 0, g.errorf(e, "variable %s used before it is defined", e.Name)
		}
		r, err := g.reg(e)
		if err != nil {
			return 0, err
		}
		base, off := g.baseOf(m, asm.R1)
		g.emit(asm.LoadMem(r, base, off, asm.DWord))
		return r, nil
	case *lang.MapExpr:
		return g.mapReadInt(e)
	case *lang.BuiltinExpr:
		return g.builtinInt(e, e.Name, nil)
	case *lang.IdentExpr:
		// __builtin_pid and the like: bpftrace 0.26's spelling of a builtin.
		return g.builtinInt(e, e.Name, nil)
	case *lang.CallExpr:
		return g.builtinInt(e, e.Name, e.Args)
	case *lang.BinaryExpr:
		return g.binary(e)
	case *lang.UnaryExpr:
		return g.unary(e)
	case *lang.TernaryExpr:
		// The result's register is taken after the condition, whose
		// registers are free again by then (allocation is static).
		lelse, lend := g.label("else"), g.label("fi")
		if err := g.cond(e.Cond, lelse, false); err != nil {
			return 0, err
		}
		r, err := g.reg(e)
		if err != nil {
			return 0, err
		}
		if err := g.evalTo(r, e.Then); err != nil {
			return 0, err
		}
		g.emit(asm.Ja.Label(lend))
		g.place(lelse)
		if err := g.evalTo(r, e.Else); err != nil {
			return 0, err
		}
		g.place(lend)
		return r, nil
	case *lang.CastExpr:
		if t := e.Type(); t != nil && t.Kind == types.Bool {
			return g.castBool(e)
		}
		if xt := e.X.Type(); xt != nil && xt.Kind == types.Array {
			// (uint64)$array: the array's bytes as an integer.
			m, err := g.evalMem(e.X)
			if err != nil {
				return 0, err
			}
			r, err := g.reg(e)
			if err != nil {
				return 0, err
			}
			g.loadReg(r, m, e.Type())
			return r, nil
		}
		r, err := g.evalInt(e.X)
		if err != nil {
			return 0, err
		}
		// bpftrace 0.17 widens by the target's sign, not the source's:
		// (uint64)(int32)-1 is 4294967295, (int16)(uint8)255 is -1.
		if st, t := e.X.Type(), e.Type(); g.c.res.Opts.Compat.Ints017() && st != nil && t != nil && st.Kind == types.Int && t.IsInteger() &&
			t.Kind != types.Bool && st.Size < t.Size && st.Size > 0 {
			g.extend(r, st.Size, t.Signed)
		}
		g.normalize(r, e.Type())
		return r, nil
	case *lang.IndexExpr:
		if xt := e.X.Type(); xt != nil && xt.Kind == types.String {
			if _, ok := g.constInt(e.Index); !ok {
				return g.strCharAt(e, xt)
			}
		}
		return g.readInt(e)
	case *lang.FieldExpr, *lang.TupleIndexExpr:
		return g.readInt(e)
	}
	return 0, g.errorf(e, "cannot compute %T as an integer", e)
}

// strCharAt is $s[$i] with an index known only at run time (bpftrace
// 0.26): the character, or 0 when $i is not within the string's size.
func (g *gen) strCharAt(e *lang.IndexExpr, xt *types.Type) (asm.Register, error) {
	m, err := g.evalMem(e.X)
	if err != nil {
		return 0, err
	}
	ri, err := g.evalInt(e.Index)
	if err != nil {
		return 0, err
	}
	r, err := g.reg(e)
	if err != nil {
		return 0, err
	}
	out := g.label("strout")
	g.emit(asm.Mov.Imm(r, 0), asm.JGE.Imm(ri, int32(xt.Size), out))
	base, off := g.baseOf(m, asm.R1)
	g.emit(asm.Mov.Reg(asm.R2, base), asm.Add.Imm(asm.R2, int32(off)), asm.Add.Reg(asm.R2, ri),
		asm.LoadMem(r, asm.R2, 0, asm.Byte))
	g.extend(r, 1, true)
	g.place(out)
	g.emit(nopJump())
	g.free(ri)
	return r, nil
}

// evalTo evaluates e into the existing register r.
func (g *gen) evalTo(r asm.Register, e lang.Expr) error {
	if v, ok := g.constInt(e); ok {
		g.movConst(r, v)
		return nil
	}
	x, err := g.evalInt(e)
	if err != nil {
		return err
	}
	g.emit(asm.Mov.Reg(r, x))
	g.free(x)
	return nil
}

// isSigned reports whether a comparison of x and y is signed: as in
// bpftrace 0.17, only when both operands are (the operation is 64 bits
// wide; a narrower unsigned operand makes it unsigned too, unlike C).
// Division, modulo and >> are unsigned whatever the operands (arith).
func isSigned(x, y *types.Type) bool {
	return signedInt(x) && signedInt(y)
}

// cSigned is C's rule (compat 0.26): signed when both operands are, or
// when the unsigned one is narrower than 64 bits.
func cSigned(x, y *types.Type) bool {
	sx, sy := x != nil && x.Signed, y != nil && y.Signed
	if sx && sy {
		return true
	}
	if sx && y != nil && y.Size < 8 && y.Kind != types.Pointer {
		return true
	}
	if sy && x != nil && x.Size < 8 && x.Kind != types.Pointer {
		return true
	}
	return false
}

// signedOp is whether an operation (comparison, / and %) on x and y is
// signed in the followed bpftrace version.
func (g *gen) signedOp(x, y *types.Type) bool {
	if g.c.res.Opts.Compat.Ints017() {
		return isSigned(x, y)
	}
	return cSigned(x, y)
}

func signedInt(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case types.Int, types.Enum:
		return t.Signed
	case types.Bool:
		return true
	}
	return false
}

var aluOps = map[string]asm.ALUOp{
	"+": asm.Add, "-": asm.Sub, "*": asm.Mul, "&": asm.And, "|": asm.Or, "^": asm.Xor,
	"<<": asm.LSh,
}

func isCompare(op string) bool {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

func isString(t *types.Type) bool {
	return t != nil && (t.Kind == types.String || t.Kind == types.Buffer)
}

func (g *gen) binary(e *lang.BinaryExpr) (asm.Register, error) {
	if e.Op == "&&" || e.Op == "||" || isCompare(e.Op) {
		lf, lend := g.label("false"), g.label("done")
		if err := g.cond(e, lf, false); err != nil {
			return 0, err
		}
		r, err := g.reg(e) // after the condition's registers are free
		if err != nil {
			return 0, err
		}
		g.emit(asm.Mov.Imm(r, 1), asm.Ja.Label(lend))
		g.place(lf)
		g.emit(asm.Mov.Imm(r, 0))
		g.place(lend)
		return r, nil
	}
	rx, err := g.evalInt(e.X)
	if err != nil {
		return 0, err
	}
	signed := g.signedOp(e.X.Type(), e.Y.Type())
	if e.Op == ">>" {
		signed = e.X.Type() != nil && e.X.Type().Signed
	}
	// C pointer arithmetic: p ± n moves by n elements, p - q counts them.
	sx, sy := int64(1), int64(1)
	if e.Op == "+" || e.Op == "-" {
		px, py := isPointer(e.X.Type()), isPointer(e.Y.Type())
		switch {
		case px && !py:
			sy = elemScale(e.X.Type())
		case py && !px && e.Op == "+":
			sx = elemScale(e.Y.Type())
		}
		if sx != 1 {
			g.emit(asm.Mul.Imm(rx, int32(sx)))
		}
		if px && py && e.Op == "-" {
			if n := elemScale(e.X.Type()); n != 1 {
				return g.ptrDiff(e, rx, n)
			}
		}
	}
	if v, ok := g.constInt(e.Y); ok && fitsImm(v*sy) {
		if err := g.arith(e, e.Op, rx, 0, v*sy, true, signed); err != nil {
			return 0, err
		}
		g.normalize(rx, e.Type())
		return rx, nil
	}
	rx, ry, spilled, err := g.evalPair(e, rx, e.Y)
	if err != nil {
		return 0, err
	}
	if sy != 1 {
		g.emit(asm.Mul.Imm(ry, int32(sy)))
	}
	if err := g.arith(e, e.Op, rx, ry, 0, false, signed); err != nil {
		return 0, err
	}
	if spilled {
		// X was reloaded into a scratch register; the result goes to Y's.
		g.emit(asm.Mov.Reg(ry, rx))
		rx = ry
	} else {
		g.free(ry)
	}
	g.normalize(rx, e.Type())
	return rx, nil
}

// isPointer reports whether t is a pointer type.
func isPointer(t *types.Type) bool { return t != nil && t.Kind == types.Pointer }

// elemScale is the step of pointer arithmetic on t: the pointee's size (1
// for byte and void pointers, and for non-pointers).
func elemScale(t *types.Type) int64 {
	if !isPointer(t) || t.Elem == nil || t.Elem.Size <= 1 {
		return 1
	}
	return int64(t.Elem.Size)
}

// ptrDiff emits rx = (rx - Y) / size: the number of elements between two
// pointers, signed as in C.
func (g *gen) ptrDiff(e *lang.BinaryExpr, rx asm.Register, size int64) (asm.Register, error) {
	rx, ry, spilled, err := g.evalPair(e, rx, e.Y)
	if err != nil {
		return 0, err
	}
	g.emit(asm.Sub.Reg(rx, ry))
	if err := g.divmod(nil, false, rx, 0, size, true, true); err != nil {
		return 0, err
	}
	if spilled {
		g.emit(asm.Mov.Reg(ry, rx))
		return ry, nil
	}
	g.free(ry)
	return rx, nil
}

// evalPair evaluates y while x's value (in rx) stays live. With no register
// left for y, x is spilled to the stack and reloaded into R5 afterwards
// (spilled is then true and the caller must move the result out of R5).
func (g *gen) evalPair(n lang.Node, rx asm.Register, y lang.Expr) (asm.Register, asm.Register, bool, error) {
	if g.nfree() > 0 {
		ry, err := g.evalInt(y)
		return rx, ry, false, err
	}
	m, err := g.allocStack(8)
	if err != nil {
		return 0, 0, false, err
	}
	g.storeReg(m, rx, 8)
	g.free(rx)
	ry, err := g.evalInt(y)
	if err != nil {
		return 0, 0, false, err
	}
	g.emit(asm.LoadMem(asm.R5, asm.R10, int16(m.off), asm.DWord))
	return asm.R5, ry, true, nil
}

// arith emits rx = rx OP (ry | imm) with bpftrace 0.17's semantics: 64-bit
// two's complement; >> is a logical shift and / and % are unsigned
// whatever the operands' signs (bpftrace warns about signed operands of /
// and %), so signed does not change them. At run time the BPF instructions
// give x / 0 = 0 and x % 0 = x, as bpftrace's; a constant 0 divisor gives
// 0 (bpftrace's LLVM folds it so).
func (g *gen) arith(n lang.Node, op string, rx, ry asm.Register, imm int64, isImm, signed bool) error {
	if (op == "<<" || op == ">>") && isImm && (imm < 0 || imm > 63) {
		// The verifier refuses such a shift; bpftrace's LLVM folds it to 0.
		g.emit(asm.Mov.Imm(rx, 0))
		return nil
	}
	if alu, ok := aluOps[op]; ok {
		if isImm {
			g.emit(alu.Imm(rx, int32(imm)))
		} else {
			g.emit(alu.Reg(rx, ry))
		}
		return nil
	}
	switch op {
	case ">>":
		alu := asm.RSh
		if signed && !g.c.res.Opts.Compat.Ints017() {
			alu = asm.ArSh
		}
		if isImm {
			g.emit(alu.Imm(rx, int32(imm)))
		} else {
			g.emit(alu.Reg(rx, ry))
		}
		return nil
	case "/", "%":
		return g.divmod(n, op == "%", rx, ry, imm, isImm, signed && !g.c.res.Opts.Compat.Ints017())
	}
	return g.errorf(n, "operator %s is not supported here", op)
}

// divmod emits rx = rx / y or rx % y (y: ry, or imm when isImm). In 0.26
// mode a run-time zero divisor gives 1 and, when n is the division's node,
// bpftrace 0.26's warning at its place ("Divide or modulo by 0 detected
// ... 1 is being used as the result.").
func (g *gen) divmod(n lang.Node, mod bool, rx, ry asm.Register, imm int64, isImm, signed bool) error {
	alu := asm.Div
	if mod {
		alu = asm.Mod
	}
	if isImm {
		switch {
		case imm == 0:
			g.emit(asm.Mov.Imm(rx, 0))
			return nil
		case !signed:
			g.emit(alu.Imm(rx, int32(imm)))
			return nil
		}
		g.emit(asm.Mov.Imm(asm.R2, int32(imm)))
		ry = asm.R2
	} else {
		if !signed && g.c.res.Opts.Compat.Ints017() {
			g.emit(alu.Reg(rx, ry)) // x / 0 = 0, x % 0 = x
			return nil
		}
		// Guard: x / 0 and x % 0 are 1, with a warning (0.26 mode).
		ok, done := g.label("div"), g.label("divdone")
		g.emit(asm.JNE.Imm(ry, 0, ok))
		if n != nil {
			old := g.at(n)
			_, err := g.Event(stdlib.EvWarnf, divideByZeroMsg, "", nil)
			g.span = old
			if err != nil {
				return err
			}
		}
		g.emit(asm.Mov.Imm(rx, 1), asm.Ja.Label(done))
		g.place(ok)
		defer g.place(done)
		if !signed {
			g.emit(alu.Reg(rx, ry))
			return nil
		}
		g.emit(asm.Mov.Reg(asm.R2, ry))
	}
	// Signed: divide the magnitudes, then fix the sign (the quotient is
	// negative when the signs differ, the remainder has the dividend's sign).
	l1, l2, l3 := g.label("absx"), g.label("absy"), g.label("sign")
	g.emit(asm.Mov.Reg(asm.R3, rx))
	if !mod {
		g.emit(asm.Xor.Reg(asm.R3, asm.R2))
	}
	g.emit(asm.JSGE.Imm(rx, 0, l1), asm.Neg.Imm(rx, 0))
	g.place(l1)
	g.emit(asm.JSGE.Imm(asm.R2, 0, l2), asm.Neg.Imm(asm.R2, 0))
	g.place(l2)
	g.emit(alu.Reg(rx, asm.R2), asm.JSGE.Imm(asm.R3, 0, l3), asm.Neg.Imm(rx, 0))
	g.place(l3)
	// Ensure the label has an instruction even at the very end.
	g.emit(asm.Mov.Reg(rx, rx))
	return nil
}

func (g *gen) unary(e *lang.UnaryExpr) (asm.Register, error) {
	switch e.Op {
	case "-", "~":
		r, err := g.evalInt(e.X)
		if err != nil {
			return 0, err
		}
		if e.Op == "-" {
			g.emit(asm.Neg.Imm(r, 0))
		} else {
			g.emit(asm.Xor.Imm(r, -1))
		}
		g.normalize(r, e.Type())
		return r, nil
	case "!":
		r, err := g.evalInt(e.X)
		if err != nil {
			return 0, err
		}
		l := g.label("not")
		g.emit(asm.Mov.Reg(asm.R0, r), asm.Mov.Imm(r, 1), asm.JEq.Imm(asm.R0, 0, l), asm.Mov.Imm(r, 0))
		g.place(l)
		g.emit(asm.Mov.Reg(r, r))
		return r, nil
	case "++", "--":
		return g.incdec(e)
	case "*":
		return g.readInt(e)
	case "&":
		if v, ok := e.X.(*lang.VarExpr); ok {
			// &$a (bpftrace 0.26): the address of the variable's slot.
			m, ok := g.vars[v.Info]
			if !ok {
				return 0, g.errorf(e, "variable %s used before it is defined", v.Name)
			}
			r, err := g.reg(e)
			if err != nil {
				return 0, err
			}
			g.addr(r, m)
			return r, nil
		}
		if r, _, ok, err := g.kaddr(e.X); ok || err != nil {
			return r, err
		}
		return 0, g.errorf(e, "cannot take the address of this expression")
	}
	return 0, g.errorf(e, "operator %s is not supported", e.Op)
}

// cond emits a jump to label when e's truth equals jumpIf.
func (g *gen) cond(e lang.Expr, label string, jumpIf bool) error {
	defer g.restore(g.at(e))
	if v, ok := g.constInt(e); ok {
		if (v != 0) == jumpIf {
			g.emit(asm.Ja.Label(label))
		}
		return nil
	}
	switch e := e.(type) {
	case *lang.UnaryExpr:
		if e.Op == "!" {
			return g.cond(e.X, label, !jumpIf)
		}
	case *lang.BinaryExpr:
		switch e.Op {
		case "&&", "||":
			// jump when (X op Y) == jumpIf.
			and := e.Op == "&&"
			if and != jumpIf {
				// &&, jump if false: either false. ||, jump if true: either true.
				if err := g.cond(e.X, label, jumpIf); err != nil {
					return err
				}
				return g.cond(e.Y, label, jumpIf)
			}
			skip := g.label("sc")
			if err := g.cond(e.X, skip, !jumpIf); err != nil {
				return err
			}
			if err := g.cond(e.Y, label, jumpIf); err != nil {
				return err
			}
			// The label sits on a no-op ("goto +0": it touches no
			// register), not on the next instruction: a predicate's code
			// is followed by the scratch map's lookup, put in later.
			g.place(skip)
			g.emit(nopJump())
			return nil
		}
		if isCompare(e.Op) {
			if isString(e.X.Type()) || isString(e.Y.Type()) {
				return g.strCompare(e, label, jumpIf)
			}
			if xt := e.X.Type(); xt != nil && xt.Kind == types.Tuple {
				return g.tupleCompare(e, label, jumpIf)
			}
			return g.intCompare(e, label, jumpIf)
		}
	}
	r, err := g.evalInt(e)
	if err != nil {
		return err
	}
	if jumpIf {
		g.emit(asm.JNE.Imm(r, 0, label))
	} else {
		g.emit(asm.JEq.Imm(r, 0, label))
	}
	g.free(r)
	return nil
}

func jumpOp(op string, signed bool) asm.JumpOp {
	switch op {
	case "==":
		return asm.JEq
	case "!=":
		return asm.JNE
	case "<":
		if signed {
			return asm.JSLT
		}
		return asm.JLT
	case "<=":
		if signed {
			return asm.JSLE
		}
		return asm.JLE
	case ">":
		if signed {
			return asm.JSGT
		}
		return asm.JGT
	case ">=":
		if signed {
			return asm.JSGE
		}
		return asm.JGE
	}
	return asm.JEq
}

var negated = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

func (g *gen) intCompare(e *lang.BinaryExpr, label string, jumpIf bool) error {
	op := e.Op
	if !jumpIf {
		op = negated[op]
	}
	j := jumpOp(op, g.signedOp(e.X.Type(), e.Y.Type()))
	rx, err := g.evalInt(e.X)
	if err != nil {
		return err
	}
	if v, ok := g.constInt(e.Y); ok && fitsImm(v) {
		g.emit(j.Imm(rx, int32(v), label))
		g.free(rx)
		return nil
	}
	rx, ry, spilled, err := g.evalPair(e, rx, e.Y)
	if err != nil {
		return err
	}
	g.emit(j.Reg(rx, ry, label))
	if !spilled {
		g.free(rx)
	}
	g.free(ry)
	return nil
}

// strCompare compares two strings a word at a time, up to the shorter
// one's size: both are NUL-padded and the shorter one's last byte is NUL,
// so equal prefixes of that length mean equal strings.
func (g *gen) strCompare(e *lang.BinaryExpr, label string, jumpIf bool) error {
	if e.Op != "==" && e.Op != "!=" {
		return g.errorf(e, "strings can only be compared with == and !=")
	}
	x, y := e.X, e.Y
	if _, ok := constStr(x); ok {
		x, y = y, x
	}
	xt, yt := x.Type(), y.Type()
	n := xt.Size
	if yt.Size < n {
		n = yt.Size
	}
	// jumpIf==true with ==, or false with != : jump when equal.
	jumpOnEqual := (e.Op == "==") == jumpIf
	ne := label
	if jumpOnEqual {
		ne = g.label("strne")
	}
	xm, err := g.evalMem(x)
	if err != nil {
		return err
	}
	if s, ok := constStr(y); ok {
		b := make([]byte, align8(n))
		copy(b, s)
		xb, xo := g.baseOf(xm, asm.R3)
		for done := 0; done < n; {
			c := chunk(n-done, int(xo)+done)
			if c == 8 {
				c = 4 // immediates are 32 bits; compare 32-bit halves
			}
			var w int64
			for i := c - 1; i >= 0; i-- {
				w = w<<8 | int64(b[done+i])
			}
			g.emit(asm.LoadMem(asm.R1, xb, xo+int16(done), sizeOf(c)),
				asm.JNE.Imm32(asm.R1, int32(uint32(w)), ne))
			done += c
		}
	} else {
		ym, err := g.evalMem(y)
		if err != nil {
			return err
		}
		xb, xo := g.baseOf(xm, asm.R3)
		yb, yo := g.baseOf(ym, asm.R4)
		for done := 0; done < n; {
			c := chunk(n-done, int(xo)+done, int(yo)+done)
			g.emit(asm.LoadMem(asm.R1, xb, xo+int16(done), sizeOf(c)),
				asm.LoadMem(asm.R2, yb, yo+int16(done), sizeOf(c)),
				asm.JNE.Reg(asm.R1, asm.R2, ne))
			done += c
		}
	}
	if jumpOnEqual {
		g.emit(asm.Ja.Label(label))
		g.place(ne)
		g.emit(nopJump())
	}
	return nil
}

// evalMem evaluates an expression whose value lives in memory (strings,
// tuples, records, buffers, arrays ...) and returns where it is. The memory
// may belong to a variable: callers must not write to it.
func (g *gen) evalMem(e lang.Expr) (mem, error) {
	defer g.restore(g.at(e))
	t := e.Type()
	if t == nil {
		return mem{}, g.errorf(e, "expression has no type")
	}
	if s, ok := constStr(e); ok {
		m := g.allocMem(t.Size)
		g.constString(m, s, t.Size)
		return m, nil
	}
	switch e := e.(type) {
	case *lang.VarExpr:
		m, ok := g.vars[e.Info]
		if !ok {
			return mem{}, g.errorf(e, "variable %s used before it is defined", e.Name)
		}
		return m, nil
	case *lang.MapExpr:
		return g.mapReadMem(e)
	case *lang.BuiltinExpr, *lang.IdentExpr:
		if isArgs(e) && t.Kind == types.Record {
			return g.argsValue(e, t)
		}
		name, _, _ := builtinCall(e)
		if name == "probe" && t.Kind == types.String {
			return g.probeString(t)
		}
		return g.builtinMem(e, name, nil)
	case *lang.CallExpr:
		return g.builtinMem(e, e.Name, e.Args)
	case *lang.TupleExpr:
		m := g.allocMem(t.Size)
		if err := g.storeValue(m, t, e); err != nil {
			return mem{}, err
		}
		return m, nil
	case *lang.TernaryExpr:
		m := g.allocMem(t.Size)
		lelse, lend := g.label("else"), g.label("fi")
		if err := g.cond(e.Cond, lelse, false); err != nil {
			return mem{}, err
		}
		if err := g.storeValue(m, t, e.Then); err != nil {
			return mem{}, err
		}
		g.emit(asm.Ja.Label(lend))
		g.place(lelse)
		if err := g.storeValue(m, t, e.Else); err != nil {
			return mem{}, err
		}
		g.place(lend)
		g.emit(nopJump())
		return m, nil
	case *lang.CastExpr:
		if xt := e.X.Type(); xt != nil && xt.IsInteger() && t.Kind == types.Array {
			// (int8[8])12345: the integer's bytes as an array.
			r, err := g.evalInt(e.X)
			if err != nil {
				return mem{}, err
			}
			m := g.allocMem(t.Size)
			g.storeReg(m, r, t.Size)
			g.free(r)
			return m, nil
		}
		return g.evalMem(e.X)
	case *lang.FieldExpr, *lang.IndexExpr, *lang.TupleIndexExpr, *lang.UnaryExpr:
		return g.readMem(e)
	}
	return mem{}, g.errorf(e, "cannot compute a value of type %s here", t)
}

// constString writes s, NUL-padded to size bytes, at m.
func (g *gen) constString(m mem, s string, size int) {
	b := make([]byte, size)
	copy(b, s)
	if size > 0 && len(s) >= size {
		b[size-1] = 0
	}
	base, off := g.baseOf(m, asm.R1)
	for done := 0; done < size; {
		c := chunk(size-done, int(off)+done)
		if c == 8 {
			var w uint64
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(b[done+i])
			}
			if w == 0 {
				g.emit(stdlib.StImm(base, off+int16(done), 0, asm.DWord))
				done += 8
				continue
			}
			c = 4
		}
		var w uint32
		for i := c - 1; i >= 0; i-- {
			w = w<<8 | uint32(b[done+i])
		}
		g.emit(stdlib.StImm(base, off+int16(done), int64(int32(w)), sizeOf(c)))
		done += c
	}
}

// storeValue writes e's value at m, laid out as type dt (integers widened or
// narrowed to dt's size, strings truncated or NUL-padded, padding zeroed).
func (g *gen) storeValue(m mem, dt *types.Type, e lang.Expr) error {
	defer g.restore(g.at(e))
	et := e.Type()
	if isScalar(dt) || isScalar(et) {
		if v, ok := g.constInt(e); ok && fitsImm(v) && dt.Size >= 1 {
			base, off := g.baseOf(m, asm.R1)
			size := dt.Size
			if size != 1 && size != 2 && size != 4 {
				size = 8
			}
			g.emit(stdlib.StImm(base, off, v, sizeOf(size)))
			return nil
		}
		size := dt.Size
		if size != 1 && size != 2 && size != 4 {
			size = 8
		}
		if name, args, ok := builtinCall(e); ok {
			// Store a builtin's result straight from the register it is
			// in (often R0), without a move into a pool register.
			res, err := g.callBuiltin(e, name, args)
			if err != nil {
				return err
			}
			if !res.set || res.isMem || res.isStr {
				return g.errorf(e, "%s does not give an integer", name)
			}
			tmp := asm.R1
			if res.reg == asm.R1 {
				tmp = asm.R2
			}
			base, off := g.baseOf(m, tmp)
			g.emit(asm.StoreMem(base, off, res.reg, sizeOf(size)))
			g.free(res.reg)
			return nil
		}
		r, err := g.evalInt(e)
		if err != nil {
			return err
		}
		g.storeReg(m, r, size)
		g.free(r)
		return nil
	}
	if s, ok := constStr(e); ok && dt.Kind == types.String {
		g.constString(m, s, dt.Size)
		return nil
	}
	if te, ok := e.(*lang.TupleExpr); ok && dt.Kind == types.Tuple && len(dt.Fields) == len(te.Elems) {
		for i, el := range te.Elems {
			if err := g.storeValue(m.plus(dt.Fields[i].Offset), dt.Fields[i].Type, el); err != nil {
				return err
			}
		}
		g.zeroPadding(m, dt)
		return nil
	}
	if _, _, ok := builtinCall(e); ok && et != nil && et.Kind == dt.Kind && et.Size == dt.Size {
		// Let the builtin write its value in place (str() or comm straight
		// into a map key or a record): convertMem then copies nothing.
		g.dest = &destHint{m: m, size: dt.Size}
	}
	src, err := g.evalMem(e)
	g.dest = nil
	if err != nil {
		return err
	}
	if dt.Kind == types.Tuple && et.Kind == types.Tuple && !types.Equal(dt, et) && len(dt.Fields) == len(et.Fields) {
		// Same elements, different sizes (e.g. strings of several lengths).
		for i := range dt.Fields {
			if err := g.convertMem(m.plus(dt.Fields[i].Offset), dt.Fields[i].Type, src.plus(et.Fields[i].Offset), et.Fields[i].Type); err != nil {
				return err
			}
		}
		g.zeroPadding(m, dt)
		return nil
	}
	return g.convertMem(m, dt, src, et)
}

// convertMem copies a value of type st at src to dst as type dt.
func (g *gen) convertMem(dst mem, dt *types.Type, src mem, st *types.Type) error {
	if isScalar(dt) && isScalar(st) {
		g.loadReg(asm.R5, src, st)
		size := dt.Size
		if size != 1 && size != 2 && size != 4 {
			size = 8
		}
		g.storeReg(dst, asm.R5, size)
		return nil
	}
	n := st.Size
	if dt.Size < n {
		n = dt.Size
	}
	if dst != src {
		g.copyMem(dst, src, n)
	}
	if dt.Size > n {
		g.zero(dst.plus(n), dt.Size-n)
	} else if dt.Kind == types.String && st.Size > dt.Size && dt.Size > 0 {
		// Truncated: keep the string terminated.
		base, off := g.baseOf(dst, asm.R1)
		g.emit(stdlib.StImm(base, off+int16(dt.Size-1), 0, asm.Byte))
	}
	return nil
}

// zeroPadding zeroes the bytes of a tuple or record at m not covered by
// its fields.
func (g *gen) zeroPadding(m mem, t *types.Type) {
	at := 0
	for _, f := range t.Fields {
		if f.Offset > at {
			g.zero(m.plus(at), f.Offset-at)
		}
		if end := f.Offset + f.Type.Size; end > at {
			at = end
		}
	}
	if t.Size > at {
		g.zero(m.plus(at), t.Size-at)
	}
}

// builtinCall returns the name and arguments of a builtin variable or call.
func builtinCall(e lang.Expr) (string, []lang.Expr, bool) {
	switch e := e.(type) {
	case *lang.BuiltinExpr:
		return e.Name, nil, true
	case *lang.IdentExpr:
		// __builtin_comm: bpftrace 0.26's spelling of a builtin (an enum
		// value is a constant, not a builtin).
		if !e.IsEnum {
			return e.Name, nil, true
		}
	case *lang.CallExpr:
		return e.Name, e.Args, true
	}
	return "", nil, false
}

// destHint is where the value being stored should go, if the builtin
// computing it reserves memory of exactly size bytes.
type destHint struct {
	m    mem
	size int
}

// castBool evaluates (bool)x: 1 when x is non-zero (an integer or
// pointer) or non-empty (a string), else 0.
func (g *gen) castBool(e *lang.CastExpr) (asm.Register, error) {
	var r asm.Register
	if xt := e.X.Type(); xt != nil && xt.Kind == types.String {
		m, err := g.evalMem(e.X)
		if err != nil {
			return 0, err
		}
		if r, err = g.reg(e); err != nil {
			return 0, err
		}
		g.loadReg(r, m, types.U8)
	} else {
		var err error
		if r, err = g.evalInt(e.X); err != nil {
			return 0, err
		}
		if xt != nil && xt.Kind == types.Bool {
			return r, nil
		}
	}
	l := g.label("tobool")
	g.emit(asm.Mov.Reg(asm.R0, r), asm.Mov.Imm(r, 0), asm.JEq.Imm(asm.R0, 0, l), asm.Mov.Imm(r, 1))
	g.place(l)
	g.emit(asm.Mov.Reg(r, r))
	return r, nil
}

// divideByZeroMsg is bpftrace 0.26's run-time warning for a zero divisor.
const divideByZeroMsg = "Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result."
