package ktypes

import (
	"bytes"
	"math/rand"
	"os"
	"strings"
	"testing"
)

func TestParseKallsyms(t *testing.T) {
	// Out of order (module symbols after the core), data symbols, aliases,
	// a hidden (zero) address and a malformed line.
	text := "ffffffff81000000 T _stext\n" +
		"ffffffff81000000 T startup_64\n" +
		"ffffffff81000100 t helper\n" +
		"ffffffff81000200 D some_data\n" +
		"ffffffff81000300 T vfs_read\n" +
		"0000000000000000 T hidden\n" +
		"garbage line\n" +
		"ffffffffc0001000 t mod_fn\t[mymod]\n" +
		"ffffffffc0000800 T mod_first\t[mymod]\n" +
		"ffffffff81000400 r read_only_table"
	k := ParseKallsyms([]byte(text))
	if k.Len() != 6 {
		t.Errorf("Len = %d, want 6 code symbols", k.Len())
	}
	for _, tc := range []struct {
		addr       uint64
		name, mod  string
		off        uint64
		resolvable bool
	}{
		{0xffffffff80ffffff, "", "", 0, false},
		{0xffffffff81000000, "_stext", "", 0, true}, // first alias in file order
		{0xffffffff81000010, "_stext", "", 0x10, true},
		{0xffffffff81000100, "helper", "", 0, true},
		{0xffffffff81000250, "helper", "", 0x150, true}, // data symbol skipped
		{0xffffffff81000305, "vfs_read", "", 5, true},
		{0xffffffffc0000900, "mod_first", "mymod", 0x100, true},
		{0xffffffffc0001001, "mod_fn", "mymod", 1, true},
	} {
		name, off, mod, ok := k.Lookup(tc.addr)
		if ok != tc.resolvable || name != tc.name || off != tc.off || mod != tc.mod {
			t.Errorf("Lookup(%#x) = %q+%d [%s] %v, want %q+%d [%s] %v", tc.addr, name, off, mod, ok, tc.name, tc.off, tc.mod, tc.resolvable)
		}
	}
	for _, tc := range []struct {
		name string
		addr uint64
		ok   bool
	}{
		{"vfs_read", 0xffffffff81000300, true},
		{"some_data", 0xffffffff81000200, true}, // kaddr takes data symbols
		{"mod_fn", 0xffffffffc0001000, true},
		{"mymod:mod_fn", 0xffffffffc0001000, true},
		{"other:mod_fn", 0, false},
		{"hidden", 0, false},
		{"vfs_rea", 0, false},
	} {
		addr, ok := k.Addr(tc.name)
		if addr != tc.addr || ok != tc.ok {
			t.Errorf("Addr(%q) = %#x %v, want %#x %v", tc.name, addr, ok, tc.addr, tc.ok)
		}
	}
}

func BenchmarkLoadKallsyms(b *testing.B) {
	for b.Loop() {
		if _, err := LoadKallsyms("/proc/kallsyms"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseKallsyms(b *testing.B) {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ParseKallsyms(data)
	}
}

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
		if ok != gok || (ok && (g.Name != name || a-g.Base != off || g.Module != mod)) {
			t.Errorf("%#x: stream %q+%d [%s] %v, index %q+%d [%s] %v", a, g.Name, a-g.Base, g.Module, gok, name, off, mod, ok)
		}
	}
}

// TestKallsymsText: the text symbols' names and modules in file order,
// zero (kptr_restrict) addresses included, data symbols and malformed
// lines left out.
func TestKallsymsText(t *testing.T) {
	text := "0000000000000000 T _stext\n" +
		"0000000000000000 D some_data\n" +
		"0000000000000000 t helper\n" +
		"garbage line\n" +
		"\n" +
		"0000000000000000 t mod_fn\t[mymod]\n" +
		"ffffffff81000300 T vfs_read"
	var got []string
	err := KallsymsText(bytes.NewReader([]byte(text)), func(name, mod string) {
		got = append(got, name+"/"+mod)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "_stext/ helper/ mod_fn/mymod vfs_read/"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("KallsymsText = %q, want %q", s, want)
	}
	// The address index of the same text has only the nonzero one.
	if k := ParseKallsyms([]byte(text)); k.Len() != 1 {
		t.Errorf("ParseKallsyms Len = %d, want 1", k.Len())
	}
}
