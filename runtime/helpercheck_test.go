package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
)

// helperSpec is a tracepoint program whose code calls fn (recorded as
// called by builtin at span) and then reads the stack out of bounds when
// bad is set.
func helperSpec(src string, fn asm.BuiltinFunc, builtin string, span lang.Span, bad bool) *compiler.Spec {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Imm(asm.R3, 0),
		asm.Mov.Imm(asm.R4, 0),
		asm.Mov.Imm(asm.R5, 0),
		fn.Call(),
	}
	if bad {
		insns = append(insns, asm.LoadMem(asm.R0, asm.R10, -1000, asm.DWord))
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
	return &compiler.Spec{
		Programs: []*compiler.Program{{
			Name: "t_helper", Type: ebpf.TracePoint, License: "GPL",
			Attach:  []*lang.AttachPoint{tp("syscalls", "sys_enter_getpid")},
			Insns:   insns,
			Helpers: []compiler.HelperUse{{Fn: fn, Builtin: builtin, Span: span}},
		}},
		Source: &lang.Source{Name: "stdin", Text: src},
	}
}

// TestRefusedHelperNamed: the compiler asks the kernel nothing about
// helpers; a program the kernel refuses because its type may not call a
// helper (bpf_skb_output is for BTF tracing programs only) fails at load
// with the builtin that calls it, at its place, as the compiler's check
// did.
func TestRefusedHelperNamed(t *testing.T) {
	requireBPF(t)
	src := "tracepoint:syscalls:sys_enter_getpid { skboutput(1, 2, 3, 4); }"
	span := lang.Span{Start: lang.Pos{Line: 1, Col: 40, Offset: 39}, End: lang.Pos{Line: 1, Col: 61, Offset: 60}}
	l, err := Load(helperSpec(src, asm.FnSkbOutput, "skboutput", span, false))
	if err == nil {
		l.Close()
		t.Fatal("a tracepoint program calling bpf_skb_output loaded")
	}
	want := "stdin:1:40-61: ERROR: skboutput() is not supported by this kernel: it needs the BPF helper bpf_skb_output (added in Linux 5.5)\n" +
		src + "\n" + strings.Repeat(" ", 39) + strings.Repeat("~", 21)
	if got := err.Error(); got != want {
		t.Errorf("error:\n%s\nwant:\n%s", got, want)
	}
	var ve *VerifierError
	if errors.As(err, &ve) {
		t.Errorf("a verifier error, not the helper's: %v", err)
	}
}

// TestRefusedOtherwiseKeepsVerifierError: a program refused for another
// reason, whose helpers the kernel has, keeps the verifier's error.
func TestRefusedOtherwiseKeepsVerifierError(t *testing.T) {
	requireBPF(t)
	src := "tracepoint:syscalls:sys_enter_getpid { pid; }"
	span := lang.Span{Start: lang.Pos{Line: 1, Col: 40, Offset: 39}, End: lang.Pos{Line: 1, Col: 43, Offset: 42}}
	l, err := Load(helperSpec(src, asm.FnGetCurrentPidTgid, "pid", span, true))
	if err == nil {
		l.Close()
		t.Fatal("a program reading below its stack loaded")
	}
	var ve *VerifierError
	if !errors.As(err, &ve) {
		t.Fatalf("not a verifier error: %v", err)
	}
	if !strings.Contains(ve.Reason, "invalid") {
		t.Errorf("verifier reason %q", ve.Reason)
	}
}
