package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Self-checking testdata: lang/testdata/parse/*.bt.
//
// A file is a list of scripts, each introduced by a line "---" (text before
// the first "---" is a free comment). Lines of the form
//
//	// ERROR: LINE:COL-ENDCOL: message
//
// are directives: they are removed from the script, and the remaining
// lines, joined by "\n" without a final newline, are the script. Parse
// must report exactly the directives' diagnostics, in order (positions
// refer to the script after removal; ENDCOL is exclusive, as bpftrace
// prints it). A script without directives must parse.

type parseCase struct {
	file string
	line int // line of the "---" in the file
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
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur *parseCase
		var body []string
		flush := func() {
			if cur != nil {
				cur.src = strings.Join(body, "\n")
				cases = append(cases, *cur)
			}
		}
		for i, line := range strings.Split(string(data), "\n") {
			if line == "---" {
				flush()
				cur = &parseCase{file: f, line: i + 1}
				body = nil
				continue
			}
			if cur == nil {
				continue
			}
			if msg, ok := strings.CutPrefix(line, "// ERROR: "); ok {
				cur.want = append(cur.want, msg)
				continue
			}
			body = append(body, line)
		}
		// The file's final newline is not part of the last script.
		if len(body) > 0 && body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
		flush()
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
