package lang

import (
	"strings"
)

// The lexer is hand-written because bpftrace's lexing is context
// sensitive: at the top level an attach point such as
// `uprobe:/bin/bash:readline` is one token (it holds '/', '.', '-', '*'),
// C declarations `struct x { ... };` are captured whole with brace
// matching, and a predicate `/expr/` ends at a '/' followed by '{'.
// Inside probe bodies it is an ordinary C-like lexer that emits
// multi-character operators as single tokens (so `! =` is two tokens).

// tokenKind is the kind of a token.
type tokenKind uint8

const (
	tEOF     tokenKind = iota
	tIdent             // identifier
	tBuiltin           // builtin variable name (pid, comm, arg0 ...)
	tKeyword           // if else while ...
	tTypeKw            // builtin type names: uint8, int64, bool ...
	tInt               // integer literal (raw text)
	tString            // string literal (raw text with quotes)
	tChar              // char literal (raw text with quotes)
	tVar               // $name
	tParam             // $1, $#
	tMap               // @ or @name
	tPunct             // operators and punctuation
	tEndPred           // the '/' closing a predicate
	tAttach            // an attach point, raw text
	tCDecl             // a top-level C declaration, raw text
	tPreproc           // a '#' line
)

var keywords = map[string]bool{
	"if": true, "else": true, "unroll": true, "while": true, "for": true,
	"break": true, "continue": true, "return": true, "let": true,
	"sizeof": true, "offsetof": true, "true": true, "false": true,
	"struct": true, "union": true, "enum": true,
}

// typeKeywords are the type names a cast may use without `struct`.
var typeKeywords = map[string]bool{
	"bool": true, "void": true, "string": true, "buffer": true, "inet": true,
	"int8": true, "int16": true, "int32": true, "int64": true,
	"uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"char": true, "short": true, "int": true, "long": true,
	"unsigned": true, "signed": true,
	// C's fixed-width names (bpftrace 0.24 takes them in casts and sizeof).
	"int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"uint8_t": true, "uint16_t": true, "uint32_t": true, "uint64_t": true,
}

// wordKinds is the kind of every reserved word (one lookup per word).
var wordKinds = func() map[string]tokenKind {
	m := map[string]tokenKind{}
	for w := range typeKeywords {
		m[w] = tTypeKw
	}
	for w := range keywords {
		m[w] = tKeyword
	}
	return m
}()

// BuiltinToken reports whether a word is one of bpftrace's builtin
// variable tokens: a "builtin" in syntax errors ("unexpected builtin") and
// a BuiltinExpr in the tree. The lexer knows no builtin names: the table of
// builtins (package stdlib, whose rows say which are tokens) sets this when
// it is linked in, before any script is parsed. Nil: every word that is not
// a keyword or type name is an identifier.
var BuiltinToken func(word string) bool

// MaxNesting is the deepest nesting of brackets, blocks and ternaries a
// script may use; deeper input is refused before parsing so that no input
// can exhaust the parser's stack.
const MaxNesting = 100

// token is one lexed token.
type token struct {
	kind  tokenKind
	val   string // raw text
	off   int    // start offset
	glued bool   // no whitespace or comment between the previous token and this one
}

func (t token) end() int { return t.off + len(t.val) }

type lexMode int

const (
	modeTop lexMode = iota
	modePred
	modeBody
	modeHead // a top-level declaration (macro, config, let @m, import) before its '{' or ';'
)

type scanner struct {
	src   string
	pos   int
	mode  lexMode
	depth int // brace depth in body mode
	toks  []token
	diags *Diagnostics
	s     *Source
	glued bool
	nerrs int // lexical errors reported (at most maxLexErrors)

	shifts   []int // offsets after which bpftrace's columns are one more (see emit)
	nest     int   // brackets + pending '?' nesting
	nestStk  []int // pending '?' count per bracket level
	tooDeep  bool
	prefixes int // run of consecutive prefix operators

	comments []token // the comments skipped between tokens, for Tokens
}

func (sc *scanner) errorf(start, end int, format string, args ...any) {
	// A binary file given as a script has an invalid character every few
	// bytes: report the first few, not one (with its line) per byte.
	if sc.nerrs >= maxLexErrors {
		return
	}
	sc.nerrs++
	sc.diags.Errorf(Span{Start: sc.s.PosAt(start), End: sc.s.PosAt(end)}, format, args...)
}

