package check

import (
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// truth is the type of a comparison, `!`, `&&` or `||`: bool in bpftrace
// 0.26, legacy (an integer type) in 0.17.
func (c *checker) truth(legacy *types.Type) *types.Type {
	if c.opts.Compat.BoolWords() {
		return types.BoolType
	}
	return legacy
}

// aggRead is the type of reading a map whose values are t in an
// expression: bpftrace 0.26 reads count(), sum(), min(), max() and avg()
// maps as integers (merged over the CPUs; bpftrace 0.21 and 0.22), 0.17
// keeps the aggregation type (which most operators refuse).
func (c *checker) aggRead(m *lang.MapExpr, t *types.Type) *types.Type {
	if m == c.wholeAgg || !c.opts.Compat.AggregatesAsInts() {
		return t
	}
	switch t.Kind {
	case types.Count:
		return types.U64
	case types.Sum, types.Min, types.Max, types.Avg:
		return types.IntType(8, t.Signed)
	}
	return t
}

// aggReadAsInt reports whether m reads an aggregation map as an integer
// (aggRead), a type the final fixup keeps.
func aggReadAsInt(m *lang.MapExpr) bool {
	t := m.Type()
	return m.Info.Value.Kind.IsAggregation() && t != nil && t.Kind == types.Int
}

// addrOf026 types &$a, the address of a variable (bpftrace 0.26; a
// pointer into the BPF stack, read back with the kernel helper), or
// returns nil where 0.17 refuses `&`.
func (c *checker) addrOf026(e *lang.UnaryExpr, x *types.Type) *types.Type {
	if _, ok := e.X.(*lang.VarExpr); !ok || !c.opts.Compat.VarAddress() {
		return nil
	}
	return &types.Type{Kind: types.Pointer, Size: 8, Elem: x, Space: types.AddrKernel}
}

// castArray026 types the integer-array casts bpftrace 0.19 added and 0.26
// has: (int8[])"str" and (int8[N])x with N inferred from []; a string or
// an integer as an integer array of its size, and an integer array as an
// integer of its size. nil: not such a cast.
func (c *checker) castArray026(e *lang.CastExpr, to, x *types.Type) *types.Type {
	if e.To != nil && e.To.ArrayLen == 0 && to.Kind == types.Int && to.Size > 0 {
		if x.Size > 0 && x.Size%to.Size == 0 && (x.IsInteger() || x.Kind == types.String || x.Kind == types.Array) {
			to = types.ArrayOf(to, x.Size/to.Size)
			e.To.Resolved = to
		}
	}
	switch {
	case to.Kind == types.Array && to.Elem != nil && to.Elem.Kind == types.Int && x.Kind == types.String && x.Size == to.Size:
		return to
	case to.Kind == types.Array && to.Elem != nil && to.Elem.Kind == types.Int && x.IsInteger() && x.Size == to.Size:
		return to
	case to.Kind == types.Int && x.Kind == types.Array && x.Elem != nil && x.Elem.IsInteger() && x.Size == to.Size:
		return to
	}
	return nil
}

// EnumNames tells stdlib's printf rule that %s takes an enum (printed by
// name, bpftrace 0.26).
func (c *checker) EnumNames() bool { return c.opts.Compat.EnumNames() }

// tuplesCompare reports whether tuples x and y may be compared with == and
// != (bpftrace 0.26): the same shape, y storable as x (strings of any
// length, integers of any width).
func (c *checker) tuplesCompare(x, y *types.Type) bool {
	return c.opts.Compat.TupleEquality() && len(x.Fields) == len(y.Fields) && assignable(x, y)
}
