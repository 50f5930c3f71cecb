package stdlib

import (
	"sort"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

// Every probe type a builtin row names (Probes, NotProbes) is a kind of
// lang's table.
func TestRowProbesAreTableKinds(t *testing.T) {
	check := func(where string, kinds []lang.ProbeKind) {
		for _, k := range kinds {
			if k.String() == "" {
				t.Errorf("%s: %d is not a probe type of lang's table", where, k)
			}
		}
	}
	for _, b := range Rows() {
		check("builtin "+b.Name, b.Probes)
		check("builtin "+b.Name, b.NotProbes)
	}
	if len(Rows()) == 0 {
		t.Fatal("no builtin rows")
	}
}

// probetype prints bpftrace 0.26's name of each probe type.
func TestProbeTypeNames(t *testing.T) {
	for k, want := range map[lang.ProbeKind]string{lang.ProbeBegin: "special", lang.ProbeSelf: "special",
		lang.ProbeKfunc: "fentry", lang.ProbeKretfunc: "fexit", lang.ProbeKprobe: "kprobe", lang.ProbeTest: "test"} {
		if got := ProbeType(k); got != want {
			t.Errorf("ProbeType(%v) = %q, want %q", k, got, want)
		}
	}
}

// The context builtins' rows allow exactly the probe types whose row in
// lang's table says where the value comes from.
func TestRowsAgreeWithProbeTable(t *testing.T) {
	for name, has := range map[string]func(*lang.ProbeType) bool{
		"args":   func(p *lang.ProbeType) bool { return p.Args != lang.ArgsNone },
		"argN":   func(p *lang.ProbeType) bool { return p.ArgN != lang.ArgNNone },
		"retval": func(p *lang.ProbeType) bool { return p.Retval != lang.RetvalNone },
		"func":   func(p *lang.ProbeType) bool { return p.Func != lang.FuncNone },
	} {
		row, ok := Lookup(name)
		if !ok {
			t.Errorf("no %s row", name)
			continue
		}
		var want []string
		for _, k := range lang.ProbeKinds() {
			if has(k.Type()) {
				want = append(want, k.String())
			}
		}
		var got []string
		for _, k := range row.Probes {
			got = append(got, k.String())
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: the row allows %v, the probe table %v", name, got, want)
		}
	}
}