// maxLexErrors bounds the lexical errors reported for one script.
const maxLexErrors = 20

// lex splits src into tokens; lexical errors go to diags.
func lex(s *Source, diags *Diagnostics) []token {
	toks, _ := lexShifts(s, diags)
	return toks
}

// lexShifts is lex, also returning the offsets of bpftrace's column
// shifts (for newLineIndex).
func lexShifts(s *Source, diags *Diagnostics) ([]token, []int) {
	// About one token per four bytes of typical scripts: one allocation.
	sc := &scanner{src: s.Text, s: s, diags: diags, toks: make([]token, 0, len(s.Text)/4+16)}
	sc.nestStk = []int{0}
	sc.run()
	return sc.toks, sc.shifts
}

func (sc *scanner) emit(kind tokenKind, start int) {
	t := token{kind: kind, val: sc.src[start:sc.pos], off: start, glued: sc.glued && len(sc.toks) > 0}
	if n := len(sc.toks); sc.mode != modeTop && n > 0 && (isTagKw(sc.toks[n-1]) || n > 1 && isTagKw(sc.toks[n-2])) {
		// bpftrace 0.17 scans `struct x` in a cast in a state that does
		// not move a place's start past its blanks, up to the next token:
		// error places there start before the keyword, as if glued.
		t.glued = true
		if n > 1 && isTagKw(sc.toks[n-2]) && strings.IndexByte("*),", t.val[0]) >= 0 {
			// That state ends at this character, which it has counted
			// before handing it back to be scanned again: the columns of
			// bpftrace's syntax errors after it on this line are one more
			// than the text's (its later passes place nodes differently,
			// so the AST's spans are not shifted).
			sc.shifts = append(sc.shifts, start)
		}
	}
	sc.toks = append(sc.toks, t)
	sc.glued = true
	sc.trackNesting(t)
}

// trackNesting enforces MaxNesting over brackets and ternaries and caps
// runs of prefix operators (which also nest in the tree).
func (sc *scanner) trackNesting(t token) {
	if sc.tooDeep || t.kind != tPunct {
		if t.kind != tPunct {
			sc.prefixes = 0
		}
		return
	}
	top := len(sc.nestStk) - 1
	switch t.val {
	case "(", "[", "{":
		sc.nest++
		sc.nestStk = append(sc.nestStk, 0)
	case ")", "]", "}":
		if top > 0 {
			sc.nest -= 1 + sc.nestStk[top]
			sc.nestStk = sc.nestStk[:top]
		}
	case "?":
		sc.nest++
		sc.nestStk[top]++
	case ":":
		if sc.nestStk[top] > 0 {
			sc.nestStk[top]--
			sc.nest--
		}
	case ";", ",":
		sc.nest -= sc.nestStk[top]
		sc.nestStk[top] = 0
	}
	switch t.val {
	case "-", "!", "~", "*", "&", "++", "--", "(":
		sc.prefixes++
	default:
		sc.prefixes = 0
	}
	if sc.nest > MaxNesting || sc.prefixes > MaxNesting {
		sc.tooDeep = true
		sc.errorf(t.off, t.end(), "nesting too deep: more than %d levels of nested expressions or blocks", MaxNesting)
	}
}

