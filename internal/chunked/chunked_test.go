package chunked

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const file = `// a header comment
---
BEGIN { $x = 1 + "a"; } //! 14-21: Type mismatch //hint: cast it
kprobe:f { } //! 1: first //! 3-5: second
---
//! 1:14-17: unterminated string
BEGIN { $x = "ab
---

---
BEGIN { }
`
	cs, err := Parse("f.bt", file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, fmt.Sprintf("%d %q %v", c.Line, c.Text, c.Want))
	}
	want := []string{
		`1 "// a header comment" []`,
		`3 "BEGIN { $x = 1 + \"a\"; } //! 14-21: Type mismatch //hint: cast it\nkprobe:f { } //! 1: first //! 3-5: second" [1:14-21: Type mismatch 2:1-2: first 2:3-5: second]`,
		`6 "BEGIN { $x = \"ab" [1:14-17: unterminated string]`,
		`11 "BEGIN { }" []`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h := cs[1].Want[0]; !h.HasHint || h.Hint != "cast it" || cs[1].Want[1].HasHint {
		t.Errorf("hints: %+v", cs[1].Want)
	}
	for _, bad := range []string{"x //! zz: no column\n", "//! 5: own line without a line number\n"} {
		if _, err := Parse("f.bt", bad); err == nil || !strings.Contains(err.Error(), "bad expectation") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func TestSplitAndDirective(t *testing.T) {
	secs := Split("a\nb\n---\n\nc\n---\n")
	got := fmt.Sprint(secs)
	if want := "[{1 [a b]} {4 [ c]} {7 []}]"; got != want {
		t.Errorf("Split: got %s, want %s", got, want)
	}
	for _, c := range []struct{ line, key, val, err string }{
		{"//! name: x y", "name", "x y", ""},
		{"//! serial", "serial", "", ""},
		{"//! Bad", "", "", `bad directive "//! Bad" (//! key: value)`},
	} {
		k, v, ok, err := Directive(c.line)
		if !ok || k != c.key || v != c.val || fmt.Sprint(err) != map[bool]string{true: "<nil>", false: c.err}[c.err == ""] {
			t.Errorf("Directive(%q) = %q, %q, %v, %v", c.line, k, v, ok, err)
		}
	}
	if _, _, ok, _ := Directive("// plain"); ok {
		t.Error("a plain comment read as a directive")
	}
}
