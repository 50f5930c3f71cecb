package lang

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file plugs the hand-written lexer into participle and holds the
// grammar's custom rules (participle Parseables).

// tokenSymbols are the token kinds as the grammar names them.
var tokenSymbols = map[string]lexer.TokenType{
	"EOF":     lexer.EOF,
	"Ident":   lexer.TokenType(tIdent),
	"Builtin": lexer.TokenType(tBuiltin),
	"Keyword": lexer.TokenType(tKeyword),
	"TypeKw":  lexer.TokenType(tTypeKw),
	"Int":     lexer.TokenType(tInt),
	"String":  lexer.TokenType(tString),
	"Char":    lexer.TokenType(tChar),
	"Var":     lexer.TokenType(tVar),
	"Param":   lexer.TokenType(tParam),
	"Map":     lexer.TokenType(tMap),
	"Punct":   lexer.TokenType(tPunct),
	"EndPred": lexer.TokenType(tEndPred),
	"Attach":  lexer.TokenType(tAttach),
	"CDecl":   lexer.TokenType(tCDecl),
	"Preproc": lexer.TokenType(tPreproc),
}

// tokenDefinition is the lexer of lexer.go as participle's
// lexer.Definition. Parse lexes first (for the lexer's own diagnostics)
// and hands the tokens to the parser as a tokenStream; Lex serves
// participle's own entry points (ParseString ...), failing with the
// lexer's diagnostics.
type tokenDefinition struct{}

func (tokenDefinition) Symbols() map[string]lexer.TokenType { return tokenSymbols }

func (d tokenDefinition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

func (tokenDefinition) LexString(filename, text string) (lexer.Lexer, error) {
	src := &Source{Name: filename, Text: text}
	diags := &Diagnostics{Src: src}
	toks := lex(src, diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return &tokenStream{toks: toks}, nil
}

// tokenStream hands out the lexer's tokens (ending in EOF) as
// participle's. A token's kind is its participle type (EOF is
// lexer.EOF); its place is its offset, from which the lowering and the
// error messages compute lines and columns with bpftrace's rules.
type tokenStream struct {
	toks []token
	i    int
}

func (s *tokenStream) Next() (lexer.Token, error) {
	t := s.toks[s.i]
	if s.i < len(s.toks)-1 {
		s.i++
	}
	tt := lexer.TokenType(t.kind)
	if t.kind == tEOF {
		tt = lexer.EOF
	}
	return lexer.Token{Type: tt, Value: t.val, Pos: lexer.Position{Offset: t.off}}, nil
}

// kindOf is the lexer's kind of a participle token.
func kindOf(t lexer.Token) tokenKind {
	if t.Type == lexer.EOF {
		return tEOF
	}
	return tokenKind(t.Type)
}

func isPunctTok(t *lexer.Token, v string) bool {
	return t.Type == lexer.TokenType(tPunct) && t.Value == v
}

// grammarError is a syntax error a custom rule words itself, at the token
// tok; term marks the end of a simple statement, where bpftrace
// words the error "expecting }"; expecting, when set, overrides the list
// of expected tokens derived from the context ("-" for none).
type grammarError struct {
	tok       lexer.Token
	term      bool
	expecting string
}

func (e *grammarError) Error() string { return "unexpected " + e.tok.Value }

// gStmtEnd ends a simple statement: a ';', or nothing before the block's
// '}' (which it leaves to the block).
// Open records a statement with no ';' before the '}' (a block
// expression's value).
type gStmtEnd struct{ Open bool }

func (e *gStmtEnd) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	e.Open = false
	switch {
	case isPunctTok(t, ";"):
		lex.Next()
		return nil
	case isPunctTok(t, "}"):
		e.Open = true
		return nil
	}
	return &grammarError{tok: *t, term: true}
}

// gNameNext checks that a name (what a prefix increment may apply to)
// comes next, consuming nothing; bpftrace lists nothing it expected when
// not.
type gNameNext struct{}

func (*gNameNext) Parse(lex *lexer.PeekingLexer) error {
	switch t := lex.Peek(); kindOf(*t) {
	case tMap, tVar, tBuiltin, tIdent:
		return nil
	default:
		return &grammarError{tok: *t, expecting: "-"}
	}
}

// gCastClose is the ')' of a cast. bpftrace 0.17 lists what may still
// follow the type when it is missing: one more '*' after a single one (it
// takes at most two); after a bare type name, which it reads as a
// parenthesised identifier, a ',' of a tuple. After the ')' it lists
// nothing when no operand follows.
type gCastClose struct{}

func (*gCastClose) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	if !isPunctTok(t, ")") {
		before := lex.Range(0, lex.RawCursor())
		exp := `) or ","`
		n := len(before)
		switch {
		case n > 0 && isPunctTok(&before[n-1], "]"), n > 1 && isPunctTok(&before[n-1], "*") && isPunctTok(&before[n-2], "*"):
			exp = ")"
		case n > 0 && isPunctTok(&before[n-1], "*"):
			exp = ") or *"
		}
		return &grammarError{tok: *t, expecting: exp}
	}
	lex.Next()
	if t := lex.Peek(); !startsUnary(t) {
		return &grammarError{tok: *t, expecting: "-"}
	}
	return nil
}

