package lang

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// Block is a Stmt too: IfStmt.Else holds a *Block for a plain `else { }`
// (as ast.go documents).
func (*Block) stmtNode() {}

// lowerer turns the parser's parse tree into the AST, giving every node
// the span of the tokens it was parsed from.
type lowerer struct {
	src   *Source
	li    *lineIndex
	diags *Diagnostics

	macros    map[string]*macroDef // the script's macros (macro.go)
	expansion int                  // expansions so far, for hygienic names
	elvis     int                  // hidden variables of `a ?: b`
}

// pureExpr reports whether evaluating e twice is as evaluating it once:
// no calls, increments or block expressions.
func pureExpr(e Expr) bool {
	pure := true
	Inspect(e, func(n Node) bool {
		switch n := n.(type) {
		case *CallExpr, *BlockExpr:
			pure = false
		case *UnaryExpr:
			if n.Op == "++" || n.Op == "--" {
				pure = false
			}
		}
		return pure
	})
	return pure
}

func (l *lowerer) span(toks []lexer.Token) Span {
	if len(toks) == 0 {
		return Span{}
	}
	first, last := &toks[0], &toks[len(toks)-1]
	return Span{Start: l.li.pos(first.Pos.Offset), End: l.li.pos(last.Pos.Offset + len(last.Value))}
}

func (l *lowerer) tokSpan(t lexer.Token) Span {
	return Span{Start: l.li.pos(t.Pos.Offset), End: l.li.pos(t.Pos.Offset + len(t.Value))}
}

// findTok returns the first token in toks with the given value (for the
// spans of names inside a node).
func findTok(toks []lexer.Token, kind tokenKind, val string) (lexer.Token, bool) {
	for _, t := range toks {
		if kindOf(t) == kind && t.Value == val {
			return t, true
		}
	}
	return lexer.Token{}, false
}

func (l *lowerer) program(g *gProgram) *Program {
	p := &Program{Src: l.src}
	p.Loc = Loc(Span{Start: l.li.pos(0), End: l.li.pos(len(l.src.Text))})
	for i, it := range g.Items {
		g.Items[i] = nil // garbage once lowered, as in block
		sp := l.span(it.Tokens)
		switch {
		case it.Preproc != "":
			if inc := l.include(it.Preproc, sp); inc != nil {
				p.Includes = append(p.Includes, inc)
			} else if d := directive(it.Preproc, sp); d != nil {
				p.Decls = append(p.Decls, d)
			}
		case it.CDecl != "":
			p.Decls = append(p.Decls, cdecl(it.CDecl, sp))
		case it.Probe != nil:
			p.Probes = append(p.Probes, l.probe(it.Probe))
		case it.Macro != nil:
			l.macro(it.Macro)
		case it.Config != nil:
			if !p.configSpan.Start.IsValid() {
				p.configSpan = sp
			}
			for _, c := range it.Config.Items {
				ci := &ConfigItem{Loc: Loc(l.span(c.Tokens)), Key: c.Key, Value: c.Value}
				if strings.HasPrefix(c.Value, `"`) {
					v, err := unquote(c.Value)
					if err != nil {
						l.diags.Errorf(l.span(c.Tokens), "%v", err)
					}
					ci.Value, ci.IsStr = v, true
				}
				p.Config = append(p.Config, ci)
			}
		case it.MapDecl != nil:
			d := &MapDecl{Loc: Loc(sp), Map: it.MapDecl.Map.Name, Kind: it.MapDecl.Kind}
			n, err := ParseInt(it.MapDecl.Size)
			if err != nil {
				l.diags.Errorf(sp, "%v", err)
			}
			d.Size = n
			switch d.Kind {
			case "hash", "lruhash", "percpuhash", "percpulruhash":
			default:
				l.diags.Errorf(sp, "Invalid bpf map type: %s (hash, lruhash, percpuhash or percpulruhash)", d.Kind)
			}
			if err == nil && (n == 0 || n > 1<<31) {
				l.diags.Errorf(sp, "Invalid map size: %d", n)
			}
			for _, o := range p.MapDecls {
				if o.Map == d.Map {
					l.diags.Errorf(sp, "Map %s is already declared", d.Map)
				}
			}
			p.MapDecls = append(p.MapDecls, d)
		case it.Import != nil:
			path, err := unquote(it.Import.Path)
			if err != nil {
				l.diags.Errorf(sp, "%v", err)
			}
			p.Imports = append(p.Imports, &Import{Loc: Loc(sp), Path: path})
		}
	}
	return p
}

