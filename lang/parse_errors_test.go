package lang

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/chunked"
)

// Self-checking testdata: lang/testdata/parse/*.bt, read by
// internal/chunked (chunks separated by "---"; each expected diagnostic a
// `//! LINE:COL-END: message` line of its own, removed from the script).
// Parse must report exactly the expected diagnostics, in order. A script
// without expectations must parse.

type parseCase struct {
	file string
	line int // the file's line where the chunk starts
	src  string
	want []string
}

func loadParseCases(t testing.TB) []parseCase {
	files, err := filepath.Glob("testdata/parse/*.bt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/parse/*.bt files (%v)", err)
	}
	var cases []parseCase
	for _, f := range files {
		for _, ch := range chunked.Read(t, f) {
			c := parseCase{file: f, line: ch.Line, src: ch.Text}
			for _, w := range ch.Want {
				c.want = append(c.want, w.String())
			}
			cases = append(cases, c)
		}
	}
	return cases
}

func diagText(it Diagnostic) string {
	return fmt.Sprintf("%d:%d-%d: %s", it.Span.Start.Line, it.Span.Start.Col, it.Span.End.Col, it.Msg)
}

func TestParseTestdata(t *testing.T) {
	cases := loadParseCases(t)
	nerr := 0
	for _, c := range cases {
		_, err := Parse(&Source{Name: "stdin", Text: c.src})
		var got []string
		if err != nil {
			d, ok := err.(*Diagnostics)
			if !ok {
				t.Errorf("%s:%d: error is %T, not *Diagnostics: %v", c.file, c.line, err, err)
				continue
			}
			for _, it := range d.Items {
				got = append(got, diagText(it))
			}
		}
		if len(c.want) > 0 {
			nerr++
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:%d: script\n%s\ngot:\n  %s\nwant:\n  %s", c.file, c.line, c.src,
				strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
		}
	}
	if nerr < 100 {
		t.Errorf("only %d broken scripts in testdata/parse; want at least 100", nerr)
	}
	t.Logf("%d scripts, %d with expected errors", len(cases), nerr)
}