// startsUnary reports whether t can start an operand or a prefix
// operator.
func startsUnary(t *lexer.Token) bool {
	switch kindOf(*t) {
	case tIdent, tBuiltin, tInt, tString, tChar, tVar, tParam, tMap:
		return true
	case tKeyword:
		switch t.Value {
		case "true", "false", "sizeof", "offsetof":
			return true
		}
	case tPunct:
		return len(t.Value) <= 2 && strings.Contains(" ( - ! ~ * & ++ -- ", " "+t.Value+" ")
	}
	return false
}

// gSimpleOperand and gSimpleExpr are the grammar's fast paths for the
// commonest operands and expressions, which a profile of the 1,000-line
// benchmark showed dominate the parse (participle tries each alternative
// of a rule on a branch of its own, allocating as it goes):
//
//	SimpleOperand = ( Int | String | Char | Param | "true" | "false"
//	                | ( Var | Builtin | Ident ) [ "++" | "--" ]
//	                | Map [ "[" SimpleExpr { "," SimpleExpr } "]" ] [ "++" | "--" ]
//	                | ( Ident | Builtin ) "(" [ SimpleExpr { "," SimpleExpr } ] ")"
//	                | "(" SimpleExpr { "," SimpleExpr } ")" )
//	                { "." ( Int | name ) | "->" name } .
//	SimpleExpr    = SimpleOperand { binop SimpleOperand } .
//
// exactly as the general rules (gPostfix, gPrimary, gCall, gBinary) parse
// them (a parenthesis is taken only if no type may start in it, so that
// it cannot be a cast). Anything else (a cast, a prefix operator, a
// subscript, a selector without its name, a ternary) they leave to the
// general rules, returning NextMatch without consuming a token; so those
// rules also word every error.
type gSimpleOperand struct {
	Tokens []lexer.Token
	// Args are a call's arguments, a map's keys (Tokens[1] is their "("
	// or "[") or the elements in parentheses (Tokens[0] is "("); Tail is
	// the index in Tokens of what follows the atom and its brackets (an
	// increment, selectors).
	Args []*gSimpleExpr
	Tail int
}

type gSimpleExpr struct {
	Tokens   []lexer.Token
	Operands []*gSimpleOperand
	Ops      []string
}

// gSimpleStmt is the fast path of the commonest statements, an
// expression or an assignment of SimpleExprs:
//
//	SimpleStmt = SimpleExpr [ asgOperator SimpleExpr ] ( ";" | (?= "}") ) .
//
// parsed exactly as gSimple and gStmtEnd parse it; anything else,
// errors included, it leaves to them.
type gSimpleStmt struct {
	Tokens []lexer.Token // without the ';'
	X, Rhs *gSimpleExpr
	AsgOp  string
	Open   bool // no ';' before the block's '}' (as gStmtEnd.Open)
}

// fastPaths enables gSimpleOperand, gSimpleExpr and gSimpleStmt; a test
// turns them off to check that the general rules parse the same.
var fastPaths = true

