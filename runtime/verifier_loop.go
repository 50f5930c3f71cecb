package runtime

import (
	"strings"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
)

// loopComplaint reports whether the verifier's reason is about program
// size, complexity or loops: the usual result of a loop whose bound the
// verifier cannot see, or whose iterations it must all walk.
func loopComplaint(reason string) bool {
	r := strings.ToLower(reason)
	for _, s := range []string{"too large", "too complex", "complexity", "infinite loop", "back-edge", "loop"} {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// refusedLoop finds the while/for/unroll statement of p's clause that the
// refused place at lies in (the innermost one), or the clause's only loop
// when at is unknown or outside every loop. It re-parses the script: the
// Spec keeps only its text, and this runs once, on a failure path.
// ok is false when no loop can be named.
func refusedLoop(spec *compiler.Spec, p *compiler.Program, at lang.Span) (header lang.Span, ok bool) {
	if spec.Source == nil {
		return lang.Span{}, false
	}
	// With its imports, as gotrace.Compile parsed it: the clause
	// numbers count the imported probes.
	prog, err := lang.ParseWith(spec.Source, lang.ParseOptions{Imports: true})
	if err != nil || prog == nil {
		return lang.Span{}, false
	}
	var roots []lang.Node
	if p.Clause >= 0 && p.Clause < len(prog.Probes) {
		roots = append(roots, prog.Probes[p.Clause])
	} else {
		roots = append(roots, prog)
	}
	var loops []lang.Stmt
	for _, r := range roots {
		lang.Inspect(r, func(n lang.Node) bool {
			switch n := n.(type) {
			case *lang.WhileStmt, *lang.ForStmt, *lang.UnrollStmt:
				loops = append(loops, n.(lang.Stmt))
			}
			return true
		})
	}
	var best lang.Stmt
	if at.Start.IsValid() {
		off := at.Start.Offset
		for _, l := range loops {
			sp := l.Span()
			if sp.Start.Offset <= off && off < sp.End.Offset &&
				(best == nil || sp.End.Offset-sp.Start.Offset < best.Span().End.Offset-best.Span().Start.Offset) {
				best = l
			}
		}
	}
	if best == nil && len(loops) == 1 {
		best = loops[0]
	}
	if best == nil {
		return lang.Span{}, false
	}
	return loopHeader(spec.Source, best), true
}

// loopHeader is the span of a loop's head: `while (cond)`, `for ($kv :
// @map)` or `unroll(N)`, up to and including the closing parenthesis.
func loopHeader(src *lang.Source, l lang.Stmt) lang.Span {
	sp := l.Span()
	var last lang.Node
	switch l := l.(type) {
	case *lang.WhileStmt:
		last = l.Cond
	case *lang.ForStmt:
		last = l.Map
	case *lang.UnrollStmt:
		last = l.Count
	}
	if last == nil || !last.Span().End.IsValid() {
		return sp
	}
	end := last.Span().End.Offset
	t := src.Text
	i := end
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
		i++
	}
	if i < len(t) && t[i] == ')' {
		end = i + 1
	}
	if end <= sp.Start.Offset || end > sp.End.Offset {
		return sp
	}
	return lang.Span{Start: sp.Start, End: src.PosAt(end)}
}

// widenEmpty gives an empty span the width of the token at its start (at
// least one character), so the diagnostic always marks something.
func widenEmpty(src *lang.Source, sp lang.Span) lang.Span {
	if src == nil || !sp.Start.IsValid() || sp.End.Offset > sp.Start.Offset {
		return sp
	}
	t := src.Text
	i := sp.Start.Offset
	if i >= len(t) || t[i] == '\n' {
		return sp
	}
	for i < len(t) && t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != '\r' && t[i] != ';' {
		i++
	}
	if i == sp.Start.Offset {
		i++
	}
	return lang.Span{Start: sp.Start, End: src.PosAt(i)}
}
