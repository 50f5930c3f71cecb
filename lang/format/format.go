// Package format prints a bpftrace script in canonical form, as
// `gotrace --fmt` (bpftrace 0.26's `--fmt`, `--mode format`) does.
//
// The formatter works on the script's tokens and comments (lang.Tokens)
// and changes only the space between them, so a formatted script is the
// same token sequence as its input: it parses to the same program and
// formatting twice changes nothing (format_test.go checks both, comparing
// the dumped trees, over generated scripts, the repository's scripts and
// FuzzFormat's inputs). Only a script that parses
// is formatted, as bpftrace checks only the parse (macros are not
// expanded, types not checked); otherwise Source returns the parser's
// diagnostics.
//
// The rules:
//   - two spaces of indentation per block level; one statement a line;
//     `{` ends the line that opens a block, `}` is on its own line, with
//     `} else {` joined; an empty block is `{}`;
//   - a probe is `ATTACH, ATTACH /PREDICATE/ {` on one line; when that
//     line is longer than MaxWidth the attach points go one a line,
//     each but the last followed by a comma;
//   - one space around binary and assignment operators, `?` and `:`, and
//     after commas and keywords (`if (`, `while (`, `return $x`); none
//     inside parentheses and brackets, around `.`, `->` and `..`, between a
//     function and its `(`, after a prefix operator or a cast `(type)`, or
//     before a postfix `++`/`--`; a pointer type is `(struct x *)`;
//     `let $x: type`;
//   - a blank line between top-level items that end with `}`; elsewhere
//     one blank line of the input is kept where it had one or more;
//   - comments are kept where they were: a comment after code on the
//     same line stays at the end of that line (after one space), a comment
//     on its own line stays on its own line at the indentation of the
//     code around it; C declarations and `#` lines are kept as written;
//   - the output ends with exactly one newline and has no trailing blanks.
package format

import (
	"strings"

	"github.com/gotrace/gotrace/lang"
)

// MaxWidth is the longest probe header kept on one line.
const MaxWidth = 80

// Source formats src; err is the parser's diagnostics if src does not
// parse.
func Source(src *lang.Source) (string, error) {
	if err := lang.ParseSyntax(src); err != nil {
		return "", err
	}
	toks, err := lang.Tokens(src)
	if err != nil {
		return "", err
	}
	p := &printer{src: src.Text, toks: toks}
	p.run()
	return p.b.String(), nil
}

type sep uint8

const (
	sepNone sep = iota
	sepSpace
	sepNewline
	sepBlank
)

type printer struct {
	src  string
	toks []lang.Token
	b    strings.Builder

	depth    int  // brace depth
	indent   int  // indentation level of new lines
	forceNL  bool // the next token starts a new line (after ; { } or a // comment)
	forceBl  bool // ... after a blank line (after a top-level item ending with })
	prev     *lang.Token
	prevCode *lang.Token // the last token that is not a comment
	postfix  bool        // prevCode is a postfix ++/--
	unary    bool        // prevCode is a prefix operator
	parens   []parenKind // open parentheses
	inPred   bool
	letColon bool // the next ':' is `let $x: type`

	lastClosed parenKind   // the kind of the last ')' printed
	predOpen   *lang.Token // the '/' opening the current predicate
}

type parenKind uint8

const (
	parenGroup parenKind = iota
	parenCall
	parenKeyword
)

func (p *printer) run() {
	for i := 0; i < len(p.toks); i++ {
		t := &p.toks[i]
		if t.Kind == lang.TokEOF {
			break
		}
		if t.Kind == lang.TokComment {
			p.comment(t)
			continue
		}
		if p.depth == 0 && t.Kind == lang.TokAttach && (p.prevCode == nil || !isPunct(p.prevCode, ",")) {
			i = p.header(i)
			continue
		}
		p.code(i)
	}
	out := strings.TrimRight(p.b.String(), " \n")
	p.b.Reset()
	if out != "" {
		p.b.WriteString(out)
		p.b.WriteByte('\n')
	}
}

// newlines counts the line breaks of the source between offsets a and b.
func (p *printer) newlines(a, b int) int {
	if a > b {
		return 0
	}
	return strings.Count(p.src[a:b], "\n")
}

// write emits text after a separator.
func (p *printer) write(s sep, text string) {
	if p.b.Len() == 0 {
		s = sepNone
	}
	switch s {
	case sepSpace:
		p.b.WriteByte(' ')
	case sepNewline, sepBlank:
		p.b.WriteByte('\n')
		if s == sepBlank {
			p.b.WriteByte('\n')
		}
		p.b.WriteString(strings.Repeat("  ", p.indent))
	}
	p.b.WriteString(text)
}

