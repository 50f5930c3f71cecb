package gotrace

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gotrace/gotrace"

// repoPackages parses the imports of every non-test Go file of the
// repository (third_party excepted): package directory → the repository's
// packages it imports. Files are also handed to visit.
func repoPackages(t *testing.T, visit func(dir string, fset *token.FileSet, f *ast.File)) map[string][]string {
	t.Helper()
	deps := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "third_party" || path == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if _, ok := deps[dir]; !ok {
			deps[dir] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == module {
				deps[dir] = append(deps[dir], ".")
			} else if rest, ok := strings.CutPrefix(p, module+"/"); ok {
				deps[dir] = append(deps[dir], rest)
			}
		}
		if visit != nil {
			visit(dir, fset, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return deps
}

// reach lists every repository package dir imports, directly or not.
func reach(deps map[string][]string, dir string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(d string) {
		for _, n := range deps[d] {
			if !seen[n] {
				seen[n] = true
				walk(n)
			}
		}
	}
	walk(dir)
	return seen
}

func under(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }

// TestForwardOnlyGraph: imports run one way, lang → check → compiler →
// runtime, all of them free to use ktypes; the kernel and binary readers
// (ktypes) and the builtins (stdlib) are below the compiler and runtime.
func TestForwardOnlyGraph(t *testing.T) {
	deps := repoPackages(t, nil)
	rules := []struct{ from, banned string }{
		{"lang", "compiler"}, {"lang", "runtime"},
		{"compiler", "runtime"},
		{"stdlib", "compiler"}, {"stdlib", "runtime"},
		{"ktypes", "lang/check"}, {"ktypes", "stdlib"}, {"ktypes", "compiler"}, {"ktypes", "runtime"},
	}
	var pkgs []string
	for d := range deps {
		pkgs = append(pkgs, d)
	}
	sort.Strings(pkgs)
	checked := 0
	for _, r := range rules {
		for _, p := range pkgs {
			if !under(p, r.from) {
				continue
			}
			checked++
			for n := range reach(deps, p) {
				if under(n, r.banned) {
					t.Errorf("%s imports %s (directly or through others): %s must not reach %s", p, n, r.from, r.banned)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d package checks: is the walk finding the packages? %v", checked, pkgs)
	}
}

// TestEnvironmentReadByCommandOnly: the environment is read in
// cmd/gotrace and handed down as options; no library reads it (the test
// kit and the bench command are programs of their own).
func TestEnvironmentReadByCommandOnly(t *testing.T) {
	repoPackages(t, func(dir string, fset *token.FileSet, f *ast.File) {
		if under(dir, "cmd") || under(dir, "bench") || under(dir, "internal/testkit") {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" {
				switch sel.Sel.Name {
				case "Getenv", "LookupEnv", "Environ", "Setenv", "ExpandEnv":
					t.Errorf("%s: os.%s outside cmd/: pass the value down as an option", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	})
	if _, err := os.Stat("cmd/gotrace/main.go"); err != nil {
		t.Fatal(err)
	}
}
