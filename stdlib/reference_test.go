package stdlib

import (
	"strings"
	"testing"
)

// TestReference: the generated reference lists every row under its kind's
// section with its signature and description.
func TestReference(t *testing.T) {
	var sb strings.Builder
	if err := WriteReference(&sb); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, b := range table() {
		want := "    " + b.Sig
		if !strings.Contains(out, want) || !strings.Contains(out, "        "+b.Doc+"\n") {
			t.Errorf("reference lacks %s (%q)", b.Name, want)
		}
	}
	vars, funcs := strings.Index(out, "VARIABLES"), strings.Index(out, "\nFUNCTIONS:")
	if vars != 0 || funcs < 0 {
		t.Fatalf("sections out of order:\n%s", out)
	}
	if i := strings.Index(out, "    pid([curr_ns|init])\n"); i < 0 || i > funcs {
		t.Errorf("pid is not listed among the variables")
	}
	if !strings.Contains(out, "    write_user(void *dst, src, int n)  [needs --unsafe]\n") {
		t.Errorf("write_user's --unsafe note is missing")
	}
}
