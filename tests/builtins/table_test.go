package builtins_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
	"github.com/gotrace/gotrace/stdlib"
	rtsuite "github.com/gotrace/gotrace/tests/runtime"
)

// uses returns the table rows a parsed program uses, each with the nodes
// (typed once checked) that use it.
func uses(prog *lang.Program) map[string][]lang.Expr {
	out := map[string][]lang.Expr{}
	add := func(name string, e lang.Expr) {
		if b, _, ok := stdlib.Resolve(name); ok {
			out[b.Name] = append(out[b.Name], e)
		}
	}
	lang.Inspect(prog, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.CallExpr:
			add(n.Name, n)
		case *lang.BuiltinExpr:
			add(n.Name, n)
		case *lang.IdentExpr:
			// Builtin variables the lexer does not list (bpftrace 0.26's
			// pcomm, probetype) are identifiers the checker resolves.
			if b, _, ok := stdlib.Resolve(n.Name); ok && b.Kind == stdlib.Var {
				add(n.Name, n)
			}
		case *lang.SizeofExpr:
			add("sizeof", n)
		case *lang.OffsetofExpr:
			add("offsetof", n)
		}
		return true
	})
	return out
}

// printable reports whether values of t are printed as values (not
// aggregations, which print as maps, nor none).
func printable(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case types.Invalid, types.None, types.Count, types.Sum, types.Min, types.Max, types.Avg,
		types.Stats, types.Hist, types.Lhist, types.Tseries:
		return false
	}
	return true
}

// testFuncs are the Test functions of this package's files, so a script
// is registered for a test that exists.
var testFuncs = func() map[string]bool {
	out := map[string]bool{}
	files, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			continue
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				out[fd.Name.Name] = true
			}
		}
	}
	return out
}()

