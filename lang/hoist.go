package lang

import "reflect"

// Block expressions are hoisted: the statements of a block expression
// (and of a macro's expansion) run in front of the statement that holds
// it, in the order the expressions are evaluated, and the block
// expression becomes its value. A block expression used as a statement
// becomes its statements. So the checker and the compiler see only
// statements and plain expressions.
//
// The hoisting keeps bpftrace's order of evaluation for statements and
// operands. A block expression whose evaluation is conditional (the right
// operand of && and ||, a branch of ?:) becomes an if statement setting a
// hidden variable, so its statements run only when the operand is
// evaluated; what it cannot keep is one in a while condition, whose
// statements run once, before the loop.

type hoister struct {
	diags   *Diagnostics
	pending []Stmt
	n       int // hidden variables made so far
}

// sub hoists e on its own: its value and the statements it needs, which
// stay out of h.pending.
func (h *hoister) sub(e Expr, void bool) (Expr, []Stmt) {
	saved := h.pending
	h.pending = nil
	var v Expr
	if void {
		v = h.exprOrVoid(e)
	} else {
		v = h.expr(e)
	}
	stmts := h.pending
	h.pending = saved
	return v, stmts
}

func (h *hoister) hidden(at Loc) *VarExpr {
	h.n++
	return &VarExpr{Loc: at, Name: "$__cond_" + itoa(h.n)}
}

// conditional hoists `x && y`, `x || y` and `c ? t : e` whose conditional
// operands need statements: `let $v = false; if (x) { ys; if (y) { $v =
// true } }` (|| sets $v when x is true, else tries y), and `let $v; if (c)
// { ts; $v = t } else { es; $v = e }`. ok is false for other expressions.
func (h *hoister) conditional(e Expr) (Expr, bool) {
	switch e := e.(type) {
	case *BinaryExpr:
		if e.Op != "&&" && e.Op != "||" {
			return nil, false
		}
		x := h.expr(e.X)
		y, ys := h.sub(e.Y, false)
		if len(ys) == 0 {
			e.X, e.Y = x, y
			return e, true
		}
		v := h.hidden(e.Loc)
		ref := func() *VarExpr { return &VarExpr{Loc: v.Loc, Name: v.Name} }
		set := func() Stmt {
			return &AssignStmt{Loc: e.Loc, Lhs: ref(), Op: "=", Rhs: &BoolLit{Loc: e.Loc, Value: true}}
		}
		tryY := append(ys, &IfStmt{Loc: e.Loc, Cond: y, Then: &Block{Loc: e.Loc, Stmts: []Stmt{set()}}})
		var ifx *IfStmt
		if e.Op == "&&" {
			ifx = &IfStmt{Loc: e.Loc, Cond: x, Then: &Block{Loc: e.Loc, Stmts: tryY}}
		} else {
			ifx = &IfStmt{Loc: e.Loc, Cond: x, Then: &Block{Loc: e.Loc, Stmts: []Stmt{set()}},
				Else: &Block{Loc: e.Loc, Stmts: tryY}}
		}
		h.pending = append(h.pending, &VarDeclStmt{Loc: e.Loc, Var: v, Init: &BoolLit{Loc: e.Loc, Value: false}}, ifx)
		return ref(), true
	case *TernaryExpr:
		c := h.expr(e.Cond)
		t, ts := h.sub(e.Then, false)
		f, fs := h.sub(e.Else, false)
		if len(ts) == 0 && len(fs) == 0 {
			e.Cond, e.Then, e.Else = c, t, f
			return e, true
		}
		v := h.hidden(e.Loc)
		ref := func() *VarExpr { return &VarExpr{Loc: v.Loc, Name: v.Name} }
		h.pending = append(h.pending, &VarDeclStmt{Loc: e.Loc, Var: v}, &IfStmt{Loc: e.Loc, Cond: c,
			Then: &Block{Loc: e.Loc, Stmts: append(ts, &AssignStmt{Loc: e.Loc, Lhs: ref(), Op: "=", Rhs: t})},
			Else: &Block{Loc: e.Loc, Stmts: append(fs, &AssignStmt{Loc: e.Loc, Lhs: ref(), Op: "=", Rhs: f})}})
		return ref(), true
	}
	return nil, false
}