// include lowers an `#include` line; other '#' lines go to directive.
func (l *lowerer) include(text string, sp Span) *Include {
	rest := strings.TrimSpace(strings.TrimPrefix(text, "#"))
	if !strings.HasPrefix(rest, "include") {
		return nil
	}
	arg := strings.TrimSpace(strings.TrimPrefix(rest, "include"))
	switch {
	case strings.HasPrefix(arg, "<") && strings.Contains(arg, ">"):
		return &Include{Loc: Loc(sp), Path: arg[1:strings.Index(arg, ">")], System: true}
	case strings.HasPrefix(arg, `"`) && strings.Count(arg, `"`) >= 2:
		return &Include{Loc: Loc(sp), Path: arg[1 : 1+strings.Index(arg[1:], `"`)]}
	}
	l.diags.Errorf(sp, "invalid #include line: expected <file> or \"file\"")
	return nil
}

// directive keeps a preprocessor line other than #include (#define X 1,
// #undef, #pragma ...) as a CDecl of Kind "define", "undef" ... with the
// macro name, for ktypes's C preprocessor. A "#!" interpreter
// line is dropped.
func directive(text string, sp Span) *CDecl {
	if strings.HasPrefix(text, "#!") {
		return nil
	}
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(text), "#"))
	if len(f) == 0 {
		return nil
	}
	d := &CDecl{Loc: Loc(sp), Kind: f[0], Text: text}
	if len(f) > 1 {
		name := f[1]
		if i := strings.IndexByte(name, '('); i >= 0 {
			name = name[:i]
		}
		d.Name = name
	}
	return d
}

// cdecl classifies a captured C declaration.
func cdecl(text string, sp Span) *CDecl {
	d := &CDecl{Loc: Loc(sp), Text: text}
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if len(fields) > 0 {
		d.Kind = fields[0]
	}
	switch d.Kind {
	case "struct", "union", "enum":
		// The tag, if the word after the keyword comes before any '{'.
		head := text
		if i := strings.IndexAny(text, "{;"); i >= 0 {
			head = text[:i]
		}
		hf := strings.Fields(head)
		if len(hf) >= 2 {
			d.Name = hf[1]
		}
	case "typedef":
		// The declared name: the last identifier before the final ';'
		// outside braces.
		body := strings.TrimSuffix(strings.TrimSpace(text), ";")
		if i := strings.LastIndex(body, "}"); i >= 0 {
			body = body[i+1:]
		}
		if i := strings.Index(body, "["); i >= 0 {
			body = body[:i]
		}
		ids := strings.FieldsFunc(body, func(r rune) bool {
			return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		})
		if len(ids) > 0 {
			d.Name = ids[len(ids)-1]
		}
	}
	return d
}

func (l *lowerer) probe(g *gProbe) *Probe {
	p := &Probe{Loc: Loc(l.span(g.Tokens))}
	for _, a := range g.Attach {
		sp := l.span(a.Tokens)
		ap, err := ParseAttachPoint(a.Raw, sp)
		if err == nil && strings.Contains(a.Raw, "$#") {
			err = fmt.Errorf("Not a positional parameter")
		}
		if err != nil {
			hint := ""
			var he *HintError
			if errors.As(err, &he) {
				hint = he.Hint
			}
			l.diags.Add(Error, sp, hint, "%s", err.Error())
			name, raw := SplitProbeName(a.Raw)
			ap = &AttachPoint{Loc: Loc(sp), Raw: raw, Name: name}
		}
		p.Attach = append(p.Attach, ap)
	}
	if len(g.Attach) == 0 {
		// `{ }`, `, { }` or a stray clause `BEGIN { } /1/ { }`: bpftrace
		// reports this with no place of its own, at the script's start.
		start := l.li.pos(0)
		l.diags.Errorf(Span{Start: start, End: start}, "No attach points for probe")
	}
	if g.Pred != nil {
		p.Pred = l.expr(g.Pred.X)
	}
	p.Body = l.block(g.Body)
	return p
}

