package runtime

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
)

// TestStackMapEntries: LoadOptions.StackMapEntries (GOTRACE_STACK_MAP_ENTRIES,
// validated by cmd/gotrace) sets every stack map's max_entries (and
// nothing else's, another hash map's neither); 0 keeps the compiler's.
func TestStackMapEntries(t *testing.T) {
	spec := &compiler.Spec{Maps: []*compiler.MapSpec{
		{Name: "stack_k", Type: ebpf.Hash, KeySize: 8, ValueSize: 8 * 127, MaxEntries: 4096, Stacks: true},
		{Name: "stack_u_3", Type: ebpf.Hash, KeySize: 8, ValueSize: 8 * 3, MaxEntries: 4096, Stacks: true},
		{Name: "m_", Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4096},
	}}
	for _, c := range []struct {
		env   int
		stack uint32
	}{{0, 4096}, {1, 1}, {100000, 100000}} {
		cs, err := collectionSpec(spec, LoadOptions{StackMapEntries: c.env})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"stack_k", "stack_u_3"} {
			if got := cs.Maps[name].MaxEntries; got != c.stack {
				t.Errorf("StackMapEntries %d: %s max_entries %d, want %d", c.env, name, got, c.stack)
			}
		}
		if got := cs.Maps["m_"].MaxEntries; got != 4096 {
			t.Errorf("StackMapEntries %d: m_ max_entries %d, want 4096", c.env, got)
		}
	}
}
