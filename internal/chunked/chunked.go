// Package chunked reads gotrace's self-checking testdata, as starlark-go's
// chunkedfile does: one reader and one expectation syntax for the parser's
// and the checker's tests (and any other that takes scripts with expected
// diagnostics).
//
// A file is a list of scripts ("chunks") separated by lines holding only
// "---". A chunk announces the diagnostics it must produce with `//!`
// comments, in one of two places:
//
//	$x = 1 + "a"; //! 6-13: Type mismatch ... //hint: text
//
// at the end of a line: the diagnostic is on that line, from column COL to
// END (exclusive, as bpftrace prints it; `//! COL: msg` means one column),
// and an optional ` //hint: text` is its hint; or
//
//	//! 1:14-17: unterminated string
//
// on a line of its own, for scripts whose text a trailing comment would
// change (an unterminated string, the end of the input): the line is
// removed from the script and says the line too. Lines are numbered from 1
// within the chunk after such lines are removed. A chunk's text is its
// lines joined by "\n", without a final newline.
package chunked

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Want is one expected diagnostic.
type Want struct {
	Line, Col, End int
	Msg            string
	Hint           string
	HasHint        bool // the expectation gives a hint (else any hint matches)
}

// String is "LINE:COL-END: msg", the form the tests print.
func (w Want) String() string {
	return fmt.Sprintf("%d:%d-%d: %s", w.Line, w.Col, w.End, w.Msg)
}

// Chunk is one script of a file.
type Chunk struct {
	File string
	Line int // the file's line where the chunk starts
	Text string
	Want []Want
}

var (
	trailingRE = regexp.MustCompile(`^(\d+)(?:-(\d+))?: (.*?)(?: //hint: (.*))?$`)
	ownLineRE  = regexp.MustCompile(`^(\d+):(\d+)(?:-(\d+))?: (.*?)(?: //hint: (.*))?$`)
)

// Read reads path's chunks; a malformed expectation fails tb.
func Read(tb testing.TB, path string) []Chunk {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := Parse(path, string(data))
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

// Section is one chunk's raw text: its lines, and the file's line number
// of the first of them. Split is the one place that knows how a file is
// cut into chunks; Parse (diagnostics) and the runtime suite's case reader
// (tests/runtime) both read a file through it.
type Section struct {
	Line  int
	Lines []string
}

// Split cuts text into the sections between lines holding only "---".
func Split(text string) []Section {
	var out []Section
	cur := Section{Line: 1}
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l == "---" {
			out = append(out, cur)
			cur = Section{Line: i + 2}
			continue
		}
		cur.Lines = append(cur.Lines, l)
	}
	return append(out, cur)
}

var directiveRE = regexp.MustCompile(`^//! ([a-z][a-z0-9-]*)(?:: ?(.*))?$`)

// Directive reads a line of its own `//! key: value` (or `//! key`), the
// form the runtime suite's cases declare themselves in; ok is false when
// the line is not a `//!` line, err set when it is one but malformed.
func Directive(line string) (key, value string, ok bool, err error) {
	if !strings.HasPrefix(line, "//!") {
		return "", "", false, nil
	}
	m := directiveRE.FindStringSubmatch(line)
	if m == nil {
		return "", "", true, fmt.Errorf("bad directive %q (//! key: value)", line)
	}
	return m[1], strings.TrimSpace(m[2]), true, nil
}

// Parse splits text (the contents of file) into chunks.
func Parse(file, text string) ([]Chunk, error) {
	var out []Chunk
	for _, sec := range Split(text) {
		cur := Chunk{File: file, Line: sec.Line}
		var lines []string
		for k, l := range sec.Lines {
			n := sec.Line + k // the file's line
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "//! "); ok {
				m := ownLineRE.FindStringSubmatch(rest)
				if m == nil {
					return nil, fmt.Errorf("%s:%d: bad expectation %q (on a line of its own: //! LINE:COL-END: message)", file, n, l)
				}
				w := Want{Msg: strings.TrimSpace(m[4]), Hint: m[5], HasHint: m[5] != ""}
				fmt.Sscan(m[1], &w.Line)
				fmt.Sscan(m[2], &w.Col)
				w.End = w.Col + 1
				if m[3] != "" {
					fmt.Sscan(m[3], &w.End)
				}
				cur.Want = append(cur.Want, w)
				continue
			}
			lines = append(lines, l)
			for _, part := range strings.Split(l, "//! ")[1:] {
				m := trailingRE.FindStringSubmatch(part)
				if m == nil {
					return nil, fmt.Errorf("%s:%d: bad expectation %q (at the end of a line: //! COL-END: message)", file, n, part)
				}
				w := Want{Line: len(lines), Msg: strings.TrimSpace(m[3]), Hint: m[4], HasHint: m[4] != ""}
				fmt.Sscan(m[1], &w.Col)
				w.End = w.Col + 1
				if m[2] != "" {
					fmt.Sscan(m[2], &w.End)
				}
				cur.Want = append(cur.Want, w)
			}
		}
		cur.Text = strings.Join(lines, "\n")
		if strings.TrimSpace(cur.Text) != "" || len(cur.Want) > 0 {
			out = append(out, cur)
		}
	}
	return out, nil
}