func (s *gSimpleStmt) Parse(lex *lexer.PeekingLexer) error {
	if !fastPaths {
		return participle.NextMatch
	}
	cp := lex.MakeCheckpoint()
	start := lex.RawCursor()
	fail := func() error {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	x := scanSimpleExpr(lex)
	if x == nil {
		return fail()
	}
	var op string
	var rhs *gSimpleExpr
	if t := lex.Peek(); t.Type == lexer.TokenType(tPunct) && asgOps[t.Value] {
		op = lex.Next().Value
		if rhs = scanSimpleExpr(lex); rhs == nil {
			return fail()
		}
	}
	toks := lex.Range(start, lex.RawCursor())
	open := false
	switch t := lex.Peek(); {
	case isPunctTok(t, ";"):
		lex.Next()
	case isPunctTok(t, "}"):
		open = true
	default:
		return fail()
	}
	*s = gSimpleStmt{Tokens: toks, X: x, Rhs: rhs, AsgOp: op, Open: open}
	return nil
}

func (o *gSimpleOperand) Parse(lex *lexer.PeekingLexer) error {
	if !fastPaths {
		return participle.NextMatch
	}
	cp := lex.MakeCheckpoint()
	x := scanSimpleOperand(lex)
	if x == nil {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	*o = *x
	return nil
}

func (o *gSimpleExpr) Parse(lex *lexer.PeekingLexer) error {
	if !fastPaths {
		return participle.NextMatch
	}
	cp := lex.MakeCheckpoint()
	x := scanSimpleExpr(lex)
	if x == nil || isPunctTok(lex.Peek(), "?") {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	*o = *x
	return nil
}

// scanSimpleExpr consumes a SimpleExpr, or returns nil (having consumed
// some tokens) if one does not come next.
func scanSimpleExpr(lex *lexer.PeekingLexer) *gSimpleExpr {
	if !startsSimpleOperand(lex.Peek()) {
		return nil // before allocating: most statements that are not simple fail here
	}
	start := lex.RawCursor()
	e := &gSimpleExpr{}
	for {
		x := scanSimpleOperand(lex)
		if x == nil {
			return nil
		}
		e.Operands = append(e.Operands, x)
		t := lex.Peek()
		if t.Type != lexer.TokenType(tPunct) || binPrec[t.Value] == 0 {
			break
		}
		e.Ops = append(e.Ops, lex.Next().Value)
	}
	e.Tokens = lex.Range(start, lex.RawCursor())
	return e
}

// startsSimpleOperand reports whether t can start a SimpleOperand.
func startsSimpleOperand(t *lexer.Token) bool {
	switch kindOf(*t) {
	case tInt, tString, tChar, tParam, tVar, tBuiltin, tIdent, tMap:
		return true
	case tPunct:
		return t.Value == "("
	case tKeyword:
		return t.Value == "true" || t.Value == "false"
	}
	return false
}

// scanSimpleOperand consumes a SimpleOperand, or returns nil (having
// consumed some tokens) if one does not come next.
func scanSimpleOperand(lex *lexer.PeekingLexer) *gSimpleOperand {
	start := lex.RawCursor()
	o := &gSimpleOperand{}
	t := lex.Next()
	name := false
	switch kind := kindOf(*t); kind {
	case tPunct:
		if t.Value != "(" {
			return nil
		}
		switch n := lex.Peek(); kindOf(*n) {
		case tTypeKw, tKeyword, tIdent:
			// A type may start here (or the keyword true, false,
			// sizeof, offsetof, which are rare here).
			return nil
		}
		if !scanSimpleList(lex, o, ")") {
			return nil
		}
	case tInt, tString, tChar, tParam:
	case tKeyword:
		if t.Value != "true" && t.Value != "false" {
			return nil
		}
	case tVar, tBuiltin, tIdent, tMap:
		n := lex.Peek()
		switch {
		case isPunctTok(n, "(") && (kind == tIdent || kind == tBuiltin):
			lex.Next()
			if isPunctTok(lex.Peek(), ")") {
				lex.Next()
				o.Args = []*gSimpleExpr{}
				break
			}
			if !scanSimpleList(lex, o, ")") {
				return nil
			}
		case isPunctTok(n, "[") && kind == tMap:
			lex.Next()
			if !scanSimpleList(lex, o, "]") {
				return nil
			}
			name = true
		default:
			name = true
		}
	default:
		return nil
	}
	o.Tail = int(lex.RawCursor() - start)
	if n := lex.Peek(); name && (isPunctTok(n, "++") || isPunctTok(n, "--")) {
		lex.Next()
	}
	for {
		n := lex.Peek()
		switch {
		case isPunctTok(n, "["):
			return nil
		case isPunctTok(n, "."), isPunctTok(n, "->"):
			lex.Next()
			switch f := lex.Peek(); kindOf(*f) {
			case tIdent, tBuiltin, tKeyword, tTypeKw:
			case tInt:
				if n.Value != "." {
					return nil
				}
			default:
				return nil
			}
			lex.Next()
		default:
			o.Tokens = lex.Range(start, lex.RawCursor())
			return o
		}
	}
}

// scanSimpleList consumes SimpleExpr { "," SimpleExpr } close into o.Args.
func scanSimpleList(lex *lexer.PeekingLexer, o *gSimpleOperand, close string) bool {
	for {
		e := scanSimpleExpr(lex)
		if e == nil {
			return false
		}
		o.Args = append(o.Args, e)
		switch t := lex.Peek(); {
		case isPunctTok(t, ","):
			lex.Next()
		case isPunctTok(t, close):
			lex.Next()
			return true
		default:
			return false
		}
	}
}

// Operator tokens. A participle alternation of literals tries each one on
// a branch of its own, at every operand's end: these rules match one
// token against a table instead.

// binOperator is a binary operator: a key of binPrec, the one table of
// their precedence.
type binOperator string

func (o *binOperator) Parse(lex *lexer.PeekingLexer) error {
	return matchOp(lex, (*string)(o), func(v string) bool { return binPrec[v] > 0 })
}

// asgOps are the assignment operators.
var asgOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true,
	"&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true}

// asgOperator is an assignment operator (asgOps).
type asgOperator string

func (o *asgOperator) Parse(lex *lexer.PeekingLexer) error {
	return matchOp(lex, (*string)(o), func(v string) bool { return asgOps[v] })
}

// prefixOps are the prefix operators.
const prefixOps = "-!~*&"

// prefixOperator is a prefix operator (prefixOps).
type prefixOperator string

func (o *prefixOperator) Parse(lex *lexer.PeekingLexer) error {
	return matchOp(lex, (*string)(o), func(v string) bool {
		return len(v) == 1 && strings.Contains(prefixOps, v)
	})
}

// incDecOperator is ++ or --.
type incDecOperator string

func (o *incDecOperator) Parse(lex *lexer.PeekingLexer) error {
	return matchOp(lex, (*string)(o), func(v string) bool { return v == "++" || v == "--" })
}

// matchOp consumes the next token into *dst if it is punctuation that ok
// accepts.
func matchOp(lex *lexer.PeekingLexer, dst *string, ok func(string) bool) error {
	t := lex.Peek()
	if t.Type != lexer.TokenType(tPunct) || !ok(t.Value) {
		return participle.NextMatch
	}
	*dst = lex.Next().Value
	return nil
}

// grammarEBNF is the grammar as grammar.ebnf holds it: as participle
// prints it, then the custom rules, the operators from their tables.
func grammarEBNF(p fmt.Stringer) string {
	alts := func(ops []string) string {
		q := make([]string, len(ops))
		for i, op := range ops {
			q[i] = strconv.Quote(op)
		}
		return strings.Join(q, " | ")
	}
	bin := make([]string, 0, len(binPrec))
	for op := range binPrec {
		bin = append(bin, op)
	}
	sort.Slice(bin, func(i, j int) bool {
		if binPrec[bin[i]] != binPrec[bin[j]] {
			return binPrec[bin[i]] < binPrec[bin[j]]
		}
		return bin[i] < bin[j]
	})
	asg := make([]string, 0, len(asgOps))
	for op := range asgOps {
		asg = append(asg, op)
	}
	sort.Strings(asg)
	var b strings.Builder
	b.WriteString(p.String())
	b.WriteString("\n\n(* The custom rules (participle Parseables, grammar_custom.go). *)\n")
	for _, r := range []string{
		"binOperator = " + alts(bin) + " . (* by precedence, loosest first: binPrec *)",
		"asgOperator = " + alts(asg) + " .",
		"prefixOperator = " + alts(strings.Split(prefixOps, "")) + " .",
		`incDecOperator = "++" | "--" .`,
		`gStmtEnd = ";" | (?= "}") .`,
		`gCastClose = ")" .`,
		`gNameNext = (?= <map> | <var> | <builtin> | <ident>) .`,
		`gElvisOp = "?" ":" . (* written together: "?:" *)`,
		`gSimpleOperand = (<int> | <string> | <char> | <param> | "true" | "false"` +
			` | (<var> | <builtin> | <ident>) incDecOperator?` +
			` | <map> ("[" gSimpleExpr ("," gSimpleExpr)* "]")? incDecOperator?` +
			` | (<ident> | <builtin>) "(" (gSimpleExpr ("," gSimpleExpr)*)? ")"` +
			` | "(" gSimpleExpr ("," gSimpleExpr)* ")")` +
			` (("." (<int> | name)) | ("->" name))* . (* see gSimpleOperand *)`,
		`gSimpleExpr = gSimpleOperand (binOperator gSimpleOperand)* .`,
		`gSimpleStmt = gSimpleExpr (asgOperator gSimpleExpr)? (";" | (?= "}")) . (* see gSimpleStmt *)`,
	} {
		b.WriteString(r + "\n")
	}
	return b.String()
}

// gElvisOp is `?:` written as one operator (bpftrace 0.25's `a ?: b`); a
// '?' and a ':' apart (`a ? : b`) stay a syntax error, as in bpftrace 0.17.
type gElvisOp bool

func (o *gElvisOp) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	if !isPunctTok(t, "?") {
		return participle.NextMatch
	}
	cp := lex.MakeCheckpoint()
	lex.Next()
	n := lex.Peek()
	if !isPunctTok(n, ":") || n.Pos.Offset != t.Pos.Offset+1 {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	lex.Next()
	*o = true
	return nil
}
