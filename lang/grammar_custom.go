package lang

import (
	"io"
	"strings"

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
// and hands the tokens to the parser through peekingLexer; Lex is for
// participle's own entry points (ParseString ...).
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
	return &tokenStream{toks: participleTokens(toks)}, nil
}

// tokenStream hands out lexed tokens.
type tokenStream struct {
	toks []lexer.Token
	i    int
}

func (s *tokenStream) Next() (lexer.Token, error) {
	t := s.toks[s.i]
	if s.i < len(s.toks)-1 {
		s.i++
	}
	return t, nil
}

// participleTokens converts the lexer's tokens (ending in EOF) to
// participle's. A token's kind is its participle type (EOF is
// lexer.EOF); its place is its offset, from which the lowering and the
// error messages compute lines and columns with bpftrace's rules.
func participleTokens(toks []token) []lexer.Token {
	out := make([]lexer.Token, len(toks))
	for i, t := range toks {
		tt := lexer.TokenType(t.kind)
		if t.kind == tEOF {
			tt = lexer.EOF
		}
		out[i] = lexer.Token{Type: tt, Value: t.val, Pos: lexer.Position{Offset: t.off}}
	}
	return out
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

// grammarError is a syntax error a custom rule words itself: at the token
// at offset off; term marks the end of a simple statement, where bpftrace
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
type gStmtEnd struct{}

func (*gStmtEnd) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	switch {
	case isPunctTok(t, ";"):
		lex.Next()
		return nil
	case isPunctTok(t, "}"):
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
