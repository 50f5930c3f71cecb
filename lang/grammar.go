package lang

// This file is the parser: a hand-written recursive-descent parser over
// the lexer's tokens that builds a private parse tree (the g* types), which
// lower.go turns into the AST of ast.go. Every choice is made on the next
// one to three tokens, so each token is looked at a bounded number of
// times. It replaced a participle v2 grammar (the design card's choice):
// measured on the 1,000-line script of BenchmarkParse1000Lines, a
// participle grammar of the same language took 100 ms, 52 MB and 512,000
// allocations against this parser's 3 ms, 3.2 MB and 21,600 (and this one
// builds the AST too), most of it in participle's regexp lexer and per-node
// machinery; building the participle parser alone cost 0.75 ms at every
// start, a one-liner 0.2 ms more against 8 us here. The parser stops at the
// first token that cannot continue
// the script, as bison does, so the error is reported at the same token as
// bpftrace reports it.
//
// Binary operators are parsed as a flat list of operands and operators
// (precedence is applied when lowering, from one table); prefix operators,
// casts, selectors and else-if chains are loops rather than recursion, so
// only brackets and ternaries nest (and the lexer caps those at
// MaxNesting).
//
// The grammar, as EBNF over token kinds and punctuation:
//
//	program   = { Preproc | CDecl | probe } .
//	probe     = [ Attach ] { "," [ Attach ] } [ "/" expr EndPred ] block .
//	block     = "{" { ";" | compound | simple term } "}" .
//	term      = ";" | (before "}") .
//	compound  = if | "unroll" "(" expr ")" block | "while" "(" expr ")" block
//	          | "for" "(" Var ":" Map ")" block | block .
//	if        = "if" "(" expr ")" block { "else" "if" "(" expr ")" block } [ "else" block ] .
//	simple    = "break" | "continue" | "return" | let | expr [ asgop expr ] .
//	let       = "let" Var [ ":" type ] [ "=" expr ] .
//	expr      = binary { "?" expr ":" binary } .
//	binary    = unary { binop unary } .
//	unary     = { "(" type ")" | "-" | "!" | "~" | "*" | "&" | "++" | "--" } postfix .
//	postfix   = primary { "." Int | "." name | "->" name | "[" expr { "," expr } "]" } [ "++" | "--" ] .
//	primary   = "(" expr { "," expr } ")" | "sizeof" "(" ( type | expr ) ")"
//	          | "offsetof" "(" ( type | expr ) "," name { "." name } ")"
//	          | ( Ident | Builtin ) "(" [ expr { "," expr } ] ")"
//	          | Int | String | Char | "true" | "false" | Param | Var | Map | Builtin | Ident .
//	type      = ( ("struct"|"union"|"enum") name | TypeKw { TypeKw } | Ident (before "*") ) { "*" } [ "[" [ Int ] "]" ] .
//
// Every g* node records Tokens, the tokens it was parsed from, for the
// spans of the AST.

type gProgram struct {
	Items []*gItem
}

type gItem struct {
	Tokens  []token
	Preproc string
	CDecl   string
	Probe   *gProbe
}

type gProbe struct {
	Tokens []token
	Attach []*gAttach // empty attach points (`BEGIN,,END`) are dropped
	Pred   *gPred
	Body   *gBlock
}

type gAttach struct {
	Tokens []token
	Raw    string
}

type gPred struct {
	Tokens []token
	X      *gExpr
}

type gBlock struct {
	Tokens []token
	Items  []*gStmtItem
}

// gStmtItem is a statement inside a block.
type gStmtItem struct {
	Tokens   []token
	Semi     bool
	Compound *gCompound
	Simple   *gSimple
}

type gCompound struct {
	Tokens []token
	If     *gIf
	Unroll *gUnroll
	While  *gWhile
	For    *gFor
	Block  *gBlock
}

type gIf struct {
	Tokens []token
	Cond   *gExpr
	Then   *gBlock
	Elifs  []*gElif
	Else   *gBlock
}

type gElif struct {
	Tokens []token
	Cond   *gExpr
	Then   *gBlock
}

type gUnroll struct {
	Tokens []token
	Count  *gExpr
	Body   *gBlock
}

type gWhile struct {
	Tokens []token
	Cond   *gExpr
	Body   *gBlock
}

