package runtime

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
)

// On a kernel that refuses fentry/fexit loads, --dry-run verifies kfunc
// programs as kprobe-type programs: a good one is noted as unattachable, a
// bad one is still a verifier error.
func TestDryRunVerifiesKfuncAsKprobe(t *testing.T) {
	requireBPF(t)
	kfuncSpec := func(insns asm.Instructions) *compiler.Spec {
		ap := &lang.AttachPoint{Raw: "kfunc:vfs_read", Provider: lang.ProbeKfunc, Func: "vfs_read"}
		return &compiler.Spec{
			Source: &lang.Source{Name: "stdin", Text: "kfunc:vfs_read { }"},
			Programs: []*compiler.Program{{
				Name: "c0_kf", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFEntry,
				AttachTo: "vfs_read", Attach: []*lang.AttachPoint{ap}, Insns: insns, License: "GPL",
			}},
		}
	}
	// Reads the first argument slot, as kfunc args do.
	good := asm.Instructions{
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	l, err := LoadWith(kfuncSpec(good), LoadOptions{VerifyOnly: true})
	if err != nil {
		t.Fatalf("good program: %v", err)
	}
	n := len(l.Unattachable)
	l.Close()
	if _, plain := Load(kfuncSpec(good)); plain == nil {
		t.Skip("this kernel loads fentry programs: nothing to fall back from")
	}
	if n != 1 || !errors.Is(l.Unattachable[0], errNoTrampoline) {
		t.Fatalf("unattachable = %v, want the one kfunc program", l.Unattachable)
	}
	// r2 is never written: the verifier must refuse it either way.
	bad := asm.Instructions{
		asm.Mov.Reg(asm.R0, asm.R2),
		asm.Return(),
	}
	if _, err := LoadWith(kfuncSpec(bad), LoadOptions{VerifyOnly: true}); err == nil {
		t.Fatal("bad program: no error")
	} else {
		var ve *VerifierError
		if !errors.As(err, &ve) {
			t.Fatalf("bad program: %v, want a verifier error", err)
		}
	}
}
