package sym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"
)

// cfiProg is a chain without frame pointers (built -fomit-frame-pointer):
// main → funcA → funcB → funcC → funcD, funcC with a 0x28-byte frame.
const cfiProg = `
#define T __attribute__((noipa))
volatile long sink;
T long funcD(long k) { sink += k; return k + 1; }
T long funcC(long k) { long v[4] = {k, k + 1, k + 2, k + 3}; sink += v[k & 3]; return funcD(k) + 1; }
T long funcB(long k) { return funcC(k) * 2 + 1; }
T long funcA(long k) { return funcB(k) + 1; }
int main(int argc, char **argv) { return (int)funcA(argc); }
`

type cfiFunc struct {
	addr uint64
	code []byte
}

func cfiFuncs(t *testing.T, path string, names ...string) map[string]cfiFunc {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]cfiFunc{}
	for _, s := range syms {
		for _, n := range names {
			if s.Name == n && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value >= text.Addr {
				lo := s.Value - text.Addr
				out[n] = cfiFunc{addr: s.Value, code: data[lo : lo+s.Size]}
			}
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			t.Fatalf("%s: no function %s", path, n)
		}
	}
	return out
}

// frameSize is the N of a leading `sub $N,%rsp` (0 without one) and
// the instruction's length.
func frameSize(code []byte) (int, int) {
	if bytes.HasPrefix(code, []byte{0xf3, 0x0f, 0x1e, 0xfa}) { // endbr64
		n, l := frameSize(code[4:])
		return n, l + 4
	}
	if bytes.HasPrefix(code, []byte{0x48, 0x83, 0xec}) {
		return int(code[3]), 4
	}
	return 0, 0
}

// retAfterCall is the address after caller's call to callee.
func retAfterCall(t *testing.T, fs map[string]cfiFunc, caller, callee string) uint64 {
	t.Helper()
	c := fs[caller]
	for i := 0; i+5 <= len(c.code); i++ {
		if c.code[i] == 0xe8 {
			next := c.addr + uint64(i+5)
			if uint64(int64(next)+int64(int32(binary.LittleEndian.Uint32(c.code[i+1:])))) == fs[callee].addr {
				return next
			}
		}
	}
	t.Fatalf("%s does not call %s", caller, callee)
	return 0
}

// TestCFIUnwindWithoutFramePointers: gcc's .eh_frame rules for functions
// without frame pointers give CFA = rsp+8 at entry and rsp+8+N after a
// `sub $N,%rsp`, the return address at CFA-8; stepping from funcD's entry
// through a stack laid out as the calls leave it returns into funcC,
// funcB, funcA and main, right after each call.
func TestCFIUnwindWithoutFramePointers(t *testing.T) {
	requireGCC(t)
	bin := build(t, t.TempDir(), "nofp", "gcc", cfiProg, "-fomit-frame-pointer", "-fno-optimize-sibling-calls", "-no-pie")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := ReadFrameTable(f)
	if err != nil {
		t.Fatal(err)
	}
	fs := cfiFuncs(t, bin, "main", "funcA", "funcB", "funcC", "funcD")
	for _, name := range []string{"funcA", "funcB", "funcC", "funcD"} {
		fn := fs[name]
		row, err := tab.RowAt(fn.addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if row.cfaReg != dwRSP || row.cfaOff != 8 || row.regs[dwRA] != (regRule{kind: ruleOffset, off: -8}) {
			t.Errorf("%s entry: CFA r%d%+d, RA %+v; want rsp+8, RA at CFA-8", name, row.cfaReg, row.cfaOff, row.regs[dwRA])
		}
		if n, l := frameSize(fn.code); n > 0 {
			row, err := tab.RowAt(fn.addr + uint64(l))
			if err != nil {
				t.Fatal(err)
			}
			if row.cfaReg != dwRSP || row.cfaOff != int64(8+n) {
				t.Errorf("%s after sub $%d: CFA r%d%+d, want rsp%+d", name, n, row.cfaReg, row.cfaOff, 8+n)
			}
			// At the final ret (after add $N,%rsp, an advance_loc1 away
			// in funcC): rsp+8 again.
			if last := fn.code[len(fn.code)-1]; last == 0xc3 {
				row, err := tab.RowAt(fn.addr + uint64(len(fn.code)-1))
				if err != nil || row.cfaReg != dwRSP || row.cfaOff != 8 {
					t.Errorf("%s at ret: CFA r%d%+d (%v), want rsp+8", name, row.cfaReg, row.cfaOff, err)
				}
			}
		}
	}
	if n, _ := frameSize(fs["funcC"].code); n == 0 {
		t.Fatalf("funcC has no stack frame: % x", fs["funcC"].code[:8])
	}

	// The stack at funcD's first instruction: each caller's return address
	// on top of its frame (sub $N from the prologue, the rest of its own
	// frame as the CFI of the call site says).
	chain := []string{"funcD", "funcC", "funcB", "funcA", "main"}
	var want []uint64
	sp0 := uint64(0x7ffd0000)
	var mem []byte
	put := func(off int, v uint64) {
		for len(mem) < off+8 {
			mem = append(mem, 0xcc)
		}
		binary.LittleEndian.PutUint64(mem[off:], v)
	}
	off := 0
	for i := 0; i+1 < len(chain); i++ {
		ret := retAfterCall(t, fs, chain[i+1], chain[i])
		want = append(want, ret)
		put(off, ret)
		// The caller's CFA at its call: rsp there is sp after the return
		// address is popped; the row tells how far up its own return is.
		row, err := tab.RowAt(ret - 1)
		if err != nil {
			t.Fatal(err)
		}
		if row.cfaReg != dwRSP {
			t.Fatalf("%s at its call: CFA in r%d, not rsp", chain[i+1], row.cfaReg)
		}
		// The caller's CFA is its rsp at the call (ours plus the popped
		// return address) + cfaOff; its own return address is at CFA-8.
		off += int(row.cfaOff)
	}
	put(off, 0) // main's return address is unknown here: the walk ends
	r := UnwindRegs{IP: fs["funcD"].addr, SP: sp0}
	m := StackMem{Base: sp0, Data: mem}
	var got []uint64
	for pc := r.IP; len(got) < 10; {
		next, ok := tab.Step(pc, r, m)
		if !ok {
			break
		}
		got = append(got, next.IP)
		r, pc = next, next.IP-1
	}
	if len(got) < len(want) {
		t.Fatalf("unwound %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d: return address %#x, want %#x (%s)", i+1, got[i], want[i], chain[i+1])
		}
	}
}

