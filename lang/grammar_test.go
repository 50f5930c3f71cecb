package lang

import (
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"
)

// TestGrammarValidates builds the grammar with participle's check for left
// recursion, which the parser built at start-up skips
// (participle.Validated); the option does skip it: a left-recursive
// grammar builds with it and not without.
func TestGrammarValidates(t *testing.T) {
	if _, err := participle.Build[gProgram](grammarOptions()...); err != nil {
		t.Fatalf("the grammar does not validate: %v", err)
	}
	type leftRec struct {
		Left *leftRec `parser:"@@ '+'"`
	}
	if _, err := participle.Build[leftRec](grammarOptions()...); err == nil || !strings.Contains(err.Error(), "left recursion") {
		t.Errorf("left-recursive grammar, validated: %v, want a left recursion error", err)
	}
	if _, err := participle.Build[leftRec](append(grammarOptions(), participle.Validated())...); err != nil {
		t.Errorf("left-recursive grammar built with Validated: %v, want no check", err)
	}
}

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
