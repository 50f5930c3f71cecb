package sym

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
