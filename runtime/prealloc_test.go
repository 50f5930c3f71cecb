package runtime

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
)

// TestNoPreallocBySize: hash maps of the default size are created without
// preallocated elements, maps above preallocAbove entries with them.
func TestNoPreallocBySize(t *testing.T) {
	spec := &compiler.Spec{}
	for _, c := range []struct {
		typ  ebpf.MapType
		n    uint32
		want bool
	}{
		{ebpf.PerCPUHash, 4096, true},
		{ebpf.Hash, preallocAbove, true},
		{ebpf.PerCPUHash, preallocAbove + 1, false},
		{ebpf.Hash, 1000000, false},
		{ebpf.PerCPUArray, 4096, false},
	} {
		if got := noPrealloc(spec, &compiler.MapSpec{Type: c.typ, MaxEntries: c.n}); got != c.want {
			t.Errorf("%v of %d entries: noPrealloc %v, want %v", c.typ, c.n, got, c.want)
		}
	}
}