// isTagKw reports a `struct` or `union` keyword (bpftrace 0.17's scanner
// treats these, not `enum`, specially).
func isTagKw(t token) bool {
	return t.kind == tKeyword && (t.val == "struct" || t.val == "union")
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func (sc *scanner) peek(n int) byte {
	if sc.pos+n < len(sc.src) {
		return sc.src[sc.pos+n]
	}
	return 0
}

// skipSpace skips whitespace and comments; it reports whether it skipped
// anything.
func (sc *scanner) skipSpace() {
	for sc.pos < len(sc.src) {
		c := sc.src[sc.pos]
		switch {
		case isSpace(c):
			sc.pos++
			sc.glued = false
		case c == '/' && sc.peek(1) == '/':
			start := sc.pos
			for sc.pos < len(sc.src) && sc.src[sc.pos] != '\n' {
				sc.pos++
			}
			sc.comments = append(sc.comments, token{val: sc.src[start:sc.pos], off: start})
			sc.glued = false
		case c == '/' && sc.peek(1) == '*':
			start := sc.pos
			end := strings.Index(sc.src[sc.pos+2:], "*/")
			if end < 0 {
				sc.errorf(start, start+2, "unterminated comment")
				sc.pos = len(sc.src)
				return
			}
			sc.pos += 2 + end + 2
			sc.comments = append(sc.comments, token{val: sc.src[start:sc.pos], off: start})
			sc.glued = false
		default:
			return
		}
	}
}

func (sc *scanner) atLineStart(p int) bool {
	for i := p - 1; i >= 0; i-- {
		switch sc.src[i] {
		case '\n':
			return true
		case ' ', '\t':
		default:
			return false
		}
	}
	return true
}

func (sc *scanner) run() {
	for {
		sc.skipSpace()
		if sc.pos >= len(sc.src) || sc.tooDeep {
			sc.toks = append(sc.toks, token{kind: tEOF, off: len(sc.src), glued: sc.glued})
			return
		}
		switch sc.mode {
		case modeTop:
			sc.lexTop()
		case modePred:
			if sc.src[sc.pos] == '/' && sc.predEnds() {
				start := sc.pos
				sc.pos++
				sc.emit(tEndPred, start)
				sc.mode = modeTop
				continue
			}
			sc.lexNormal()
		case modeBody:
			sc.lexNormal()
		case modeHead:
			sc.lexHead()
		}
	}
}

// predEnds reports whether the '/' at sc.pos closes a predicate: it is
// followed, after blanks and comments, by '{' (bpftrace's rule).
func (sc *scanner) predEnds() bool {
	p := sc.pos + 1
	for p < len(sc.src) {
		c := sc.src[p]
		switch {
		case isSpace(c):
			p++
		case c == '/' && p+1 < len(sc.src) && sc.src[p+1] == '*':
			e := strings.Index(sc.src[p+2:], "*/")
			if e < 0 {
				return false
			}
			p += 2 + e + 2
		case c == '/' && p+1 < len(sc.src) && sc.src[p+1] == '/':
			for p < len(sc.src) && sc.src[p] != '\n' {
				p++
			}
		default:
			return c == '{'
		}
	}
	return false
}

func (sc *scanner) lexTop() {
	c := sc.src[sc.pos]
	start := sc.pos
	switch {
	case c == '#' && sc.atLineStart(sc.pos):
		for sc.pos < len(sc.src) && sc.src[sc.pos] != '\n' {
			if sc.src[sc.pos] == '\\' && sc.peek(1) == '\n' {
				sc.pos++
			}
			sc.pos++
		}
		sc.emit(tPreproc, start)
		return
	case c == '{':
		sc.pos++
		sc.emit(tPunct, start)
		sc.mode = modeBody
		sc.depth = 1
		return
	case c == '/':
		sc.pos++
		sc.emit(tPunct, start)
		sc.mode = modePred
		return
	case c == ',' || c == '}' || c == ';':
		sc.pos++
		sc.emit(tPunct, start)
		return
	}
	if isIdentStart(c) {
		e := sc.pos
		for e < len(sc.src) && isIdentChar(sc.src[e]) {
			e++
		}
		switch w := sc.src[sc.pos:e]; w {
		case "struct", "union", "enum", "typedef":
			sc.lexCDecl()
			return
		case "macro", "config", "let", "import":
			if sc.startsDecl(w, e) {
				sc.pos = e
				sc.emit(tIdent, start)
				sc.mode = modeHead
				return
			}
		}
	}
	if isIdentStart(c) || c >= '0' && c <= '9' || strings.IndexByte("*?.$:\"-+[]", c) >= 0 {
		sc.lexAttach()
		return
	}
	sc.lexNormal()
}

// skipAttributes returns the offset after the blanks, comments and
// `__attribute__((...))`s at p; p itself if none follow (only blanks are
// skipped then, as before bpftrace 0.26).
func (sc *scanner) skipAttributes(p int) int {
	skip := func(q int) int {
		for q < len(sc.src) {
			switch {
			case isSpace(sc.src[q]):
				q++
			case strings.HasPrefix(sc.src[q:], "/*"):
				e := strings.Index(sc.src[q+2:], "*/")
				if e < 0 {
					return q
				}
				q += 2 + e + 2
			default:
				return q
			}
		}
		return q
	}
	end := p
	for {
		q := skip(end)
		if !strings.HasPrefix(sc.src[q:], "__attribute__") {
			break
		}
		q = skip(q + len("__attribute__"))
		if q >= len(sc.src) || sc.src[q] != '(' {
			break
		}
		depth := 0
		for ; q < len(sc.src); q++ {
			if sc.src[q] == '(' {
				depth++
			} else if sc.src[q] == ')' {
				depth--
				if depth == 0 {
					q++
					break
				}
			}
		}
		if depth != 0 {
			break
		}
		end = q
	}
	for end < len(sc.src) && isSpace(sc.src[end]) {
		end++
	}
	if end < len(sc.src) && sc.src[end] == ';' {
		return end + 1
	}
	if end == p {
		return p
	}
	// Blanks after the last attribute are not part of the declaration.
	for end > p && isSpace(sc.src[end-1]) {
		end--
	}
	return end
}

// startsDecl reports whether the word w ending at e starts one of
// bpftrace 0.20-0.26's top-level declarations rather than an attach point:
// `macro name(`, `config =`, `let @map`, `import "file"`.
func (sc *scanner) startsDecl(w string, e int) bool {
	p := e
	for p < len(sc.src) && isSpace(sc.src[p]) {
		p++
	}
	if p == e && w != "config" || p >= len(sc.src) {
		return false
	}
	c := sc.src[p]
	switch w {
	case "macro":
		return isIdentStart(c)
	case "config":
		return c == '=' && (p+1 >= len(sc.src) || sc.src[p+1] != '=')
	case "let":
		return c == '@'
	case "import":
		return c == '"'
	}
	return false
}

// lexHead scans a token of a top-level declaration: as in a body, until a
// '{' (a macro's body, config's block) or a ';' (a map declaration, an
// import), after which the top level resumes.
func (sc *scanner) lexHead() {
	switch sc.src[sc.pos] {
	case '{':
		start := sc.pos
		sc.pos++
		sc.emit(tPunct, start)
		sc.mode = modeBody
		sc.depth = 1
		return
	case ';':
		start := sc.pos
		sc.pos++
		sc.emit(tPunct, start)
		sc.mode = modeTop
		return
	}
	sc.lexNormal()
}

// lexAttach scans one attach point. Like bpftrace's PATH token, '/' is part
// of the attach point once a ':' has been seen (uprobe paths); before that
// it starts the predicate.
func (sc *scanner) lexAttach() {
	start := sc.pos
	colon := false
	for sc.pos < len(sc.src) {
		c := sc.src[sc.pos]
		if c == '=' && !colon && sc.pos > start && isProbeName(sc.src[start:sc.pos]) && sc.pos+1 < len(sc.src) && isIdentStart(sc.src[sc.pos+1]) {
			// A probe's name, `name=provider:...` (bpftrace 0.25): part
			// of the attach point, split off by ParseAttachPoint.
			colon = false
			sc.pos++
			continue
		}
		if !isIdentChar(c) && strings.IndexByte("-./*?+:$#[]@~\"", c) < 0 {
			break
		}
		if c == '/' && (!colon || sc.peek(1) == '/' || sc.peek(1) == '*') {
			break
		}
		if c == ':' {
			colon = true
		}
		if c == '"' {
			sc.pos++
			for sc.pos < len(sc.src) && sc.src[sc.pos] != '"' && sc.src[sc.pos] != '\n' {
				if sc.src[sc.pos] == '\\' {
					sc.pos++
				}
				sc.pos++
			}
			if sc.pos >= len(sc.src) || sc.src[sc.pos] != '"' {
				if sc.pos > len(sc.src) {
					sc.pos = len(sc.src)
				}
				sc.errorf(start, sc.pos, "unterminated string")
				sc.emit(tAttach, start)
				return
			}
		}
		sc.pos++
	}
	sc.emit(tAttach, start)
}

// isProbeName reports whether s is an identifier, the name of a named
// probe before its '='.
func isProbeName(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// lexCDecl captures a top-level struct/union/enum/typedef declaration: up
// to the ';' at brace depth 0, or to the closing '}' of its body (plus a
// following ';' if any), since bpftrace accepts `struct X { ... }` without
// the semicolon.
func (sc *scanner) lexCDecl() {
	start := sc.pos
	depth := 0
	for sc.pos < len(sc.src) {
		c := sc.src[sc.pos]
		switch {
		case c == '/' && sc.peek(1) == '/':
			for sc.pos < len(sc.src) && sc.src[sc.pos] != '\n' {
				sc.pos++
			}
			continue
		case c == '/' && sc.peek(1) == '*':
			e := strings.Index(sc.src[sc.pos+2:], "*/")
			if e < 0 {
				sc.pos = len(sc.src)
				continue
			}
			sc.pos += 2 + e + 2
			continue
		case c == '{':
			depth++
			if depth > MaxNesting {
				sc.errorf(sc.pos, sc.pos+1, "nesting too deep: more than %d levels of nested expressions or blocks", MaxNesting)
				sc.tooDeep = true
				return
			}
		case c == '}':
			depth--
			if depth <= 0 {
				sc.pos++
				isTypedef := strings.HasPrefix(sc.src[start:], "typedef")
				if !isTypedef {
					// Take following __attribute__((...))s (bpftrace 0.26)
					// and a ';' (possibly after blanks and comments).
					sc.pos = sc.skipAttributes(sc.pos)
					sc.emit(tCDecl, start)
					return
				}
				depth = 0
				continue
			}
		case c == ';' && depth == 0:
			sc.pos++
			sc.emit(tCDecl, start)
			return
		}
		sc.pos++
	}
	sc.errorf(start, len(sc.src), "unterminated C definition")
	sc.emit(tCDecl, start)
}

// numberLen returns the length of the integer literal s starts with, as
// bpftrace 0.17 scans them: hex `0x1f`, or decimal digits with '_'
// separators inside (`1_000`), a C size suffix (u, l, ul, ll, ull in either
// case) and an exponent (`1e6`, `1e3u`). What follows (the `a` of `12a`,
// the `_` of `1_`, the `b101` of `0b101`) is the next token.
// durationUnits are the duration suffixes of integer literals (bpftrace
// 0.24: `5s`, `100ms`), in nanoseconds.
var durationUnits = map[string]uint64{
	"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9, "d": 86400e9,
}

// durationLen is the length of the duration literal (digits, '_'s and a
// unit) at the start of s; 0 if none is there.
func durationLen(s string) int {
	d := 0
	for d < len(s) && (s[d] >= '0' && s[d] <= '9' || d > 0 && s[d] == '_') {
		d++
	}
	if d == 0 || d == 1 && d < len(s) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return 0
	}
	n := d
	for n < len(s) && isIdentChar(s[n]) {
		n++
	}
	if _, ok := durationUnits[s[d:n]]; !ok {
		return 0
	}
	return n
}

func numberLen(s string) int {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]) {
		n := 3
		for n < len(s) && isHex(s[n]) {
			n++
		}
		return n
	}
	n := decimalLen(s)
	if n+1 < len(s) && (s[n] == 'e' || s[n] == 'E') && s[n+1] >= '0' && s[n+1] <= '9' {
		n += 1 + decimalLen(s[n+1:])
	}
	return n
}