// lineSep is the separator of a token that starts a line: a blank line
// if the source had one before it (or one is forced).
func (p *printer) lineSep(t *lang.Token) sep {
	if p.forceBl || p.prev != nil && p.newlines(p.prev.End(), t.Off) >= 2 {
		return sepBlank
	}
	return sepNewline
}

func (p *printer) comment(t *lang.Token) {
	line := strings.HasPrefix(t.Text, "//")
	text := t.Text
	if line {
		text = strings.TrimRight(text, " \t\r")
	}
	trailing := p.prev != nil && p.newlines(p.prev.End(), t.Off) == 0
	switch {
	case trailing:
		// After code on the same line (a ';' or '{' too): keep it there.
		p.write(sepSpace, text)
	default:
		p.write(p.lineSep(t), text)
		p.forceBl, p.forceNL = false, false
	}
	p.prev = t
	if line {
		p.forceNL = true
		return
	}
	// A block comment: the code after it stays on its line unless the
	// source broke the line.
	next := p.nextCode(t)
	if next != nil && p.newlines(t.End(), next.Off) > 0 {
		p.forceNL = true
	}
}

func (p *printer) nextCode(after *lang.Token) *lang.Token {
	for i := range p.toks {
		if p.toks[i].Off > after.Off && p.toks[i].Kind != lang.TokComment {
			return &p.toks[i]
		}
	}
	return nil
}

func (p *printer) nextCodeIdx(i int) *lang.Token {
	for j := i + 1; j < len(p.toks); j++ {
		if p.toks[j].Kind != lang.TokComment {
			return &p.toks[j]
		}
	}
	return nil
}

// header prints a probe's attach points (from toks[i]) and returns the
// index of the last one printed.
func (p *printer) header(i int) int {
	var aps []*lang.Token
	j := i
	for ; j < len(p.toks); j++ {
		t := &p.toks[j]
		if t.Kind == lang.TokAttach {
			aps = append(aps, t)
			continue
		}
		if t.Kind == lang.TokPunct && t.Text == "," {
			continue
		}
		break
	}
	// Comments between attach points would be lost by joining: print the
	// header token by token then.
	for k := i; k < j; k++ {
		if p.toks[k].Kind == lang.TokComment {
			p.code(i)
			return i
		}
	}
	// The rest of the header line: the predicate's width is not known
	// yet, so the attach points alone decide the split.
	one := make([]string, len(aps))
	for k, a := range aps {
		one[k] = a.Text
	}
	joined := strings.Join(one, ", ")
	s := sepNewline
	if p.prev != nil {
		s = p.lineSep(aps[0])
	}
	if p.prevCode != nil && (isPunct(p.prevCode, "}") || p.prevCode.Kind == lang.TokCDecl) {
		s = sepBlank
	}
	p.forceBl, p.forceNL = false, false
	if p.indent*2+len(joined) <= MaxWidth || len(aps) == 1 {
		p.write(s, joined)
	} else {
		for k, a := range aps {
			text := a.Text
			if k < len(aps)-1 {
				text += ","
			}
			if k == 0 {
				p.write(s, text)
			} else {
				p.write(sepNewline, text)
			}
		}
	}
	last := aps[len(aps)-1]
	p.prev, p.prevCode = last, last
	p.postfix, p.unary = false, false
	return j - 1
}

func isComment(t *lang.Token) bool { return t != nil && t.Kind == lang.TokComment }

func isPunct(t *lang.Token, s string) bool {
	return t != nil && t.Kind == lang.TokPunct && t.Text == s
}

func isKw(t *lang.Token, s ...string) bool {
	if t == nil || t.Kind != lang.TokKeyword {
		return false
	}
	for _, w := range s {
		if t.Text == w {
			return true
		}
	}
	return false
}

// wordish tokens need a space between two of them.
func wordish(t *lang.Token) bool {
	switch t.Kind {
	case lang.TokIdent, lang.TokBuiltin, lang.TokKeyword, lang.TokType, lang.TokInt,
		lang.TokVar, lang.TokParam, lang.TokMap, lang.TokString, lang.TokChar, lang.TokAttach:
		return true
	}
	return false
}

// operandEnd reports whether t ends an operand (so a following - * & is
// binary).
func (p *printer) operandEnd(t *lang.Token) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case lang.TokIdent, lang.TokBuiltin, lang.TokInt, lang.TokString, lang.TokChar,
		lang.TokVar, lang.TokParam, lang.TokMap, lang.TokType:
		return true
	case lang.TokKeyword:
		return t.Text == "true" || t.Text == "false"
	case lang.TokPunct:
		return t.Text == ")" || t.Text == "]" || p.postfix && (t.Text == "++" || t.Text == "--")
	}
	return false
}

