package runtime

import (
	"strings"
	"testing"
)

// TestParseCases: the reader's fields, and its errors at file:line.
func TestParseCases(t *testing.T) {
	cs, err := ParseCases("f.txt", `//# about the first
//! name: one
//! flags: -f json --x 'a b' "c \"d\""
//! workload: helper reads 1 2
//! exit: 3
//! normalize: attaching trim
BEGIN {
  exit();
}
//! stdout
//| a
//|
//~ b+
//! stderr: contains
//| oops
---

//! name: two
//! bpftrace: 0.17
//! env: A=b
interval:s:1 { exit(); }
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("%d cases, want 2", len(cs))
	}
	c := cs[0]
	if c.Name != "one" || c.Line != 1 || c.Program != "BEGIN {\n  exit();\n}" || c.Exit != 3 ||
		strings.Join(c.Flags, "|") != `-f|json|--x|a b|c "d"` || strings.Join(c.Workload, "|") != "helper|reads|1|2" ||
		strings.Join(c.Norm, "|") != "attaching|trim" {
		t.Errorf("case one: %+v", c)
	}
	if len(c.Expect) != 2 || c.Expect[0].Stream != "stdout" || c.Expect[0].Mode != "exact" || len(c.Expect[0].Lines) != 3 ||
		!c.Expect[0].Lines[2].Regex || c.Expect[0].Lines[1].Text != "" || c.Expect[1].Mode != "contains" || c.Expect[0].Line != 10 {
		t.Errorf("case one's expectations: %+v", c.Expect)
	}
	if c := cs[1]; c.Name != "two" || !c.Bpftrace || c.Line != 18 || len(c.Env) != 1 || c.Expect != nil {
		t.Errorf("case two: %+v", c)
	}
	for _, bad := range []struct{ text, want string }{
		{"//! name: a\nBEGIN {}\n", "f.txt:1: case \"a\" expects nothing"},
		{"BEGIN {}\n//! stdout\n//| x\n", "f.txt:1: case without //! name"},
		{"//! name: a\n//! frob: 1\nBEGIN {}\n", "f.txt:2: unknown directive \"frob\""},
		{"//! name: a\nBEGIN {}\n//! stdout\n//| x\nEND {}\n", "f.txt:5: program text after the expected output"},
		{"//! name: a\n//| x\n", "f.txt:2: expected output line before any"},
		{"//! name: a\nBEGIN {}\n//! stdout\n---\n//! name: a\nBEGIN {}\n//! stdout\n", "f.txt:5: case \"a\" already defined at line 1"},
		{"//! name: a\n//! normalize: frob\n", "f.txt:2: unknown normalization"},
		{"//! name: a\n//! flags: 'x\n", "f.txt:2: flags: unterminated"},
		{"//! name: a\nBEGIN {}\n//! stdout: sometimes\n", "f.txt:3: stdout: mode \"sometimes\""},
		{"//! name: a\nBEGIN {}\n//! stdout\n//~ (\n", "f.txt:4: bad regular expression"},
	} {
		_, err := ParseCases("f.txt", bad.text)
		if err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q...", bad.text, err, bad.want)
		}
	}
}

// TestCheck: the expectation modes, regular expression lines and the
// normalizations, on both sides.
func TestCheck(t *testing.T) {
	sub := func(s string) string { return strings.ReplaceAll(s, "{comm:x}", "a.b") }
	lines := func(ls ...string) []ExpLine {
		var out []ExpLine
		for _, l := range ls {
			if r, ok := strings.CutPrefix(l, "~"); ok {
				out = append(out, ExpLine{Text: r, Regex: true})
			} else {
				out = append(out, ExpLine{Text: l})
			}
		}
		return out
	}
	for i, c := range []struct {
		mode, stream string
		norm         []string
		lines        []ExpLine
		got          string
		ok           bool
	}{
		{"exact", "stdout", nil, lines("a", ""), "a\n\n", true},
		{"exact", "stdout", nil, lines("a"), "a\n\n", false},
		{"exact", "stdout", nil, nil, "", true},
		{"exact", "stdout", nil, nil, "\n", false},
		{"exact", "stdout", []string{"attaching"}, lines("x"), "Attaching 2 probes...\nx\n", true},
		{"exact", "stderr", []string{"attaching"}, lines("x"), "Attaching 2 probes...\nx\n", false},
		{"exact", "stdout", []string{"trim"}, lines("x"), "\nx\n\n\n", true},
		{"exact", "stdout", nil, lines("~[0-9]+ ms", "{comm:x}"), "12 ms\na.b\n", true},
		{"exact", "stdout", nil, lines("~[0-9]+ ms"), "12 ms x\n", false},
		{"exact", "stdout", nil, lines("~{comm:x}"), "aXb\n", false},
		{"exact", "stdout", nil, lines("~{comm:x}"), "a.b\n", true},
		{"prefix", "stderr", nil, lines("ERROR: x"), "ERROR: x\nmore\n", true},
		{"prefix", "stderr", nil, lines("ERROR: x"), "ERROR: xy\n", false},
		{"prefix", "stdout", nil, lines("~(first)+ second"), "firstfirst second\n\n", true},
		{"contains", "stderr", nil, lines("b c"), "a b c d\n", true},
		{"contains", "stderr", nil, lines("b c", ""), "a b c d\n", false},
		{"lacks", "stderr", nil, lines("WARNING"), "ERROR: x\n", true},
		{"lacks", "stderr", nil, lines("ERROR"), "ERROR: x\n", false},
	} {
		msg := check(Expect{Stream: c.stream, Mode: c.mode, Lines: c.lines}, c.norm, sub, c.got)
		if (msg == "") != c.ok {
			t.Errorf("%d: %s %v on %q: ok %v, want %v (%s)", i, c.mode, c.lines, c.got, msg == "", c.ok, msg)
		}
	}
}

func TestDiff(t *testing.T) {
	got := diff("a\nb\nc\n", "a\nc\nd")
	want := "  a\n- b\n  c\n+ \"d\" (no newline)\n"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}
