package check

import (
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// bpftrace 0.17's compile-time warnings about integer signs, with its text,
// at the operator (as bpftrace places them):
//
//	comparison of integers of different signs: 'A' and 'B' can lead to undefined behavior
//	arithmetic on integers of different signs: 'A' and 'B' can lead to undefined behavior
//	signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)
//
// A non-negative integer literal takes the other operand's sign (`x / 2`
// with an unsigned x is quiet); bool is unsigned here. Arithmetic is + - *
// / %; the bitwise operators and shifts are quiet. Compound assignments
// (`x += y`) warn as their operator does.
func (c *checker) warnSigns(op string, xe, ye lang.Expr, x, y *types.Type, at lang.Span) {
	if !c.report || !c.opts.Compat.Ints017() || x == nil || y == nil || !x.IsInteger() || !y.IsInteger() {
		return
	}
	ls, rs := warnSigned(x), warnSigned(y)
	if nonNegativeLit(xe) {
		ls = rs
	}
	if nonNegativeLit(ye) {
		rs = ls
	}
	arith := false
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		if ls != rs {
			c.warnAt(at, "comparison of integers of different signs: '%s' and '%s' can lead to undefined behavior", typeName(x), typeName(y))
		}
		return
	case "+", "-", "*", "/", "%":
		arith = true
	}
	if !arith {
		return
	}
	if ls != rs {
		c.warnAt(at, "arithmetic on integers of different signs: '%s' and '%s' can lead to undefined behavior", typeName(x), typeName(y))
	}
	if (op == "/" || op == "%") && (ls || rs) {
		c.warnAt(at, "signed operands for '%s' can lead to undefined behavior (cast to unsigned to silence warning)", op)
	}
}

func warnSigned(t *types.Type) bool {
	switch t.Kind {
	case types.Int, types.Enum:
		return t.Signed
	}
	return false
}

func nonNegativeLit(e lang.Expr) bool {
	l, ok := e.(*lang.IntLit)
	return ok && int64(l.Value) >= 0
}

// warnAt reports a warning at sp (second pass only).
func (c *checker) warnAt(sp lang.Span, format string, args ...any) {
	if !c.report {
		return
	}
	c.diags.Add(lang.Warning, c.btSpan(sp), "", format, args...)
}

// rewarn gives again the warnings of the already checked e, in the order
// the checker gave them (an operator's after its operands').
func (c *checker) rewarn(e lang.Node) {
	first := true
	lang.Inspect(e, func(n lang.Node) bool {
		if first {
			first = false
			return true
		}
		c.rewarn(n)
		return false
	})
	if b, ok := e.(*lang.BinaryExpr); ok && b.X.Type() != nil && b.Y.Type() != nil {
		c.warnSigns(b.Op, b.X, b.Y, b.X.Type(), b.Y.Type(), c.opSpan(b))
	}
}

// warnLongLiteral gives bpftrace 0.17's warning for `s == "literal"` (or
// `"literal" == s`) when the literal has more bytes than s's string type
// holds with its NUL: the comparison is always false. Two literals, or
// none, give no warning; the place is the whole comparison.
func (c *checker) warnLongLiteral(e *lang.BinaryExpr, x, y *types.Type) {
	if !c.report || !c.opts.Compat.LiteralLengthWarning() {
		return
	}
	xl, xok := e.X.(*lang.StrLit)
	yl, yok := e.Y.(*lang.StrLit)
	if xok == yok {
		return
	}
	lit, other := xl, y
	if yok {
		lit, other = yl, x
	}
	if len(lit.Value) > other.Size {
		c.warnAt(e.Span(), "The literal is longer than the variable string (size=%d), condition will always be false", other.Size)
	}
}
