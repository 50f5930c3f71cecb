package lang

import "testing"

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