// ternaryStmt hoists a ?: used as a statement whose branches need
// statements: `if (c) { ts; t } else { es; e }`.
func (h *hoister) ternaryStmt(e *TernaryExpr) Stmt {
	c := h.expr(e.Cond)
	t, ts := h.sub(e.Then, true)
	f, fs := h.sub(e.Else, true)
	if len(ts) == 0 && len(fs) == 0 {
		e.Cond, e.Then, e.Else = c, t, f
		return nil
	}
	return &IfStmt{Loc: e.Loc, Cond: c,
		Then: &Block{Loc: e.Loc, Stmts: append(ts, &ExprStmt{Loc: e.Loc, X: t})},
		Else: &Block{Loc: e.Loc, Stmts: append(fs, &ExprStmt{Loc: e.Loc, X: f})}}
}

func hoistProgram(p *Program, diags *Diagnostics) {
	h := &hoister{diags: diags}
	for _, pr := range p.Probes {
		if pr.Pred != nil {
			pr.Pred = h.expr(pr.Pred)
			if len(h.pending) > 0 {
				diags.Errorf(pr.Pred.Span(), "a predicate cannot hold a block expression with statements")
				h.pending = nil
			}
		}
		h.block(pr.Body)
	}
}

func (h *hoister) block(b *Block) {
	if b != nil {
		b.Stmts = h.stmts(b.Stmts)
	}
}

func (h *hoister) stmts(list []Stmt) []Stmt {
	var out []Stmt
	for _, s := range list {
		saved := h.pending
		h.pending = nil
		keep := true
		switch s := s.(type) {
		case *ExprStmt:
			if be, ok := s.X.(*BlockExpr); ok && be.Value == nil {
				h.pending = append(h.pending, h.stmts(be.Stmts)...)
				keep = false
				break
			}
			if te, ok := s.X.(*TernaryExpr); ok {
				if st := h.ternaryStmt(te); st != nil {
					h.pending = append(h.pending, st)
					keep = false
				}
				break
			}
			s.X = h.exprOrVoid(s.X)
		case *BlockStmt:
			h.block(s.Body)
		case *IfStmt:
			h.ifStmt(s)
		default:
			h.children(reflect.ValueOf(s).Elem())
			switch s := s.(type) {
			case *WhileStmt:
				h.block(s.Body)
			case *ForStmt:
				h.block(s.Body)
			case *UnrollStmt:
				h.block(s.Body)
			}
		}
		out = append(out, h.pending...)
		if keep {
			out = append(out, s)
		}
		h.pending = saved
	}
	return out
}

func (h *hoister) ifStmt(s *IfStmt) {
	s.Cond = h.expr(s.Cond)
	h.block(s.Then)
	switch e := s.Else.(type) {
	case *Block:
		h.block(e)
	case *IfStmt:
		// An else-if's condition may hold statements: they run only when
		// that branch is reached, so it becomes `else { stmts; if ... }`.
		b := &Block{Loc: e.Loc, Stmts: h.stmts([]Stmt{e})}
		if len(b.Stmts) == 1 {
			s.Else = b.Stmts[0]
		} else {
			s.Else = b
		}
	}
}

// exprOrVoid hoists an expression statement's expression (a block
// expression's value may be a call of no value).
func (h *hoister) exprOrVoid(e Expr) Expr {
	if be, ok := e.(*BlockExpr); ok {
		h.pending = append(h.pending, h.stmts(be.Stmts)...)
		if be.Value == nil {
			return &IntLit{Loc: be.Loc, Text: "0"}
		}
		return h.exprOrVoid(be.Value)
	}
	return h.expr(e)
}

// expr hoists the block expressions in e, in evaluation order.
func (h *hoister) expr(e Expr) Expr {
	if e == nil {
		return nil
	}
	if be, ok := e.(*BlockExpr); ok {
		h.pending = append(h.pending, h.stmts(be.Stmts)...)
		if be.Value == nil {
			h.diags.Errorf(be.Span(), "The block expression has no value: it must end in an expression with no ';' after it")
			return &IntLit{Loc: be.Loc, Text: "0"}
		}
		return h.expr(be.Value)
	}
	if v, ok := h.conditional(e); ok {
		return v
	}
	h.children(reflect.ValueOf(e).Elem())
	return e
}

