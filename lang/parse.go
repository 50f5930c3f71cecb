package lang

import (
	"sort"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// MaxTreeDepth bounds the depth of the lowered tree (long operator chains
// such as a+b+c+... deepen it without nesting brackets), so that the
// checker and compiler, which walk it recursively, stay shallow.
const MaxTreeDepth = 1000

// Parse parses a whole script. On failure the error is a *Diagnostics
// holding the errors in bpftrace's form (syntax errors are reported as
// bpftrace's parser words them: "syntax error, unexpected ;").
func Parse(src *Source) (prog *Program, err error) {
	return ParseWith(src, ParseOptions{})
}

// ParseOptions configure ParseWith.
type ParseOptions struct {
	// Imports reads the scripts that `import "file";` (bpftrace 0.25)
	// names and merges them into the program (import.go); without it
	// the imports are only recorded in Program.Imports.
	Imports bool
	// ImportPaths are directories searched for imports after the
	// script's own directory.
	ImportPaths []string
}

// ParseWith parses src as Parse does, resolving its imports if opts say
// so.
func ParseWith(src *Source, opts ParseOptions) (prog *Program, err error) {
	diags := &Diagnostics{Src: src}
	defer func() {
		// A bug in the parser must not become a crash for the user.
		if r := recover(); r != nil {
			diags.Errorf(Span{}, "internal error in the parser: %v", r)
			prog, err = nil, diags
		}
	}()
	l, prog := parseItems(src, diags)
	if prog == nil {
		return nil, diags
	}
	if opts.Imports && len(prog.Imports) > 0 {
		resolveImports(l, prog, opts.ImportPaths)
	}
	l.expandMacros(prog)
	hoistProgram(prog, l.diags)
	lowerRanges(prog)
	if !diags.HasErrors() {
		checkDepth(prog, diags)
	}
	if diags.HasErrors() {
		diags.Sort()
		return nil, diags
	}
	return prog, nil
}

// parseItems lexes, parses and lowers the items of src, leaving macro
// expansion and the passes after it to the caller; nil if src does not
// parse.
func parseItems(src *Source, diags *Diagnostics) (*lowerer, *Program) {
	toks, shifts := lexShifts(src, diags)
	if diags.HasErrors() {
		return nil, nil
	}
	src.shifts = shifts
	// The lexer's tokens are not kept while the grammar parses (a
	// multi-megabyte script's tokens take about as much memory as the
	// grammar's tree): a syntax error, which needs them, lexes again.
	ptoks := participleTokens(toks)
	toks, shifts = nil, nil
	g, perr := parseTokens(ptoks)
	if perr != nil {
		toks, shifts = lexShifts(src, &Diagnostics{Src: src})
		syntaxError(src, toks, shifts, perr, diags)
		return nil, nil
	}
	l := &lowerer{src: src, li: newLineIndex(src, nil), diags: diags}
	return l, l.program(g)
}

// parseError is the parser's failure: the token (its index in the token
// stream) at which the script stops being valid, and how a custom rule
// words it (see grammarError).
type parseError struct {
	idx       int
	term      bool
	expecting string
}

// participleTokens converts the lexer's tokens (ending in EOF) to
// participle's, made at their final size (lexer.Upgrade would grow the
// slice token by token).
func participleTokens(toks []token) []lexer.Token {
	ptoks := make([]lexer.Token, len(toks))
	ts := tokenStream{toks: toks}
	for i := range ptoks {
		ptoks[i], _ = ts.Next()
	}
	return ptoks
}

// parseTokens parses a whole token stream (participle's tokens, ending in
// EOF) with the grammar; the error's idx indexes toks.
func parseTokens(toks []lexer.Token) (*gProgram, *parseError) {
	p, err := grammar()
	if err != nil {
		panic(err) // the grammar is fixed: TestGrammarEBNF builds it
	}
	g, err := p.ParseFromLexer(lexer.UpgradeTokens(toks))
	if err == nil {
		return g, nil
	}
	var off int
	perr := &parseError{}
	switch e := err.(type) {
	case *grammarError:
		off, perr.term, perr.expecting = e.tok.Pos.Offset, e.term, e.expecting
	case participle.Error:
		off = e.Position().Offset
	default:
		panic(err)
	}
	// The token at that offset (the EOF token's is the text's length).
	perr.idx = sort.Search(len(toks), func(i int) bool { return toks[i].Pos.Offset >= off })
	if perr.idx >= len(toks) {
		perr.idx = len(toks) - 1
	}
	return nil, perr
}

// checkDepth reports a tree deeper than MaxTreeDepth, walking with an
// explicit stack.
func checkDepth(p *Program, diags *Diagnostics) {
	type item struct {
		n Node
		d int
	}
	stack := []item{{p, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.d > MaxTreeDepth {
			diags.Errorf(it.n.Span(), "nesting too deep: the expression is more than %d levels deep", MaxTreeDepth)
			return
		}
		first := true
		Inspect(it.n, func(c Node) bool {
			if first {
				first = false
				return true
			}
			stack = append(stack, item{c, it.d + 1})
			return false
		})
	}
}

// tokenName is how bpftrace's parser names a token in "unexpected X".
func tokenName(t token) string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tIdent, tAttach:
		return "identifier"
	case tBuiltin:
		return "builtin"
	case tInt:
		return "integer"
	case tString:
		return "string"
	case tChar:
		return "character literal"
	case tVar:
		return "variable"
	case tParam:
		if t.val == "$#" {
			return "$#"
		}
		return "positional parameter"
	case tMap:
		return "map"
	case tEndPred:
		return "end predicate"
	case tCDecl:
		return "struct"
	case tPreproc:
		return "preprocessor directive"
	case tTypeKw:
		return "type"
	case tPunct:
		if t.val == "," {
			return `","`
		}
	}
	return t.val
}

