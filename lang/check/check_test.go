package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/internal/chunked"
	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// options reads "// opts: unsafe strlen=N params=a,b" from a chunk.
func options(text string) Options {
	o := Options{Resolver: fakeResolver{}}
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "// opts:")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			switch {
			case f == "unsafe":
				o.Unsafe = true
			case f == "compat=0.17":
				o.Compat = compat.V017
			case f == "noresolver":
				o.Resolver = nil
			case strings.HasPrefix(f, "strlen="):
				fmt.Sscanf(f, "strlen=%d", &o.StrLen)
			case f == "compat=0.17":
				o.Compat = compat.V017
			case strings.HasPrefix(f, "params="):
				o.Params = strings.Split(strings.TrimPrefix(f, "params="), ",")
			}
		}
	}
	return o
}

type diagKey struct {
	line, col, end int
	msg, hint      string
}

func (d diagKey) String() string {
	s := fmt.Sprintf("%d:%d-%d: %s", d.line, d.col, d.end, d.msg)
	if d.hint != "" {
		s += " (hint: " + d.hint + ")"
	}
	return s
}

// TestErrors runs testdata/errors/*.bt: every error the checker reports
// must be announced by a `//!` comment on its line, with its exact columns
// and text, and every announced error must be reported.
func TestErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.bt")
	if len(files) == 0 {
		t.Fatal("no testdata/errors/*.bt")
	}
	total := 0
	for _, f := range files {
		for _, ch := range chunked.Read(t, f) {
			total++
			ch.Text += "\n"
			var want []diagKey
			checkHints := map[int]bool{}
			for _, w := range ch.Want {
				want = append(want, diagKey{line: w.Line, col: w.Col, end: w.End, msg: w.Msg, hint: w.Hint})
				if w.HasHint {
					checkHints[len(want)-1] = true
				}
			}
			prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: ch.Text})
			if err != nil {
				t.Errorf("%s:%d: parse error: %v", f, ch.Line, err)
				continue
			}
			_, err = Check(prog, options(ch.Text))
			var got []diagKey
			var isErr []bool
			if err != nil {
				ds, ok := err.(*lang.Diagnostics)
				if !ok {
					t.Errorf("%s:%d: error is %T, not *lang.Diagnostics: %v", f, ch.Line, err, err)
					continue
				}
				for _, d := range ds.Items {
					end := d.Span.End.Col
					if d.Span.End.Line != d.Span.Start.Line || end <= d.Span.Start.Col {
						end = d.Span.Start.Col + 1
					}
					got = append(got, diagKey{line: d.Span.Start.Line, col: d.Span.Start.Col, end: end, msg: d.Msg, hint: d.Hint})
					isErr = append(isErr, d.Severity == lang.Error)
				}
			}
			if len(want) == 0 {
				t.Errorf("%s:%d: chunk announces no error", f, ch.Line)
			}
			for i := range want {
				if !checkHints[i] {
					want[i].hint = "*"
				}
			}
			match := func(w, g diagKey) bool {
				return w.line == g.line && w.col == g.col && w.end == g.end && w.msg == g.msg && (w.hint == "*" || w.hint == g.hint)
			}
			used := make([]bool, len(got))
			for _, w := range want {
				found := false
				for j, g := range got {
					if !used[j] && match(w, g) {
						used[j], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("%s:%d: missing error %v\ngot:\n%s", f, ch.Line+w.line-1, w, list(got))
				}
			}
			for j, g := range got {
				if !used[j] {
					t.Errorf("%s:%d: unexpected error %v", f, ch.Line+g.line-1, g)
				}
			}
			// bpftrace 0.17 puts its last walk's errors after the
			// warnings (compat.FinalPassDiagnostics): only the errors
			// are in order there.
			ordered := got
			if options(ch.Text).Compat.FinalPassDiagnostics() {
				ordered = nil
				for j, g := range got {
					if isErr[j] {
						ordered = append(ordered, g)
					}
				}
			}
			if err != nil && !sort.SliceIsSorted(ordered, func(a, b int) bool {
				return ordered[a].line < ordered[b].line || ordered[a].line == ordered[b].line && ordered[a].col < ordered[b].col
			}) {
				t.Errorf("%s:%d: errors not sorted by position", f, ch.Line)
			}
		}
	}
	t.Logf("%d error cases", total)
}

func list(ds []diagKey) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

