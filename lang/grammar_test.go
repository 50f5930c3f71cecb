package lang

import (
	"os"
	"strings"
	"testing"
)

// TestGrammarEBNF checks that grammar.ebnf is the grammar as participle
// prints it (and the custom rules'), so that the documented grammar cannot
// drift from the parser. After changing the grammar, run
// GOTRACE_UPDATE_EBNF=1 go test -run TestGrammarEBNF ./lang/ to rewrite
// the file.
func TestGrammarEBNF(t *testing.T) {
	p, err := grammar()
	if err != nil {
		t.Fatal(err)
	}
	got := grammarEBNF(p)
	if os.Getenv("GOTRACE_UPDATE_EBNF") != "" {
		if err := os.WriteFile("grammar.ebnf", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("grammar.ebnf")
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("grammar.ebnf differs from the parser's grammar; run GOTRACE_UPDATE_EBNF=1 go test -run TestGrammarEBNF ./lang/ and commit it.\nThe parser's grammar:\n%s", got)
	}
}

// TestTokenDefinition checks the lexer as participle's lexer.Definition,
// through participle's own entry point.
func TestTokenDefinition(t *testing.T) {
	p, err := grammar()
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.ParseString("stdin", `BEGIN { @x = 1; }`)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Items) != 1 || g.Items[0].Probe == nil || len(g.Items[0].Probe.Attach) != 1 || g.Items[0].Probe.Attach[0].Raw != "BEGIN" {
		t.Fatalf("parsed %+v", g)
	}
	if _, err := p.ParseString("stdin", `BEGIN { $ }`); err == nil || !strings.Contains(err.Error(), "invalid character '$'") {
		t.Fatalf("lexing error: %v", err)
	}
}
