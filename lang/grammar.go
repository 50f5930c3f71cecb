package lang

import (
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file is the grammar of gotrace's language: participle v2 rules in
// the struct tags of the parse tree (the g* types), which lower.go turns
// into the AST of ast.go. The parser is built from them once per process,
// at the first Parse (grammar). lang/grammar.ebnf is the same grammar as
// participle prints it, with the custom rules' EBNF (TestGrammarEBNF keeps
// the file equal to the parser); read it for an overview. New syntax goes
// here: a field with a tag on the node it extends, or a new node (and its
// case in lower.go); then regenerate grammar.ebnf (see TestGrammarEBNF).
//
// The tokens come from the hand-written lexer of lexer.go, plugged in as
// participle's lexer.Definition (tokenDefinition): bpftrace's lexing is
// context sensitive (attach points are one token, C declarations are
// captured whole, a predicate ends at the '/' before '{', nesting is
// capped, columns follow bpftrace's rules), which a regular expression
// lexer cannot do. Literals in the tags ('{', 'if') match a token's text,
// references (Ident, Map, EndPred ...) a token kind (tokenSymbols).
//
// The parser commits to an alternative as soon as it has consumed a token
// of it (UseLookahead(0)), as an LL(1) parser or bison does, and stops at
// the first token that cannot continue the script: so a syntax error is
// reported at the token bpftrace reports it at, and parse.go words it as
// bpftrace does. Where one token cannot decide, a rule says how far it
// looks with a bounded lookahead group `(?= ...)`: a cast `(type)` against
// a parenthesised expression (`(x *)` is a cast, `(x * y)` a product), a
// call against a name, `else if` against `else`, a map's keys after a
// prefix `++`.
//
// Binary operators are parsed as a flat list of operands and operators
// (gBinary); precedence is applied when lowering, from binPrec, the one
// table of the binary operators (the grammar's binOperator matches its
// keys). Selectors and else-if chains are repetitions rather than
// recursion; brackets, ternaries and prefix operators nest, and the lexer
// caps their nesting at MaxNesting.
//
// A few rules are custom participle Parseables (grammar_custom.go): the
// operator tokens, matched against their tables; the end of a simple
// statement and a cast's ')', which word bpftrace's "expecting" lists;
// and gSimpleOperand and gSimpleExpr, fast paths for the commonest
// operands and expressions (a profile showed that participle's branch per
// alternative made those most of the parse), which parse exactly what the
// general rules would and leave everything else, errors included, to them.
//
// Every g* node records Tokens, the tokens it was parsed from, for the
// spans of the AST (participle sets them as a slice of the token stream,
// without copying).

type gProgram struct {
	Items []*gItem `parser:"@@*"`
}

type gItem struct {
	Tokens  []lexer.Token
	Preproc string    `parser:"  @Preproc"`
	CDecl   string    `parser:"| @CDecl"`
	Macro   *gMacro   `parser:"| @@"`
	Config  *gConfig  `parser:"| @@"`
	MapDecl *gMapDecl `parser:"| @@"`
	Import  *gImport  `parser:"| @@"`
	Probe   *gProbe   `parser:"| @@"`
}

// gMacro is `macro name(params) { body }` (bpftrace 0.24). A parameter is
// a variable, a map or a name (an expression substituted as written).
type gMacro struct {
	Tokens []lexer.Token
	Name   string         `parser:"'macro' @( Ident | Builtin ) '('"`
	Params []*gMacroParam `parser:"( @@ ( ',' @@ )* )? ')'"`
	Body   *gBlock        `parser:"@@"`
}

type gMacroParam struct {
	Tokens []lexer.Token
	Name   string `parser:"@( Var | Map | Ident )"`
}

// gConfig is `config = { key = value; ... }` (bpftrace 0.20).
type gConfig struct {
	Tokens []lexer.Token
	Items  []*gConfigItem `parser:"'config' '=' '{' ( @@ ( ';' @@? )* )? '}'"`
}

type gConfigItem struct {
	Tokens []lexer.Token
	Key    string `parser:"@( Ident | Builtin | TypeKw | Keyword ) '='"`
	Value  string `parser:"@( Int | String | Ident | Builtin | TypeKw | 'true' | 'false' )"`
}

// gMapDecl is `let @name = kind(size);` (bpftrace 0.24-0.25).
type gMapDecl struct {
	Tokens []lexer.Token
	Map    *gMap  `parser:"'let' @@ '='"`
	Kind   string `parser:"@( Ident | Builtin ) '('"`
	Size   string `parser:"@Int ')' ';'"`
}

// gImport is `import "file";` (bpftrace 0.25).
type gImport struct {
	Tokens []lexer.Token
	Path   string `parser:"'import' @String ';'"`
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
	Tokens []lexer.Token
	Fast   *gSimpleStmt `parser:"  @@"`
	Semi   bool         `parser:"| @';'"`
	If     *gIf         `parser:"| @@"`
	Unroll *gUnroll     `parser:"| @@"`
	While  *gWhile      `parser:"| @@"`
	For    *gFor        `parser:"| @@"`
	Block  *gBlock      `parser:"| @@"`
	Simple *gSimple     `parser:"| @@"`
	End    *gStmtEnd    `parser:"  @@"`
}

type gIf struct {
	Tokens []lexer.Token
	Cond   *gExpr   `parser:"'if' @@"` // with or without parentheses (0.24)
	Then   *gBlock  `parser:"@@"`
	Elifs  []*gElif `parser:"@@*"`
	Else   *gBlock  `parser:"( 'else' @@ )?"`
}

type gElif struct {
	Tokens []lexer.Token
	Cond   *gExpr  `parser:"(?= 'else' 'if') 'else' 'if' @@"`
	Then   *gBlock `parser:"@@"`
}

type gUnroll struct {
	Tokens []lexer.Token
	Count  *gExpr  `parser:"'unroll' '(' @@ ')'"`
	Body   *gBlock `parser:"@@"`
}

type gWhile struct {
	Tokens []lexer.Token
	Cond   *gExpr  `parser:"'while' @@"`
	Body   *gBlock `parser:"@@"`
}

// gFor is a loop over a map's entries or (bpftrace 0.24) over a range
// `a..b`, with or without the parentheses.
type gFor struct {
	Tokens []lexer.Token
	Paren  *gForHead `parser:"'for' ( '(' @@ ')'"`
	Bare   *gForHead `parser:"  | @@ )"`
	Body   *gBlock   `parser:"@@"`
}

type gForHead struct {
	Tokens []lexer.Token
	Var    *gName `parser:"@@ ':'"`
	From   *gExpr `parser:"@@"`
	To     *gExpr `parser:"( '..' @@ )?"`
}

type gSimple struct {
	Tokens []lexer.Token
	Jump   string      `parser:"  @( 'break' | 'continue' )"`
	Return bool        `parser:"| ( @'return'"`
	Ret    *gExpr      `parser:"    @@? )"` // return's value (bpftrace 0.26)
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
	Elvis  gElvisOp `parser:"( @@"` // `a ?: b` (bpftrace 0.25): Then is nil
	Then   *gExpr   `parser:"| '?' @@ ':' )"`
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
	Type   *gType     `parser:"(?= '(' ( 'struct' | 'union' | 'enum' | TypeKw | 'typeof' '(' | Ident '*'+ ( '[' Int? ']' )? ')' ) ) '(' @@"`
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
	Record   *gRecord       `parser:"| @@"`
	Paren    *gParen        `parser:"| @@"`
	Name     string         `parser:"| @( Var | Builtin | Ident )"`
	Post     incDecOperator `parser:"  @@?"`
	Literal  *lexer.Token   `parser:"| @( Int | String | Char | Param | 'true' | 'false' )"`
	Sizeof   *gSizeof       `parser:"| @@"`
	Offsetof *gOffsetof     `parser:"| @@"`
	Block    *gBlock        `parser:"| @@"`
}

// gKeys is a map's keys `@m[k1, k2]`.
type gKeys struct {
	Tokens []lexer.Token
	Keys   []*gExpr `parser:"'[' @@ ( ',' @@ )* ']'"`
}

// gRecord is a record literal `(a = 1, b = "x")` (bpftrace 0.24).
type gRecord struct {
	Tokens []lexer.Token
	Fields []*gRecordField `parser:"(?= '(' ( Ident | Builtin ) '=' ) '(' @@ ( ',' @@ )* ')'"`
}

type gRecordField struct {
	Tokens []lexer.Token
	Name   string `parser:"@( Ident | Builtin ) '='"`
	X      *gExpr `parser:"@@"`
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
	Typeof *gExpr   `parser:" | (?= 'typeof' '(') 'typeof' '(' @@ ')'"` // bpftrace 0.25
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

// The parser's build (about 1 ms in a fresh process) starts in the
// background at package initialisation: the packages initialised after
// this one and the command's start run meanwhile, on another core when
// there is one, and the first Parse waits for it (parserOnce).
func init() { go grammar() }

// grammar returns the parser, building it at the first use, without
// participle's check for left recursion: TestGrammarValidates builds the
// grammar with it.
func grammar() (*participle.Parser[gProgram], error) {
	parserOnce.Do(func() {
		theParser, parserErr = participle.Build[gProgram](append(grammarOptions(), participle.Validated())...)
	})
	return theParser, parserErr
}
