package runtime

import (
	"encoding/binary"
	"sync"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// The optional parts of a Symbolizer the runtime drives (runtime/sym's
// *Symbolizer has them all; fakes in tests may have none).
type (
	// procSnapshotter records a process's memory map and symbols while it
	// lives, so its ustack/usym values still resolve after it exits.
	procSnapshotter interface{ Snapshot(pid int) }
	// stackErrorCounter counts stacks that were not stored (negative ids).
	stackErrorCounter interface {
		CountStackError(id int64, n uint64)
	}
	// stackWarner gives the exit warnings about lost stacks.
	stackWarner interface{ StackWarnings() []string }
	// programAdder learns the binaries uprobes and USDT probes attach to,
	// so addresses in them resolve after their process has gone.
	programAdder interface{ AddProgram(path string) }
)

// programs tells the Symbolizer the binaries the plan's user-space
// probes attach to.
func (s *symTracker) programs(pl *plan) {
	if s == nil || pl == nil {
		return
	}
	pa, ok := s.syms.(programAdder)
	if !ok {
		return
	}
	seen := map[string]bool{}
	for _, g := range pl.groups {
		if g.ap == nil {
			continue
		}
		switch g.ap.Provider {
		case lang.ProbeUprobe, lang.ProbeUretprobe, lang.ProbeUSDT:
		default:
			continue
		}
		for _, p := range g.probes {
			if p.Target != "" && !seen[p.Target] {
				seen[p.Target] = true
				pa.AddProgram(p.Target)
			}
		}
	}
}

// symTracker watches decoded values for what the Symbolizer must learn
// while the tracer runs: pids of user stacks and usym() values (snapshotted
// the first time each appears) and failed stack ids (counted).
type symTracker struct {
	syms output.Symbolizer
	mu   sync.Mutex
	seen map[int]bool
}

// hasSymbols reports whether values of t hold stacks or usym() values.
func hasSymbols(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case types.Stack, types.Usym:
		return true
	case types.Tuple, types.Record:
		for _, f := range t.Fields {
			if hasSymbols(f.Type) {
				return true
			}
		}
	case types.Array:
		return hasSymbols(t.Elem)
	}
	return false
}

// values notes the stacks and usym() values in vs; n is how many events
// they stand for (1 for an event, the count of a count() map entry).
func (s *symTracker) values(vs []output.Value, n uint64) {
	if s == nil || s.syms == nil {
		return
	}
	for _, v := range vs {
		switch v.Kind() {
		case types.Stack:
			if id := v.Int(); id < 0 {
				if c, ok := s.syms.(stackErrorCounter); ok {
					c.CountStackError(id, n)
				}
				continue
			}
			if v.Type.Stack.User {
				s.snapshot(int(v.Aux))
			}
		case types.Usym:
			s.snapshot(int(v.Aux))
		case types.Tuple, types.Record, types.Array:
			s.values(v.Elems, n)
		}
	}
}

func (s *symTracker) snapshot(pid int) {
	sn, ok := s.syms.(procSnapshotter)
	if !ok || pid <= 0 {
		return
	}
	s.mu.Lock()
	if s.seen == nil {
		s.seen = map[int]bool{}
	}
	first := !s.seen[pid]
	s.seen[pid] = true
	s.mu.Unlock()
	if first {
		sn.Snapshot(pid)
	}
}

// event notes the values of one event when its layout holds symbols.
func (s *symTracker) event(ev *compiler.Event, args []output.Value) {
	if ev.Args == nil || !hasSymbols(ev.Args) {
		return
	}
	s.values(args, 1)
}

// mapData notes the keys and values of a map about to be printed: pids
// are snapshotted before printing starts, and at exit (final) the failed
// stack ids are counted, weighted by the entry's count() when it has one.
func (s *symTracker) mapData(m *MapData, final bool) {
	info := m.Spec.User
	if s == nil || s.syms == nil || info == nil {
		return
	}
	keyed, valued := hasSymbols(info.Key), info.Value != nil && hasSymbols(info.Value)
	if !keyed && !valued {
		return
	}
	for _, e := range m.Entries {
		n := uint64(1)
		if info.Value != nil && info.Value.Kind == types.Count && len(e.Value) >= 8 {
			n = binary.LittleEndian.Uint64(e.Value)
		}
		var vs []output.Value
		if keyed {
			if v, err := output.Decode(info.Key, e.Key); err == nil {
				vs = append(vs, v)
			}
		}
		if valued {
			if v, err := output.Decode(info.Value, e.Value); err == nil {
				vs = append(vs, v)
			}
		}
		if !final {
			vs = withoutErrors(vs)
		}
		s.values(vs, n)
	}
}

// withoutErrors drops failed stacks from vs so that a map printed more
// than once (print(@m) at intervals, then at exit) counts them once.
func withoutErrors(vs []output.Value) []output.Value {
	out := vs[:0]
	for _, v := range vs {
		switch v.Kind() {
		case types.Stack:
			if v.Int() < 0 {
				continue
			}
		case types.Tuple, types.Record, types.Array:
			v.Elems = withoutErrors(append([]output.Value(nil), v.Elems...))
		}
		out = append(out, v)
	}
	return out
}

// ExitWarnings are the lines the session prints on stderr after the maps
// at exit (stack traces lost to collisions or a full stack map).
func (t *TextPrinter) ExitWarnings() []string {
	if w, ok := t.sym.syms.(stackWarner); ok {
		return w.StackWarnings()
	}
	return nil
}