// blockExpr lowers a block expression: its last statement is its value
// when that is an expression with no ';' after it.
func (l *lowerer) blockExpr(g *gBlock) *BlockExpr {
	b := l.block(g)
	e := &BlockExpr{Loc: b.Loc, Stmts: b.Stmts}
	if n := len(g.Items); n > 0 && len(b.Stmts) > 0 {
		it := g.Items[n-1]
		if it.Simple != nil && it.End != nil && it.End.Open || it.Fast != nil && it.Fast.Open {
			if es, ok := b.Stmts[len(b.Stmts)-1].(*ExprStmt); ok {
				e.Value = es.X
				e.Stmts = b.Stmts[:len(b.Stmts)-1]
			}
		}
	}
	return e
}

func (l *lowerer) block(g *gBlock) *Block {
	b := &Block{Loc: Loc(l.span(g.Tokens))}
	for i, it := range g.Items {
		if i < len(g.Items)-1 {
			// A lowered statement's grammar nodes are garbage at once
			// (blockExpr reads only the last): a script of a million
			// statements does not hold both trees whole (issue 19).
			g.Items[i] = nil
		}
		if it.Semi {
			continue
		}
		var s Stmt
		if it.Fast != nil {
			s = l.simpleStmt(it.Fast)
		} else if it.Simple != nil {
			s = l.simple(it.Simple)
		} else {
			s = l.compound(it)
		}
		if s != nil {
			b.Stmts = append(b.Stmts, s)
		}
	}
	return b
}

// compound lowers a compound statement (g is neither a simple statement
// nor a ';').
func (l *lowerer) compound(g *gStmtItem) Stmt {
	sp := l.span(g.Tokens)
	switch {
	case g.If != nil:
		return l.ifStmt(g.If)
	case g.Unroll != nil:
		return &UnrollStmt{Loc: Loc(sp), Count: l.expr(g.Unroll.Count), Body: l.block(g.Unroll.Body)}
	case g.While != nil:
		return &WhileStmt{Loc: Loc(sp), Cond: l.expr(g.While.Cond), Body: l.block(g.While.Body)}
	case g.For != nil:
		h := g.For.Paren
		if h == nil {
			h = g.For.Bare
		}
		f := &ForStmt{Loc: Loc(sp), Var: &VarExpr{Loc: Loc(l.span(h.Var.Tokens)), Name: h.Var.Name}, Body: l.block(g.For.Body)}
		from := l.expr(h.From)
		if h.To != nil {
			f.From, f.To = from, l.expr(h.To)
		} else if m, ok := from.(*MapExpr); ok && m.Keys == nil {
			f.Map = m
		} else {
			l.diags.Errorf(from.Span(), "syntax error, unexpected %s, expecting map", exprTokenName(from))
			f.Map = &MapExpr{Loc: Loc(from.Span()), Name: "@"}
		}
		return f
	case g.Block != nil:
		return &BlockStmt{Loc: Loc(sp), Body: l.block(g.Block)}
	}
	return nil
}

// ifStmt lowers an if/else-if/else chain, building the nested IfStmts
// from the innermost one outwards (no recursion over the chain).
func (l *lowerer) ifStmt(g *gIf) Stmt {
	var tail Stmt
	if g.Else != nil {
		tail = l.block(g.Else)
	}
	end := l.span(g.Tokens).End
	for i := len(g.Elifs) - 1; i >= 0; i-- {
		e := g.Elifs[i]
		sp := l.span(e.Tokens)
		// The span of an else-if starts at its `if`, not at `else`.
		if len(e.Tokens) > 1 {
			sp.Start = l.li.pos(e.Tokens[1].Pos.Offset)
		}
		sp.End = end
		tail = &IfStmt{Loc: Loc(sp), Cond: l.expr(e.Cond), Then: l.block(e.Then), Else: tail}
	}
	return &IfStmt{Loc: Loc(l.span(g.Tokens)), Cond: l.expr(g.Cond), Then: l.block(g.Then), Else: tail}
}

