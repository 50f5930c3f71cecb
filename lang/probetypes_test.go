package lang

import (
	"strings"
	"testing"
)

// Every row sits at its kind's index, has a parser and a program type, and
// its spellings resolve to it (also in another case, unless that spelling
// belongs to another kind: U is usdt, u uprobe).
func TestProbeTypesTable(t *testing.T) {
	for _, k := range ProbeKinds() {
		row := k.Type()
		if row.Kind != k || row.Name == "" || row.parse == nil || row.Prog == ProgNone || row.Abbrev == "" || row.Probetype == "" {
			t.Errorf("row %d (%q) is incomplete: %+v", k, row.Name, *row)
			continue
		}
		if ProbeKindNamed(row.Name) != k {
			t.Errorf("ProbeKindNamed(%q) = %v, want %v", row.Name, ProbeKindNamed(row.Name), k)
		}
		for _, s := range append([]string{row.Name}, row.Aliases...) {
			if got, ok := LookupProbeKind(s); !ok || got != k {
				t.Errorf("LookupProbeKind(%q) = %v, %v; want %v", s, got, ok, k)
			}
			up := strings.ToUpper(s)
			if _, taken := spellings[up]; !taken {
				if got, ok := LookupProbeKind(up); !ok || got != k {
					t.Errorf("LookupProbeKind(%q) = %v, %v; want %v (case-insensitive)", up, got, ok, k)
				}
			}
		}
		if (row.Prog == ProgTracing) != (row.Attach != AttachNone) {
			t.Errorf("%s: a tracing program needs an attach type, and only it: %v/%v", row.Name, row.Prog, row.Attach)
		}
		if row.Special() && (row.Prog != ProgRawTracepoint || row.Context != CtxNone || row.Args != ArgsNone || row.ArgN != ArgNNone) {
			t.Errorf("%s: the tracer runs it with BPF_PROG_TEST_RUN: a raw tracepoint program with no context", row.Name)
		}
		if row.ListedByWildcard && (!row.Listed || row.Special()) {
			t.Errorf("%s: listed by a wildcard provider, so it is a listed kernel hook", row.Name)
		}
	}
	// bpftrace 0.17's `-l` expands over these (the runtime's listing order).
	var byWildcard []string
	for _, k := range ProbeKinds() {
		if k.Type().ListedByWildcard {
			byWildcard = append(byWildcard, k.String())
		}
	}
	if got := strings.Join(byWildcard, " "); got != "tracepoint kprobe kfunc software hardware" {
		t.Errorf("listed by wildcard: %s", got)
	}
	if ProbeNone.String() != "" || ProbeKindNamed("fentry") != ProbeNone || ProbeKindNamed("nonsense") != ProbeNone {
		t.Error("ProbeNone and non-canonical names")
	}
	// The spellings bpftrace documents.
	for s, want := range map[string]ProbeKind{"fentry": ProbeKfunc, "fexit": ProbeKretfunc, "f": ProbeKfunc,
		"fr": ProbeKretfunc, "begin": ProbeBegin, "Tracepoint": ProbeTracepoint, "U": ProbeUSDT, "u": ProbeUprobe,
		"KPROBE": ProbeKprobe, "it": ProbeIter, "aw": ProbeAsyncWatchpoint} {
		if got, ok := LookupProbeKind(s); !ok || got != want {
			t.Errorf("LookupProbeKind(%q) = %v, want %v", s, got, want)
		}
	}
}

// Each row's parser fills the fields AttachPoint documents.
func TestProbeTypesParse(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"fexit:vmlinux:vfs_read", "kretfunc|vmlinux|vfs_read"},
		{"test:a", "test||a"},
		{"bench:b", "bench||b"},
		{"it:task", "iter||task"},
		{"Interval:s:1", "interval||"},
		{"self:signal:SIGUSR1", "self|signal|SIGUSR1"},
	} {
		ap, err := ParseAttachPoint(c.raw, Span{})
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if got := ap.Provider.String() + "|" + ap.Target + "|" + ap.Func; got != c.want {
			t.Errorf("%s: got %s, want %s", c.raw, got, c.want)
		}
	}
	if _, err := ParseAttachPoint("test:a:b", Span{}); err == nil || err.Error() != "test probe type requires 1 arguments, found 2 in test:a:b" {
		t.Errorf("test:a:b: %v", err)
	}
}