type gFor struct {
	Tokens []token
	Var    string
	Map    *gMap
	Body   *gBlock
}

type gSimple struct {
	Tokens []token
	Jump   string
	Let    *gLet
	Expr   *gExpr
	AsgOp  string
	Rhs    *gExpr
}

type gLet struct {
	Tokens []token
	Var    string
	Type   *gType
	Init   *gExpr
}

// gExpr is a ternary chain: X ? T1 : E1 ? T2 : E2 ... (right associative).
type gExpr struct {
	Tokens []token
	X      gBinary
	Alts   []*gTern
}

type gTern struct {
	Tokens []token
	Then   *gExpr
	Else   gBinary
}

// gBinary is a flat operand/operator list.
type gBinary struct {
	Tokens []token
	X      gUnary
	Rest   []gBinOp
}

type gBinOp struct {
	Tokens []token
	Op     string
	Y      gUnary
}

// gUnary is prefix operators and casts applied to a postfix expression.
type gUnary struct {
	Tokens []token
	Pre    []gPrefix
	X      gPostfix
}

type gPrefix struct {
	Tokens []token
	Cast   *gType
	Op     string
}

type gPostfix struct {
	Tokens []token
	X      gPrimary
	Sel    []gSel
}

type gSel struct {
	Tokens []token
	Index  *gInt
	Field  string
	Arrow  string
	Sub    []*gExpr
	Post   string
}

type gInt struct {
	Tokens []token
	Text   string
}

type gPrimary struct {
	Tokens   []token
	Paren    *gParen
	Sizeof   *gSizeof
	Offsetof *gOffsetof
	Call     *gCall
	Map      *gMap
	// Otherwise a single token: Int, String, Char, Keyword (true or
	// false), Param, Var, Builtin or Ident.
	Kind tokenKind
	Text string
}

type gParen struct {
	Tokens []token
	Elems  []*gExpr
}

type gSizeof struct {
	Tokens []token
	Type   *gType
	X      *gExpr
}

type gOffsetof struct {
	Tokens []token
	Type   *gType
	X      *gExpr
	Fields []string
}

type gCall struct {
	Tokens []token
	Name   string
	Args   []*gExpr
}

// gMap is a map name; its keys `@m[k1, k2]` are parsed as the first
// subscript selector.
type gMap struct {
	Tokens []token
	Name   string
}

// gType is a type in a cast, sizeof, offsetof or let. A plain identifier
// is only taken as a (typedef) type when followed by '*', so that `(x)` is
// a parenthesised expression.
type gType struct {
	Tokens []token
	Tagged *gTagged
	Kw     []string
	Named  string
	Stars  []string
	Array  *gArray
}

type gTagged struct {
	Tokens []token
	Kind   string
	Name   string
}

type gArray struct {
	Tokens []token
	Len    string
}

// parseError is the parser's failure: the token at which the script stops
// being valid. term marks the end of a simple statement, where bpftrace
// words the error "expecting }". expecting, when set, overrides the list of
// expected tokens derived from the context ("-" for none).
type parseError struct {
	tok       token
	idx       int
	term      bool
	expecting string
}

func (e *parseError) Error() string { return "unexpected " + e.tok.val }

// bailout unwinds the parser after the first error.
type bailout struct{}

type parser struct {
	toks []token // ends with the EOF token
	pos  int
	err  *parseError
}

// parseTokens parses a whole token stream (ending in EOF).
func parseTokens(toks []token) (g *gProgram, err *parseError) {
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			g, err = nil, p.err
		}
	}()
	return p.program(), nil
}

func (p *parser) peek() *token { return &p.toks[p.pos] }

// peekAt returns the token n places ahead (the EOF token past the end).
func (p *parser) peekAt(n int) *token {
	if p.pos+n < len(p.toks) {
		return &p.toks[p.pos+n]
	}
	return &p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.pos]
	if p.pos < len(p.toks)-1 {
		p.pos++
	}
	return t
}

func (p *parser) since(start int) []token { return p.toks[start:p.pos:p.pos] }

func isPunct(t *token, v string) bool { return t.kind == tPunct && t.val == v }

func isKw(t *token, v string) bool { return t.kind == tKeyword && t.val == v }