func (l *lowerer) simple(g *gSimple) Stmt {
	sp := l.span(g.Tokens) // without the ';' (gStmtItem.End)
	switch {
	case g.Jump != "":
		k := map[string]JumpKind{"break": Break, "continue": Continue}[g.Jump]
		return &JumpStmt{Loc: Loc(sp), Kind: k}
	case g.Return:
		j := &JumpStmt{Loc: Loc(sp), Kind: Return}
		if g.Ret != nil {
			j.Value = l.expr(g.Ret)
			if len(g.Ret.Tokens) > 0 {
				t := g.Ret.Tokens[0]
				j.ValueTok = tokenName(token{kind: kindOf(t), val: t.Value})
				j.ValueTokSpan = l.tokSpan(t)
			}
		}
		return j
	case g.Let != nil:
		d := &VarDeclStmt{Loc: Loc(sp), Var: &VarExpr{Loc: Loc(l.span(g.Let.Var.Tokens)), Name: g.Let.Var.Name}}
		if g.Let.Type != nil {
			d.Type = l.typeExpr(g.Let.Type)
		}
		if g.Let.Init != nil {
			d.Init = l.expr(g.Let.Init)
		}
		return d
	case g.Expr != nil:
		return l.exprStmt(sp, g.Tokens, l.expr(g.Expr), string(g.AsgOp), func() Expr { return l.expr(g.Rhs) })
	}
	return nil
}

// simpleStmt lowers the fast path of gSimple.
func (l *lowerer) simpleStmt(g *gSimpleStmt) Stmt {
	return l.exprStmt(l.span(g.Tokens), g.Tokens, l.simpleExpr(g.X), g.AsgOp, func() Expr { return l.simpleExpr(g.Rhs) })
}

// exprStmt is an expression statement x, or the assignment x op rhs()
// when op is set; toks are the statement's tokens.
func (l *lowerer) exprStmt(sp Span, toks []lexer.Token, x Expr, op string, rhs func() Expr) Stmt {
	if op == "" {
		return &ExprStmt{Loc: Loc(sp), X: x}
	}
	if id, ok := x.(*IdentExpr); ok && id.Name == "_" && op == "=" {
		// `_ = expr` (bpftrace 0.24) evaluates expr and discards it.
		return &ExprStmt{Loc: Loc(sp), X: rhs()}
	}
	switch x.(type) {
	case *VarExpr, *MapExpr, *FieldExpr, *IndexExpr, *UnaryExpr, *TupleIndexExpr:
		// Writes through fields, indexes and pointers are refused by
		// the checker with a precise message.
	default:
		// bpftrace's grammar only takes a variable or map on the left.
		opTok, _ := findTok(toks, tPunct, op)
		l.diags.Errorf(l.bisonSpanAt(opTok), "syntax error, unexpected %s, expecting }", op)
	}
	return &AssignStmt{Loc: Loc(sp), Lhs: x, Op: op, Rhs: rhs()}
}

// bisonSpanAt is the span bpftrace's parser gives the token at t: from
// the end of the last blank before it.
func (l *lowerer) bisonSpanAt(t lexer.Token) Span {
	start := t.Pos.Offset
	for start > 0 && !isSpace(l.src.Text[start-1]) {
		start--
	}
	return Span{Start: l.li.pos(start), End: l.li.pos(t.Pos.Offset + len(t.Value))}
}

// binPrec is the one table of binary operators: C precedence, all left
// associative.
var binPrec = map[string]int{
	"||": 1,
	"&&": 2,
	"|":  3,
	"^":  4,
	"&":  5,
	"==": 6, "!=": 6,
	"<": 7, "<=": 7, ">": 7, ">=": 7,
	"<<": 8, ">>": 8,
	"+": 9, "-": 9,
	"*": 10, "/": 10, "%": 10,
}

// BinaryPrecedence returns the C precedence of a binary operator (higher
// binds tighter) or 0 if op is not one.
func BinaryPrecedence(op string) int { return binPrec[op] }

func (l *lowerer) expr(g *gExpr) Expr {
	if g == nil {
		return nil
	}
	// Ternary chains are right associative: a ? b : c ? d : e is
	// a ? b : (c ? d : e). Build from the right.
	if g.Simple != nil {
		return l.simpleExpr(g.Simple)
	}
	if len(g.Alts) == 0 {
		return l.binary(g.X)
	}
	conds := []Expr{l.binary(g.X)}
	for _, a := range g.Alts[:len(g.Alts)-1] {
		conds = append(conds, l.binary(a.Else))
	}
	last := g.Alts[len(g.Alts)-1]
	res := l.binary(last.Else)
	for i := len(g.Alts) - 1; i >= 0; i-- {
		c := conds[i]
		var then Expr
		if g.Alts[i].Then != nil {
			then = l.expr(g.Alts[i].Then)
		} else if pureExpr(c) {
			// `a ?: b` is `a ? a : b`.
			then = cloneNode(c).(Expr)
		} else {
			// a has effects: evaluated once, into a hidden variable,
			// `{ let $v = a; $v ? $v : b }`.
			l.elvis++
			at := Loc(c.Span())
			name := "$__elvis_" + itoa(l.elvis)
			ref := func() *VarExpr { return &VarExpr{Loc: at, Name: name} }
			sp := Loc(Join(c.Span(), res.Span()))
			res = &BlockExpr{Loc: sp, Stmts: []Stmt{&VarDeclStmt{Loc: at, Var: ref(), Init: c}},
				Value: &TernaryExpr{Loc: sp, Cond: ref(), Then: ref(), Else: res}}
			continue
		}
		res = &TernaryExpr{Loc: Loc(Join(c.Span(), res.Span())), Cond: c, Then: then, Else: res}
	}
	return res
}

