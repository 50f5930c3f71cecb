package compiler

import (
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
)

// tupleCompare emits a jump to label when (X == Y) (or X != Y) equals
// jumpIf, for tuples (bpftrace 0.26): both sides are laid out as X's type
// — Y converted as an assignment converts it, strings NUL-padded — with
// zeroed padding, then compared a word at a time.
func (g *gen) tupleCompare(e *lang.BinaryExpr, label string, jumpIf bool) error {
	if e.Op != "==" && e.Op != "!=" {
		return g.errorf(e, "tuples can only be compared with == and !=")
	}
	t := e.X.Type()
	a := g.allocMem(t.Size)
	if err := g.storeValue(a, t, e.X); err != nil {
		return err
	}
	g.zeroPadding(a, t)
	b := g.allocMem(t.Size)
	if err := g.storeValue(b, t, e.Y); err != nil {
		return err
	}
	g.zeroPadding(b, t)
	// equal: jump to label when equality is what is asked.
	wantEq := (e.Op == "==") == jumpIf
	differ := g.label("tupne")
	for at := 0; at < t.Size; {
		c := chunk(t.Size-at, a.off+at, b.off+at)
		ab, ao := g.baseOf(a.plus(at), asm.R3)
		g.emit(asm.LoadMem(asm.R1, ab, ao, sizeOf(c)))
		bb, bo := g.baseOf(b.plus(at), asm.R3)
		g.emit(asm.LoadMem(asm.R2, bb, bo, sizeOf(c)), asm.JNE.Reg(asm.R1, asm.R2, differ))
		at += c
	}
	if wantEq {
		g.emit(asm.Ja.Label(label))
		g.place(differ)
		g.emit(asm.Mov.Reg(asm.R1, asm.R1)) // R1 is set on every path here
		return nil
	}
	done := g.label("tupeq")
	g.emit(asm.Ja.Label(done))
	g.place(differ)
	g.emit(asm.Ja.Label(label))
	g.place(done)
	g.emit(asm.Mov.Reg(asm.R1, asm.R1)) // R1 is set on every path here
	return nil
}
