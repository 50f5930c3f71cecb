package lang

import "testing"

// TestStatementAttachPoints: bpftrace 0.26's uprobe:BIN@FILE:LINE[:COL]
// and the BIN:FILE.c:LINE spelling name a source statement; other uprobe
// forms keep their meaning.
func TestStatementAttachPoints(t *testing.T) {
	for _, c := range []struct {
		raw              string
		target, file, fn string
		line, col        int
		lang             string
	}{
		{raw: "uprobe:./bin/prog@prog.c:22", target: "./bin/prog", file: "prog.c", line: 22},
		{raw: "uprobe:/bin/bash@readline.c:362:5", target: "/bin/bash", file: "readline.c", line: 362, col: 5},
		{raw: "uprobe:prog@src/a.c:7", target: "prog", file: "src/a.c", line: 7},
		{raw: "uprobe:./prog:prog.c:41", target: "./prog", file: "prog.c", line: 41},
		{raw: "uprobe:./prog:cpp:foo", target: "./prog", lang: "cpp", fn: "foo"},
		{raw: "uprobe:./prog:main", target: "./prog", fn: "main"},
	} {
		ap, err := ParseAttachPoint(c.raw, Span{})
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if ap.Target != c.target || ap.SrcFile != c.file || ap.Line != c.line || ap.Col != c.col || ap.Func != c.fn || ap.Lang != c.lang {
			t.Errorf("%s: target %q file %q line %d col %d func %q lang %q", c.raw, ap.Target, ap.SrcFile, ap.Line, ap.Col, ap.Func, ap.Lang)
		}
	}
	for raw, want := range map[string]string{
		"uprobe:./prog@prog.c:x":   "invalid line number x in uprobe:./prog@prog.c:x",
		"uprobe:./prog@prog.c:3:0": "invalid column number 0 in uprobe:./prog@prog.c:3:0",
		"uprobe:./prog@:3":         "invalid source location in uprobe:./prog@:3 (expected BIN@FILE:LINE[:COL])",
	} {
		if _, err := ParseAttachPoint(raw, Span{}); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", raw, err, want)
		}
	}
}