// binary applies binPrec to the flat operand/operator list with an
// operator-precedence (shunting-yard) pass: no recursion, so long chains
// cannot deepen the Go stack.
func (l *lowerer) binary(g *gBinary) Expr {
	first := l.unary(g.X)
	if len(g.Rest) == 0 {
		return first
	}
	operands := []Expr{first}
	ops := make([]string, 0, len(g.Rest))
	for _, r := range g.Rest {
		ops = append(ops, string(r.Op))
		operands = append(operands, l.unary(r.Y))
	}
	return l.precedence(operands, ops)
}

// precedence builds the tree of operands[0] ops[0] operands[1] ... by
// binPrec.
func (l *lowerer) precedence(operands []Expr, ops []string) Expr {
	var stack []Expr
	var pending []string
	reduce := func() {
		n := len(stack)
		x, y := stack[n-2], stack[n-1]
		op := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		stack = append(stack[:n-2], &BinaryExpr{Loc: Loc(Join(x.Span(), y.Span())), Op: op, X: x, Y: y})
	}
	stack = append(stack, operands[0])
	for i, op := range ops {
		p := binPrec[op]
		for len(pending) > 0 && binPrec[pending[len(pending)-1]] >= p {
			reduce()
		}
		pending = append(pending, op)
		stack = append(stack, operands[i+1])
	}
	for len(pending) > 0 {
		reduce()
	}
	return stack[0]
}

func (l *lowerer) unary(g *gUnary) Expr {
	switch {
	case g.Simple != nil:
		return l.simpleOperand(g.Simple)
	case g.Of != nil:
		x := l.unary(g.Of)
		sp := Span{Start: l.tokSpan(g.Tokens[0]).Start, End: x.Span().End}
		if g.Cast != nil {
			return &CastExpr{Loc: Loc(sp), To: l.typeExpr(g.Cast.Type), X: x}
		}
		return &UnaryExpr{Loc: Loc(sp), Op: string(g.Op), X: x}
	case g.Inc != nil:
		return l.preInc(g.Inc)
	}
	return l.postfix(g.X)
}

// preInc lowers a prefix increment `++x`.
func (l *lowerer) preInc(g *gPreInc) Expr {
	var x Expr
	switch {
	case g.Keyed != nil:
		x = l.postfix(g.Keyed)
	case g.Call != nil:
		x = l.call(g.Call)
	case g.Map != nil:
		x = l.mapExpr(g.Map)
	default:
		x = l.name(g.Tokens[1])
	}
	return &UnaryExpr{Loc: Loc(l.span(g.Tokens)), Op: string(g.Op), X: x}
}

func (l *lowerer) postfix(g *gPostfix) Expr {
	x := l.primary(g.X)
	for _, s := range g.Sel {
		sp := Join(x.Span(), l.span(s.Tokens))
		switch {
		case s.Index != nil:
			x = l.tupleIndex(x, sp, s.Index.Tokens[0])
		case s.Field != "":
			x = &FieldExpr{Loc: Loc(sp), X: x, Field: s.Field}
		case s.Arrow != "":
			x = &FieldExpr{Loc: Loc(sp), X: x, Field: s.Arrow, Arrow: true}
		case s.Sub != nil:
			if len(s.Sub) > 1 {
				// Only a map takes several subscripts.
				comma, _ := findTok(s.Tokens, tPunct, ",")
				l.diags.Errorf(l.bisonSpanAt(comma), "syntax error, unexpected \",\", expecting ]")
			}
			x = &IndexExpr{Loc: Loc(sp), X: x, Index: l.expr(s.Sub[0])}
		}
	}
	return x
}

