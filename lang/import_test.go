package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles creates files (path: text) under a new private directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func parseFile(t *testing.T, path string, opts ParseOptions) (*Program, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.Imports = true
	return ParseWith(&Source{Name: path, Text: string(b)}, opts)
}

// probeOrder is each clause's first printf format, in program order.
func probeOrder(p *Program) string {
	var out []string
	for _, pr := range p.Probes {
		s := "?"
		Inspect(pr, func(n Node) bool {
			if c, ok := n.(*CallExpr); ok && c.Name == "printf" && s == "?" {
				if l, ok := c.Args[0].(*StrLit); ok {
					s = l.Value
				}
			}
			return true
		})
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestImportMergesScript(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"lib.bt": `struct S { int x; }
macro twice(x) { x * 2 }
let @m = lruhash(10);
begin { printf("lib1"); }
begin { printf("lib2"); }
end { printf("libend"); }
`,
		"main.bt": `import "lib.bt";
import "lib.bt";
begin { printf("main"); $x = twice(21); }
end { printf("mainend"); }
`,
	})
	p, err := parseFile(t, filepath.Join(dir, "main.bt"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// bpftrace's order: the imported probes reversed, before the script's.
	if got, want := probeOrder(p), "libend lib2 lib1 main mainend"; got != want {
		t.Errorf("probes %q, want %q", got, want)
	}
	if len(p.MapDecls) != 1 || p.MapDecls[0].Map != "@m" || p.MapDecls[0].Kind != "lruhash" {
		t.Errorf("map declarations %+v, want lib.bt's @m", p.MapDecls)
	}
	if len(p.Decls) != 1 || p.Decls[0].Name != "S" {
		t.Errorf("C declarations %+v, want lib.bt's struct S", p.Decls)
	}
	// The imported macro expanded in the script's probe.
	var sawMul bool
	Inspect(p.Probes[3], func(n Node) bool {
		if b, ok := n.(*BinaryExpr); ok && b.Op == "*" {
			sawMul = true
		}
		if c, ok := n.(*CallExpr); ok && c.Name == "twice" {
			t.Errorf("twice() not expanded")
		}
		return true
	})
	if !sawMul {
		t.Errorf("twice(21) did not expand to x * 2")
	}
	// Without Imports, the import is only recorded.
	b, _ := os.ReadFile(filepath.Join(dir, "main.bt"))
	p2, err := Parse(&Source{Name: filepath.Join(dir, "main.bt"), Text: string(b)})
	if err != nil || len(p2.Probes) != 2 || len(p2.Imports) != 2 {
		t.Errorf("Parse without imports: %v, %d probes, %d imports", err, len(p2.Probes), len(p2.Imports))
	}
}

func TestImportOrderAndNesting(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.bt":         "import \"b.bt\";\nbegin { printf(\"a\"); }\n",
		"b.bt":         "import \"a.bt\";\nbegin { printf(\"b\"); }\n", // a cycle
		"lib/x.bt":     "begin { printf(\"x\"); }\n",
		"lib/y.bt":     "begin { printf(\"y\"); }\n",
		"lib/z.txt":    "not a script",
		"lib/sub/w.bt": "begin { printf(\"w\"); }\n", // subdirectories are not imported
		"main.bt":      "import \"a.bt\"; import \"lib\";\nbegin { printf(\"main\"); }\n",
	})
	p, err := parseFile(t, filepath.Join(dir, "main.bt"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Scripts a.bt, b.bt, lib/x.bt, lib/y.bt merged in name order.
	if got, want := probeOrder(p), "y x b a main"; got != want {
		t.Errorf("probes %q, want %q", got, want)
	}
}

func TestImportSearchPaths(t *testing.T) {
	lib := writeFiles(t, map[string]string{"util.bt": "begin { printf(\"util\"); }\n"})
	dir := writeFiles(t, map[string]string{"main.bt": "import \"util.bt\";\nbegin { printf(\"main\"); }\n"})
	p, err := parseFile(t, filepath.Join(dir, "main.bt"), ParseOptions{ImportPaths: []string{lib}})
	if err != nil {
		t.Fatal(err)
	}
	if got := probeOrder(p); got != "util main" {
		t.Errorf("probes %q", got)
	}
	_, err = parseFile(t, filepath.Join(dir, "main.bt"), ParseOptions{})
	want := dir + "/main.bt:1:1-18: ERROR: Unable to find suitable path for import\n" +
		"import \"util.bt\";\n~~~~~~~~~~~~~~~~~\nHINT: checked: " + dir + "/util.bt"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// TestImportErrors: the diagnostics, in bpftrace's form, naming the
// imported file where they are in it.
func TestImportErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"bad.bt":   "begin {\n  @x = 1 +;\n}\n",
		"cfg.bt":   "config = { max_strlen = 10 }\nbegin { }\n",
		"dup.bt":   "macro m() { 1 }\nlet @a = hash(2);\n",
		"x.h":      "struct s { int a; };",
		"p.bpf.c":  "int x;",
		"o.bpf.o":  "",
		"note.txt": "",
		"empty.bt": "config = { }\nbegin { }\n",
	})
	cases := []struct{ script, want string }{
		{`import "bad.bt"; begin { }`, "bad.bt:2:10-12: ERROR: syntax error, unexpected ;\n  @x = 1 +;\n         ~~"},
		{`import "cfg.bt"; begin { }`, "cfg.bt:1:1-29: ERROR: invalid `config` within import\nconfig = { max_strlen = 10 }\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~"},
		{"macro m() { 2 }\nlet @a = hash(3);\nimport \"dup.bt\"; begin { @a[1] = m; }",
			"dup.bt:1:1-16: ERROR: Redefinition of macro: m\nmacro m() { 1 }\n~~~~~~~~~~~~~~~\n" +
				"dup.bt:2:1-18: ERROR: Map @a is already declared\nlet @a = hash(2);\n~~~~~~~~~~~~~~~~~"},
		{`import "x.h"; begin { }`, "SCRIPT:1:1-14: ERROR: cannot import \"x.h\": a C header (.h) is compiled with clang, which gotrace does not have\nimport \"x.h\"; begin { }\n~~~~~~~~~~~~~"},
		{`import "p.bpf.c"; begin { }`, "SCRIPT:1:1-18: ERROR: cannot import \"p.bpf.c\": a C source (.bpf.c) is compiled with clang, which gotrace does not have\nimport \"p.bpf.c\"; begin { }\n~~~~~~~~~~~~~~~~~"},
		{`import "o.bpf.o"; begin { }`, "SCRIPT:1:1-18: ERROR: cannot import \"o.bpf.o\": gotrace does not link BPF objects (.bpf.o)\nimport \"o.bpf.o\"; begin { }\n~~~~~~~~~~~~~~~~~"},
		{`import "note.txt"; begin { }`, "SCRIPT:1:1-19: ERROR: unknown import type: \"note.txt\"\nimport \"note.txt\"; begin { }\n~~~~~~~~~~~~~~~~~~"},
	}
	script := filepath.Join(dir, "main.bt")
	for _, c := range cases {
		_, err := ParseWith(&Source{Name: script, Text: c.script}, ParseOptions{Imports: true})
		want := strings.ReplaceAll(c.want, "SCRIPT", script)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\ngot\n%v\nwant\n%s", c.script, err, want)
		}
	}
	// An empty config block is allowed in an import.
	if p, err := ParseWith(&Source{Name: script, Text: `import "empty.bt"; begin { }`}, ParseOptions{Imports: true}); err != nil || len(p.Probes) != 2 {
		t.Errorf("import of an empty config: %v", err)
	}
	// "stdlib", imported by every bpftrace script, adds nothing.
	if _, err := ParseWith(&Source{Name: script, Text: `import "stdlib"; begin { }`}, ParseOptions{Imports: true}); err != nil {
		t.Errorf("import \"stdlib\": %v", err)
	}
}

