package compiler

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/stdlib"
)

// TestStackMapPerLimit: each (kernel/user, frame limit) gets its own
// stack map (a hash map keyed by the u64 stack id, ABI.md) whose value
// holds exactly that many frames, so the kernel captures and the program
// hashes only the frames asked for; stacks of the same kind and limit
// share one map whatever their print mode. Each bpf_get_stack call
// captures its own stack's frames, and the map it stores them in is its
// own.
func TestStackMapPerLimit(t *testing.T) {
	spec := compileScript(t, "stdin", `profile:hz:99 {
  @[kstack(3)] = count();
  @b[kstack(perf)] = count();
  @c[ustack(perf, 2)] = count();
  @d[ustack(bpftrace, 5)] = count();
  @e[kstack(bpftrace, 3)] = count();
  @f[ustack] = count();
}`)
	want := map[string]uint32{
		"stack_k_3": 3 * 8,
		"stack_k":   127 * 8,
		"stack_u_2": 2 * 8,
		"stack_u_5": 5 * 8,
		"stack_u":   127 * 8,
	}
	got := map[string]uint32{}
	for _, m := range spec.Maps {
		if !m.Stacks {
			continue
		}
		got[m.Name] = m.ValueSize
		if m.Type != ebpf.Hash || m.KeySize != 8 || m.MaxEntries != 4096 || m.User != nil {
			t.Errorf("map %s: %v key %d, max %d, user %v; want a hash, key 8, max 4096, internal", m.Name, m.Type, m.KeySize, m.MaxEntries, m.User)
		}
	}
	if len(got) != len(want) {
		t.Errorf("stack maps %v, want %v", got, want)
	}
	for name, size := range want {
		if got[name] != size {
			t.Errorf("map %s value size %d, want %d (all: %v)", name, got[name], size, got)
		}
	}

	// Each bpf_get_stack's size (r3) and flags (r4), and the map of the
	// bpf_map_update_elem that follows it, in source order.
	type capture struct {
		size, flags int64
		store       string
	}
	var got2 []capture
	for _, p := range spec.Programs {
		var r3, r4 int64
		map1 := ""
		for _, ins := range p.Insns {
			switch {
			case ins.IsLoadFromMap() && ins.Dst == asm.R1:
				map1 = ins.Reference()
			case ins.OpCode.ALUOp() == asm.Mov && ins.Dst == asm.R3:
				r3 = ins.Constant
			case ins.OpCode.ALUOp() == asm.Mov && ins.Dst == asm.R4:
				r4 = ins.Constant
			case ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnGetStack:
				got2 = append(got2, capture{size: r3, flags: r4})
			case ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnMapUpdateElem && len(got2) > 0 && got2[len(got2)-1].store == "":
				got2[len(got2)-1].store = map1
			}
		}
	}
	const user = 1 << 8 // BPF_F_USER_STACK
	want2 := []capture{{3 * 8, 0, "stack_k_3"}, {127 * 8, 0, "stack_k"}, {2 * 8, user, "stack_u_2"}, {5 * 8, user, "stack_u_5"}, {3 * 8, 0, "stack_k_3"}, {127 * 8, user, "stack_u"}}
	if !slices.Equal(got2, want2) {
		t.Errorf("bpf_get_stack captures %v, want %v\n%s", got2, want2, spec.Dump())
	}
	load(t, spec)
}

// TestStackIDIsContentHash runs a BEGIN program (a raw tracepoint, by
// the kernel's test run, whose kernel stack is the test-run call chain)
// taking kstack and kstack(2) twice from one place: each stack is stored
// once, under stdlib.StackHash of its frames, which the BPF loop computes
// as the Go function does; the user map's key holds that id and counts 2.
func TestStackIDIsContentHash(t *testing.T) {
	spec := compileScript(t, "stdin", `BEGIN { @[kstack] = count(); @b[kstack(2)] = count(); }`)
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	run(t, coll, spec.Programs[0].Name)
	for _, c := range []struct {
		stacks, user string
		frames       int
	}{{"stack_k", "m_", 127}, {"stack_k_2", "m_b", 2}} {
		var key uint64
		var val []byte
		var ids []uint64
		it := coll.Maps[c.stacks].Iterate()
		for it.Next(&key, &val) {
			if len(val) != 8*c.frames {
				t.Errorf("%s: value of %d bytes, want %d", c.stacks, len(val), 8*c.frames)
			}
			var frames []uint64
			for i := 0; i+8 <= len(val); i += 8 {
				f := binary.LittleEndian.Uint64(val[i:])
				if f == 0 {
					break
				}
				frames = append(frames, f)
			}
			if len(frames) == 0 || c.frames == 2 && len(frames) != 2 {
				t.Errorf("%s: stack of %d frames %x", c.stacks, len(frames), frames)
			}
			if h := stdlib.StackHash(frames); h != key {
				t.Errorf("%s: stack %x stored under %#x, StackHash gives %#x", c.stacks, frames, key, h)
			}
			ids = append(ids, key)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 1 {
			t.Fatalf("%s holds %d stacks, want 1 (one place, taken twice)", c.stacks, len(ids))
		}
		// The user map's key: [0:8] the id, [8:16] pid 0 for kstack.
		k := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, ids[0]), 0)
		if n, ok := lookupU64(t, coll, spec, c.user, k); !ok || n != 2 {
			t.Errorf("%s[id %#x] = %d (found %v), want 2", c.user, ids[0], n, ok)
		}
	}
}
