package lang

import (
	"fmt"
	"strings"
	"testing"
)

// TestDiagnosticTabs: tabs of an echoed source line show as 4 spaces, and
// the marker counts each as 4 columns, as bpftrace prints them (columns
// in the position still count a tab as one).
func TestDiagnosticTabs(t *testing.T) {
	for _, tc := range []struct {
		src        string
		line, a, b int
		want       string
	}{
		{"BEGIN {\n\t@x = foo(1);\n}\n", 2, 7, 10,
			"f.bt:2:7-10: ERROR: Unknown function: foo\n    @x = foo(1);\n         ~~~"},
		{"BEGIN {\n\t\tif (1) { @x =\tfoo(1); }\n}\n", 2, 17, 20,
			"f.bt:2:17-20: ERROR: Unknown function: foo\n        if (1) { @x =    foo(1); }\n                         ~~~"},
		// A tab inside the marked place: 4 markers.
		{"a\tb", 1, 1, 4, "f.bt:1:1-4: ERROR: Unknown function: foo\na    b\n~~~~~~"},
	} {
		src := &Source{Name: "f.bt", Text: tc.src}
		sp := Span{Start: Pos{Line: tc.line, Col: tc.a, Offset: 1}, End: Pos{Line: tc.line, Col: tc.b, Offset: 1 + tc.b - tc.a}}
		d := &Diagnostics{Src: src}
		d.Errorf(sp, "Unknown function: foo")
		if got := d.Error(); got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// TestDiagnosticLongLine: of a very long source line (a generated
// one-line script) a diagnostic echoes a window around the marker, 60
// bytes before it and 160 in all, with "..." for what it cuts off, and a
// marker line as long; a normal line is echoed whole (TestDiagnosticTabs).
func TestDiagnosticLongLine(t *testing.T) {
	big := strings.Repeat("@x = 1; ", 110000) // 880 KB
	small := strings.Repeat("@x = 1; ", 600)  // 4.8 KB, past maxEchoLine
	for _, tc := range []struct {
		name, src string
		col       int // of the error (the ';' after "@y = ")
		lo, hi    int // the window, as byte offsets of src
	}{
		{"middle", "BEGIN { " + big[:len(big)/2] + "@y = ; " + big[len(big)/2:] + "}",
			440014, 440013 - 60, 440013 + 100},
		{"start", "BEGIN { @y = ; " + small + "}", 14, 0, 160},
		{"end", "BEGIN { " + small + "@y = ; }", 4814, 4816 - 160, 4816},
	} {
		_, err := Parse(&Source{Name: "stdin", Text: tc.src})
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		line := tc.src[tc.lo:tc.hi]
		pad := tc.col - 1 - tc.lo
		if tc.lo > 0 {
			line, pad = "..."+line, pad+3
		}
		if tc.hi < len(tc.src) {
			line += "..."
		}
		want := fmt.Sprintf("stdin:1:%d-%d: ERROR: syntax error, unexpected ;\n%s\n%s~", tc.col, tc.col+1, line, strings.Repeat(" ", pad))
		if got := err.Error(); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, want)
		}
	}
}

// TestDiagnosticLongLineCut: the window of a long line is cut between
// whole UTF-8 characters, and anywhere in text that is not UTF-8.
func TestDiagnosticLongLineCut(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		col        int // 1-based, of the marker
		want       string
	}{
		// "é" is 2 bytes: the window's start (byte 39) and end (199)
		// fall inside one, and move to bytes 40 and 198.
		{"utf8", strings.Repeat("é", 2100), 100, "..." + strings.Repeat("é", 79) + "..."},
		// No character starts: the ends move by 3 bytes at most.
		{"not utf8", strings.Repeat("\xa7", 4200), 100, "..." + strings.Repeat("\xa7", 154) + "..."},
	} {
		d := &Diagnostics{Src: &Source{Name: "f.bt", Text: tc.line}}
		d.Errorf(Span{Start: Pos{Line: 1, Col: tc.col, Offset: tc.col - 1}, End: Pos{Line: 1, Col: tc.col + 1, Offset: tc.col}}, "x")
		got := strings.Split(d.Error(), "\n")
		if len(got) != 3 || got[1] != tc.want {
			t.Errorf("%s: got %q, want the line %q", tc.name, got, tc.want)
		}
	}
}
