package compiler

import (
	"fmt"
	"path"
	"sort"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/lang/types"
)

// tpFake is a Resolver (with TracepointMatches) over a fixed set of
// tracepoint records, each with one u64 field x at a given offset.
type tpFake struct {
	ktypes.Unresolved
	offs map[string]int // "cat:event" → offset of x
}

func (f tpFake) Tracepoint(cat, ev string) (*types.Type, error) {
	off, ok := f.offs[cat+":"+ev]
	if !ok {
		return nil, fmt.Errorf("tracepoint %s:%s not found", cat, ev)
	}
	return &types.Type{Kind: types.Record, Name: "struct _tracepoint_" + cat + "_" + ev, Size: off + 8,
		Fields: []types.Field{{Name: "x", Type: types.U64, Offset: off}}}, nil
}
func (f tpFake) Type(name string) (*types.Type, error) { return nil, fmt.Errorf("no type %s", name) }
func (f tpFake) Func(name string) (*types.Type, *types.Type, error) {
	return nil, nil, fmt.Errorf("no func %s", name)
}
func (f tpFake) RawTracepoint(name string) (*types.Type, error) {
	return nil, fmt.Errorf("no raw tracepoint %s", name)
}
func (f tpFake) Enum(string) (int64, *types.Type, bool) { return 0, nil, false }
func (f tpFake) TracepointMatches(cat, ev string) ([][2]string, error) {
	var out [][2]string
	for k := range f.offs {
		if ok, _ := path.Match(cat+":"+ev, k); ok {
			c, e, _ := cutColon(k)
			out = append(out, [2]string{c, e})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+":"+out[i][1] < out[j][0]+":"+out[j][1] })
	return out, nil
}

func cutColon(s string) (string, string, bool) {
	for i := range s {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

var _ ktypes.Resolver = tpFake{}

// ctxLoads lists the offsets of 8-byte loads from the context register
// (r1 is saved to r6 by the prologue or read directly).
func ctxLoads(insns asm.Instructions) map[int16]bool {
	out := map[int16]bool{}
	for _, ins := range insns {
		if ins.OpCode.Class() == asm.LdXClass && ins.OpCode.Size() == asm.DWord &&
			(ins.Src == asm.R1 || ins.Src == asm.R6) && ins.Offset >= 0 {
			out[ins.Offset] = true
		}
	}
	return out
}

// TestWildcardTracepointArgs: a wildcard tracepoint clause reading args
// gets one program per layout of the fields it reads, each attached to
// its matches by name with its own offsets; a clause not reading args
// keeps the pattern for the runtime.
func TestWildcardTracepointArgs(t *testing.T) {
	res := tpFake{offs: map[string]int{"t:ev_a": 16, "t:ev_b": 24, "t:ev_c": 16, "u:ev_d": 40}}
	compile := func(t *testing.T, text string) *Spec {
		t.Helper()
		spec, err := Compile(checkText(t, text, check.Options{Resolver: res}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	attached := func(p *Program) string {
		s := ""
		for i, ap := range p.Attach {
			if i > 0 {
				s += ","
			}
			s += ap.Raw
			if ap.Wildcard {
				s += "(wildcard)"
			}
		}
		return s
	}

	t.Run("grouped-by-offset", func(t *testing.T) {
		spec := compile(t, "tracepoint:t:ev_* { @ = sum(args->x); }")
		want := []struct {
			attach string
			off    int16
		}{{"tracepoint:t:ev_a,tracepoint:t:ev_c", 16}, {"tracepoint:t:ev_b", 24}}
		if len(spec.Programs) != len(want) {
			t.Fatalf("%d programs, want %d:\n%s", len(spec.Programs), len(want), spec.Dump())
		}
		for i, p := range spec.Programs {
			if got := attached(p); got != want[i].attach {
				t.Errorf("program %d attaches %s, want %s", i, got, want[i].attach)
			}
			loads := ctxLoads(p.Insns)
			if !loads[want[i].off] || loads[want[i].off^(16^24)] {
				t.Errorf("program %d (%s): context loads at %v, want x at %d\n%s", i, p.Name, loads, want[i].off, spec.Dump())
			}
		}
	})
	t.Run("mixed-with-explicit", func(t *testing.T) {
		spec := compile(t, "tracepoint:u:ev_d, tracepoint:t:ev_[ab] { @ = sum(args->x); }")
		var got []string
		for _, p := range spec.Programs {
			got = append(got, attached(p))
		}
		if fmt.Sprint(got) != "[tracepoint:u:ev_d tracepoint:t:ev_a tracepoint:t:ev_b]" {
			t.Errorf("programs attach %q", got)
		}
	})
	t.Run("probe", func(t *testing.T) {
		spec := compile(t, "tracepoint:t:ev_* { @[probe] = sum(args->x); }")
		if len(spec.Programs) != 3 {
			t.Fatalf("%d programs, want 3:\n%s", len(spec.Programs), spec.Dump())
		}
		for i, p := range spec.Programs {
			if p.Probe != ProbeConst || len(p.Attach) != 1 || p.Attach[0].Wildcard {
				t.Errorf("program %d (%s): Probe %d", i, attached(p), p.Probe)
			}
		}
		if fmt.Sprint(spec.Probes) != "[tracepoint:t:ev_a tracepoint:t:ev_b tracepoint:t:ev_c]" {
			t.Errorf("Spec.Probes %q", spec.Probes)
		}
	})
	t.Run("no-args", func(t *testing.T) {
		spec := compile(t, "tracepoint:t:ev_* { @ = count(); }")
		if len(spec.Programs) != 1 || attached(spec.Programs[0]) != "tracepoint:t:ev_*(wildcard)" {
			t.Fatalf("want one program on the pattern:\n%s", spec.Dump())
		}
	})
}
