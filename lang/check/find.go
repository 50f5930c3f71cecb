package check

import (
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// find(@m, key, $v) (bpftrace 0.25): true, and $v = @m[key], when the key
// is in the map; false, $v untouched, when not. The checker rewrites the
// call to find(@m[key], $v) — the map read it performs, typed as any
// @m[key] read, and the variable it assigns — and checks the assignment
// `$v = @m[key]` (declaring $v, or matching its type, as an assignment
// does); the compiler reads Args that way.
func (c *checker) findCall(e *lang.CallExpr) *types.Type {
	var read *lang.MapExpr
	var v lang.Expr
	switch {
	case len(e.Args) == 2 && isKeyedMap(e.Args[0]):
		// Rewritten in an earlier pass.
		read, v = e.Args[0].(*lang.MapExpr), e.Args[1]
	case len(e.Args) == 3:
		m, ok := e.Args[0].(*lang.MapExpr)
		if !ok || len(m.Keys) > 0 {
			c.errorf(e, "find() expects a map argument without a key: find(@m, key, $value)")
			return types.InvalidType
		}
		read = &lang.MapExpr{Loc: lang.Loc(lang.Join(m.Span(), e.Args[1].Span())), Name: m.Name, Keys: []lang.Expr{e.Args[1]}}
		v = e.Args[2]
		e.Args = []lang.Expr{read, v}
	default:
		c.errorf(e, "find() requires 3 arguments (%d provided): find(@m, key, $value)", len(e.Args))
		return types.InvalidType
	}
	if _, ok := v.(*lang.VarExpr); !ok {
		c.expr(read, ctxValue)
		c.expr(v, ctxValue)
		c.errorf(v, "find() stores the value in a $variable (find(@m, key, $value)), not in %s", describe(v))
		return types.InvalidType
	}
	c.assign(&lang.AssignStmt{Loc: e.Loc, Lhs: v, Op: "=", Rhs: read})
	if st := c.maps[read.Name]; st != nil && st.keySet && st.info.Key == nil {
		c.errorf(e, "find() on %s, a map without keys: read it directly", read.Name)
		return types.InvalidType
	}
	return types.BoolType
}

func isKeyedMap(e lang.Expr) bool {
	m, ok := e.(*lang.MapExpr)
	return ok && len(m.Keys) > 0
}

// describe names an expression's kind for messages.
func describe(e lang.Expr) string {
	switch e.(type) {
	case *lang.MapExpr:
		return "a map"
	}
	return "an expression"
}
