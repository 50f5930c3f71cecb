package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseOutcome is everything a parse gives: the diagnostics' text, or the
// tree with the span of every node.
func parseOutcome(src string) string {
	p, err := Parse(&Source{Name: "stdin", Text: src})
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	b.WriteString(Dump(p))
	Inspect(p, func(n Node) bool {
		sp := n.Span()
		fmt.Fprintf(&b, "%T %d:%d-%d:%d\n", n, sp.Start.Line, sp.Start.Col, sp.End.Line, sp.End.Col)
		return true
	})
	return b.String()
}

// TestFastPathsParseAsGeneralRules: with the fast paths of
// grammar_custom.go (gSimpleOperand, gSimpleExpr, gSimpleStmt) and
// without them, every parser and checker testdata script and a set of
// statements and near-misses give the same tree, spans and diagnostics.
func TestFastPathsParseAsGeneralRules(t *testing.T) {
	var srcs []string
	for _, c := range loadParseCases(t) {
		srcs = append(srcs, c.src)
	}
	files, _ := filepath.Glob("check/testdata/*/*.bt")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(data))
	}
	for _, s := range []string{
		"$x = 1", "$x = 1;", "$x", "@m[1, 2] = count()", "@m[1, 2]++", "$x += 1 + 2 * 3", "1 = 2",
		"_ = f(1)", "$x = 1 ? 2 : 3", "$x = ", "$x = (1, 2)", "@t = (1, \"a\", $x).0", "$x = a->b.c",
		"f(1)(2)", "$x = 1 2", "$x = $y = 1", "@x = @y[1]++;", "$x = (uint8)1", "$x = -1", "{ $x }", "$x = { 1 }",
		"$x = $a ?: 2", "@m[1] = @m[1] + 1; @n = 2", "$x.1 = 2", "printf(\"%d\\n\", (1 + 2) * 3)",
		"$x = 1;;", "$x = 1 ;$y = 2", "$x == 1", "comm = 1", "$x->a = 1", "@[1] = 1 }",
	} {
		srcs = append(srcs, "BEGIN { "+s+" }", "BEGIN { if ($x) { "+s+" } else { "+s+"; } }")
	}
	if len(srcs) < 100 {
		t.Fatalf("only %d scripts", len(srcs))
	}
	defer func() { fastPaths = true }()
	for _, src := range srcs {
		fastPaths = true
		fast := parseOutcome(src)
		fastPaths = false
		general := parseOutcome(src)
		if fast != general {
			t.Errorf("%q:\nwith the fast paths:\n%s\nwithout:\n%s", src, fast, general)
		}
	}
}