// TestImportPermissions: bpftrace skips (with a warning) what others may
// write while searching, and refuses it inside an imported directory.
func TestImportPermissions(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a/lib/foo.bt": "begin { }\n",
		"b/lib/foo.bt": "begin { }\n",
	})
	if err := os.Chmod(filepath.Join(dir, "a/lib"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "b/lib/foo.bt"), 0o666); err != nil {
		t.Fatal(err)
	}
	src := &Source{Name: "stdin", Text: `import "lib"; begin { }`}
	_, err := ParseWith(src, ParseOptions{Imports: true, ImportPaths: []string{filepath.Join(dir, "a")}})
	want := "stdin:1:1-14: WARNING: skipping due to global write permissions: \"" + dir + "/a/lib\"\nimport \"lib\"; begin { }\n~~~~~~~~~~~~~\n" +
		"stdin:1:1-14: ERROR: Unable to find suitable path for import\nimport \"lib\"; begin { }\n~~~~~~~~~~~~~\nHINT: checked: lib," + dir + "/a/lib"
	if err == nil || err.Error() != want {
		t.Errorf("world-writable directory: got\n%v\nwant\n%s", err, want)
	}
	_, err = ParseWith(src, ParseOptions{Imports: true, ImportPaths: []string{filepath.Join(dir, "b")}})
	want = "stdin:1:1-14: ERROR: cowardly refusing to import from a directory with global write permissions: \"" + dir + "/b/lib/foo.bt\"\nimport \"lib\"; begin { }\n~~~~~~~~~~~~~"
	if err == nil || err.Error() != want {
		t.Errorf("world-writable file in a directory: got\n%v\nwant\n%s", err, want)
	}
}

func TestNamedProbes(t *testing.T) {
	p, err := Parse(&Source{Name: "stdin", Text: `foo=begin, bar_2=kprobe:vfs_read+4 /1/ { } tracepoint:a:b { }`})
	if err != nil {
		t.Fatal(err)
	}
	aps := p.Probes[0].Attach
	if len(aps) != 2 || aps[0].Name != "foo" || aps[0].Provider != ProbeBegin || aps[0].Raw != "begin" ||
		aps[1].Name != "bar_2" || aps[1].Provider != ProbeKprobe || aps[1].Func != "vfs_read" || aps[1].Offset != 4 {
		t.Errorf("attach points %+v %+v", *aps[0], *aps[1])
	}
	if n := p.Probes[1].Attach[0].Name; n != "" {
		t.Errorf("unnamed probe has name %q", n)
	}
	if got := Dump(p); !strings.Contains(got, "probe foo=begin, bar_2=kprobe:vfs_read+4\n") {
		t.Errorf("dump:\n%s", got)
	}
}
