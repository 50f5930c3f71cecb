package ktypes

import (
	"os"
	"testing"
)

// TestCParserNoPanic feeds every prefix cut of a real header (at 97-byte
// steps) and some hostile snippets to the parser: errors are fine, panics
// and hangs are not.
func TestCParserNoPanic(t *testing.T) {
	src, err := os.ReadFile("testdata/kernel_structs.h")
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{"struct", "struct {", "typedef", "#if", "#define F(x", "F(", "enum { A = }",
		"struct a { int x[1/0]; };", "#define A A\nstruct s { int v[A]; };", "#define F(x) F(x)\nF(1)",
		"struct a { struct a; };", "int (*(*(*f)[3])(int))[4];", "\"unterminated", "struct a { int x : -1; };",
		"#include \"/dev/null\"\n#include_next <stdio.h>", "typedef struct s s; struct s { s *p; };"}
	for i := 0; i < len(src); i += 97 {
		inputs = append(inputs, string(src[:i]))
	}
	for _, in := range inputs {
		d, _ := ParseC(in, "")
		if d == nil {
			continue
		}
		for _, n := range d.Names() {
			d.Lookup(n)
		}
	}
}
