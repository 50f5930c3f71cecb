package compiler

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestConstantPredicate: a constant-false predicate leaves no body (the
// verifier refuses unreachable code) but keeps the body's maps and events;
// a constant-true one emits no test. Both load.
func TestConstantPredicate(t *testing.T) {
	spec := compileScript(t, "stdin", `BEGIN /0/ { printf("x"); }
tracepoint:syscalls:sys_enter_getpid /0/ { @ = count(); $i = 0; while ($i < 3) { $i++; } }
tracepoint:syscalls:sys_enter_getpid /!1/ { @s[1] = sum(2); }
BEGIN /1/ { printf("y"); }`)
	if len(spec.Programs) != 4 {
		t.Fatalf("%d programs", len(spec.Programs))
	}
	for _, p := range spec.Programs[:3] {
		if len(p.Insns) != 2 || p.Insns[0].OpCode != asm.Mov.Op(asm.ImmSource) || p.Insns[0].Constant != 0 || p.Insns[1].OpCode != asm.Return().OpCode {
			t.Errorf("%s: constant-false predicate compiled to\n%v", p.Name, p.Insns)
		}
	}
	// Up to printf's output call, no jump.
	for _, ins := range spec.Programs[3].Insns {
		if ins.IsBuiltinCall() {
			break
		}
		if ins.OpCode.Class().IsJump() {
			t.Errorf("constant-true predicate left a jump: %v", ins)
		}
	}
	names := map[string]bool{}
	for _, m := range spec.Maps {
		names[m.Name] = true
	}
	if !names["m_"] || !names["m_s"] {
		t.Errorf("maps of dead bodies missing: %v", names)
	}
	if len(spec.Events) != 2 {
		t.Errorf("%d events, want the 2 printfs", len(spec.Events))
	}
	load(t, spec)
}
