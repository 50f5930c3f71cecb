package runtime

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
)

// Every probe type of lang's table runs somewhere or is refused with a
// reason: the tracer runs it itself (BEGIN, END, self, bench, test: the
// plan holds it), a provider registered against its kind expands and
// attaches it, or the checker rejects it at the attach point with the
// row's precise reason, so that no type parses, checks, compiles and
// loads only to fail at attach with "not supported".
func TestEveryProbeTypeRunsOrIsRefused(t *testing.T) {
	for _, k := range lang.ProbeKinds() {
		row := k.Type()
		_, hasProv := providers[k]
		switch {
		case row.Special():
			if hasProv {
				t.Errorf("%s: the tracer runs it, yet a provider is registered", k)
			}
			ap := &lang.AttachPoint{Raw: k.String() + ":x", Provider: k, Func: "x"}
			l := &Loaded{Spec: &compiler.Spec{Programs: []*compiler.Program{{Name: "p", Attach: []*lang.AttachPoint{ap}}}},
				multi: map[string]bool{}}
			pl, err := l.Expand(&Env{}, 0)
			if err != nil {
				t.Errorf("%s: %v", k, err)
				continue
			}
			held := map[lang.Trigger]int{lang.TriggerBegin: len(pl.begin), lang.TriggerEnd: len(pl.end),
				lang.TriggerSignal: len(pl.signal), lang.TriggerBench: len(pl.bench), lang.TriggerTest: len(pl.tests)}
			if held[row.Trigger] != 1 || len(pl.groups) != 0 || pl.total != 1 {
				t.Errorf("%s: the plan does not hold it for the tracer to run: %+v", k, pl)
			}
		case hasProv:
			if row.Refused != "" {
				t.Errorf("%s: refused (%q), yet a provider is registered", k, row.Refused)
			}
		case row.Refused == "":
			t.Errorf("%s: no runtime provider, and the table gives no reason the checker refuses it", k)
		default:
			raw, ok := refusedExamples[k]
			if !ok {
				t.Errorf("%s: refused, but this test has no example attach point to check that the checker says so", k)
				continue
			}
			prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: raw + " { }"})
			if err != nil {
				t.Errorf("%s: %v", raw, err)
				continue
			}
			_, err = check.Check(prog, check.Options{})
			want := "stdin:1:1-" + strconv.Itoa(len(raw)+1) + ": ERROR: " + row.Refused
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the checker says %v; want %q", raw, err, want)
			}
		}
	}
}

// refusedExamples are attach points of the refused probe types.
var refusedExamples = map[lang.ProbeKind]string{
	lang.ProbeWatchpoint:      "watchpoint:0x10000000:8:rw",
	lang.ProbeAsyncWatchpoint: "asyncwatchpoint:0x10000000:8:w",
}

// TestSplitClauseIsOneProbe: a BEGIN split into consecutive programs
// (compiler/split.go) runs every part, in order, and counts as one probe.
func TestSplitClauseIsOneProbe(t *testing.T) {
	ap := &lang.AttachPoint{Raw: "BEGIN", Provider: lang.ProbeBegin}
	var progs []*compiler.Program
	for i, name := range []string{"c0_begin", "c0_1_begin", "c0_2_begin"} {
		progs = append(progs, &compiler.Program{Name: name, Attach: []*lang.AttachPoint{ap}, Continues: i > 0})
	}
	l := &Loaded{Spec: &compiler.Spec{Programs: progs}, multi: map[string]bool{}}
	pl, err := l.Expand(&Env{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pl.total != 1 || len(pl.begin) != 3 || pl.begin[0] != progs[0] || pl.begin[2] != progs[2] {
		t.Errorf("plan: %d probes, begin %v; want 1 probe running the 3 parts in order", pl.total, pl.begin)
	}
}