// TestTableCovered walks stdlib.Rows(): every row needs a type rule, code
// generation or a documented reason not to have it, a printer for the
// values it gives (decoded and printed by runtime/output), and a script
// that uses it: one registered by a test here (the test must exist) or a
// case of the runtime suite, testdata/runtime (the script must check
// unless the row cannot run on this machine).
func TestTableCovered(t *testing.T) {
	if len(scripts) == 0 {
		t.Fatal("no scripts registered")
	}
	all := append([]script{}, scripts...)
	for _, c := range rtsuite.All(t) {
		// Placeholders filled with values that check (the runtime fills
		// them from the run).
		text := rtsuite.Fill(c.Program, func(kind, arg string) string {
			switch kind {
			case "helper":
				return testkit.Helper(t, arg)
			case "comm", "testcomm":
				return "x"
			}
			return "1"
		})
		all = append(all, script{test: fmt.Sprintf("%s:%d (%s)", c.File, c.Line, c.Name), text: text, runtime: true})
	}
	covered := map[string][]string{} // row -> tests
	formatted := map[string]bool{}
	p := output.New(io.Discard, 0, fakeSyms{})
	p.ProbeNames = []string{"tracepoint:a:b"}
	p.TimeFormats[0] = "%H:%M:%S"
	// The placeholders tests fill in at run time, with values that check.
	fill := strings.NewReplacer("PID", "1", "BIN", testkit.Helper(t, "ufunc"), "NCPU", "2", "CGDIR", "/",
		"KADDR", "0", "OFFPID", "0", "COMM", "x", "CATFILE", "/etc/hostname")
	for _, s := range all {
		text := s.text
		if !s.runtime {
			text = fill.Replace(text)
		}
		prog, err := lang.Parse(&lang.Source{Name: s.test, Text: text})
		if err != nil && s.runtime {
			// An error case: the runtime suite asserts its message.
			t.Logf("%s: script does not parse (an error case?): %v", s.test, err)
			continue
		}
		if err != nil {
			t.Errorf("%s: script does not parse: %v\n%s", s.test, err, s.text)
			continue
		}
		if !s.runtime && !testFuncs[s.test] {
			t.Errorf("script registered for %s, which is not a test function of this package", s.test)
			continue
		}
		u := uses(prog)
		_, err = check.Check(prog, check.Options{Unsafe: true, Resolver: ktypes.New(ktypes.Options{})})
		for name := range u {
			// A script that does not check covers only the rows this
			// machine cannot run (their tests assert the precise error).
			if err == nil || unsupportedHere[name] != "" {
				covered[name] = append(covered[name], s.test)
			}
		}
		if err != nil {
			t.Logf("%s: script does not check (an error test?): %v", s.test, err)
			continue
		}
		for name, es := range u {
			for _, e := range es {
				typ := e.Type()
				if !printable(typ) {
					continue
				}
				v, err := output.Decode(typ, make([]byte, typ.Size+64))
				if err != nil {
					t.Errorf("%s: %s gives %s, which output cannot decode: %v", s.test, name, stdlib.TypeName(typ), err)
					continue
				}
				// Zero bytes with the run-time context the fake symbolizer and
				// the printer's tables give: every printable value then has
				// text, so "" means output has no printer for the type.
				switch typ.Kind {
				case types.String, types.Buffer:
					v.Bytes = []byte("s") // zero bytes are the empty string
				case types.Inet:
					v.Bits = 2 // AF_INET
				}
				if p.Text(v) == "" {
					t.Errorf("%s: %s gives %s, which output prints as nothing (no printer for %v?)", s.test, name, stdlib.TypeName(typ), typ.Kind)
					continue
				}
				formatted[name] = true
			}
		}
	}
	var names []string
	for _, b := range stdlib.Rows() {
		name := b.Name
		names = append(names, name)
		if b.Check == nil {
			t.Errorf("%s: no type rule", name)
		}
		if b.Gen == nil && b.Folded == "" {
			t.Errorf("%s: no code generation and no documented reason (Builtin.Folded)", name)
		}
		if len(covered[name]) == 0 {
			t.Errorf("%s: no test in tests/builtins or case in testdata/runtime runs it", name)
		}
		if (b.Kind == stdlib.Var || b.Kind == stdlib.Func) && !formatted[name] && !valueless[name] && unsupportedHere[name] == "" {
			t.Errorf("%s: no checked script prints a value of it (output formatting untested)", name)
		}
	}
	t.Logf("%d rows covered by %d scripts (%d of them runtime cases)", len(names), len(all), len(all)-len(scripts))
}

// unsupportedHere are rows this machine cannot run (their tests assert the
// precise error instead; runtime/vmtest's guest TestBuiltins runs them with
// exact output in a VM whose kernel has what they need).
var unsupportedHere = map[string]string{
	"path":         "needs kfunc/iter probes; fentry loads are refused here",
	"write_user":   "the kernel is locked down (from its configuration), which takes bpf_probe_write_user from tracing programs",
	"percpu_kaddr": "the verifier resolves per-CPU variables through kallsyms, which has no data symbols here (no CONFIG_KALLSYMS_ALL)",
}

// valueless are the functions that give no value (they act or print).
var valueless = map[string]bool{}

func init() {
	for _, n := range strings.Fields("printf system cat time exit join signal override signal_thread errorf warnf debugf assert") {
		valueless[n] = true
	}
}

// fakeSyms answers the printer's questions about the live system with
// fixed text, so that every value type has something to print.
type fakeSyms struct{}

func (fakeSyms) KernelSym(addr uint64) string        { return "ksym" }
func (fakeSyms) UserSym(pid int, addr uint64) string { return "usym" }
func (fakeSyms) Username(uid uint64) string          { return "user" }
func (fakeSyms) CgroupPath(id uint64) string         { return "/cg" }
func (fakeSyms) Stack(info types.StackInfo, id int64, pid int) ([]output.Frame, error) {
	return []output.Frame{{Addr: 1, Sym: "f"}}, nil
}
func (fakeSyms) DwarfStack(pid int, regs []byte) ([]output.Frame, error) {
	return []output.Frame{{Addr: 1, Sym: "f"}}, nil
}
