package gotrace

import (
	"testing"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// TestConfigStackMode: config's stack_mode is the mode of a stack builtin
// that names none, and a BPFTRACE_STACK_MODE variable overrides it.
func TestConfigStackMode(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want types.StackMode
	}{
		{nil, types.StackRaw},
		{map[string]string{"BPFTRACE_STACK_MODE": "perf"}, types.StackPerf},
	} {
		src := &lang.Source{Name: "stdin", Text: `config = { stack_mode = raw } BEGIN { @s = kstack(); @t = kstack(bpftrace); }`}
		out, err := Compile(src, Options{Env: c.env})
		if err != nil {
			t.Fatal(err)
		}
		stmts := out.Prog.Probes[0].Body.Stmts
		got := stmts[0].(*lang.AssignStmt).Rhs.Type().Stack.Mode
		named := stmts[1].(*lang.AssignStmt).Rhs.Type().Stack.Mode
		if got != c.want || named != types.StackBpftrace {
			t.Errorf("env %v: kstack() mode %v, kstack(bpftrace) %v; want %v, %v", c.env, got, named, c.want, types.StackBpftrace)
		}
		if out.Settings.Get("stack_mode") != map[bool]string{true: "raw", false: "perf"}[c.env == nil] {
			t.Errorf("stack_mode = %q", out.Settings.Get("stack_mode"))
		}
	}
}
