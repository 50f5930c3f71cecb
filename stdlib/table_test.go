package stdlib

import (
	"os"
	"strings"
	"testing"
)

// TestTableRows fails on a row missing its type rule, signature, doc or a
// consistent arity, and on builtins of SPEC.md's "Language" missing rows.
func TestTableRows(t *testing.T) {
	for name, b := range table() {
		if b.Name != name {
			t.Errorf("%s: row registered under %q", b.Name, name)
		}
		if b.Check == nil {
			t.Errorf("%s: no type rule (Check)", name)
		}
		if b.Sig == "" || b.Doc == "" {
			t.Errorf("%s: missing Sig or Doc", name)
		}
		if b.MaxArgs >= 0 && b.MaxArgs < b.MinArgs {
			t.Errorf("%s: MaxArgs %d < MinArgs %d", name, b.MaxArgs, b.MinArgs)
		}
		if b.Kind == Var && b.MinArgs != 0 {
			// bpftrace 0.26 calls a variable as pid() too; some take an
			// optional mode or task (pid(init), ppid(task)).
			t.Errorf("%s: a variable must be usable without arguments", name)
		}
	}
	spec := "pid tid uid gid nsecs elapsed cpu comm kstack ustack arg0 arg5 args retval func probe curtask rand cgroup " +
		"count sum avg min max stats hist lhist delete clear zero print len has_key " +
		"printf str buf join ksym usym kaddr uaddr reg ntop macaddr cgroupid strftime time cat system signal " +
		"sizeof offsetof strncmp strcontains override path percpu_kaddr exit kptr uptr username numaid cpid " +
		"bswap strerror cgroup_path sarg0"
	for _, n := range strings.Fields(spec) {
		if _, _, ok := Resolve(n); !ok {
			t.Errorf("builtin %s has no row", n)
		}
	}
	for _, n := range []string{"system", "signal", "override"} {
		if !table()[n].Unsafe {
			t.Errorf("%s must need --unsafe", n)
		}
	}
	if _, _, ok := Resolve("arg"); ok {
		t.Error(`Resolve("arg") must fail`)
	}
	if _, _, ok := Resolve("arg01"); ok {
		t.Error(`Resolve("arg01") must fail`)
	}
}

func TestParseFormat(t *testing.T) {
	vs := ParseFormat("%-5s|%5d|%x %% %lu %llx %rx %hhd %q %")
	var got []string
	for _, v := range vs {
		got = append(got, v.Text[1:])
	}
	want := "-5s 5d x lu llx rx hhd"
	if strings.Join(got, " ") != want {
		t.Errorf("ParseFormat: got %q, want %q", strings.Join(got, " "), want)
	}
}

// TestTokenFixture: lang's tests parse with the builtin tokens listed in
// lang/testdata/builtin-tokens.txt; they must be the rows flagged Token.
func TestTokenFixture(t *testing.T) {
	data, err := os.ReadFile("../lang/testdata/builtin-tokens.txt")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			listed = append(listed, l)
		}
	}
	var rows []string
	for _, b := range Rows() {
		if b.Has(Token) {
			rows = append(rows, b.Name)
		}
	}
	if strings.Join(listed, " ") != strings.Join(rows, " ") {
		t.Errorf("lang/testdata/builtin-tokens.txt lists\n  %s\nthe rows flagged Token are\n  %s", strings.Join(listed, " "), strings.Join(rows, " "))
	}
	for w, want := range map[string]bool{"pid": true, "arg0": true, "arg01": true, "sarg12": true, "arg": false, "args": true,
		"probetype": false, "dw_ustack": false, "printf": false, "__builtin_pid": false, "argx": false} {
		if got := IsToken(w); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", w, got, want)
		}
	}
}