// decimalLen is the length of `[0-9]([0-9_]*[0-9])?` and a size suffix at
// the start of s (which starts with a digit).
func decimalLen(s string) int {
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] == '_') {
		n++
	}
	for s[n-1] == '_' {
		n--
	}
	return n + intSuffixLen(s[n:])
}

// intSuffixLen is the length of a C integer size suffix (u, l, ll, ul,
// ull, any case) at the start of s.
func intSuffixLen(s string) int {
	n := 0
	if n < len(s) && (s[n] == 'u' || s[n] == 'U') {
		n++
	}
	for k := 0; k < 2 && n < len(s) && (s[n] == 'l' || s[n] == 'L'); k++ {
		n++
	}
	return n
}

// punctLen returns the length of the multi-character operator s starts
// with (3 or 2), or 0.
func punctLen(s string) int {
	if len(s) >= 3 && (s[:3] == "<<=" || s[:3] == ">>=") {
		return 3
	}
	if len(s) >= 2 {
		switch s[:2] {
		case "==", "!=", "<=", ">=", "&&", "||", "++", "--", "->", "..", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>":
			return 2
		}
	}
	return 0
}

const punct1 = "+-*/%&|^!~<>=?:;,.()[]{}"

func (sc *scanner) lexNormal() {
	c := sc.src[sc.pos]
	start := sc.pos
	switch {
	case isIdentStart(c):
		for sc.pos < len(sc.src) && isIdentChar(sc.src[sc.pos]) {
			sc.pos++
		}
		w := sc.src[start:sc.pos]
		switch k, ok := wordKinds[w]; {
		case ok:
			sc.emit(k, start)
		case BuiltinToken != nil && BuiltinToken(w):
			sc.emit(tBuiltin, start)
		default:
			sc.emit(tIdent, start)
		}
	case c >= '0' && c <= '9':
		sc.pos += numberLen(sc.src[sc.pos:])
		if n := durationLen(sc.src[start:]); n > 0 {
			sc.pos = start + n
		}
		sc.emit(tInt, start)
	case c == '$':
		sc.pos++
		switch {
		case sc.pos < len(sc.src) && sc.src[sc.pos] == '#':
			sc.pos++
			sc.emit(tParam, start)
		case sc.pos < len(sc.src) && sc.src[sc.pos] >= '0' && sc.src[sc.pos] <= '9':
			for sc.pos < len(sc.src) && sc.src[sc.pos] >= '0' && sc.src[sc.pos] <= '9' {
				sc.pos++
			}
			sc.emit(tParam, start)
		case sc.pos < len(sc.src) && isIdentStart(sc.src[sc.pos]):
			for sc.pos < len(sc.src) && isIdentChar(sc.src[sc.pos]) {
				sc.pos++
			}
			sc.emit(tVar, start)
		default:
			sc.errorf(start, sc.pos, "invalid character '$'")
		}
	case c == '@':
		sc.pos++
		for sc.pos < len(sc.src) && isIdentChar(sc.src[sc.pos]) {
			sc.pos++
		}
		sc.emit(tMap, start)
	case c == '"':
		sc.lexQuoted('"', tString)
	case c == '\'':
		sc.lexQuoted('\'', tChar)
	default:
		if n := punctLen(sc.src[sc.pos:]); n > 1 {
			sc.pos += n
			sc.emit(tPunct, start)
			return
		}
		if strings.IndexByte(punct1, c) >= 0 {
			sc.pos++
			sc.emit(tPunct, start)
			if sc.mode == modeBody {
				switch c {
				case '{':
					sc.depth++
				case '}':
					sc.depth--
					if sc.depth == 0 {
						sc.mode = modeTop
					}
				}
			}
			return
		}
		// One UTF-8 sequence as one bad character.
		n := 1
		for sc.pos+n < len(sc.src) && sc.src[sc.pos+n]&0xC0 == 0x80 && n < 4 {
			n++
		}
		sc.pos += n
		sc.errorf(start, sc.pos, "invalid character '%s'", sc.src[start:sc.pos])
	}
}

