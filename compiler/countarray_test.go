package compiler

import (
	"testing"

	"github.com/gotrace/gotrace/compat"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestKeylessCountArray: under --compat 0.17 a key-less count() is a
// 1-entry PERCPU_ARRAY with a u32 key, counted without any insert path;
// keyed counts and other key-less aggregations stay PERCPU_HASH (bpftrace
// prints nothing for a sum or hist that never fired, so their absence must
// stay visible). bpftrace 0.26 prints nothing for a cleared count either:
// there it is a PERCPU_HASH like the others (TestKeylessCountHash026).
func TestKeylessCountArray(t *testing.T) {
	spec := compileScriptAs(t, compat.V017, "stdin", `BEGIN { @ = count(); @c = count(); @c = count(); @k[1] = count(); @s = sum(3); delete(@c); @c = count(); }`)
	want := map[string]struct {
		typ      ebpf.MapType
		key, max uint32
	}{
		"m_":  {ebpf.PerCPUArray, 4, 1},
		"m_c": {ebpf.PerCPUArray, 4, 1},
		"m_k": {ebpf.PerCPUHash, 8, 4096},
		"m_s": {ebpf.PerCPUHash, 8, 1},
	}
	for _, m := range spec.Maps {
		w, ok := want[m.Name]
		if !ok {
			continue
		}
		if m.Type != w.typ || m.KeySize != w.key || m.MaxEntries != w.max || m.ValueSize != 8 {
			t.Errorf("%s = %v key=%d value=%d max=%d, want %v key=%d max=%d", m.Name, m.Type, m.KeySize, m.ValueSize, m.MaxEntries, w.typ, w.key, w.max)
		}
		delete(want, m.Name)
	}
	if len(want) > 0 {
		t.Errorf("maps missing: %v", want)
	}
	// Updates only for @k and @s; delete(@c) is a clear event, not a helper call.
	updates, deletes := 0, 0
	for _, ins := range spec.Programs[0].Insns {
		if ins.IsBuiltinCall() {
			switch asm.BuiltinFunc(ins.Constant) {
			case asm.FnMapUpdateElem:
				updates++
			case asm.FnMapDeleteElem:
				deletes++
			}
		}
	}
	if updates != 2 || deletes != 0 {
		t.Errorf("%d map updates and %d deletes, want 2 and 0", updates, deletes)
	}
	var clear *Event
	for _, ev := range spec.Events {
		if ev.Kind == EvClear {
			clear = ev
		}
	}
	if clear == nil || clear.Map != "m_c" {
		t.Errorf("delete(@c) event = %+v, want a clear of m_c", clear)
	}
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	run(t, coll, spec.Programs[0].Name)
	key0 := []byte{0, 0, 0, 0}
	if got, ok := lookupU64(t, coll, spec, "m_", key0); !ok || got != 2 {
		t.Errorf("@ = %d (present %v), want 2", got, ok)
	}
	// The clear events are not consumed here: @c counts 3 per run.
	if got, ok := lookupU64(t, coll, spec, "m_c", key0); !ok || got != 6 {
		t.Errorf("@c = %d (present %v), want 6", got, ok)
	}
	if got, ok := lookupU64(t, coll, spec, "m_k", u64key(1)); !ok || got != 2 {
		t.Errorf("@k[1] = %d (present %v), want 2", got, ok)
	}
}

// TestKeylessCount026: in bpftrace 0.26 mode a key-less count() is the
// same one-slot PERCPU_ARRAY, marked ZeroIsAbsent (the runtime drops a
// zero slot, so a cleared or deleted count prints nothing, as 0.26's
// removed entry does), unless the script calls zero() on it: zero(@)
// keeps a 0 that prints, so that map stays a one-entry PERCPU_HASH.
func TestKeylessCount026(t *testing.T) {
	spec := compileScriptAs(t, compat.V026, "stdin", `BEGIN { @ = count(); clear(@); @z = count(); zero(@z); @k[1] = count(); }`)
	want := map[string]struct {
		typ    ebpf.MapType
		key    uint32
		absent bool
	}{
		"m_":  {ebpf.PerCPUArray, 4, true},
		"m_z": {ebpf.PerCPUHash, 8, false},
		"m_k": {ebpf.PerCPUHash, 8, false},
	}
	for _, m := range spec.Maps {
		w, ok := want[m.Name]
		if !ok {
			continue
		}
		delete(want, m.Name)
		if m.Type != w.typ || m.KeySize != w.key || m.ZeroIsAbsent != w.absent {
			t.Errorf("%s = %v key=%d ZeroIsAbsent=%v, want %v key=%d ZeroIsAbsent=%v", m.Name, m.Type, m.KeySize, m.ZeroIsAbsent, w.typ, w.key, w.absent)
		}
	}
	for n := range want {
		t.Errorf("no map %s", n)
	}
	// 0.17 mode: the array, whose zero prints.
	spec = compileScriptAs(t, compat.V017, "stdin", `BEGIN { @ = count(); clear(@); }`)
	for _, m := range spec.Maps {
		if m.Name == "m_" && (m.Type != ebpf.PerCPUArray || m.ZeroIsAbsent) {
			t.Errorf("0.17: m_ = %v ZeroIsAbsent=%v, want PerCPUArray, zero printed", m.Type, m.ZeroIsAbsent)
		}
	}
}