func (l *lowerer) primary(g *gPrimary) Expr {
	sp := l.span(g.Tokens)
	switch {
	case g.Paren != nil:
		if len(g.Paren.Elems) == 1 {
			return l.expr(g.Paren.Elems[0])
		}
		t := &TupleExpr{Loc: Loc(sp)}
		for _, e := range g.Paren.Elems {
			t.Elems = append(t.Elems, l.expr(e))
		}
		return t
	case g.Record != nil:
		t := &TupleExpr{Loc: Loc(sp)}
		seen := map[string]bool{}
		for _, f := range g.Record.Fields {
			if seen[f.Name] {
				l.diags.Errorf(l.span(f.Tokens), "Duplicate field name in record: %s", f.Name)
			}
			seen[f.Name] = true
			t.Names = append(t.Names, f.Name)
			t.Elems = append(t.Elems, l.expr(f.X))
		}
		return t
	case g.Sizeof != nil:
		s := &SizeofExpr{Loc: Loc(sp)}
		if g.Sizeof.Type != nil {
			s.Of = l.typeExpr(g.Sizeof.Type)
		} else {
			s.X = l.expr(g.Sizeof.X)
		}
		return s
	case g.Offsetof != nil:
		o := &OffsetofExpr{Loc: Loc(sp), Fields: g.Offsetof.Fields}
		if g.Offsetof.Type != nil {
			o.Of = l.typeExpr(g.Offsetof.Type)
		} else {
			o.X = l.expr(g.Offsetof.X)
		}
		return o
	case g.Call != nil:
		return l.call(g.Call)
	case g.Block != nil:
		return l.blockExpr(g.Block)
	case g.Map != nil:
		m := l.mapExpr(g.Map)
		if g.Keys != nil {
			for _, k := range g.Keys.Keys {
				m.Keys = append(m.Keys, l.expr(k))
			}
			m.Loc = Loc(Join(m.Span(), l.span(g.Keys.Tokens)))
		}
		if g.MapPost != "" {
			return &UnaryExpr{Loc: Loc(sp), Op: string(g.MapPost), X: m, Postfix: true}
		}
		return m
	case g.Name != "":
		x := l.name(g.Tokens[0])
		if g.Post != "" {
			return &UnaryExpr{Loc: Loc(sp), Op: string(g.Post), X: x, Postfix: true}
		}
		return x
	case g.Literal != nil:
		return l.literal(*g.Literal)
	}
	l.diags.Errorf(sp, "syntax error: empty expression")
	return &IntLit{Loc: Loc(sp)}
}

// simpleExpr lowers a gSimpleExpr: simple operands and binary operators.
func (l *lowerer) simpleExpr(g *gSimpleExpr) Expr {
	x := l.simpleOperand(g.Operands[0])
	if len(g.Ops) == 0 {
		return x
	}
	operands := make([]Expr, 0, len(g.Operands))
	operands = append(operands, x)
	for _, o := range g.Operands[1:] {
		operands = append(operands, l.simpleOperand(o))
	}
	return l.precedence(operands, g.Ops)
}

// simpleOperand lowers a gSimpleOperand, with the spans gPrimary and
// gPostfix give the same operand.
func (l *lowerer) simpleOperand(g *gSimpleOperand) Expr {
	toks := g.Tokens
	var x Expr
	switch kindOf(toks[0]) {
	case tPunct: // "(" SimpleExpr { "," SimpleExpr } ")"
		if len(g.Args) == 1 {
			x = l.simpleExpr(g.Args[0])
			break
		}
		t := &TupleExpr{Loc: Loc(l.span(toks[:g.Tail]))}
		for _, e := range g.Args {
			t.Elems = append(t.Elems, l.simpleExpr(e))
		}
		x = t
	case tMap:
		m := &MapExpr{Loc: Loc(l.tokSpan(toks[0])), Name: toks[0].Value}
		if g.Args != nil {
			for _, k := range g.Args {
				m.Keys = append(m.Keys, l.simpleExpr(k))
			}
			m.Loc = Loc(l.span(toks[:g.Tail]))
		}
		x = m
	case tVar, tBuiltin, tIdent:
		if g.Args == nil {
			x = l.name(toks[0])
			break
		}
		c := &CallExpr{Loc: Loc(l.span(toks[:g.Tail])), Name: toks[0].Value, NameSpan: l.tokSpan(toks[0])}
		for _, a := range g.Args {
			c.Args = append(c.Args, l.simpleExpr(a))
		}
		x = c
	default:
		x = l.literal(toks[0])
	}
	i := g.Tail
	if i < len(toks) && (toks[i].Value == "++" || toks[i].Value == "--") {
		x = &UnaryExpr{Loc: Loc(l.span(toks[:i+1])), Op: toks[i].Value, X: x, Postfix: true}
		i++
	}
	for ; i+1 < len(toks); i += 2 {
		sp := Join(x.Span(), l.span(toks[i:i+2]))
		f := toks[i+1]
		switch {
		case toks[i].Value == "->":
			x = &FieldExpr{Loc: Loc(sp), X: x, Field: f.Value, Arrow: true}
		case kindOf(f) == tInt:
			x = l.tupleIndex(x, sp, f)
		default:
			x = &FieldExpr{Loc: Loc(sp), X: x, Field: f.Value}
		}
	}
	return x
}

