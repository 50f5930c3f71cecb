package sym

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/lang/types"
)

func newStackMap(t *testing.T, entries uint32) *ebpf.Map {
	return newStackMapDepth(t, entries, MaxStackDepth)
}

// newStackMapDepth is a STACK_TRACE map holding depth frames per stack.
func newStackMapDepth(t *testing.T, entries uint32, depth int) *ebpf.Map {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "stack_k",
		Type:       ebpf.StackTrace,
		KeySize:    4,
		ValueSize:  uint32(depth * 8),
		MaxEntries: entries,
	})
	if err != nil {
		t.Fatalf("create STACK_TRACE map: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// chainC calls getpid through a known chain of frame-pointer functions
// each time a byte arrives on stdin: main -> level1 -> level2 -> do_sys.
const chainC = `
#include <stdio.h>
#include <unistd.h>
#define KEEP __attribute__((noinline, used))
KEEP void do_sys(void) {
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
}
KEEP void level2(void) { do_sys(); __asm__ volatile(""); }
KEEP void level1(void) { level2(); __asm__ volatile(""); }
int main(void) {
	printf("do_sys %lx\n", (unsigned long)&do_sys);
	printf("ready 0\n");
	fflush(stdout);
	char c;
	while (read(0, &c, 1) == 1)
		level1();
	return 0;
}
`

// stackProbe loads a raw_tracepoint/sys_enter program that, for getpid
// calls of process pid, stores bpf_get_stackid's kernel and user stack ids
// in result[0] and result[1].
func stackProbe(t *testing.T, pid int, kmap, umap *ebpf.Map) (result *ebpf.Map) {
	t.Helper()
	res, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 24, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R1, 8, asm.DWord), // args[1]: syscall number
		asm.JNE.Imm(asm.R7, int32(syscall.SYS_GETPID), "out"),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(pid), "out"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, kmap.FD()),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnGetStackid.Call(),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, umap.FD()),
		asm.Mov.Imm(asm.R3, 1<<8), // BPF_F_USER_STACK
		asm.FnGetStackid.Call(),
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, res.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.StoreMem(asm.R0, 0, asm.R8, asm.DWord),
		asm.StoreMem(asm.R0, 8, asm.R9, asm.DWord),
		// A stack id may be 0, so a flag says the probe ran.
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 16, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, Instructions: insns, License: "GPL"})
	if err != nil {
		t.Fatalf("load stack probe: %v", err)
	}
	t.Cleanup(func() { prog.Close() })
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sys_enter", Program: prog})
	if err != nil {
		t.Fatalf("attach raw_tracepoint/sys_enter: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return res
}

// TestStackLive records a real kernel and user stack of a helper's getpid
// and checks both symbolized: the user chain as the source has it, the
// kernel frames as names kallsyms holds.
func TestStackLive(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.GCC)
	testkit.NoBPFLeaks(t)
	bin := build(t, t.TempDir(), "chain", "gcc", chainC, "-O0", "-fno-omit-frame-pointer", "-fPIE", "-pie")
	p := start(t, bin)
	kmap, umap := newStackMap(t, 64), newStackMap(t, 64)
	res := stackProbe(t, p.pid(), kmap, umap)
	// A second probe stores the same stacks in maps sized for kstack(3) and
	// ustack(2), which the Symbolizer must read by their names.
	kmap3, umap2 := newStackMapDepth(t, 64, 3), newStackMapDepth(t, 64, 2)
	res2 := stackProbe(t, p.pid(), kmap3, umap2)
	if _, err := p.stdin.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	readIDs := func(res *ebpf.Map) (ids [2]int64) {
		deadline := time.Now().Add(5 * time.Second)
		ran := false
		for !ran && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			b, err := res.LookupBytes(uint32(0))
			if err != nil {
				t.Fatal(err)
			}
			ids[0] = int64(binary.LittleEndian.Uint64(b))
			ids[1] = int64(binary.LittleEndian.Uint64(b[8:]))
			ran = binary.LittleEndian.Uint64(b[16:]) == 1
		}
		if !ran {
			t.Fatal("the probe did not run")
		}
		if ids[0] < 0 || ids[1] < 0 {
			t.Fatalf("bpf_get_stackid failed: kernel %d, user %d", ids[0], ids[1])
		}
		return ids
	}
	ids, ids2 := readIDs(res), readIDs(res2)
	s := New(Options{})
	s.SetStackMaps(kmap, umap)
	s.SetStackMap("stack_k_3", kmap3)
	s.SetStackMap("stack_u_2", umap2)
	kinfo, uinfo := types.StackInfo{Limit: 127}, types.StackInfo{User: true}
	kframes, err := s.Stack(kinfo, ids[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	var knames []string
	for _, f := range kframes {
		if f.Sym == "" {
			t.Errorf("kernel frame %#x unresolved", f.Addr)
			continue
		}
		if a, ok := k.Addr(f.Sym); !ok || a != f.Addr-f.Offset {
			t.Errorf("kernel frame %s+%d: kallsyms has %s at %#x", f.Sym, f.Offset, f.Sym, a)
		}
		knames = append(knames, f.Sym)
	}
	t.Logf("kernel stack: %v", knames)
	if !slices.Contains(knames, "do_syscall_64") {
		t.Errorf("kernel stack %v lacks do_syscall_64", knames)
	}
	uframes, err := s.Stack(uinfo, ids[1], p.pid())
	if err != nil {
		t.Fatal(err)
	}
	var unames []string
	for _, f := range uframes {
		unames = append(unames, f.Sym)
	}
	t.Logf("user stack: %v", unames)
	want := []string{"do_sys", "level2", "level1", "main"}
	if len(unames) < len(want) || !slices.Equal(unames[:len(want)], want) {
		t.Errorf("user stack %v, want it to start with %v", unames, want)
	}
	if len(uframes) > 0 && (uframes[0].Module != bin || uframes[0].Addr-uframes[0].Offset != p.addrs["do_sys"]) {
		t.Errorf("innermost user frame %+v, want in %s at do_sys %#x", uframes[0], bin, p.addrs["do_sys"])
	}

	// The limited maps hold the innermost frames only.
	k3, err := s.Stack(types.StackInfo{Limit: 3}, ids2[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	// Frame 0 is the probe program, a different one for each map pair.
	if len(kframes) < 3 || len(k3) != 3 || !strings.HasPrefix(k3[0].Sym, "bpf_prog_") || !slices.Equal(k3[1:], kframes[1:3]) {
		t.Errorf("kstack(3) = %+v, want the 3 innermost of %+v", k3, kframes)
	}
	u2, err := s.Stack(types.StackInfo{User: true, Limit: 2}, ids2[1], p.pid())
	if err != nil {
		t.Fatal(err)
	}
	if len(uframes) < 2 || !slices.Equal(u2, uframes[:2]) {
		t.Errorf("ustack(2) = %+v, want the 2 innermost of %+v", u2, uframes)
	}
	// A limit with no map of its own is an error naming the map, not a
	// read of another limit's map.
	if _, err := s.Stack(types.StackInfo{Limit: 5}, ids[0], 0); err == nil || !strings.Contains(err.Error(), "stack_k_5") {
		t.Errorf("Stack with no stack_k_5 map: error %v", err)
	}
}

func TestStackErrors(t *testing.T) {
	s := New(Options{})
	_, err := s.Stack(types.StackInfo{}, -int64(syscall.EEXIST), 0)
	if !errors.Is(err, syscall.EEXIST) {
		t.Errorf("Stack(-EEXIST) error = %v", err)
	}
	if _, err := s.Stack(types.StackInfo{}, 3, 0); err == nil {
		t.Errorf("Stack without a map succeeded")
	}
	s.CountStackError(-int64(syscall.EEXIST), 3)
	s.CountStackError(-int64(syscall.ENOMEM), 1)
	s.CountStackError(-int64(syscall.E2BIG), 2) // the stack map is full
	s.CountStackError(5, 10)
	e := s.StackErrors()
	if e.Collisions != 3 || e.NoMemory != 3 || e.Total() != 6 || len(e.Warnings()) != 2 {
		t.Errorf("StackErrors = %+v, warnings %q", e, e.Warnings())
	}
	if w := e.Warnings(); len(w) == 2 && w[1] != "WARNING: 3 stack traces lost: stack map full (raise GOTRACE_STACK_MAP_ENTRIES, default 4096)" {
		t.Errorf("map-full warning %q", w[1])
	}
}

// TestStackAddrsByHash: gotrace's stack maps are hash maps keyed by the
// u64 stack id (ABI.md); StackAddrs reads the frames stored under an id
// up to the first zero, and an id the map lacks is ErrNoStack.
func TestStackAddrsByHash(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "stack_u_3", Type: ebpf.Hash, KeySize: 8, ValueSize: 3 * 8, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const id = uint64(0x7123456789abcdef)
	val := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0x401000), 0x402000)
	val = binary.LittleEndian.AppendUint64(val, 0)
	if err := m.Put(id, val); err != nil {
		t.Fatal(err)
	}
	s := New(Options{})
	s.SetStackMap("stack_u_3", m)
	info := types.StackInfo{User: true, Limit: 3}
	got, err := s.StackAddrs(info, int64(id))
	if err != nil || !slices.Equal(got, []uint64{0x401000, 0x402000}) {
		t.Errorf("StackAddrs(%#x) = %x, %v; want [401000 402000]", id, got, err)
	}
	if _, err := s.StackAddrs(info, int64(id+1)); !errors.Is(err, ErrNoStack) {
		t.Errorf("StackAddrs of an absent id: %v, want ErrNoStack", err)
	}
}
