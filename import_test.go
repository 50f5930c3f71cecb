package gotrace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang"
)

// TestCompileImport: a script importing one that imports another checks
// and compiles; the checker's places in the imported scripts (operators,
// '=' of an assignment) are found in their own text, and its errors name
// the imported file.
func TestCompileImport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Offsets in lib.bt lie past the end of the short main script.
	write("lib.bt", "macro twice(x) { x * 2 }\n\n\n\nbegin { @m[1] = twice(3) + (1 - 1); printf(\"%d\\n\", 1 << 2); }\n")
	write("mid.bt", "import \"lib.bt\";\nbegin { @n = 1 + 2; }\n")
	write("bad.bt", "\n\nbegin { @x = 1 + \"s\"; }\n")
	main := filepath.Join(dir, "main.bt")
	out, err := Compile(&lang.Source{Name: main, Text: `import "mid.bt"; begin { }`}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Prog.Probes); n != 3 {
		t.Errorf("%d probes, want 3", n)
	}
	_, err = Compile(&lang.Source{Name: main, Text: `import "bad.bt"; begin { }`}, Options{})
	want := "bad.bt:3:14-21: ERROR: Type mismatch for '+': comparing 'int64' with 'string[2]'\nbegin { @x = 1 + \"s\"; }\n             ~~~~~~~"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	// --compat 0.17 refuses the import before reading it.
	_, err = Compile(&lang.Source{Name: main, Text: `import "bad.bt"; begin { }`}, Options{Compat: compat.V017})
	want = main + ":1:1-17: ERROR: import was added in bpftrace 0.25; --compat 0.17 follows bpftrace 0.17, which has no imports\nimport \"bad.bt\"; begin { }\n~~~~~~~~~~~~~~~~"
	if err == nil || err.Error() != want {
		t.Errorf("--compat 0.17: got\n%v\nwant\n%s", err, want)
	}
}
