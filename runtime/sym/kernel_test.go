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