// children hoists the expressions held in the fields of the node struct s
// (not in its blocks or statements).
func (h *hoister) children(s reflect.Value) {
	for i := 0; i < s.NumField(); i++ {
		fv := s.Field(i)
		if !fv.CanSet() {
			continue
		}
		switch fv.Kind() {
		case reflect.Interface:
			if fv.Type() == exprType && !fv.IsNil() {
				fv.Set(reflect.ValueOf(h.expr(fv.Interface().(Expr))))
			}
		case reflect.Slice:
			if fv.Type().Elem() == exprType {
				for j := 0; j < fv.Len(); j++ {
					if x := fv.Index(j); !x.IsNil() {
						x.Set(reflect.ValueOf(h.expr(x.Interface().(Expr))))
					}
				}
			}
		case reflect.Pointer:
			if !fv.IsNil() && fv.Elem().Kind() == reflect.Struct && fv.Type().Elem().PkgPath() == langPkg {
				if _, ok := fv.Interface().(Expr); ok {
					h.children(fv.Elem())
				}
			}
		}
	}
}

// A range loop `for $i : a..b { body }` (bpftrace 0.24) runs body with $i
// = a, a+1, ... b-1, with a and b evaluated once, before the first
// iteration. It is lowered to
//
//	{ let $i = a; let $end = b; while ($i < $end) { body; $i++ } }
//
// with every `continue` of the loop's own body incrementing $i first.
func lowerRanges(p *Program) {
	n := 0
	var walk func(list []Stmt)
	var visit func(s Stmt) Stmt
	visit = func(s Stmt) Stmt {
		switch s := s.(type) {
		case *ForStmt:
			walk(s.Body.Stmts)
			if s.Map != nil || s.From == nil {
				return s
			}
			n++
			return rangeLoop(s, n)
		case *BlockStmt:
			walk(s.Body.Stmts)
		case *IfStmt:
			walk(s.Then.Stmts)
			if s.Else != nil {
				s.Else = visit(s.Else)
			}
		case *Block:
			walk(s.Stmts)
		case *WhileStmt:
			walk(s.Body.Stmts)
		case *UnrollStmt:
			walk(s.Body.Stmts)
		}
		return s
	}
	walk = func(list []Stmt) {
		for i, s := range list {
			list[i] = visit(s)
		}
	}
	for _, pr := range p.Probes {
		walk(pr.Body.Stmts)
	}
}

func rangeLoop(s *ForStmt, n int) Stmt {
	v := func() *VarExpr { return &VarExpr{Loc: s.Var.Loc, Name: s.Var.Name} }
	end := func() *VarExpr { return &VarExpr{Loc: s.To.Span().loc(), Name: "$__range_end_" + itoa(n)} }
	inc := func() Stmt {
		return &ExprStmt{Loc: s.Var.Loc, X: &UnaryExpr{Loc: s.Var.Loc, Op: "++", X: v(), Postfix: true}}
	}
	var fix func(list []Stmt)
	fix = func(list []Stmt) {
		for i, st := range list {
			switch st := st.(type) {
			case *JumpStmt:
				if st.Kind == Continue {
					list[i] = &BlockStmt{Loc: st.Loc, Body: &Block{Loc: st.Loc, Stmts: []Stmt{inc(), st}}}
				}
			case *BlockStmt:
				fix(st.Body.Stmts)
			case *UnrollStmt:
				fix(st.Body.Stmts)
			case *IfStmt:
				for x := Stmt(st); x != nil; {
					is, ok := x.(*IfStmt)
					if !ok {
						fix(x.(*Block).Stmts)
						break
					}
					fix(is.Then.Stmts)
					x = is.Else
				}
			}
		}
	}
	fix(s.Body.Stmts)
	body := &Block{Loc: s.Body.Loc, Stmts: append(s.Body.Stmts, inc())}
	loop := &WhileStmt{Loc: s.Loc, Cond: &BinaryExpr{Loc: s.Loc, Op: "<", X: v(), Y: end()}, Body: body, From: s.From, To: s.To}
	return &BlockStmt{Loc: s.Loc, Body: &Block{Loc: s.Loc, Stmts: []Stmt{
		&VarDeclStmt{Loc: s.Var.Loc, Var: v(), Init: s.From},
		&VarDeclStmt{Loc: s.To.Span().loc(), Var: end(), Init: s.To},
		loop,
	}}}
}

func (s Span) loc() Loc { return Loc(s) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
