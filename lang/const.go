package lang

// Const is the value of a constant expression, folded once by the checker
// (lang/check's fold.go) and read by everything after it: code generation
// emits no test for a constant condition and no code for a constant
// integer, and builtins that need a constant argument (strncmp's length,
// lhist's bounds ...) take any constant expression, not only a literal.
type Const struct {
	// Int is an integer constant's value as the register holds it: the
	// 64-bit value of the expression's type (sign- or zero-extended from
	// its width).
	Int int64
}

// ConstOf returns the folded value of e, if the checker found it constant.
func ConstOf(e Expr) (int64, bool) {
	if k, ok := e.(interface{ Folded() *Const }); ok {
		if c := k.Folded(); c != nil {
			return c.Int, true
		}
	}
	return 0, false
}

// Folded returns the expression's folded value (nil: not a constant).
func (t *Typed) Folded() *Const { return t.K }

// SetFolded records the expression's folded value.
func (t *Typed) SetFolded(k *Const) { t.K = k }