func operandStart(t *lang.Token) bool {
	switch t.Kind {
	case lang.TokIdent, lang.TokBuiltin, lang.TokInt, lang.TokString, lang.TokChar,
		lang.TokVar, lang.TokParam, lang.TokMap:
		return true
	case lang.TokKeyword:
		switch t.Text {
		case "true", "false", "sizeof", "offsetof":
			return true
		}
	case lang.TokPunct:
		switch t.Text {
		case "(", "!", "~", "-", "+", "*", "&", "++", "--":
			return true
		}
	}
	return false
}

// glues reports whether a and b written with nothing between them would
// lex differently.
func glues(a, b *lang.Token) bool {
	if wordish(a) && wordish(b) {
		return true
	}
	if a.Kind == lang.TokPunct || a.Kind == lang.TokEndPred {
		if b.Kind == lang.TokPunct || b.Kind == lang.TokEndPred {
			s := a.Text + b.Text
			for _, op := range []string{"<<=", ">>=", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "->", "..", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "//", "/*"} {
				if strings.Contains(s, op) && !strings.Contains(a.Text, op) && !strings.Contains(b.Text, op) {
					return true
				}
			}
		}
		if a.Text == "/" && b.Kind == lang.TokComment {
			return true
		}
	}
	return false
}

func (p *printer) code(i int) {
	t := &p.toks[i]
	prev := p.prevCode
	next := p.nextCodeIdx(i)
	s := p.space(prev, t, next)
	if p.forceNL && s < sepNewline {
		s = sepNewline
	}
	if s >= sepNewline {
		if s == sepNewline {
			s = p.lineSep(t)
		}
		if p.forceBl {
			s = sepBlank
		}
	}
	if s == sepNone && prev != nil && p.prev == prev && glues(prev, t) {
		s = sepSpace
	}
	if s == sepNone && isComment(p.prev) {
		s = sepSpace
	}
	p.forceNL, p.forceBl = false, false

	text := t.Text
	switch t.Kind {
	case lang.TokPreproc:
		text = strings.TrimRight(text, " \t\r")
	case lang.TokCDecl:
		text = strings.TrimRight(text, " \t\r\n")
	}
	if isPunct(t, "}") {
		p.indent--
		if p.indent < 0 {
			p.indent = 0
		}
	}
	p.write(s, text)

	// State after t.
	wasPostfix := false
	p.unary = false
	switch {
	case t.Kind == lang.TokPreproc || t.Kind == lang.TokCDecl:
		p.forceNL = true
	case isPunct(t, "{"):
		p.depth++
		p.indent++
		p.inPred = false
		if !isPunct(next, "}") {
			p.forceNL = true
		}
	case isPunct(t, "}"):
		p.depth--
		if p.depth < 0 {
			p.depth = 0
		}
		if !(isKw(next, "else") || isPunct(next, ";") || isPunct(next, ")") || isPunct(next, ",")) {
			p.forceNL = true
			if p.depth == 0 {
				p.forceBl = true
			}
		}
	case isPunct(t, ";"):
		if len(p.parens) == 0 {
			p.forceNL = true
		}
	case isPunct(t, "("):
		k := parenGroup
		switch {
		case isKw(prev, "if", "while", "for", "unroll"):
			k = parenKeyword
		case prev != nil && (prev.Kind == lang.TokIdent || prev.Kind == lang.TokBuiltin || isKw(prev, "sizeof", "offsetof")):
			k = parenCall
		}
		p.parens = append(p.parens, k)
	case isPunct(t, ")"):
		p.lastClosed = parenCall
		if n := len(p.parens); n > 0 {
			p.lastClosed = p.parens[n-1]
			p.parens = p.parens[:n-1]
		}
	case t.Kind == lang.TokPunct && (t.Text == "++" || t.Text == "--"):
		if p.operandEnd(prev) && !(isPunct(prev, "++") || isPunct(prev, "--")) || p.postfix && prev != nil {
			wasPostfix = p.operandEnd(prev)
		}
		if !wasPostfix {
			p.unary = true
		}
	case t.Kind == lang.TokPunct && strings.Contains("-+*&!~", t.Text) && len(t.Text) == 1:
		if !p.operandEnd(prev) && !p.typeStar(prev, t, next) {
			p.unary = true
		}
	case t.Kind == lang.TokPunct && t.Text == "/" && p.depth == 0 && !p.inPred:
		p.inPred = true
		p.predOpen = t
	case t.Kind == lang.TokEndPred:
		p.inPred = false
	}
	if isKw(t, "let") {
		p.letColon = true
	} else if !(t.Kind == lang.TokVar && isKw(prev, "let")) && !isPunct(t, ":") {
		p.letColon = false
	}
	p.postfix = wasPostfix
	p.prev, p.prevCode = t, t
}