// cfiCIE is a CIE as gcc writes it for x86-64: "zR", code align 1, data
// align -8, return address r16, pc-relative sdata4 FDE pointers; initial
// rules CFA = rsp+8, RA at CFA-8.
func cfiCIE() []byte {
	body := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0}
	return append(le32(uint32(len(body))), body...)
}

func le32(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }

// TestCFIProgram runs a frame-pointer prologue and an epilogue in the
// middle of a function (remember_state/restore_state) through the
// interpreter: rows at each step are what the instructions say.
func TestCFIProgram(t *testing.T) {
	const base, lo = 0x1000, 0x401000
	cie := cfiCIE()
	insns := []byte{
		0x41,     // advance_loc 1 (push %rbp)
		0x0e, 16, // def_cfa_offset 16
		0x86, 2, // offset r6 at CFA-16
		0x43,    // advance_loc 3 (mov %rsp,%rbp)
		0x0d, 6, // def_cfa_register r6
		0x48,       // advance_loc 8
		0x0a,       // remember_state
		0x0c, 7, 8, // def_cfa r7+8 (after leave)
		0xc6, // restore r6
		0x41, // advance_loc 1 (ret)
		0x0b, // restore_state
		0, 0,
	}
	fdeOff := len(cie)
	// FDE: length, CIE pointer (relative to here), pc begin (pcrel), range, aug len 0.
	var body []byte
	body = append(body, le32(uint32(fdeOff+4))...)
	pcField := base + fdeOff + 8
	body = append(body, le32(uint32(int32(lo-pcField)))...)
	body = append(body, le32(0x40)...)
	body = append(body, 0)
	body = append(body, insns...)
	sec := append(append(append([]byte{}, cie...), le32(uint32(len(body)))...), body...)
	sec = append(sec, 0, 0, 0, 0)
	tab, err := parseFrames(sec, base, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.fdes) != 1 || tab.fdes[0].lo != lo || tab.fdes[0].hi != lo+0x40 {
		t.Fatalf("FDEs %+v, want one at %#x+0x40", tab.fdes, lo)
	}
	for _, c := range []struct {
		pc     uint64
		reg    int
		off    int64
		rbpOff int64 // 0: rbp unchanged
	}{
		{lo, dwRSP, 8, 0},
		{lo + 1, dwRSP, 16, -16},
		{lo + 3, dwRSP, 16, -16},
		{lo + 4, dwRBP, 16, -16},
		{lo + 12, dwRSP, 8, 0},    // remembered, then CFA rsp+8 and rbp restored
		{lo + 13, dwRBP, 16, -16}, // restore_state
		{lo + 0x3f, dwRBP, 16, -16},
	} {
		row, err := tab.RowAt(c.pc)
		if err != nil {
			t.Fatalf("%#x: %v", c.pc, err)
		}
		rbp := row.regs[dwRBP]
		if row.cfaReg != c.reg || row.cfaOff != c.off || (c.rbpOff != 0 && rbp != regRule{kind: ruleOffset, off: c.rbpOff}) || (c.rbpOff == 0 && rbp.kind != ruleSame) {
			t.Errorf("%#x: CFA r%d%+d rbp %+v; want r%d%+d rbp at %d", c.pc, row.cfaReg, row.cfaOff, rbp, c.reg, c.off, c.rbpOff)
		}
	}
	if _, err := tab.RowAt(lo + 0x40); err == nil {
		t.Errorf("address past the FDE has a row")
	}
	// A step from inside the frame: caller's rbp and ip from memory.
	sp, bp := uint64(0x7000), uint64(0x7020)
	mem := StackMem{Base: sp, Data: make([]byte, 0x40)}
	binary.LittleEndian.PutUint64(mem.Data[bp-sp:], 0x7100)     // saved rbp at CFA-16
	binary.LittleEndian.PutUint64(mem.Data[bp-sp+8:], 0x401234) // return address at CFA-8
	next, ok := tab.Step(lo+8, UnwindRegs{IP: lo + 8, SP: sp, BP: bp, HasBP: true}, mem)
	if !ok || next.IP != 0x401234 || next.SP != bp+16 || next.BP != 0x7100 {
		t.Errorf("step: %+v ok %v; want ip 0x401234 sp %#x bp 0x7100", next, ok, bp+16)
	}
}
