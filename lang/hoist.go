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
// operands; what it cannot keep is a block expression whose evaluation
// is conditional (an operand of && || ?:, a while condition), whose
// statements run once, before the statement, whatever the condition.

type hoister struct {
	diags   *Diagnostics
	pending []Stmt
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
