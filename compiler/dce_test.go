package compiler

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestEliminateDead: unreachable instructions go (after an exit, after an
// unconditional jump, a subprogram nobody references), reachable ones stay
// in order, numeric jumps become symbolic and still reach their target.
func TestEliminateDead(t *testing.T) {
	in := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol("entry"),
		asm.JEq.Imm(asm.R1, 0, "over"),
		asm.Ja.Label("tail"),
		asm.Mov.Imm(asm.R0, 7), // dead: after the goto, no label
		asm.Mov.Imm(asm.R0, 1).WithSymbol("over"),
		asm.Mov.Imm(asm.R0, 2).WithSymbol("tail"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 9), // dead: after the exit
		asm.Return(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("unused_sub"), // never referenced
		asm.Return(),
	}
	out, err := eliminateDead(in)
	if err != nil {
		t.Fatal(err)
	}
	var consts []int64
	for _, ins := range out {
		if ins.OpCode == asm.Mov.Op(asm.ImmSource) {
			consts = append(consts, ins.Constant)
		}
	}
	if len(out) != 6 || len(consts) != 3 || consts[0] != 0 || consts[1] != 1 || consts[2] != 2 {
		t.Errorf("got\n%v", out)
	}

	// A numeric jump over a dead instruction to a live one; a called
	// subprogram and one whose address is loaded stay.
	skip := asm.JEq.Imm(asm.R1, 0, "")
	skip.Offset = 2
	in = asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol("entry"),
		skip,
		asm.Call.Label("sub"),
		asm.Ja.Label("end"),
		funcRef(asm.R2, "cb"),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("end"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 3).WithSymbol("sub"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 4).WithSymbol("cb"),
		asm.Return(),
	}
	out, err = eliminateDead(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("nothing is dead here, got\n%v", out)
	}
	if ref := out[1].Reference(); ref == "" || out[4].Symbol() != ref {
		t.Errorf("numeric jump not made symbolic to its target: %v / %v", out[1], out[4])
	}
	// Remove the call: sub goes; the function pointer's cb stays.
	in[2] = asm.Mov.Imm(asm.R0, 5)
	out, err = eliminateDead(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in)-2 {
		t.Errorf("uncalled subprogram kept:\n%v", out)
	}
	if _, err := eliminateDead(asm.Instructions{asm.Ja.Label("nowhere")}); err == nil {
		t.Error("a jump to an unknown symbol passed")
	}
}

// TestConstantConditionsLoad: every construct with a constant condition
// compiles to code the verifier takes (it refuses unreachable
// instructions), in BEGIN and in a probe with a context, inside and
// outside a for loop's callback.
func TestConstantConditionsLoad(t *testing.T) {
	scripts := []string{
		`BEGIN { if (0) { printf("x\n"); } exit(); }`,
		`BEGIN { if (1) { printf("x\n"); } else { printf("y\n"); } exit(); }`,
		`BEGIN { $a = 1 ? "yes" : "no"; printf("%s\n", $a); }`,
		`BEGIN { $a = 0 ? "yes" : "no"; printf("%s\n", $a); }`,
		`BEGIN { $a = 1 ? (int8)1 : 0; printf("%d\n", $a); }`,
		`BEGIN { $x = 1; printf("%d\n", $x && 0); }`,
		`BEGIN { $x = 1; printf("%d %d %d\n", 0 || $x, 1 || $x, $x || 1); }`,
		`BEGIN { $x = 1; if (0 || $x) { printf("a\n"); } if ($x && 0) { printf("b\n"); } }`,
		`BEGIN { while (0) { printf("w\n"); } $i = 0; while (1) { $i++; if ($i > 3) { break; } } }`,
		`BEGIN { unroll(3) { if (0) { printf("u\n"); } } }`,
		`BEGIN /0 && 1/ { printf("p\n"); } BEGIN /1 || 0/ { printf("q\n"); }`,
		`BEGIN { @m[1] = 1; for ($kv : @m) { if (0) { continue; } if (1) { break; } printf("%d\n", $kv.0); } }`,
		`BEGIN { if (1) { exit(); return; } printf("not reached\n"); }`,
		`BEGIN { $s = (2 > 1) ? "a" : "b"; $t = !0 ? 3 : 4; printf("%s %d\n", $s, $t); }`,
		`tracepoint:syscalls:sys_enter_getpid /0 || pid == 1/ { if (0) { @a = count(); } @b = (1 ? 2 : 3); }`,
	}
	for _, s := range scripts {
		t.Run(s, func(t *testing.T) {
			load(t, compileScript(t, "stdin", s))
		})
	}
}