// fail stops parsing with an error at the next token.
func (p *parser) fail() {
	p.failWith(false, "")
}

func (p *parser) failWith(term bool, expecting string) {
	p.err = &parseError{tok: *p.peek(), idx: p.pos, term: term, expecting: expecting}
	panic(bailout{})
}

// expect consumes the punctuation v or fails.
func (p *parser) expect(v string) {
	if !isPunct(p.peek(), v) {
		p.fail()
	}
	p.next()
}

func (p *parser) expectKind(k tokenKind) string {
	if p.peek().kind != k {
		p.fail()
	}
	return p.next().val
}

func (p *parser) program() *gProgram {
	g := &gProgram{}
	for {
		t := p.peek()
		start := p.pos
		switch {
		case t.kind == tEOF:
			return g
		case t.kind == tPreproc:
			p.next()
			g.Items = append(g.Items, &gItem{Tokens: p.since(start), Preproc: t.val})
		case t.kind == tCDecl:
			p.next()
			g.Items = append(g.Items, &gItem{Tokens: p.since(start), CDecl: t.val})
		case t.kind == tAttach || isPunct(t, ",") || isPunct(t, "/") || isPunct(t, "{"):
			pr := p.probe()
			g.Items = append(g.Items, &gItem{Tokens: pr.Tokens, Probe: pr})
		default:
			p.fail()
		}
	}
}

func (p *parser) probe() *gProbe {
	start := p.pos
	g := &gProbe{}
	// bpftrace's attach point list allows empty entries: `BEGIN,,END`, a
	// leading or trailing ',' (and so a ',' between clauses).
	for {
		if t := p.peek(); t.kind == tAttach {
			s := p.pos
			p.next()
			g.Attach = append(g.Attach, &gAttach{Tokens: p.since(s), Raw: t.val})
		}
		if !isPunct(p.peek(), ",") {
			break
		}
		p.next()
	}
	if isPunct(p.peek(), "/") {
		s := p.pos
		p.next()
		x := p.expr()
		p.expectKind(tEndPred)
		g.Pred = &gPred{Tokens: p.since(s), X: x}
	}
	g.Body = p.block()
	g.Tokens = p.since(start)
	return g
}

func (p *parser) block() *gBlock {
	start := p.pos
	p.expect("{")
	g := &gBlock{}
	for {
		t := p.peek()
		if isPunct(t, "}") {
			p.next()
			g.Tokens = p.since(start)
			return g
		}
		s := p.pos
		it := &gStmtItem{}
		switch {
		case isPunct(t, ";"):
			p.next()
			it.Semi = true
		case isPunct(t, "{") || t.kind == tKeyword && (t.val == "if" || t.val == "unroll" || t.val == "while" || t.val == "for"):
			it.Compound = p.compound()
		default:
			it.Simple = p.simple()
			// The terminator: ';', or nothing before the block's '}'.
			switch t := p.peek(); {
			case isPunct(t, ";"):
				p.next()
			case isPunct(t, "}"):
			default:
				p.failWith(true, "")
			}
		}
		it.Tokens = p.since(s)
		if it.Simple != nil {
			it.Simple.Tokens = it.Tokens
		}
		g.Items = append(g.Items, it)
	}
}

func (p *parser) compound() *gCompound {
	start := p.pos
	g := &gCompound{}
	t := p.peek()
	switch {
	case isPunct(t, "{"):
		g.Block = p.block()
	case t.val == "if":
		g.If = p.ifStmt()
	case t.val == "unroll":
		p.next()
		c := p.parenExpr()
		g.Unroll = &gUnroll{Count: c, Body: p.block()}
		g.Unroll.Tokens = p.since(start)
	case t.val == "while":
		p.next()
		c := p.parenExpr()
		g.While = &gWhile{Cond: c, Body: p.block()}
		g.While.Tokens = p.since(start)
	case t.val == "for":
		p.next()
		p.expect("(")
		f := &gFor{Var: p.expectKind(tVar)}
		p.expect(":")
		ms := p.pos
		f.Map = &gMap{Name: p.expectKind(tMap)}
		f.Map.Tokens = p.since(ms)
		p.expect(")")
		f.Body = p.block()
		f.Tokens = p.since(start)
		g.For = f
	}
	g.Tokens = p.since(start)
	return g
}

