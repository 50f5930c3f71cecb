package stdlib

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// user_regs_struct (unix.PtraceRegs) starts with the kernel's pt_regs
// members in the same order: the offsets reg() uses must be its.
func TestRegOffsetsPtraceRegs(t *testing.T) {
	var r unix.PtraceRegs
	for name, off := range map[string]uintptr{
		"r15": unsafe.Offsetof(r.R15), "r14": unsafe.Offsetof(r.R14), "r13": unsafe.Offsetof(r.R13),
		"r12": unsafe.Offsetof(r.R12), "bp": unsafe.Offsetof(r.Rbp), "bx": unsafe.Offsetof(r.Rbx),
		"r11": unsafe.Offsetof(r.R11), "r10": unsafe.Offsetof(r.R10), "r9": unsafe.Offsetof(r.R9),
		"r8": unsafe.Offsetof(r.R8), "ax": unsafe.Offsetof(r.Rax), "cx": unsafe.Offsetof(r.Rcx),
		"dx": unsafe.Offsetof(r.Rdx), "si": unsafe.Offsetof(r.Rsi), "di": unsafe.Offsetof(r.Rdi),
		"orig_ax": unsafe.Offsetof(r.Orig_rax), "ip": unsafe.Offsetof(r.Rip), "cs": unsafe.Offsetof(r.Cs),
		"flags": unsafe.Offsetof(r.Eflags), "sp": unsafe.Offsetof(r.Rsp), "ss": unsafe.Offsetof(r.Ss),
	} {
		if got, ok := RegOffset("amd64", name); !ok || uintptr(got) != off {
			t.Errorf("%s: %d %v, user_regs_struct has it at %d", name, got, ok, off)
		}
	}
}
