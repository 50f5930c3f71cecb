package sym

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestResolveKallsymsMatchesIndex: the streaming resolver answers as the
// index does, on text with aliases, data symbols, an unsorted module tail
// and addresses below, between, on and above the symbols.
func TestResolveKallsymsMatchesIndex(t *testing.T) {
	text := []byte(`0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81000000 T startup_64
ffffffff81000100 t helper_a
ffffffff81000200 D some_data
ffffffff81000300 T func_b
ffffffff81000300 t func_b_alias
ffffffff81000500 T func_c
ffffffffc0002000 t mod_y	[mod2]
ffffffffc0001000 t mod_x	[mod1]
ffffffffc0001000 t mod_x_alias	[mod1]
ffffffffc0003000 t bpf_prog_abc	[bpf]
`)
	addrs := []uint64{0xffffffff80ffffff, 0xffffffff81000000, 0xffffffff81000050, 0xffffffff81000250,
		0xffffffff81000300, 0xffffffff81000301, 0xffffffff81000600, 0xffffffffc0000fff,
		0xffffffffc0001010, 0xffffffffc0002fff, 0xffffffffc0003004, 0xffffffff81000300}
	compare(t, text, addrs)
}

// TestResolveKallsymsLive compares both on this machine's kallsyms for
// random addresses around its text.
func TestResolveKallsymsLive(t *testing.T) {
	text, err := os.ReadFile("/proc/kallsyms")
	if err != nil || !bytes.Contains(text, []byte(" T ")) {
		t.Skip("no readable /proc/kallsyms")
	}
	k := ParseKallsyms(text)
	if k.Len() == 0 || k.code[0].addr == 0 {
		t.Skip("kallsyms addresses hidden")
	}
	r := rand.New(rand.NewSource(1))
	lo, hi := k.code[0].addr-16, k.code[len(k.code)-1].addr+4096
	var addrs []uint64
	for i := 0; i < 5000; i++ {
		addrs = append(addrs, lo+uint64(r.Int63n(int64(hi-lo))))
	}
	for i := 0; i < 500; i++ {
		addrs = append(addrs, k.code[r.Intn(len(k.code))].addr)
	}
	compare(t, text, addrs)
}

func compare(t *testing.T, text []byte, addrs []uint64) {
	t.Helper()
	k := ParseKallsyms(bytes.Clone(text))
	got, err := ResolveKallsyms(bytes.NewReader(text), addrs)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		name, off, mod, ok := k.Lookup(a)
		g, gok := got[a]
		if ok != gok || (ok && (g.name != name || a-g.base != off || g.module != mod)) {
			t.Errorf("%#x: stream %q+%d [%s] %v, index %q+%d [%s] %v", a, g.name, a-g.base, g.module, gok, name, off, mod, ok)
		}
	}
}

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
