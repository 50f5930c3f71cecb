package lang

// Const is the value of a constant expression, folded once by the checker
// (lang/check's fold.go) and read by everything after it: code generation
// emits no test for a constant condition, no code for a constant integer
// and stores a constant string's bytes, and builtins that need a constant
// argument (strncmp's length, lhist's bounds, printf's format, kaddr's
// symbol ...) read it here, not by evaluating the expression again.
type Const struct {
	// Int is an integer constant's value as the register holds it: the
	// 64-bit value of the expression's type (sign- or zero-extended from
	// its width). IsInt says it is set.
	Int   int64
	IsInt bool
	// Str is a string constant's text (a literal, a string positional
	// parameter, str($N)). IsStr says it is set.
	Str   string
	IsStr bool
}

// ConstOf returns the folded integer value of e, if the checker found it
// a constant integer.
func ConstOf(e Expr) (int64, bool) {
	if c := folded(e); c != nil && c.IsInt {
		return c.Int, true
	}
	return 0, false
}

// ConstStrOf returns the folded text of e, if the checker found it a
// constant string.
func ConstStrOf(e Expr) (string, bool) {
	if c := folded(e); c != nil && c.IsStr {
		return c.Str, true
	}
	return "", false
}

func folded(e Expr) *Const {
	if k, ok := e.(interface{ Folded() *Const }); ok {
		return k.Folded()
	}
	return nil
}

// Folded returns the expression's folded value (nil: not a constant).
func (t *Typed) Folded() *Const { return t.K }

// SetFolded records the expression's folded value.
func (t *Typed) SetFolded(k *Const) { t.K = k }