// parenExpr parses "(" expr ")".
func (p *parser) parenExpr() *gExpr {
	p.expect("(")
	x := p.expr()
	p.expect(")")
	return x
}

func (p *parser) ifStmt() *gIf {
	start := p.pos
	p.next() // if
	g := &gIf{Cond: p.parenExpr()}
	g.Then = p.block()
	for isKw(p.peek(), "else") {
		s := p.pos
		p.next()
		if !isKw(p.peek(), "if") {
			g.Else = p.block()
			break
		}
		p.next()
		e := &gElif{Cond: p.parenExpr()}
		e.Then = p.block()
		e.Tokens = p.since(s)
		g.Elifs = append(g.Elifs, e)
	}
	g.Tokens = p.since(start)
	return g
}

var asgOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true,
	"&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true}

func (p *parser) simple() *gSimple {
	g := &gSimple{}
	t := p.peek()
	switch {
	case t.kind == tKeyword && (t.val == "break" || t.val == "continue" || t.val == "return"):
		g.Jump = p.next().val
	case isKw(t, "let"):
		start := p.pos
		p.next()
		l := &gLet{Var: p.expectKind(tVar)}
		if isPunct(p.peek(), ":") {
			p.next()
			l.Type = p.typ()
		}
		if isPunct(p.peek(), "=") {
			p.next()
			l.Init = p.expr()
		}
		l.Tokens = p.since(start)
		g.Let = l
	default:
		g.Expr = p.expr()
		if t := p.peek(); t.kind == tPunct && asgOps[t.val] {
			g.AsgOp = p.next().val
			g.Rhs = p.expr()
		}
	}
	return g
}

func (p *parser) expr() *gExpr {
	start := p.pos
	g := &gExpr{}
	p.binary(&g.X)
	for isPunct(p.peek(), "?") {
		s := p.pos
		p.next()
		tn := &gTern{Then: p.expr()}
		p.expect(":")
		p.binary(&tn.Else)
		tn.Tokens = p.since(s)
		g.Alts = append(g.Alts, tn)
	}
	g.Tokens = p.since(start)
	return g
}

// The operand parsers fill nodes held by value in their parent, so a
// plain operand is one allocation rather than one per level.
func (p *parser) binary(g *gBinary) {
	start := p.pos
	p.unary(&g.X)
	for {
		t := p.peek()
		if t.kind != tPunct || binPrec[t.val] == 0 {
			break
		}
		s := p.pos
		g.Rest = append(g.Rest, gBinOp{Op: p.next().val})
		b := &g.Rest[len(g.Rest)-1]
		p.unary(&b.Y)
		b.Tokens = p.since(s)
	}
	g.Tokens = p.since(start)
}

// startsType reports whether the token at n places ahead begins a type
// that cannot be an expression (a tagged or builtin type name).
func (p *parser) startsType(n int) bool {
	t := p.peekAt(n)
	return t.kind == tTypeKw || t.kind == tKeyword && (t.val == "struct" || t.val == "union" || t.val == "enum")
}

// startsNamedPtr reports whether the tokens n places ahead are an
// identifier followed by '*' (a possible typedef pointer type).
func (p *parser) startsNamedPtr(n int) bool {
	return p.peekAt(n).kind == tIdent && isPunct(p.peekAt(n+1), "*")
}

// tryType parses a type if one starts at the next token and is followed
// by the punctuation `follow`; otherwise it consumes nothing and returns
// nil. A tagged or builtin type name commits to the type (and fails on a
// malformed one); an identifier followed by '*' is only a type if the
// type ends at `follow` (else `(x * y)` is an expression).
func (p *parser) tryType(follow string) *gType {
	if p.startsType(0) {
		return p.typ()
	}
	if !p.startsNamedPtr(0) {
		return nil
	}
	save := p.pos
	// An identifier type is '*'s and an optional array suffix: scan it
	// without building anything.
	k := p.pos + 1
	for k < len(p.toks) && isPunct(&p.toks[k], "*") {
		k++
	}
	if k < len(p.toks) && isPunct(&p.toks[k], "[") {
		k++
		if k < len(p.toks) && p.toks[k].kind == tInt {
			k++
		}
		if k >= len(p.toks) || !isPunct(&p.toks[k], "]") {
			return nil
		}
		k++
	}
	if k >= len(p.toks) || !isPunct(&p.toks[k], follow) {
		return nil
	}
	ty := p.typ()
	if p.pos != k {
		p.pos = save
		return nil
	}
	return ty
}

