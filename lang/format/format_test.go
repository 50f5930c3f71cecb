package format

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/chunked"
	"github.com/gotrace/gotrace/internal/gen"
	"github.com/gotrace/gotrace/lang"
)

// fmtSep separates a chunk's input from the formatted output it expects.
const fmtSep = "=== fmt"

// TestFormatGolden formats the inputs of testdata/*.txt: each chunk is a
// script, a line "=== fmt" and what --fmt prints for it (without its final
// newline).
func TestFormatGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	n := 0
	for _, f := range files {
		for _, c := range chunked.Read(t, f) {
			in, want, ok := strings.Cut(c.Text, "\n"+fmtSep+"\n")
			if !ok {
				t.Fatalf("%s:%d: no %q line", c.File, c.Line, fmtSep)
			}
			got, err := Source(&lang.Source{Name: "stdin", Text: in})
			if err != nil {
				t.Errorf("%s:%d: %v", c.File, c.Line, err)
				continue
			}
			if got != want+"\n" {
				t.Errorf("%s:%d: formatting\n%s\ngot:\n%s\nwant:\n%s\n", c.File, c.Line, in, got, want)
			}
			n++
		}
	}
	t.Logf("%d golden cases", n)
}

// check asserts fmt's properties for one script that parses: formatting
// it again changes nothing, the formatted script parses, and when the
// script also passes Parse (macros expanded ...) the formatted one gives
// the same tree.
func check(t *testing.T, name, text string) {
	t.Helper()
	src := &lang.Source{Name: "stdin", Text: text}
	if lang.ParseSyntax(src) != nil {
		return // only scripts that parse are formatted
	}
	out, err := Source(src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := lang.ParseSyntax(&lang.Source{Name: "stdin", Text: out}); err != nil {
		t.Fatalf("%s: the formatted script does not parse: %v\ninput:\n%s\nformatted:\n%s", name, err, text, out)
	}
	again, err := Source(&lang.Source{Name: "stdin", Text: out})
	if err != nil || again != out {
		t.Fatalf("%s: not idempotent\nonce:\n%s\ntwice:\n%s", name, out, again)
	}
	prog, err := lang.Parse(src)
	if err != nil {
		return
	}
	prog2, err := lang.Parse(&lang.Source{Name: "stdin", Text: out})
	if err != nil {
		t.Fatalf("%s: the formatted script does not parse: %v\n%s", name, err, out)
	}
	if a, b := lang.Dump(prog), lang.Dump(prog2); a != b {
		t.Fatalf("%s: formatting changed the tree\ninput:\n%s\nformatted:\n%s\ntree before:\n%s\nafter:\n%s", name, text, out, a, b)
	}
}

func TestFormatGenerated(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 100
	}
	for seed := int64(1); seed <= int64(n); seed++ {
		check(t, fmt.Sprintf("gen seed %d", seed), gen.Script(seed, gen.DefaultConfig).String())
	}
}

// TestFormatRepoScripts formats every script of the repository's examples
// and testdata (each chunk of a chunked file on its own).
func TestFormatRepoScripts(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../examples/*", "../../examples/*/*", "../testdata/parse/*", "../check/testdata/*/*", "../../compiler/testdata/scripts/*.bt", "../../internal/gen/testdata/corpus/*.bt", "../../tests/*/*.bt"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".bt") && !strings.HasSuffix(f, ".gt") && !strings.HasSuffix(f, ".txt") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for i, chunk := range strings.Split(string(b), "\n---\n") {
			check(t, fmt.Sprintf("%s chunk %d", f, i), chunk)
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d scripts found", n)
	}
	t.Logf("%d scripts", n)
}

func FuzzFormat(f *testing.F) {
	f.Add("kprobe:f /pid > 1/ { @[comm] = count(); }")
	f.Add("BEGIN { if ($x) { printf(\"a\\n\"); } else { $y = -1; } } // c\nEND { exit(); }")
	f.Add("#include <x.h>\nstruct s { int a; };\nt:a:b { $p = (struct s *)arg0; @ = hist($p->a * 2); }")
	for seed := int64(1); seed < 20; seed++ {
		f.Add(gen.Script(seed, gen.DefaultConfig).String())
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		check(t, "fuzz", text)
	})
}