// TestValid checks testdata/valid/*.bt (which must check cleanly) and
// compares their typed dumps with the .golden files (-update rewrites).
func TestValid(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.bt")
	if len(files) == 0 {
		t.Fatal("no testdata/valid/*.bt")
	}
	for _, f := range files {
		var b strings.Builder
		for _, ch := range chunked.Read(t, f) {
			ch.Text += "\n"
			prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: ch.Text})
			if err != nil {
				t.Errorf("%s:%d: parse error: %v", f, ch.Line, err)
				continue
			}
			res, err := Check(prog, options(ch.Text))
			if err != nil {
				t.Errorf("%s:%d: unexpected errors:\n%v", f, ch.Line, err)
				continue
			}
			fmt.Fprintf(&b, "=== %s", ch.Text)
			b.WriteString(Dump(res))
		}
		testkit.Golden(t, strings.TrimSuffix(f, ".bt")+".golden", []byte(b.String()))
	}
}

// FuzzCheck runs Parse+Check on arbitrary input: no panic, no hang.
func FuzzCheck(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.bt")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		for _, part := range strings.Split(string(data), "\n---\n") {
			f.Add(part)
		}
	}
	f.Add(`BEGIN { @x[1, "a"] = count(); print(@x); $t = (1, "b"); printf("%d %s\n", $t.0, $t.1); }`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: s})
		if err != nil || prog == nil {
			return
		}
		res, err := Check(prog, Options{Resolver: fakeResolver{}, Params: []string{"1", "x"}})
		if err != nil {
			if _, ok := err.(*lang.Diagnostics); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			_ = err.Error()
			return
		}
		_ = Dump(res)
	})
}

// declResolver is the fake resolver with C declaration errors.
type declResolver struct {
	fakeResolver
	errs []*ktypes.DeclError
}

func (r declResolver) CheckDecls() []*ktypes.DeclError { return r.errs }

func TestDeclErrorsReported(t *testing.T) {
	src := "struct a { int x; }\nstruct task_struct { struct thread_info x; }\nBEGIN { exit(); }\n"
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: src})
	if err != nil {
		t.Fatal(err)
	}
	msg := "definitions: error: field 'x' of struct task_struct has incomplete type 'struct thread_info'"
	_, err = Check(prog, Options{Resolver: declResolver{errs: []*ktypes.DeclError{
		{Name: "struct task_struct", Err: errors.New(msg)},
	}}})
	d, ok := err.(*lang.Diagnostics)
	if !ok || len(d.Items) != 1 {
		t.Fatalf("got %v, want one diagnostic", err)
	}
	if it := d.Items[0]; it.Msg != msg || it.Span.Start.Line != 2 {
		t.Errorf("diagnostic %q at line %d, want %q at line 2 (the declaration concerned)", it.Msg, it.Span.Start.Line, msg)
	}
	if _, err := Check(prog, Options{Resolver: declResolver{}}); err != nil {
		t.Errorf("no declaration errors: %v", err)
	}
}

// buf(p, n) holds n data bytes after its length byte (compiler/ABI.md).
func TestBufSize(t *testing.T) {
	for src, want := range map[string]int{
		`uprobe:/bin/sh:f { @b = buf(arg0, 4); }`:    5,
		`uprobe:/bin/sh:f { @b = buf(arg0, 1); }`:    2,
		`BEGIN { @b = buf("abc"); }`:                 5, // the literal's 4 bytes
		`uprobe:/bin/sh:f { @b = buf(arg0, arg1); }`: 65,
	} {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: src})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Check(prog, Options{Resolver: fakeResolver{}})
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := res.Maps[0].Value; got.Kind != types.Buffer || got.Size != want {
			t.Errorf("%s: @b is %v (size %d), want a buffer of size %d", src, got, got.Size, want)
		}
	}
}

// A map whose first assignment reads itself is an int64, as in bpftrace:
// `bpftrace -e 'BEGIN { @t = @t + 1; exit(); }'` prints "@t: 1".
func TestSelfReferencingMap(t *testing.T) {
	for _, src := range []string{
		`BEGIN { @t = @t + 1; exit(); }`,
		`interval:ms:50 { @t = @t + 1; if (@t > 2) { exit(); } }`,
	} {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: src})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Check(prog, Options{Resolver: fakeResolver{}})
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := res.Maps[0].Value; !types.Equal(got, types.S64) {
			t.Errorf("%s: @t is %v, want int64", src, got)
		}
	}
}