func (p *parser) unary(g *gUnary) {
	start := p.pos
	for {
		t := p.peek()
		if t.kind != tPunct {
			break
		}
		s := p.pos
		if t.val == "(" {
			if !p.startsType(1) && !p.startsNamedPtr(1) {
				break
			}
			p.next()
			ty := p.tryType(")")
			if ty == nil {
				p.pos = s
				break
			}
			p.castClose(ty)
			g.Pre = append(g.Pre, gPrefix{Tokens: p.since(s), Cast: ty})
			continue
		}
		switch t.val {
		case "++", "--":
			// bpftrace increments only a name (map, variable; builtins
			// and identifiers are refused later): `++@m[k]` and nothing
			// after it.
			p.next()
			g.Pre = append(g.Pre, gPrefix{Tokens: p.since(s), Op: t.val})
			switch p.peek().kind {
			case tMap, tVar, tBuiltin, tIdent:
			default:
				p.failWith(false, "-")
			}
			p.postfix(&g.X, false, true)
			g.Tokens = p.since(start)
			return
		case "-", "!", "~", "*", "&":
			p.next()
			g.Pre = append(g.Pre, gPrefix{Tokens: p.since(s), Op: t.val})
			continue
		}
		break
	}
	p.postfix(&g.X, len(g.Pre) > 0 && g.Pre[len(g.Pre)-1].Cast != nil, false)
	g.Tokens = p.since(start)
}

// castClose consumes the ')' of a cast whose type is ty.
func (p *parser) castClose(ty *gType) {
	if isPunct(p.peek(), ")") {
		p.next()
		return
	}
	// bpftrace 0.17 lists what may still follow the type: one more '*'
	// after a single one (it takes at most two); after a bare type name,
	// which it reads as a parenthesised identifier, a ',' of a tuple.
	exp := ")"
	switch {
	case ty.Array != nil || len(ty.Stars) >= 2:
	case len(ty.Stars) == 1:
		exp = ") or *"
	default:
		exp = `) or ","`
	}
	p.failWith(false, exp)
}

// postfix parses an operand and its selectors. After a prefix increment
// (incremented) only a map's keys may follow.
func (p *parser) postfix(g *gPostfix, afterCast, incremented bool) {
	start := p.pos
	p.primary(&g.X, afterCast)
	if incremented && g.X.Map != nil && isPunct(p.peek(), "[") {
		incremented = false
	}
	for !incremented {
		t := p.peek()
		if t.kind != tPunct {
			break
		}
		s := p.pos
		var sel gSel
		switch t.val {
		case ".":
			p.next()
			n := p.peek()
			switch n.kind {
			case tInt:
				is := p.pos
				p.next()
				sel.Index = &gInt{Tokens: p.since(is), Text: n.val}
			case tIdent, tBuiltin, tKeyword, tTypeKw:
				sel.Field = p.next().val
			default:
				p.fail()
			}
		case "->":
			p.next()
			switch p.peek().kind {
			case tIdent, tBuiltin, tKeyword, tTypeKw:
				sel.Arrow = p.next().val
			default:
				p.fail()
			}
		case "[":
			p.next()
			sel.Sub = append(sel.Sub, p.expr())
			for isPunct(p.peek(), ",") {
				p.next()
				sel.Sub = append(sel.Sub, p.expr())
			}
			p.expect("]")
		case "++", "--":
			// bpftrace increments only a name, once: `@m[k]++`, `$x++`
			// (then selectors may follow); `$x.a++`, `1++` and `@x++ ++`
			// are errors at the '++'.
			if !p.incrementable(g) {
				g.Tokens = p.since(start)
				return
			}
			sel.Post = p.next().val
		default:
			g.Tokens = p.since(start)
			return
		}
		sel.Tokens = p.since(s)
		g.Sel = append(g.Sel, sel)
	}
	g.Tokens = p.since(start)
}

