package check

import (
	"math"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
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
	if !c.report || x == nil || y == nil || !x.IsInteger() || !y.IsInteger() {
		return
	}
	if !c.opts.Compat.Ints017() {
		c.warnSigns026(op, xe, ye, x, y, at)
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
			c.warnAt(at, "comparison of integers of different signs: '%s' and '%s' can lead to undefined behavior", stdlib.TypeName(x), stdlib.TypeName(y))
		}
		return
	case "+", "-", "*", "/", "%":
		arith = true
	}
	if !arith {
		return
	}
	if ls != rs {
		c.warnAt(at, "arithmetic on integers of different signs: '%s' and '%s' can lead to undefined behavior", stdlib.TypeName(x), stdlib.TypeName(y))
	}
	if (op == "/" || op == "%") && (ls || rs) {
		c.warnAt(at, "signed operands for '%s' can lead to undefined behavior (cast to unsigned to silence warning)", op)
	}
}

// warnSigns026 gives bpftrace 0.26's warnings of the same words, whose
// rules differ (its type resolver's binop_int): operands of one type, or
// a bool, give none; a non-negative literal is an unsigned 64-bit integer
// and a negative one a signed one. Otherwise a comparison or + - * / %
// warns when the two types have no common integer type: their signs
// differ, the signed one is not the wider, a literal on the unsigned side
// does not fit the signed side's width, and the wider is 64 bits (a
// narrower pair promotes to a signed type twice as wide). / and % then
// warn when either operand is signed.
func (c *checker) warnSigns026(op string, xe, ye lang.Expr, x, y *types.Type, at lang.Span) {
	arith, compare := false, false
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		compare = true
	case "+", "-", "*", "/", "%":
		arith = true
	default:
		return
	}
	if x.Kind == types.Bool || y.Kind == types.Bool {
		return
	}
	ls, lsize, llit := sign026(xe, x)
	rs, rsize, rlit := sign026(ye, y)
	if ls == rs && lsize == rsize {
		return // the same type: bpftrace 0.26 checks nothing
	}
	promotes := func(ss, us int, ulit lang.Expr) bool { // signed side's size, unsigned side's
		if ss > us {
			return true
		}
		if ulit != nil {
			if w := signedWidth(ulit.(*lang.IntLit).Value); w > 0 && w <= ss {
				return true
			}
		}
		return max(ss, us)*2 <= 8
	}
	ok := ls == rs
	if ls && !rs {
		ok = promotes(lsize, rsize, rlit)
	} else if rs && !ls {
		ok = promotes(rsize, lsize, llit)
	}
	if !ok {
		// bpftrace 0.26 names integer types uint64, int64 (0.17:
		// unsigned int64).
		tn := func(t *types.Type) string {
			if t.Kind == types.Int {
				return t.String()
			}
			return stdlib.TypeName(t)
		}
		if compare {
			c.warnAt(at, "comparison of integers of different signs: '%s' and '%s' can lead to undefined behavior", tn(x), tn(y))
			return
		}
		c.warnAt(at, "arithmetic on integers of different signs: '%s' and '%s' can lead to undefined behavior", tn(x), tn(y))
	}
	if arith && (op == "/" || op == "%") && (ls || rs) {
		c.warnAt(at, "signed operands for '%s' can lead to undefined behavior (cast to unsigned to silence warning)", op)
	}
}

// sign026 is an operand's sign and size as bpftrace 0.26 sees them, and
// the literal itself when the operand is a non-negative integer literal.
func sign026(e lang.Expr, t *types.Type) (signed bool, size int, lit lang.Expr) {
	if l, ok := e.(*lang.IntLit); ok {
		if int64(l.Value) >= 0 || !t.Signed {
			return false, 8, l
		}
		return true, 8, nil
	}
	size = t.Size
	if size <= 0 || size > 8 {
		size = 8
	}
	return warnSigned(t), size, nil
}

// signedWidth is the size of the narrowest signed integer type holding v
// (0 if none does).
func signedWidth(v uint64) int {
	switch {
	case v <= math.MaxInt8:
		return 1
	case v <= math.MaxInt16:
		return 2
	case v <= math.MaxInt32:
		return 4
	case v <= math.MaxInt64:
		return 8
	}
	return 0
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