func (l *lowerer) tupleIndex(x Expr, sp Span, t lexer.Token) Expr {
	n, err := strconv.Atoi(t.Value)
	if err != nil || n < 0 {
		l.diags.Errorf(l.tokSpan(t), "invalid tuple index: %s", t.Value)
	}
	return &TupleIndexExpr{Loc: Loc(sp), X: x, Index: n}
}

// literal lowers an Int, String, Char, Param or true/false token.
func (l *lowerer) literal(t lexer.Token) Expr {
	sp := l.tokSpan(t)
	switch kindOf(t) {
	case tInt:
		v, err := ParseInt(t.Value)
		if err != nil {
			l.diags.Errorf(sp, "%s", err.Error())
		}
		return &IntLit{Loc: Loc(sp), Value: v, Text: t.Value}
	case tString:
		v, err := unquote(t.Value)
		if err != nil {
			l.diags.Errorf(sp, "%s", err.Error())
		}
		return &StrLit{Loc: Loc(sp), Value: v}
	case tChar:
		v, err := unquote(t.Value)
		if err == nil && len(v) != 1 {
			err = fmt.Errorf("a character literal must hold exactly one character: %s", t.Value)
		}
		if err != nil {
			l.diags.Errorf(sp, "%s", err.Error())
			v = "\x00"
		}
		return &IntLit{Loc: Loc(sp), Value: uint64(v[0]), Text: t.Value}
	case tParam:
		if t.Value == "$#" {
			return &PositionalExpr{Loc: Loc(sp), Count: true}
		}
		n, err := strconv.Atoi(t.Value[1:])
		if err != nil || n < 1 {
			l.diags.Errorf(sp, "param %s is out of integer range [1, 9223372036854775807]", t.Value)
		}
		return &PositionalExpr{Loc: Loc(sp), N: n}
	case tKeyword:
		return &BoolLit{Loc: Loc(sp), Value: t.Value == "true"}
	}
	l.diags.Errorf(sp, "syntax error: empty expression")
	return &IntLit{Loc: Loc(sp)}
}

// name lowers a variable, builtin or identifier token.
func (l *lowerer) name(t lexer.Token) Expr {
	sp := l.tokSpan(t)
	switch kindOf(t) {
	case tVar:
		return &VarExpr{Loc: Loc(sp), Name: t.Value}
	case tBuiltin:
		return &BuiltinExpr{Loc: Loc(sp), Name: t.Value}
	}
	return &IdentExpr{Loc: Loc(sp), Name: t.Value}
}

func (l *lowerer) call(g *gCall) *CallExpr {
	c := &CallExpr{Loc: Loc(l.span(g.Tokens)), Name: g.Name}
	if len(g.Tokens) > 0 {
		c.NameSpan = l.tokSpan(g.Tokens[0])
	}
	for _, a := range g.Args {
		c.Args = append(c.Args, l.expr(a))
	}
	return c
}

func (l *lowerer) mapExpr(g *gMap) *MapExpr {
	return &MapExpr{Loc: Loc(l.span(g.Tokens)), Name: g.Name}
}

