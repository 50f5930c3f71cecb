package compiler

import (
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestStackMapPerLimit: each (kernel/user, frame limit) gets its own
// STACK_TRACE map whose value holds exactly that many frames, so the
// kernel captures and hashes only the frames asked for; stacks of the same
// kind and limit share one map whatever their print mode. Each
// bpf_get_stackid call passes the map of its own stack.
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
		if m.Type != ebpf.StackTrace {
			continue
		}
		got[m.Name] = m.ValueSize
		if m.KeySize != 4 || m.MaxEntries != 4096 || m.User != nil {
			t.Errorf("map %s: key %d, max %d, user %v; want key 4, max 4096, internal", m.Name, m.KeySize, m.MaxEntries, m.User)
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

	// The map loaded into r2 before each bpf_get_stackid, in source order.
	var refs []string
	for _, p := range spec.Programs {
		map2 := ""
		for _, ins := range p.Insns {
			if ins.IsLoadFromMap() && ins.Dst == asm.R2 {
				map2 = ins.Reference()
			}
			if ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnGetStackid {
				refs = append(refs, map2)
			}
		}
	}
	wantRefs := []string{"stack_k_3", "stack_k", "stack_u_2", "stack_u_5", "stack_k_3", "stack_u"}
	if !slices.Equal(refs, wantRefs) {
		t.Errorf("bpf_get_stackid maps %v, want %v\n%s", refs, wantRefs, spec.Dump())
	}
	load(t, spec)
}