// typeStar reports whether the '*' t is part of a pointer type: `(T *)`,
// `(T **)`.
func (p *printer) typeStar(prev, t, next *lang.Token) bool {
	if !isPunct(t, "*") || next == nil {
		return false
	}
	if !(isPunct(next, ")") || isPunct(next, "*")) {
		return false
	}
	return prev != nil && (prev.Kind == lang.TokIdent || prev.Kind == lang.TokType || isPunct(prev, "*"))
}

// space is the separator between prev and t.
func (p *printer) space(prev, t, next *lang.Token) sep {
	if prev == nil {
		return sepNone
	}
	// Top level: a new item after one ends.
	if p.depth == 0 {
		switch {
		case isPunct(prev, "}") || isPunct(prev, ";") || prev.Kind == lang.TokPreproc || prev.Kind == lang.TokCDecl:
			if isPunct(prev, "}") && isPunct(t, ";") {
				return sepNone
			}
			if t.Kind == lang.TokPreproc || t.Kind == lang.TokCDecl || wordish(t) {
				if isPunct(prev, "}") || prev.Kind == lang.TokCDecl {
					p.forceBl = true
				}
				return sepNewline
			}
		case t.Kind == lang.TokPreproc || t.Kind == lang.TokCDecl:
			return sepNewline
		case isPunct(t, "/") && !p.inPred:
			return sepSpace // a predicate
		case t.Kind == lang.TokEndPred:
			return sepNone
		case p.inPred && prev == p.predOpen:
			return sepNone
		}
	}
	switch {
	case t.Kind == lang.TokEndPred:
		return sepNone
	case isPunct(t, ":") && isPunct(prev, "?") && t.Off == prev.End():
		return sepNone // `a ?: b` (0.25's elvis) is one operator written together; `? :` does not parse
	case isPunct(t, "{"):
		return sepSpace
	case isPunct(t, "}"):
		if isPunct(prev, "{") {
			return sepNone
		}
		return sepNewline
	case isPunct(prev, "{"):
		return sepNewline
	case isPunct(t, ",") || isPunct(t, ";") || isPunct(t, ")") || isPunct(t, "]"):
		return sepNone
	case isPunct(prev, "(") || isPunct(prev, "["):
		return sepNone
	case isPunct(t, ".") || isPunct(t, "->") || isPunct(t, "..") || isPunct(prev, ".") || isPunct(prev, "->") || isPunct(prev, ".."):
		return sepNone
	case isPunct(prev, ","):
		return sepSpace
	case isKw(prev, "else"):
		return sepSpace
	case isPunct(t, "("):
		switch {
		case prev.Kind == lang.TokIdent || prev.Kind == lang.TokBuiltin || isKw(prev, "sizeof", "offsetof"):
			return sepNone
		case p.unary || isPunct(prev, ")") && p.castEndParen():
			return sepNone
		}
		return sepSpace
	case isPunct(t, "["):
		if p.operandEnd(prev) {
			return sepNone
		}
		return sepSpace
	case p.unary:
		return sepNone
	case t.Kind == lang.TokPunct && (t.Text == "++" || t.Text == "--"):
		if p.operandEnd(prev) && !isPunct(prev, "++") && !isPunct(prev, "--") {
			return sepNone // postfix
		}
		if p.postfix {
			return sepNone
		}
		if p.operandEnd(prev) {
			return sepSpace
		}
		return sepNone
	case p.typeStar(prev, t, next):
		if isPunct(prev, "*") {
			return sepNone
		}
		return sepSpace
	case isPunct(t, ":"):
		if p.letColon && prev.Kind == lang.TokVar {
			return sepNone
		}
		return sepSpace
	case isPunct(prev, ")") && operandStart(t) && p.castEndParen() && t.Kind != lang.TokPunct:
		return sepNone
	case isPunct(prev, ")") && p.castEndParen() && t.Kind == lang.TokPunct && (t.Text == "(" || t.Text == "!" || t.Text == "~"):
		return sepNone
	}
	return sepSpace
}

// castEndParen reports whether the ')' just printed closed a group (not a
// call or an `if (...)`): an operand right after it makes it a cast.
func (p *printer) castEndParen() bool {
	return p.lastClosed == parenGroup
}
