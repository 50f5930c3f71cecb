package lang

import (
	"fmt"
	"reflect"
	"strings"
)

// Macros (bpftrace 0.24): `macro name(params) { body }` at the top level.
// A call `name(args)` (or a bare `name` for a macro without parameters),
// in a probe or in another macro, expands to the body as a block
// expression whose value is the body's last expression. User macros take
// precedence over builtin functions of the same name.
//
// The expansion is hygienic: the body's own variables are renamed apart
// from the caller's (each expansion gets fresh names). A `$x` parameter
// takes a variable, which the body then reads and writes (the caller
// sees the writes); an `@x` parameter takes a map, likewise; a plain name
// `x` takes any expression, substituted (and evaluated) wherever the body
// names it.

// maxMacroDepth bounds macros expanding macros (a recursive macro).
const maxMacroDepth = 100

type macroDef struct {
	name   string
	span   Span
	params []string // "$x", "@x" or "x"
	spans  []Span
	body   *BlockExpr // the template, cloned at each expansion
}

func (l *lowerer) macro(g *gMacro) {
	if l.macros == nil {
		l.macros = map[string]*macroDef{}
	}
	sp := l.span(g.Tokens)
	if _, dup := l.macros[g.Name]; dup {
		l.diags.Errorf(sp, "Redefinition of macro: %s", g.Name)
		return
	}
	m := &macroDef{name: g.Name, span: sp, body: l.blockExpr(g.Body)}
	seen := map[string]bool{}
	for _, p := range g.Params {
		psp := l.span(p.Tokens)
		if seen[p.Name] {
			l.diags.Errorf(psp, "Variable %s is already a parameter of macro %s", p.Name, g.Name)
		}
		seen[p.Name] = true
		m.params = append(m.params, p.Name)
		m.spans = append(m.spans, psp)
	}
	l.macros[g.Name] = m
}

// expandMacros replaces the macro calls of every probe by their
// expansions.
func (l *lowerer) expandMacros(p *Program) {
	if len(l.macros) == 0 {
		return
	}
	for _, pr := range p.Probes {
		if pr.Pred != nil {
			pr.Pred = rewriteExpr(pr.Pred, func(e Expr) Expr { return l.expandAt(e, 0) })
		}
		rewriteNode(reflect.ValueOf(pr.Body), func(e Expr) Expr { return l.expandAt(e, 0) })
	}
}

// expandAt expands e if it is a macro call (its arguments are already
// expanded), else returns it.
func (l *lowerer) expandAt(e Expr, depth int) Expr {
	var m *macroDef
	var args []Expr
	switch x := e.(type) {
	case *CallExpr:
		m = l.macros[x.Name]
		args = x.Args
	case *IdentExpr:
		if d := l.macros[x.Name]; d != nil && len(d.params) == 0 {
			m = d
		}
	}
	if m == nil {
		return e
	}
	if depth >= maxMacroDepth {
		l.diags.Errorf(e.Span(), "Macro recursion limit reached: %s", m.name)
		return &IntLit{Loc: Loc(e.Span())}
	}
	if len(args) != len(m.params) {
		l.diags.Errorf(e.Span(), "Call to %s() has the wrong number of arguments: expected %d, got %d", m.name, len(m.params), len(args))
		return &IntLit{Loc: Loc(e.Span())}
	}
	l.expansion++
	suffix := fmt.Sprintf("__%s_%d", m.name, l.expansion)
	vars := map[string]string{}
	maps := map[string]string{}
	exprs := map[string]Expr{}
	for i, p := range m.params {
		a := args[i]
		switch {
		case strings.HasPrefix(p, "$"):
			v, ok := a.(*VarExpr)
			if !ok {
				l.diags.Add(Error, a.Span(), fmt.Sprintf("%s is declared at %s", p, m.spans[i].Start),
					"Mismatched arg. Macro %s expects a variable for %s", m.name, p)
				continue
			}
			vars[p] = v.Name
		case strings.HasPrefix(p, "@"):
			mp, ok := a.(*MapExpr)
			if !ok || mp.Keys != nil {
				l.diags.Add(Error, a.Span(), "", "Mismatched arg. Macro %s expects a map for %s", m.name, p)
				continue
			}
			maps[p] = mp.Name
		default:
			exprs[p] = a
		}
	}
	body := cloneNode(m.body).(*BlockExpr)
	body.Loc = Loc(e.Span())
	// Rename the body's names and substitute its expression parameters;
	// a substituted argument is left as the caller wrote it.
	var sub func(x Expr) Expr
	sub = func(x Expr) Expr {
		switch n := x.(type) {
		case *VarExpr:
			if to, ok := vars[n.Name]; ok {
				n.Name = to
			} else {
				n.Name += suffix
			}
		case *MapExpr:
			if to, ok := maps[n.Name]; ok {
				n.Name = to
			}
		case *IdentExpr:
			if a, ok := exprs[n.Name]; ok {
				return cloneNode(a).(Expr)
			}
		}
		return x
	}
	// Substituted arguments are already expanded: expand the body's own
	// calls first, then substitute.
	res := rewriteExpr(body, func(x Expr) Expr {
		if _, isArg := x.(*IdentExpr); isArg {
			if _, ok := exprs[x.(*IdentExpr).Name]; ok {
				return x
			}
		}
		return l.expandAt(x, depth+1)
	})
	return rewriteExpr(res, sub)
}

