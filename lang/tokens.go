package lang

// This file exposes the lexer's tokens, with the comments between them, to
// tools that print scripts back (lang/format): the parser drops comments,
// a formatter must keep them.

// TokenKind is the kind of a Token.
type TokenKind uint8

const (
	TokEOF     TokenKind = iota
	TokIdent             // an identifier
	TokBuiltin           // a builtin variable (pid, comm, arg0 ...)
	TokKeyword           // if else while for let sizeof ...
	TokType              // a builtin type name (uint8, string ...)
	TokInt               // an integer literal
	TokString            // a string literal, quotes included
	TokChar              // a char literal, quotes included
	TokVar               // $name
	TokParam             // $1, $#
	TokMap               // @ or @name
	TokPunct             // an operator or punctuation
	TokEndPred           // the '/' closing a predicate
	TokAttach            // an attach point
	TokCDecl             // a top-level C declaration, whole
	TokPreproc           // a '#' line
	TokComment           // a // or /* */ comment
)

// Token is one token of a script as written.
type Token struct {
	Kind TokenKind
	Text string
	Off  int // byte offset in the source
}

// End is the offset just after the token.
func (t Token) End() int { return t.Off + len(t.Text) }

// Tokens lexes src into its tokens and comments, in source order, ending
// with a TokEOF; lexical errors are returned as *Diagnostics.
func Tokens(src *Source) ([]Token, error) {
	diags := &Diagnostics{Src: src}
	sc := &scanner{src: src.Text, s: src, diags: diags, toks: make([]token, 0, len(src.Text)/4+16)}
	sc.nestStk = []int{0}
	sc.run()
	if diags.HasErrors() {
		diags.Sort()
		return nil, diags
	}
	out := make([]Token, 0, len(sc.toks)+len(sc.comments))
	ci := 0
	for _, t := range sc.toks {
		for ci < len(sc.comments) && sc.comments[ci].off < t.off {
			out = append(out, Token{Kind: TokComment, Text: sc.comments[ci].val, Off: sc.comments[ci].off})
			ci++
		}
		out = append(out, Token{Kind: TokenKind(t.kind), Text: t.val, Off: t.off})
	}
	return out, nil
}

// ParseSyntax parses src as Parse does up to the tree (lexing, the grammar,
// lowering), without expanding macros or the passes after it: what
// bpftrace's --fmt checks before it prints a script. Errors are returned
// as *Diagnostics.
func ParseSyntax(src *Source) (err error) {
	diags := &Diagnostics{Src: src}
	defer func() {
		if r := recover(); r != nil {
			diags.Errorf(Span{}, "internal error in the parser: %v", r)
			err = diags
		}
	}()
	if _, prog := parseItems(src, diags); prog == nil || diags.HasErrors() {
		diags.Sort()
		return diags
	}
	return nil
}
