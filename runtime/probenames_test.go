package runtime

import (
	"io"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/runtime/output"
)

// TestNameProbes: the probe table keeps the compiler's entries, renames a
// uprobe constant to its resolved path, appends each wildcard expansion's
// name once (reusing an equal entry) and gives each probe the index of its
// name as cookie; a second expansion changes nothing.
func TestNameProbes(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	spec := &compiler.Spec{Probes: []string{"tracepoint:syscalls:sys_enter_openat", "uprobe:libc:strtol", "interval:s:1"}}
	tp := &compiler.Program{Name: "c0_tp", Probe: compiler.ProbeConst, ProbeID: 0}
	up := &compiler.Program{Name: "c1_up", Probe: compiler.ProbeConst, ProbeID: 1}
	wild := &compiler.Program{Name: "c2_tp", Probe: compiler.ProbeCookie}
	uwild := &compiler.Program{Name: "c3_up", Probe: compiler.ProbeCookie}
	unused := &compiler.Program{Name: "c4_tp"}
	probes := func(names ...string) []*Probe {
		var out []*Probe
		for _, n := range names {
			out = append(out, &Probe{Name: n})
		}
		return out
	}
	ap := func(provider string) *lang.AttachPoint {
		return &lang.AttachPoint{Provider: lang.ProbeKindNamed(provider)}
	}
	pl := &plan{groups: []probeGroup{
		{ap: ap("tracepoint"), prog: tp, probes: probes("tracepoint:syscalls:sys_enter_openat")},
		{ap: ap("uprobe"), prog: up, probes: probes("uprobe:" + libc + ":strtol")},
		{ap: ap("tracepoint"), prog: wild, probes: probes("tracepoint:syscalls:sys_enter_open", "tracepoint:syscalls:sys_enter_openat", "tracepoint:syscalls:sys_enter_open_by_handle_at")},
		{ap: ap("uprobe"), prog: uwild, probes: probes("uprobe:"+libc+":strtol", "uprobe:"+libc+":strtoul")},
		{ap: ap("tracepoint"), prog: unused, probes: probes("tracepoint:syscalls:sys_enter_read")},
	}}
	l := &Loaded{Spec: spec}
	want := []string{
		"tracepoint:syscalls:sys_enter_openat",
		"uprobe:" + libc + ":strtol",
		"interval:s:1",
		"tracepoint:syscalls:sys_enter_open",
		"tracepoint:syscalls:sys_enter_open_by_handle_at",
		"uprobe:" + libc + ":strtoul",
	}
	cookies := func() []uint64 {
		var out []uint64
		for _, g := range pl.groups {
			for _, p := range g.probes {
				out = append(out, p.Cookie)
			}
		}
		return out
	}
	wantCookies := []uint64{0, 0, 3, 0, 4, 1, 5, 0}
	for round := 1; round <= 2; round++ {
		l.nameProbes(pl)
		if got := strings.Join(spec.Probes, "\n"); got != strings.Join(want, "\n") {
			t.Errorf("round %d: probe table\n%s\nwant\n%s", round, got, strings.Join(want, "\n"))
		}
		if got := cookies(); !equalU64(got, wantCookies) {
			t.Errorf("round %d: cookies %v, want %v", round, got, wantCookies)
		}
	}

	// The printer reads the table from the Spec when it prints.
	tp2 := &TextPrinter{P: output.New(io.Discard, output.Text, nil), Spec: spec}
	tp2.syncProbeNames()
	if len(tp2.P.ProbeNames) != len(want) || tp2.P.ProbeNames[5] != want[5] {
		t.Errorf("printer's probe names %q, want %q", tp2.P.ProbeNames, want)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