var (
	exprType = reflect.TypeOf((*Expr)(nil)).Elem()
	langPkg  = reflect.TypeOf(Program{}).PkgPath()
)

// rewriteExpr rewrites e's subexpressions and then e itself with f
// (bottom up); what f returns is not walked again.
func rewriteExpr(e Expr, f func(Expr) Expr) Expr {
	if e == nil || reflect.ValueOf(e).IsNil() {
		return e
	}
	rewriteNode(reflect.ValueOf(e), f)
	return f(e)
}

// rewriteNode walks the AST value v (a pointer to a node, a slice or an
// interface holding nodes) and replaces each expression in it by
// rewriteExpr(x, f).
func rewriteNode(v reflect.Value, f func(Expr) Expr) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != langPkg {
			return
		}
		s := v.Elem()
		for i := 0; i < s.NumField(); i++ {
			fv := s.Field(i)
			if !fv.CanSet() {
				continue
			}
			rewriteField(fv, f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			rewriteField(v.Index(i), f)
		}
	}
}

func rewriteField(fv reflect.Value, f func(Expr) Expr) {
	switch fv.Kind() {
	case reflect.Interface:
		if fv.IsNil() {
			return
		}
		if fv.Type() == exprType {
			fv.Set(reflect.ValueOf(rewriteExpr(fv.Interface().(Expr), f)))
			return
		}
		rewriteNode(fv.Elem(), f)
	case reflect.Pointer:
		if fv.IsNil() {
			return
		}
		if x, ok := fv.Interface().(Expr); ok && fv.Type().Elem().PkgPath() == langPkg {
			// A field of a concrete expression type (ForStmt.Map ...):
			// walk it, but it cannot be replaced by another kind.
			rewriteNode(fv, f)
			if r := f(x); reflect.TypeOf(r) == fv.Type() {
				fv.Set(reflect.ValueOf(r))
			}
			return
		}
		rewriteNode(fv, f)
	case reflect.Slice:
		rewriteNode(fv, f)
	}
}

// cloneNode deep-copies an AST node (the lang package's structs, slices
// and interfaces; other pointers, such as checker types, are shared).
func cloneNode(n any) any {
	return cloneValue(reflect.ValueOf(n)).Interface()
}

func cloneValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != langPkg {
			return v
		}
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(v.Elem())
		s := c.Elem()
		for i := 0; i < s.NumField(); i++ {
			if fv := s.Field(i); fv.CanSet() {
				fv.Set(cloneValue(fv))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			c.Index(i).Set(cloneValue(v.Index(i)))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(cloneValue(v.Elem()))
		return c
	}
	return v
}

// exprTokenName names an expression as bpftrace's parser names its first
// token.
func exprTokenName(e Expr) string {
	switch e.(type) {
	case *IntLit:
		return "integer"
	case *StrLit:
		return "string"
	case *VarExpr:
		return "variable"
	case *BuiltinExpr:
		return "builtin"
	case *MapExpr:
		return "map"
	case *CallExpr:
		return "call"
	}
	return "expression"
}
