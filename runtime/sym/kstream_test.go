package sym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/lang/types"
)

// TestPrepareKernelNoIndex: stacks prepared by the streaming pass resolve
// without the kallsyms index being loaded; an address the pass did not
// see still resolves, through the index.
func TestPrepareKernelNoIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kallsyms")
	text := "ffffffff81000000 T _stext\nffffffff81000100 t helper_a\nffffffff81000300 T func_b\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Kallsyms: path})
	if err := s.prepareKernel([]uint64{0xffffffff81000104, 0xffffffff81000300}); err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[uint64]string{0xffffffff81000104: "helper_a+4", 0xffffffff81000300: "func_b+0"} {
		f := s.KernelFrame(addr)
		if got := fmt.Sprintf("%s+%d", f.Sym, f.Offset); got != want {
			t.Errorf("%#x: %s, want %s", addr, got, want)
		}
	}
	if s.ksyms != nil {
		t.Errorf("the kallsyms index was loaded for prepared addresses")
	}
	if f := s.KernelFrame(0xffffffff81000010); f.Sym != "_stext" || f.Offset != 0x10 || s.ksyms == nil {
		t.Errorf("unprepared address: %+v (index loaded: %v)", f, s.ksyms != nil)
	}
}

// TestPrepareKernelStacksReadsOnce: PrepareKernelStacks reads every stack
// of a content-keyed kernel stack map in batches (more stacks than one
// batch here) and resolves their addresses; Stack then needs no lookup of
// its own — the stacks print even once the map no longer holds them.
func TestPrepareKernelStacksReadsOnce(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	path := filepath.Join(t.TempDir(), "kallsyms")
	if err := os.WriteFile(path, []byte("ffffffff81000000 T _stext\nffffffff81100000 T func_b\nffffffff81200000 T _etext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = stackBatch + 10
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "stack_k", Type: ebpf.Hash, KeySize: 8, ValueSize: 3 * 8, MaxEntries: n})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := uint64(1); i <= n; i++ {
		val := binary.LittleEndian.AppendUint64(nil, 0xffffffff81000000+i)
		val = binary.LittleEndian.AppendUint64(val, 0xffffffff81100000+i)
		val = binary.LittleEndian.AppendUint64(val, 0)
		if err := m.Put(i, val); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Kallsyms: path})
	s.SetStackMap("stack_k", m)
	if err := s.PrepareKernelStacks(); err != nil {
		t.Fatal(err)
	}
	if got := len(s.frames["stack_k"]); got != n {
		t.Fatalf("%d stacks kept, want %d", got, n)
	}
	for i := uint64(1); i <= n; i++ {
		if err := m.Delete(i); err != nil {
			t.Fatal(err)
		}
	}
	info := types.StackInfo{} // stack_k
	for _, i := range []uint64{1, stackBatch, n} {
		frames, err := s.Stack(info, int64(i), 0)
		if err != nil {
			t.Fatalf("Stack(%d): %v", i, err)
		}
		want := []string{fmt.Sprintf("_stext+%d", i), fmt.Sprintf("func_b+%d", i)}
		if len(frames) != 2 || fmt.Sprintf("%s+%d", frames[0].Sym, frames[0].Offset) != want[0] || fmt.Sprintf("%s+%d", frames[1].Sym, frames[1].Offset) != want[1] {
			t.Errorf("Stack(%d) = %+v, want %v", i, frames, want)
		}
	}
	if s.ksyms != nil {
		t.Errorf("the kallsyms index was loaded for prepared stacks")
	}
	// A stack read once by StackAddrs is kept too.
	if _, err := s.StackAddrs(info, int64(n+1)); !errors.Is(err, ErrNoStack) {
		t.Errorf("absent id: %v, want ErrNoStack", err)
	}
}