// endsOperand reports whether t can end an operand (so that what follows
// it is in operator position).
func endsOperand(t token, before []token) bool {
	if t.kind == tPunct && (t.val == "++" || t.val == "--") {
		// Postfix only after an operand.
		return len(before) > 0 && endsOperand(before[len(before)-1], nil)
	}
	return endsOperandTok(t)
}

func isCompoundKw(t token) bool {
	return t.kind == tKeyword && (t.val == "if" || t.val == "while" || t.val == "unroll" || t.val == "for")
}

func endsOperandTok(t token) bool {
	switch t.kind {
	case tIdent, tBuiltin, tInt, tString, tChar, tVar, tParam, tMap:
		return true
	case tKeyword:
		return t.val == "true" || t.val == "false"
	case tPunct:
		return t.val == ")" || t.val == "]"
	}
	return false
}

// bisonSpan is the place bpftrace reports for the token at index i: its
// scanner only moves a location's start past blanks, so the span runs from
// the first token after the last blank to the end of this one. At the end
// of the input right after a token, it is that token's place.
func bisonSpan(li *lineIndex, toks []token, i int) Span {
	t := toks[i]
	if t.kind == tEOF {
		if !t.glued || i == 0 {
			p := li.pos(t.off)
			return Span{Start: p, End: p}
		}
		i--
		t = toks[i]
	}
	j := i
	for j > 0 && toks[j].glued {
		j--
	}
	return Span{Start: li.pos(toks[j].off), End: li.pos(t.end())}
}

