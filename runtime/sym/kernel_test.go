package sym

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/internal/testkit"
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

// TestKallsymsLive round-trips real kernel symbols: kaddr of a function,
// then ksym of that address and of an address inside it.
func TestKallsymsLive(t *testing.T) {
	testkit.RequireRoot(t)
	s := New(Options{})
	start := time.Now()
	k, err := s.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d kernel code symbols in %v", k.Len(), time.Since(start))
	if k.Len() < 1000 {
		t.Fatalf("only %d kernel symbols: is kptr_restrict hiding addresses?", k.Len())
	}
	for _, name := range []string{"vfs_read", "schedule", "do_sys_openat2"} {
		addr, ok := s.KernelAddr(name)
		if !ok {
			t.Errorf("KernelAddr(%q) not found", name)
			continue
		}
		if got := s.KernelSym(addr); got != name {
			t.Errorf("KernelSym(KernelAddr(%q) = %#x) = %q", name, addr, got)
		}
		f := s.KernelFrame(addr + 3)
		if f.Sym != name || f.Offset != 3 {
			t.Errorf("KernelFrame(%s+3) = %s+%d", name, f.Sym, f.Offset)
		}
	}
	if got := s.KernelSym(1); got != "0x1" {
		t.Errorf("KernelSym(1) = %q, want 0x1 (bpftrace's unknown address)", got)
	}
	// A line of the live file, looked up independently.
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasSuffix(line, " T vfs_write") {
			var addr uint64
			for _, c := range line[:strings.IndexByte(line, ' ')] {
				addr = addr<<4 | uint64(strings.IndexRune("0123456789abcdef", c))
			}
			if got, _ := s.KernelAddr("vfs_write"); got != addr {
				t.Errorf("KernelAddr(vfs_write) = %#x, kallsyms says %#x", got, addr)
			}
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

// TestRefreshKernel: a BPF program loaded after kallsyms was read gets a
// name once the index is refreshed.
func TestRefreshKernel(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	testkit.NoBPFLeaks(t)
	s := New(Options{})
	if _, err := s.Kernel(); err != nil {
		t.Fatal(err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "gt_symtest",
		Type:         ebpf.SocketFilter,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		License:      "GPL",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	info, err := prog.Info()
	if err != nil {
		t.Fatal(err)
	}
	name := "bpf_prog_" + info.Tag + "_gt_symtest"
	if _, ok := s.KernelAddr(name); ok {
		t.Fatalf("%s found before the refresh", name)
	}
	s.RefreshKernel()
	addr, ok := s.KernelAddr(name)
	if !ok {
		t.Skipf("%s not in kallsyms (bpf_jit_kallsyms off?)", name)
	}
	if got := s.KernelSym(addr + 2); got != name {
		t.Errorf("KernelSym(prog+2) = %q, want %q", got, name)
	}
}
