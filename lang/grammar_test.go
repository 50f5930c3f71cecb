package lang

import (
	"os"
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
