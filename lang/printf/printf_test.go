package printf

import (
	"strings"
	"testing"
)

// NextPiece is the one printf scanner (the runtime's fast path uses it
// too): check the pieces a format splits into.
func TestNextPiece(t *testing.T) {
	for _, c := range []struct {
		format string
		want   string // pieces as lit|text, joined by ","
	}{
		{"", ""},
		{"plain", "plain|"},
		{"a%%b", "a%|,b|"},
		{"x=%-08.3lx!", "x=|%-08.3lx,!|"},
		{"%d%s", "|%d,|%s"},
		{"%hhu %rx %rh %r", "|%hhu, |%rx, |%rh, |%r"},
		{"100%", "100%|"},
	} {
		var got []string
		for i := 0; i < len(c.format); {
			pc, next, err := NextPiece(c.format, i)
			if err != nil {
				t.Fatalf("%q: %v", c.format, err)
			}
			if next <= i {
				t.Fatalf("%q: no progress at %d", c.format, i)
			}
			i = next
			got = append(got, pc.Lit+"|"+pc.Text)
		}
		if g := strings.Join(got, ","); g != c.want {
			t.Errorf("%q: pieces %q, want %q", c.format, g, c.want)
		}
	}
	pc, _, err := NextPiece("%+ #012.5ld", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := pc.Spec
	if !s.Plus || !s.Space || !s.Alt || !s.Zero || s.Minus || s.Width != 12 || s.Prec != 5 || s.Length != "l" || s.Verb != 'd' || s.Bits() != 64 {
		t.Errorf("spec %+v", s)
	}
	for _, f := range []string{"%-5", "%ll"} {
		if _, _, err := NextPiece(f, 0); err == nil || !strings.Contains(err.Error(), "incomplete") {
			t.Errorf("%q: err %v, want incomplete conversion", f, err)
		}
	}
	if pc, next, err := NextPiece("ab%qc", 0); err == nil || !strings.Contains(err.Error(), "unsupported") || pc.Lit != "ab" || pc.Text != "%q" || next != 4 {
		t.Errorf("%%q: %+v next %d err %v, want unsupported conversion %%q after ab", pc, next, err)
	}
	if pc, next, err := NextPiece("x %-5", 0); err == nil || pc.Lit != "x " || pc.Text != "%-5" || next != 5 {
		t.Errorf("%%-5: %+v next %d err %v, want the incomplete conversion as text", pc, next, err)
	}
}
