package stdlib

import (
	"testing"

	"golang.org/x/sys/unix"
)

// reg() offsets against the kernels' struct pt_regs: x86-64's members in
// arch/x86/include/asm/ptrace.h order, arm64's user_pt_regs (regs[31], sp,
// pc, pstate). On amd64 hosts TestRegOffsetsPtraceRegs also checks them
// against x/sys/unix's user_regs_struct.
func TestRegOffsets(t *testing.T) {
	for _, tc := range []struct {
		arch, name string
		off        int16
	}{
		{"amd64", "r15", 0}, {"amd64", "bp", 32}, {"amd64", "ax", 80}, {"amd64", "di", 112},
		{"amd64", "orig_ax", 120}, {"amd64", "ip", 128}, {"amd64", "sp", 152}, {"amd64", "ss", 160},
		{"arm64", "r0", 0}, {"arm64", "r8", 64}, {"arm64", "r29", 232}, {"arm64", "r30", 240},
		{"arm64", "sp", 248}, {"arm64", "pc", 256}, {"arm64", "pstate", 264},
	} {
		off, ok := RegOffset(tc.arch, tc.name)
		if !ok || off != tc.off {
			t.Errorf("%s %s: offset %d %v, want %d", tc.arch, tc.name, off, ok, tc.off)
		}
	}
	if _, ok := RegOffset("arm64", "ax"); ok {
		t.Error("arm64 has no ax")
	}
	if n := len(Registers["arm64"]); n != 34 {
		t.Errorf("arm64: %d registers, want 34 (user_pt_regs)", n)
	}
	if n := len(Registers["amd64"]); n != 21 {
		t.Errorf("amd64: %d registers, want 21 (pt_regs)", n)
	}
}

// Every signal the checker accepts is one code generation sends.
func TestSignalNumbers(t *testing.T) {
	for name, n := range Signals() {
		if n < 1 || n > 31 {
			t.Errorf("%s = %d", name, n)
		}
		if unix.SignalNum(name) != 0 && int(unix.SignalNum(name)) != n {
			t.Errorf("%s = %d, the kernel's is %d", name, n, unix.SignalNum(name))
		}
	}
	if len(Signals()) != 31 {
		t.Errorf("%d signals, want 1..31", len(Signals()))
	}
}
