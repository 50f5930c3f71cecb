package check

import (
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// Constant folding: the one evaluator of constant expressions. The checker
// uses it where the language wants a constant (unroll's count, builtins'
// constant arguments through stdlib.Checker.ConstInt), and at the end
// records every constant integer expression's value on its node
// (lang.Const), which code generation reads: a constant condition emits no
// test, a constant operand no code.
//
// In 0.17 mode (compat Ints017) the arithmetic is bpftrace 0.17's, as its
// LLVM folds it (in 0.26 mode C's, as the code generated for it): 64-bit two's
// complement; `/` and `%` unsigned whatever the operands' signs, and 0 for
// a zero divisor; `>>` a logical shift; a shift by 64 or more gives 0;
// comparisons signed only when both operands are; a value of a narrower
// type is truncated to it and extended as its sign says.

// ConstInt evaluates a constant integer expression (its subexpressions
// already checked), or reports that it is not one.
func (c *checker) ConstInt(e lang.Expr) (int64, bool) {
	switch e := e.(type) {
	case *lang.IntLit:
		return int64(e.Value), true
	case *lang.BoolLit:
		if e.Value {
			return 1, true
		}
		return 0, true
	case *lang.PositionalExpr:
		c.fillPositional(e)
		if e.IsInt {
			return e.Int, true
		}
		return 0, false
	case *lang.IdentExpr:
		if e.IsEnum {
			return e.Value, true
		}
	case *lang.SizeofExpr:
		if t := e.Type(); t != nil && !t.IsInvalid() {
			return int64(e.Val), true
		}
	case *lang.OffsetofExpr:
		if t := e.Type(); t != nil && !t.IsInvalid() {
			return int64(e.Val), true
		}
	case *lang.CastExpr:
		t := e.Type()
		if t == nil && e.To != nil && e.To.Ptr == 0 {
			t = e.To.Resolved
		}
		if t == nil || !foldable(t) || !foldable(e.X.Type()) {
			return 0, false
		}
		if v, ok := c.ConstInt(e.X); ok {
			// bpftrace 0.17 widens by the target's sign: (uint64)(int32)-1
			// is 4294967295, (int16)(uint8)255 is -1.
			if st := e.X.Type(); c.opts.Compat.Ints017() && st != nil && st.Kind == types.Int && t.Kind != types.Bool && st.Size > 0 && st.Size < t.Size {
				v = truncInt(v, types.IntType(st.Size, t.Signed))
			}
			return fit(v, t), true
		}
	case *lang.UnaryExpr:
		if !foldable(e.X.Type()) {
			return 0, false
		}
		v, ok := c.ConstInt(e.X)
		if !ok {
			return 0, false
		}
		switch e.Op {
		case "-":
			return fit(-v, e.Type()), true
		case "~":
			return fit(^v, e.Type()), true
		case "!":
			return b2i(v == 0), true
		}
	case *lang.BinaryExpr:
		return c.foldBinary(e)
	case *lang.TernaryExpr:
		if !foldable(e.Type()) {
			return 0, false
		}
		cond, ok := c.ConstInt(e.Cond)
		if !ok || !foldable(e.Cond.Type()) {
			return 0, false
		}
		pick := e.Then
		if cond == 0 {
			pick = e.Else
		}
		if !foldable(pick.Type()) {
			return 0, false
		}
		if v, ok := c.ConstInt(pick); ok {
			return fit(v, e.Type()), true
		}
	}
	return 0, false
}

func (c *checker) foldBinary(e *lang.BinaryExpr) (int64, bool) {
	if !foldable(e.X.Type()) || !foldable(e.Y.Type()) {
		return 0, false
	}
	x, okx := c.ConstInt(e.X)
	// && and || decide on a constant left side alone.
	switch {
	case e.Op == "&&" && okx && x == 0:
		return 0, true
	case e.Op == "||" && okx && x != 0:
		return 1, true
	}
	y, oky := c.ConstInt(e.Y)
	if !okx || !oky {
		return 0, false
	}
	ux, uy := uint64(x), uint64(y)
	legacy := c.opts.Compat.Ints017()
	signed := foldSigned(e.X.Type()) && foldSigned(e.Y.Type())
	if !legacy {
		signed = cSigned(e.X.Type(), e.Y.Type())
	}
	var r int64
	switch e.Op {
	case "+":
		r = x + y
	case "-":
		r = x - y
	case "*":
		r = x * y
	case "/":
		switch {
		case uy == 0:
		case !legacy && signed:
			r = x / y
		default:
			r = int64(ux / uy)
		}
	case "%":
		switch {
		case uy == 0:
		case !legacy && signed:
			r = x % y
		default:
			r = int64(ux % uy)
		}
	case "<<":
		if uy < 64 {
			r = int64(ux << uy)
		}
	case ">>":
		switch {
		case uy >= 64:
		case !legacy && foldSigned(e.X.Type()) && e.X.Type() != nil:
			r = x >> uy
		default:
			r = int64(ux >> uy)
		}
	case "&":
		r = x & y
	case "|":
		r = x | y
	case "^":
		r = x ^ y
	case "&&":
		r = b2i(x != 0 && y != 0)
	case "||":
		r = b2i(x != 0 || y != 0)
	case "==":
		r = b2i(x == y)
	case "!=":
		r = b2i(x != y)
	case "<":
		r = b2i(cmpLess(x, y, signed))
	case ">":
		r = b2i(cmpLess(y, x, signed))
	case "<=":
		r = b2i(!cmpLess(y, x, signed))
	case ">=":
		r = b2i(!cmpLess(x, y, signed))
	default:
		return 0, false
	}
	return fit(r, e.Type()), true
}

func cmpLess(x, y int64, signed bool) bool {
	if signed {
		return x < y
	}
	return uint64(x) < uint64(y)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// foldable reports whether values of t are integers the folder computes
// with (a nil type is an unchecked literal: int64).
func foldable(t *types.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind {
	case types.Int, types.Bool, types.Enum:
		return t.Size <= 8
	}
	return false
}

func foldSigned(t *types.Type) bool {
	if t == nil {
		return true
	}
	return signedOf(t)
}

// fit is v as a value of type t holds it in a register: truncated to t's
// width, extended as t's sign says; a bool is 0 or 1.
func fit(v int64, t *types.Type) int64 {
	if t == nil {
		return v
	}
	if t.Kind == types.Bool {
		return b2i(v != 0)
	}
	if t.Size <= 0 || t.Size >= 8 {
		return v
	}
	return truncInt(v, t)
}

// recordConsts records the value of every constant expression on its
// node, for code generation and the builtins' generators (lang.ConstOf,
// lang.ConstStrOf): an integer's where the expression is an integer type,
// a string's (ConstStr) where it is a string. The positional parameter
// argument of a StrOfParam row (str($1)) is the parameter's text whatever
// it looks like: that text is recorded on it too.
func (c *checker) recordConsts() {
	var strParams []*lang.PositionalExpr
	lang.Inspect(c.prog, func(n lang.Node) bool {
		e, ok := n.(lang.Expr)
		if !ok {
			return true
		}
		k, ok := e.(interface{ SetFolded(*lang.Const) })
		if !ok {
			return true
		}
		k.SetFolded(nil)
		t := e.Type()
		if t == nil || t.IsInvalid() {
			return true
		}
		var folded lang.Const
		if foldable(t) {
			folded.Int, folded.IsInt = c.ConstInt(e)
		}
		if t.Kind == types.String {
			folded.Str, folded.IsStr = c.ConstStr(e)
		}
		if folded.IsInt || folded.IsStr {
			k.SetFolded(&folded)
		}
		if call, ok := e.(*lang.CallExpr); ok && len(call.Args) > 0 {
			if row, ok := stdlib.Lookup(call.Name); ok && row.Has(stdlib.StrOfParam) {
				if p, ok := call.Args[0].(*lang.PositionalExpr); ok && !p.Count {
					strParams = append(strParams, p)
				}
			}
		}
		return true
	})
	for _, p := range strParams {
		folded := lang.Const{Str: p.Text, IsStr: true}
		if old := p.Folded(); old != nil {
			folded.Int, folded.IsInt = old.Int, old.IsInt
		}
		p.SetFolded(&folded)
	}
}

// cSigned is C's rule for an operation on x and y widened to 64 bits:
// signed when both are, or when the unsigned one is narrower.
func cSigned(x, y *types.Type) bool {
	sx, sy := foldSigned(x), foldSigned(y)
	if sx && sy {
		return true
	}
	if sx && y != nil && y.Size < 8 {
		return true
	}
	if sy && x != nil && x.Size < 8 {
		return true
	}
	return false
}
