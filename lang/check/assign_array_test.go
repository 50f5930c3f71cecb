package check

import (
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

// TestAssignableArrays: a declared array type takes a value whose elements
// are assignable to its own (pointers to the same struct, one laid out in
// full and one a DWARF stub), with the same length; other arrays do not.
func TestAssignableArrays(t *testing.T) {
	full := &types.Type{Kind: types.Record, Name: "struct Foo", Size: 8, Fields: []types.Field{{Name: "a", Type: types.IntType(4, true)}}}
	stub := &types.Type{Kind: types.Record, Name: "struct Foo", Opaque: true}
	decl := types.ArrayOf(types.PointerTo(full, types.AddrUser), 2)
	for _, c := range []struct {
		v    *types.Type
		want bool
	}{
		{types.ArrayOf(types.PointerTo(stub, types.AddrUser), 2), true},
		{types.ArrayOf(types.PointerTo(full, types.AddrUser), 2), true},
		{types.ArrayOf(types.PointerTo(stub, types.AddrUser), 3), false},
		{types.ArrayOf(types.StringType(8), 2), false},
	} {
		if got := assignable(decl, c.v); got != c.want {
			t.Errorf("assignable(%s, %s) = %v, want %v", decl, c.v, got, c.want)
		}
	}
}
