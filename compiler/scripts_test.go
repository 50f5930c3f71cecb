package compiler

import (
	"github.com/gotrace/gotrace/compat"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
)

// compileScript parses, checks and compiles a script (bpftrace 0.26
// semantics, the default).
func compileScript(t *testing.T, name, text string, params ...string) *Spec {
	t.Helper()
	return compileScriptAs(t, compat.Default, name, text, params...)
}

// compileScriptAs is compileScript following bpftrace release v.
func compileScriptAs(t *testing.T, v compat.Version, name, text string, params ...string) *Spec {
	t.Helper()
	prog, err := lang.Parse(&lang.Source{Name: name, Text: text})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	opts := check.Options{Params: params, Compat: v}
	if r, err := newResolver(); err == nil {
		opts.Resolver = r
	}
	res, err := check.Check(prog, opts)
	if err != nil {
		t.Fatalf("check %s: %v", name, err)
	}
	spec, err := Compile(res, Options{})
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return spec
}

// TestScripts compiles every testdata/scripts/*.bt, compares the dump with
// its .dump golden file (-update rewrites them) and loads the
// programs into the kernel's verifier.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/scripts/*.bt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			spec := compileScript(t, "stdin", string(text), "42", "hello")
			testkit.Golden(t, strings.TrimSuffix(f, ".bt")+".dump", []byte(spec.Dump()))
			load(t, spec)
		})
	}
}

func newResolver() (ktypes.Resolver, error) { return ktypes.New(ktypes.Options{}), nil }
