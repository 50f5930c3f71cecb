package types

import "testing"

// TestKindWord: the words of bpftrace's messages, as an operand and as a
// builtin's argument.
func TestKindWord(t *testing.T) {
	cases := []struct {
		t            *Type
		operand, arg string
	}{
		{nil, "none", "none"},
		{IntType(4, true), "integer", "integer"},
		{&Type{Kind: Bool, Size: 1}, "integer", "integer"},
		{StringType(16), "string", "string"},
		{PointerTo(IntType(1, true), AddrKernel), "pointer", "integer"},
		{&Type{Kind: Ctx}, "ctx", "integer"},
		{&Type{Kind: Ksym}, "ksym", "string"},
		{&Type{Kind: Stack}, "stack", "string"},
		{&Type{Kind: Invalid}, "invalid", "none"},
		{TupleOf(IntType(8, true)), "tuple", "tuple"},
		{&Type{Kind: Record}, "record", "record"},
	}
	for _, c := range cases {
		if got := KindWord(c.t, AsOperand); got != c.operand {
			t.Errorf("KindWord(%v, AsOperand) = %q, want %q", c.t, got, c.operand)
		}
		if got := KindWord(c.t, AsArg); got != c.arg {
			t.Errorf("KindWord(%v, AsArg) = %q, want %q", c.t, got, c.arg)
		}
	}
}