// syntaxError turns the parser's error into bpftrace's wording: the
// unexpected token and, where bpftrace's parser would list them, the
// tokens it expected there (derived from the context: the innermost open
// bracket and the token before).
func syntaxError(src *Source, toks []token, shifts []int, perr *parseError, diags *Diagnostics) {
	li := newLineIndex(src, shifts)
	isTerm := perr.term
	i := perr.idx
	if i >= len(toks) {
		i = len(toks) - 1
	}
	t := toks[i]
	var prev token
	hasPrev := i > 0
	if hasPrev {
		prev = toks[i-1]
	}

	// The innermost open bracket before the failing token, and whether the
	// current top-level clause is inside a predicate.
	type open struct {
		val string
		i   int
	}
	var stack []open
	lastClosedParen := -1 // index of the '(' matching the last ')'
	inPred := false
	probeStart := -1
	for k := 0; k < i; k++ {
		tk := toks[k]
		switch {
		case tk.kind == tPunct && (tk.val == "(" || tk.val == "[" || tk.val == "{"):
			stack = append(stack, open{tk.val, k})
		case tk.kind == tPunct && (tk.val == ")" || tk.val == "]" || tk.val == "}"):
			if len(stack) > 0 {
				if tk.val == ")" {
					lastClosedParen = stack[len(stack)-1].i
				}
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 && tk.val == "}" {
				probeStart = -1
			}
		case tk.kind == tPunct && tk.val == "/" && len(stack) == 0 && !inPred:
			inPred = true
		case tk.kind == tEndPred:
			inPred = false
		}
		if len(stack) == 0 && !inPred && (tk.kind == tAttach || tk.kind == tPunct && tk.val == ",") && probeStart < 0 {
			probeStart = k
		}
		if tk.kind == tCDecl || tk.kind == tPreproc {
			probeStart = -1
		}
		if len(stack) == 1 && tk.val == "{" && tk.kind == tPunct {
			inPred = false
		}
	}

	sp := bisonSpan(li, toks, i)
	expecting := ""
	switch {
	case len(stack) == 0 && !inPred:
		if t.kind == tEOF && probeStart >= 0 {
			// bpftrace words a clause cut off before its body so.
			// Its place starts where the previous clause ended.
			start := toks[probeStart].off
			if probeStart > 0 {
				start = toks[probeStart-1].end()
			}
			sp = Span{Start: li.pos(start), End: li.pos(prev.end())}
			diags.Errorf(sp, "unexpected end of file, expected {")
			return
		}
		if t.kind != tEOF {
			expecting = "{"
		}
	case len(stack) == 0 && inPred:
		if hasPrev && endsOperand(prev, toks[:i-1]) {
			expecting = "end predicate"
		}
	default:
		top := stack[len(stack)-1]
		pendingQ := hasPrev && endsOperand(prev, toks[:i-1]) && pendingTernary(toks, top.i+1, i)
		switch {
		case isTerm:
			expecting = "}"
		case hasPrev && prev.kind == tPunct && prev.val == ")" && lastClosedParen > 0 && isCompoundKw(toks[lastClosedParen-1]):
			expecting = "{"
		case hasPrev && prev.kind == tKeyword && (prev.val == "if" || prev.val == "while" || prev.val == "unroll" || prev.val == "for"):
			expecting = "("
		case hasPrev && prev.kind == tKeyword && prev.val == "else":
			expecting = "{ or if"
		case pendingQ && !(t.kind == tPunct && t.val == ":"):
			expecting = ":"
		case top.val == "{":
			if !hasPrev || endsOperand(prev, toks[:i-1]) || prev.kind == tPunct && (prev.val == ";" || prev.val == "{" || prev.val == "}") {
				expecting = "}"
			}
		case top.val == "(":
			if hasPrev && endsOperand(prev, toks[:i-1]) {
				expecting = `) or ","`
				if top.i > 0 && toks[top.i-1].kind == tKeyword {
					expecting = ")"
				}
			}
		case top.val == "[":
			if hasPrev && endsOperand(prev, toks[:i-1]) {
				expecting = "]"
				if top.i > 0 && toks[top.i-1].kind == tMap {
					expecting = `] or ","`
				}
			}
		}
	}
	switch perr.expecting {
	case "":
	case "-":
		expecting = ""
	default:
		expecting = perr.expecting
	}
	name := tokenName(t)
	if (t.kind == tIdent || t.kind == tBuiltin) && i+1 < len(toks) && toks[i+1].kind == tPunct && toks[i+1].val == "(" {
		name = "call" // bpftrace lexes `name(` as a call token
	}
	msg := "syntax error, unexpected " + name
	if expecting != "" {
		msg += ", expecting " + expecting
	}
	diags.Errorf(sp, "%s", msg)
}

// pendingTernary reports whether toks[from:to] (one bracket level, nested
// brackets skipped) holds a '?' whose ':' has not come yet.
func pendingTernary(toks []token, from, to int) bool {
	depth, q := 0, 0
	for k := from; k < to; k++ {
		tk := toks[k]
		if tk.kind != tPunct {
			continue
		}
		switch tk.val {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "?":
			if depth == 0 {
				q++
			}
		case ":":
			if depth == 0 && q > 0 {
				q--
			}
		case ";":
			if depth == 0 {
				q = 0
			}
		}
	}
	return q > 0
}