func (l *lowerer) typeExpr(g *gType) *TypeExpr {
	t := &TypeExpr{Loc: Loc(l.span(g.Tokens)), Ptr: len(g.Stars), ArrayLen: -1}
	switch {
	case g.Tagged != nil:
		t.Name = g.Tagged.Kind + " " + g.Tagged.Name
	case g.Typeof != nil:
		t.Name, t.Of = "typeof", l.expr(g.Typeof)
	case len(g.Kw) == 1 && strings.HasSuffix(g.Kw[0], "_t"):
		t.Name = strings.TrimSuffix(g.Kw[0], "_t") // uint64_t is uint64
	case len(g.Kw) > 0:
		t.Name = strings.Join(g.Kw, " ")
	default:
		t.Name = g.Named
	}
	if g.Array != nil {
		t.ArrayLen = 0
		if g.Array.Len != "" {
			v, err := ParseInt(g.Array.Len)
			if err != nil || v > 1<<20 {
				l.diags.Errorf(l.span(g.Array.Tokens), "invalid array length: %s", g.Array.Len)
			}
			t.ArrayLen = int(v & (1<<20 - 1))
		}
	}
	return t
}

// ParseInt parses an integer literal as bpftrace 0.17 writes them (see
// numberLen): decimal, 0x hex, 0 octal, with '_' separators, a C size
// suffix (u, l, ul, ll, ull) and a decimal exponent with a one-digit
// coefficient (1e6). Errors are worded as bpftrace's.
func ParseInt(text string) (uint64, error) {
	outOfRange := func() (uint64, error) {
		return 0, fmt.Errorf("integer literal out of range: %s", text)
	}
	if n := durationLen(text); n == len(text) {
		// A duration: `5s` is 5000000000 (nanoseconds).
		i := strings.IndexFunc(text, func(r rune) bool { return r >= 'a' && r <= 'z' })
		unit := durationUnits[text[i:]]
		v, err := ParseInt(text[:i])
		if err != nil {
			return 0, err
		}
		if v > math.MaxUint64/unit {
			return outOfRange()
		}
		return v * unit, nil
	}
	if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		v, err := strconv.ParseUint(text[2:], 16, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return outOfRange()
			}
			return 0, fmt.Errorf("invalid integer literal: %s", text)
		}
		return v, nil
	}
	// digits strips the separators and size suffix of a decimal part.
	digits := func(s string) (string, bool) {
		for len(s) > 0 && strings.IndexByte("uUlL", s[len(s)-1]) >= 0 {
			s = s[:len(s)-1]
		}
		s = strings.ReplaceAll(s, "_", "")
		return s, allDigits(s)
	}
	if i := strings.IndexAny(text, "eE"); i > 0 {
		coef, ok1 := digits(text[:i])
		exp, ok2 := digits(text[i+1:])
		if !ok1 || !ok2 {
			return 0, fmt.Errorf("invalid integer literal: %s", text)
		}
		if len(strings.TrimLeft(coef, "0")) > 1 {
			return 0, fmt.Errorf("Coefficient part of scientific literal must be in range (0,9), got: %s", coef)
		}
		e, err := strconv.Atoi(exp)
		if err != nil || e >= 19 {
			return 0, fmt.Errorf("Exponent will overflow integer range: %s", strings.TrimLeft(exp, "0"))
		}
		v, _ := strconv.ParseUint(coef, 10, 64)
		for ; e > 0; e-- {
			v *= 10
		}
		return v, nil
	}
	s, ok := digits(text)
	if !ok {
		return 0, fmt.Errorf("invalid integer literal: %s", text)
	}
	base := 10
	if len(s) > 1 && s[0] == '0' {
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return outOfRange()
		}
		return 0, fmt.Errorf("Found trailing non-numeric characters")
	}
	return v, nil
}

// unquote decodes a string or char literal (with its quotes): \n \t \r \"
// \' \\ \0 \xNN and \NNN octal escapes.
func unquote(lit string) (string, error) {
	if len(lit) < 2 || lit[len(lit)-1] != lit[0] {
		return "", fmt.Errorf("unterminated string")
	}
	s := lit[1 : len(lit)-1]
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("invalid escape character '\\'")
		}
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '"', '\'', '\\', '?':
			b.WriteByte(e)
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", fmt.Errorf("invalid escape character '\\x'")
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			if v > 255 {
				return "", fmt.Errorf("octal escape out of range: \\%s", s[i:j])
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			return "", fmt.Errorf("invalid escape character '\\%c'", e)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
