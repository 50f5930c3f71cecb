package lang

import (
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file is the grammar of gotrace's language: participle v2 rules in
// the struct tags of the parse tree (the g* types), which lower.go turns
// into the AST of ast.go. lang/grammar.ebnf is the same grammar as
// participle prints it (TestGrammarEBNF keeps the two equal); read it for
// an overview, and add new syntax here, as a field with a tag on the node
// it extends (and a case in lower.go).
//
// The tokens come from the hand-written lexer of lexer.go (plugged in as
// participle's lexer.Definition, tokenDefinition): bpftrace's lexing is
// context sensitive (attach points are one token, C declarations are
// captured whole, a predicate ends at the '/' before '{'), which a regular
// expression lexer cannot do. Literals in the tags ("{", "if") match a
// token's text; references (Ident, Map, EndPred ...) match a token kind
// (tokenSymbols).
//
// The grammar is LL(1) with participle's one token of lookahead
// (UseLookahead(1)) plus explicit, bounded lookahead groups `(?= ...)` where
// one token cannot decide: a cast `(type)` against a parenthesised
// expression (`(x *)` is a cast, `(x * y)` a product), and a map's keys
// after a prefix `++`. The parser stops at the first token that cannot
// continue the script, as bison does, so the error is reported at the same
// token as bpftrace reports it; parse.go words it as bpftrace does.
//
// Binary operators are parsed as a flat list of operands and operators;
// precedence is applied when lowering, from the one table binPrec (and
// TestBinaryOperatorsInGrammar checks that the grammar's operators are the
// table's). Prefix operators, casts, selectors and else-if chains are
// repetitions rather than recursion, so only brackets and ternaries nest
// (and the lexer caps those at MaxNesting).
//
// A few rules are custom participle Parseables (grammar_custom.go), where
// a rule decides on what was already parsed: the end of a simple statement
// (bison's "expecting }"), and the ')' of a cast.
//
// Every g* node records Tokens, the tokens it was parsed from, for the
// spans of the AST (participle sets them as a slice of the token stream,
// without copying).

type gProgram struct {
	Items []*gItem `parser:"@@*"`
}

type gItem struct {
	Tokens  []lexer.Token
	Preproc string  `parser:"  @Preproc"`
	CDecl   string  `parser:"| @CDecl"`
	Probe   *gProbe `parser:"| @@"`
}

// gProbe is a clause. bpftrace's attach point list allows empty entries:
// `BEGIN,,END`, a leading or trailing ',' (and so a ',' between clauses).
type gProbe struct {
	Tokens []lexer.Token
	Attach []*gAttach `parser:"@@? ( ',' @@? )*"`
	Pred   *gPred     `parser:"@@?"`
	Body   *gBlock    `parser:"@@"`
}

type gAttach struct {
	Tokens []lexer.Token
	Raw    string `parser:"@Attach"`
}

type gPred struct {
	Tokens []lexer.Token
	X      *gExpr `parser:"'/' @@ EndPred"`
}

type gBlock struct {
	Tokens []lexer.Token
	Items  []*gStmtItem `parser:"'{' ( (?! '}') @@ )* '}'"`
}

// gStmtItem is a statement inside a block.
type gStmtItem struct {
	Tokens   []lexer.Token
	Semi     bool       `parser:"  @';'"`
	Compound *gCompound `parser:"| @@"`
	Simple   *gSimple   `parser:"| @@"`
	End      *gStmtEnd  `parser:"  @@"`
}

type gCompound struct {
	Tokens []lexer.Token
	If     *gIf     `parser:"  @@"`
	Unroll *gUnroll `parser:"| @@"`
	While  *gWhile  `parser:"| @@"`
	For    *gFor    `parser:"| @@"`
	Block  *gBlock  `parser:"| @@"`
}

type gIf struct {
	Tokens []lexer.Token
	Cond   *gExpr   `parser:"'if' '(' @@ ')'"`
	Then   *gBlock  `parser:"@@"`
	Elifs  []*gElif `parser:"@@*"`
	Else   *gBlock  `parser:"( 'else' @@ )?"`
}

type gElif struct {
	Tokens []lexer.Token
	Cond   *gExpr  `parser:"(?= 'else' 'if') 'else' 'if' '(' @@ ')'"`
	Then   *gBlock `parser:"@@"`
}

type gUnroll struct {
	Tokens []lexer.Token
	Count  *gExpr  `parser:"'unroll' '(' @@ ')'"`
	Body   *gBlock `parser:"@@"`
}

type gWhile struct {
	Tokens []lexer.Token
	Cond   *gExpr  `parser:"'while' '(' @@ ')'"`
	Body   *gBlock `parser:"@@"`
}

type gFor struct {
	Tokens []lexer.Token
	Var    *gName  `parser:"'for' '(' @@ ':'"`
	Map    *gMap   `parser:"@@ ')'"`
	Body   *gBlock `parser:"@@"`
}

type gSimple struct {
	Tokens []lexer.Token
	Jump   string      `parser:"  @( 'break' | 'continue' | 'return' )"`
	Let    *gLet       `parser:"| @@"`
	Expr   *gExpr      `parser:"| @@"`
	AsgOp  asgOperator `parser:"  ( @@"`
	Rhs    *gExpr      `parser:"    @@ )?"`
}

type gLet struct {
	Tokens []lexer.Token
	Var    *gName `parser:"'let' @@"`
	Type   *gType `parser:"( ':' @@ )?"`
	Init   *gExpr `parser:"( '=' @@ )?"`
}

// gName is a variable name ($x) where the grammar names one.
type gName struct {
	Tokens []lexer.Token
	Name   string `parser:"@Var"`
}

// gExpr is a ternary chain: X ? T1 : E1 ? T2 : E2 ... (right associative).
type gExpr struct {
	Tokens []lexer.Token
	Simple *gSimpleExpr `parser:"  @@"`
	X      *gBinary     `parser:"| @@"`
	Alts   []*gTern     `parser:"  @@*"`
}

type gTern struct {
	Tokens []lexer.Token
	Then   *gExpr   `parser:"'?' @@ ':'"`
	Else   *gBinary `parser:"@@"`
}

// gBinary is a flat operand/operator list; lower.go applies binPrec.
type gBinary struct {
	Tokens []lexer.Token
	X      *gUnary   `parser:"@@"`
	Rest   []*gBinOp `parser:"@@*"`
}

type gBinOp struct {
	Tokens []lexer.Token
	Op     binOperator `parser:"@@"`
	Y      *gUnary     `parser:"@@"`
}

// gUnary is an operand with its prefix operators and casts: a prefix
// operator or cast applied to a gUnary, an increment (bpftrace increments
// only a name: `++@m[k]`, `++$x`, and nothing may follow it but a map's
// keys) or a postfix expression. The nesting of prefixes is capped by the
// lexer (MaxNesting).
type gUnary struct {
	Tokens []lexer.Token
	Simple *gSimpleOperand `parser:"  @@"`
	Op     prefixOperator  `parser:"| ( @@"`
	Cast   *gCast          `parser:"  | @@ )"`
	Of     *gUnary         `parser:"  @@"`
	Inc    *gPreInc        `parser:"| @@"`
	X      *gPostfix       `parser:"| @@"`
}

// gCast is `(type)`. A tagged or builtin type name commits to the cast; an
// identifier is a (typedef) type only if '*'s, an optional array suffix
// and the ')' follow (else `(x * y)` is an expression).
type gCast struct {
	Tokens []lexer.Token
	Type   *gType     `parser:"(?= '(' ( 'struct' | 'union' | 'enum' | TypeKw | Ident '*'+ ( '[' Int? ']' )? ')' ) ) '(' @@"`
	Close  gCastClose `parser:"@@"`
}

type gPreInc struct {
	Tokens []lexer.Token
	Op     incDecOperator `parser:"@@"`
	Next   gNameNext      `parser:"@@"`
	Keyed  *gPostfix      `parser:"( (?= Map '[') @@"`
	Call   *gCall         `parser:"| @@"`
	Map    *gMap          `parser:"| @@"`
	Name   string         `parser:"| @( Var | Builtin | Ident ) )"`
}

type gPostfix struct {
	Tokens []lexer.Token
	X      *gPrimary `parser:"@@"`
	Sel    []*gSel   `parser:"@@*"`
}

// gSel is a selector. A postfix increment is only taken after a name (see
// gPrimary), so it is not one.
type gSel struct {
	Tokens []lexer.Token
	Index  *gInt    `parser:"  '.' ( @@"`
	Field  string   `parser:"        | @( Ident | Builtin | Keyword | TypeKw ) )"`
	Arrow  string   `parser:"| '->' @( Ident | Builtin | Keyword | TypeKw )"`
	Sub    []*gExpr `parser:"| '[' @@ ( ',' @@ )* ']'"`
}

type gInt struct {
	Tokens []lexer.Token
	Text   string `parser:"@Int"`
}

// gPrimary is an operand. A name may be incremented (`$x++`, `@m[k]++`,
// once; selectors may follow).
type gPrimary struct {
	Tokens   []lexer.Token
	Call     *gCall         `parser:"  @@"`
	Map      *gMap          `parser:"| @@"`
	Keys     *gKeys         `parser:"  @@?"`
	MapPost  incDecOperator `parser:"  @@?"`
	Paren    *gParen        `parser:"| @@"`
	Name     string         `parser:"| @( Var | Builtin | Ident )"`
	Post     incDecOperator `parser:"  @@?"`
	Int      string         `parser:"| @Int"`
	String   string         `parser:"| @String"`
	Char     string         `parser:"| @Char"`
	Bool     string         `parser:"| @( 'true' | 'false' )"`
	Param    string         `parser:"| @Param"`
	Sizeof   *gSizeof       `parser:"| @@"`
	Offsetof *gOffsetof     `parser:"| @@"`
}

// gKeys is a map's keys `@m[k1, k2]`.
type gKeys struct {
	Tokens []lexer.Token
	Keys   []*gExpr `parser:"'[' @@ ( ',' @@ )* ']'"`
}

type gParen struct {
	Tokens []lexer.Token
	Elems  []*gExpr `parser:"'(' @@ ( ',' @@ )* ')'"`
}

type gSizeof struct {
	Tokens []lexer.Token
	Type   *gType `parser:"'sizeof' '(' ( (?= 'struct' | 'union' | 'enum' | TypeKw | Ident '*'+ ( '[' Int? ']' )? ')') @@"`
	X      *gExpr `parser:"| @@ ) ')'"`
}

type gOffsetof struct {
	Tokens []lexer.Token
	Type   *gType   `parser:"'offsetof' '(' ( (?= 'struct' | 'union' | 'enum' | TypeKw | Ident '*'+ ( '[' Int? ']' )? ',') @@"`
	X      *gExpr   `parser:"| @@ ) ','"`
	Fields []string `parser:"@( Ident | Builtin | Keyword | TypeKw ) ( '.' @( Ident | Builtin | Keyword | TypeKw ) )* ')'"`
}

type gCall struct {
	Tokens []lexer.Token
	Name   string   `parser:"(?= ( Ident | Builtin ) '(') @( Ident | Builtin ) '('"`
	Args   []*gExpr `parser:"( ')' | @@ ( ',' @@ )* ')' )"`
}

type gMap struct {
	Tokens []lexer.Token
	Name   string `parser:"@Map"`
}

// gType is a type in a cast, sizeof, offsetof or let. A plain identifier
// is only taken as a (typedef) type when followed by '*'.
type gType struct {
	Tokens []lexer.Token
	Tagged *gTagged `parser:"(  @@"`
	Kw     []string `parser:" | @TypeKw+"`
	Named  string   `parser:" | (?= Ident '*') @Ident )"`
	Stars  []string `parser:"@'*'*"`
	Array  *gArray  `parser:"@@?"`
}

type gTagged struct {
	Tokens []lexer.Token
	Kind   string `parser:"@( 'struct' | 'union' | 'enum' )"`
	Name   string `parser:"@( Ident | Builtin | TypeKw )"`
}

type gArray struct {
	Tokens []lexer.Token
	Len    string `parser:"'[' @Int? ']'"`
}

// grammarOptions are the participle options of the grammar.
func grammarOptions() []participle.Option {
	return []participle.Option{
		participle.Lexer(tokenDefinition{}),
		participle.UseLookahead(0),
	}
}

var (
	parserOnce sync.Once
	theParser  *participle.Parser[gProgram]
	parserErr  error
)

// grammar returns the parser, building it at the first use.
func grammar() (*participle.Parser[gProgram], error) {
	parserOnce.Do(func() {
		theParser, parserErr = participle.Build[gProgram](grammarOptions()...)
	})
	return theParser, parserErr
}