// incrementable reports whether a postfix '++' may follow g as parsed so
// far: a name, with only a map's keys after it, not incremented yet.
func (p *parser) incrementable(g *gPostfix) bool {
	x := &g.X
	if x.Map == nil && x.Kind != tVar && x.Kind != tBuiltin && x.Kind != tIdent {
		return false
	}
	switch len(g.Sel) {
	case 0:
		return true
	case 1:
		return x.Map != nil && g.Sel[0].Sub != nil
	}
	return false
}

func (p *parser) primary(g *gPrimary, afterCast bool) {
	start := p.pos
	t := p.peek()
	switch t.kind {
	case tPunct:
		if t.val != "(" {
			if afterCast {
				// bpftrace lists nothing after a cast's ')'.
				p.failWith(false, "-")
			}
			p.fail()
		}
		p.next()
		par := &gParen{}
		par.Elems = append(par.Elems, p.expr())
		for isPunct(p.peek(), ",") {
			p.next()
			par.Elems = append(par.Elems, p.expr())
		}
		p.expect(")")
		par.Tokens = p.since(start)
		g.Paren = par
	case tKeyword:
		switch t.val {
		case "true", "false":
			g.Kind, g.Text = tKeyword, p.next().val
		case "sizeof":
			p.next()
			p.expect("(")
			s := &gSizeof{}
			if s.Type = p.tryType(")"); s.Type == nil {
				s.X = p.expr()
			}
			p.expect(")")
			s.Tokens = p.since(start)
			g.Sizeof = s
		case "offsetof":
			p.next()
			p.expect("(")
			o := &gOffsetof{}
			if o.Type = p.tryType(","); o.Type == nil {
				o.X = p.expr()
			}
			p.expect(",")
			o.Fields = append(o.Fields, p.fieldName())
			for isPunct(p.peek(), ".") {
				p.next()
				o.Fields = append(o.Fields, p.fieldName())
			}
			p.expect(")")
			o.Tokens = p.since(start)
			g.Offsetof = o
		default:
			if afterCast {
				p.failWith(false, "-")
			}
			p.fail()
		}
	case tIdent, tBuiltin:
		if isPunct(p.peekAt(1), "(") {
			c := &gCall{Name: p.next().val}
			p.next()
			if !isPunct(p.peek(), ")") {
				c.Args = append(c.Args, p.expr())
				for isPunct(p.peek(), ",") {
					p.next()
					c.Args = append(c.Args, p.expr())
				}
			}
			p.expect(")")
			c.Tokens = p.since(start)
			g.Call = c
			break
		}
		g.Kind, g.Text = t.kind, p.next().val
	case tInt, tString, tChar, tParam, tVar:
		g.Kind, g.Text = t.kind, p.next().val
	case tMap:
		g.Map = &gMap{Name: p.next().val}
		g.Map.Tokens = p.since(start)
	default:
		if afterCast {
			p.failWith(false, "-")
		}
		p.fail()
	}
	g.Tokens = p.since(start)
}

func (p *parser) fieldName() string {
	switch p.peek().kind {
	case tIdent, tBuiltin, tKeyword, tTypeKw:
		return p.next().val
	}
	p.fail()
	return ""
}

func (p *parser) typ() *gType {
	start := p.pos
	g := &gType{}
	t := p.peek()
	switch {
	case t.kind == tKeyword && (t.val == "struct" || t.val == "union" || t.val == "enum"):
		p.next()
		tg := &gTagged{Kind: t.val}
		switch p.peek().kind {
		case tIdent, tBuiltin, tTypeKw:
			tg.Name = p.next().val
		default:
			p.fail()
		}
		tg.Tokens = p.since(start)
		g.Tagged = tg
	case t.kind == tTypeKw:
		for p.peek().kind == tTypeKw {
			g.Kw = append(g.Kw, p.next().val)
		}
	case t.kind == tIdent && isPunct(p.peekAt(1), "*"):
		g.Named = p.next().val
	default:
		p.fail()
	}
	for isPunct(p.peek(), "*") {
		g.Stars = append(g.Stars, p.next().val)
	}
	if isPunct(p.peek(), "[") {
		s := p.pos
		p.next()
		a := &gArray{}
		if p.peek().kind == tInt {
			a.Len = p.next().val
		}
		p.expect("]")
		a.Tokens = p.since(s)
		g.Array = a
	}
	g.Tokens = p.since(start)
	return g
}