// lexQuoted scans a string or char literal; its text is decoded when
// lowered. An unterminated literal is reported here.
func (sc *scanner) lexQuoted(q byte, kind tokenKind) {
	start := sc.pos
	sc.pos++
	for sc.pos < len(sc.src) {
		c := sc.src[sc.pos]
		if c == q {
			sc.pos++
			sc.emit(kind, start)
			return
		}
		if c == '\n' {
			break
		}
		if c == '\\' && sc.pos+1 < len(sc.src) && sc.src[sc.pos+1] != '\n' {
			sc.pos++
		}
		sc.pos++
	}
	// bpftrace's scanner places this error from the last blank on.
	rs := start
	for rs > 0 && !isSpace(sc.src[rs-1]) {
		rs--
	}
	if q == '"' {
		sc.errorf(rs, sc.pos, "unterminated string")
	} else {
		sc.errorf(start, sc.pos, "unterminated character literal")
	}
	sc.emit(kind, start)
}

// lineIndex converts offsets to positions quickly, with bpftrace's column
// shifts: a position after a shift offset on the same line has its column
// one more per shift.
type lineIndex struct {
	starts []int
	n      int
	shifts []int   // sorted offsets
	file   *Source // an imported script's positions name it (Pos.File)
}

func newLineIndex(src *Source, shifts []int) *lineIndex {
	text := src.Text
	li := &lineIndex{starts: []int{0}, n: len(text), shifts: shifts}
	if src.imported {
		li.file = src
	}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) Pos {
	if off > li.n {
		off = li.n
	}
	if off < 0 {
		off = 0
	}
	lo, hi := 0, len(li.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	col := off - li.starts[lo] + 1
	for _, sh := range li.shifts {
		if sh >= li.starts[lo] && sh < off {
			col++
		}
	}
	return Pos{Offset: off, Line: lo + 1, Col: col, File: li.file}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
