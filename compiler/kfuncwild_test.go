package compiler

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/lang/types"
)

// kfFake is a Resolver with FuncMatches over functions whose args are the
// listed parameter names, each an 8-byte slot.
type kfFake struct {
	ktypes.Unresolved
	fns map[string][]string
}

func (f kfFake) Tracepoint(cat, ev string) (*types.Type, error) {
	return nil, fmt.Errorf("no tracepoint %s:%s", cat, ev)
}
func (f kfFake) Type(name string) (*types.Type, error) { return nil, fmt.Errorf("no type %s", name) }
func (f kfFake) Func(name string) (*types.Type, *types.Type, error) {
	if strings.Contains(name, "*") { // as layout.Sources: the first match
		ms, _ := f.FuncMatches("", name)
		if len(ms) > 0 {
			name = ms[0][1]
		}
	}
	ps, ok := f.fns[name]
	if !ok {
		return nil, nil, fmt.Errorf("no func %s", name)
	}
	r := &types.Type{Kind: types.Record, Name: "struct _kfunc_" + name, Size: 8 * len(ps), Align: 8}
	for i, p := range ps {
		r.Fields = append(r.Fields, types.Field{Name: p, Type: types.U64, Offset: 8 * i})
	}
	return r, types.S64, nil
}
func (f kfFake) RawTracepoint(name string) (*types.Type, error) {
	return nil, fmt.Errorf("no raw tracepoint %s", name)
}
func (f kfFake) Enum(string) (int64, *types.Type, bool) { return 0, nil, false }
func (f kfFake) FuncMatches(module, pattern string) ([][2]string, error) {
	var out [][2]string
	for k := range f.fns {
		if ok, _ := path.Match(pattern, k); ok {
			out = append(out, [2]string{module, k})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1] < out[j][1] })
	return out, nil
}

var _ ktypes.Resolver = kfFake{}

func TestKfuncWildcard(t *testing.T) {
	res := kfFake{fns: map[string][]string{
		"vfs_read": {"file", "buf"}, "vfs_write": {"file", "buf"}, "vfs_open": {"path", "file"},
		"_raw_spin_lock": {"lock"}, "other": {"x"},
	}}
	compile := func(t *testing.T, text string, opts Options) (*Spec, error) {
		t.Helper()
		return Compile(checkText(t, text, check.Options{Resolver: res}), opts)
	}
	t.Run("one-program-per-function", func(t *testing.T) {
		spec, err := compile(t, "kfunc:vfs_* { @[probe] = count(); } kretfunc:oth* { @n = count(); }", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range spec.Programs {
			if len(p.Attach) != 1 || p.Attach[0].Wildcard || p.AttachTo != p.Attach[0].Func || p.Probe == ProbeCookie {
				t.Errorf("program %s: attach %v to %q, probe %v", p.Name, p.Attach, p.AttachTo, p.Probe)
			}
			got = append(got, p.Attach[0].Raw)
		}
		if fmt.Sprint(got) != "[kfunc:vfs_open kfunc:vfs_read kfunc:vfs_write kretfunc:other]" {
			t.Errorf("programs %v", got)
		}
	})
	t.Run("deny-list-refuses-the-wildcard", func(t *testing.T) {
		_, err := compile(t, "kretfunc:*spin* { @ = count(); }", Options{})
		want := "1:1: refusing kretfunc:*spin* as a whole: 1 of the 1 functions it matches are in the locking code, which cannot be traced safely (e.g. _raw_spin_lock: spinlock functions are taken by the probe handler itself; probing them can deadlock the machine); nothing was attached. HINT: narrow the pattern to leave them out, or name the functions to trace"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("max-probes", func(t *testing.T) {
		_, err := compile(t, "kfunc:vfs_* { @ = count(); }", Options{MaxProbes: 2})
		if err == nil || !strings.Contains(err.Error(), "Can't attach to 3 probes because it exceeds the current limit of 2 probes") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("args-same-layout", func(t *testing.T) {
		spec, err := compile(t, "kfunc:vfs_[rw]* { @ = sum(args->buf); }", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(spec.Programs) != 2 {
			t.Fatalf("%d programs:\n%s", len(spec.Programs), spec.Dump())
		}
		for _, p := range spec.Programs {
			if loads := ctxLoads(p.Insns); !loads[8] {
				t.Errorf("%s: context loads %v, want buf at 8", p.Name, loads)
			}
		}
	})
	t.Run("args-different-layout", func(t *testing.T) {
		_, err := compile(t, "kfunc:vfs_* { @ = sum(args->file); }", Options{})
		if err == nil || !strings.Contains(err.Error(), "kfunc:vfs_open and kfunc:vfs_read differ in the args fields") {
			t.Errorf("err = %v", err)
		}
	})
}
