package compiler

import (
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

func (g *gen) block(b *lang.Block) error {
	for _, s := range b.Stmts {
		if err := g.stmt(s); err != nil {
			return err
		}
		if len(g.insns) > MaxInsns {
			// Stop here: generating the rest would only cost memory for
			// a program the kernel refuses.
			return g.errorf(s, "the probe's program is larger than the kernel's limit of %d BPF instructions (split the script or shorten the probe)", MaxInsns)
		}
	}
	return nil
}

// MaxInsns is the kernel's limit on a program's instructions
// (BPF_COMPLEXITY_LIMIT_INSNS, for a privileged loader).
const MaxInsns = 1_000_000

// stmt emits one statement; its temporaries (registers, stack and scratch
// space) are released at its end.
func (g *gen) stmt(s lang.Stmt) error {
	defer g.restore(g.at(s))
	m := g.markTemps()
	defer g.releaseTemps(m)
	regs := g.used
	defer func() { g.used = regs }()

	switch s := s.(type) {
	case *lang.ExprStmt:
		return g.exprStmt(s.X)
	case *lang.AssignStmt:
		return g.assign(s, s.Lhs, s.Op, s.Rhs)
	case *lang.VarDeclStmt:
		if s.Init == nil {
			return nil
		}
		return g.assign(s, s.Var, "=", s.Init)
	case *lang.IfStmt:
		lelse, lend := g.label("else"), g.label("endif")
		if err := g.cond(s.Cond, lelse, false); err != nil {
			return err
		}
		if err := g.block(s.Then); err != nil {
			return err
		}
		if s.Else != nil {
			g.emit(asm.Ja.Label(lend))
		}
		g.place(lelse)
		if s.Else != nil {
			if err := g.stmt(s.Else); err != nil {
				return err
			}
			g.place(lend)
		}
		return nil
	case *lang.Block:
		return g.block(s)
	case *lang.BlockStmt:
		return g.block(s.Body)
	case *lang.UnrollStmt:
		n := s.N
		if n == 0 {
			if v, ok := g.constInt(s.Count); ok {
				n = int(v)
			}
		}
		for i := 0; i < n; i++ {
			if err := g.block(s.Body); err != nil {
				return err
			}
		}
		return nil
	case *lang.WhileStmt:
		if callbackLoop(s) {
			return g.rangeLoop(s)
		}
		top, end := g.label("while"), g.label("wend")
		g.place(top)
		if err := g.cond(s.Cond, end, false); err != nil {
			return err
		}
		g.loops = append(g.loops, loop{brk: end, cont: top})
		err := g.block(s.Body)
		g.loops = g.loops[:len(g.loops)-1]
		if err != nil {
			return err
		}
		g.emit(asm.Ja.Label(top))
		if !g.referenced(end) {
			// The condition is always true and nothing breaks out.
			if !leaves(s.Body) {
				return g.errorf(s, "while loop never ends: its condition is always true and its body has no break, return or exit()")
			}
			g.dead = true // only return/exit() leave: what follows is unreachable
		}
		g.place(end)
		return nil
	case *lang.JumpStmt:
		switch s.Kind {
		case lang.Return:
			if s.Value != nil {
				if err := g.exprStmt(s.Value); err != nil {
					return err
				}
			}
			g.Return()
			return nil
		case lang.Break, lang.Continue:
			if len(g.loops) == 0 {
				return g.errorf(s, "break or continue outside a loop")
			}
			l := g.loops[len(g.loops)-1]
			if s.Kind == lang.Break {
				g.emit(asm.Ja.Label(l.brk))
			} else {
				g.emit(asm.Ja.Label(l.cont))
			}
			g.dead = true // until a label someone jumps to
			return nil
		}
	case *lang.ForStmt:
		return g.forStmt(s)
	}
	return g.errorf(s, "statement %T is not supported", s)
}

func (g *gen) exprStmt(e lang.Expr) error {
	switch e := e.(type) {
	case *lang.CallExpr:
		_, err := g.callBuiltin(e, e.Name, e.Args)
		return err
	case *lang.UnaryExpr:
		if e.Op == "++" || e.Op == "--" {
			_, err := g.incdec(e)
			return err
		}
	case *lang.TernaryExpr:
		// As a statement only the branches' effects matter (they may be
		// calls without a value, like printf).
		if v, ok := g.constInt(e.Cond); ok {
			if v != 0 {
				return g.exprStmt(e.Then)
			}
			return g.exprStmt(e.Else)
		}
		lelse, lend := g.label("else"), g.label("fi")
		if err := g.cond(e.Cond, lelse, false); err != nil {
			return err
		}
		if err := g.exprStmt(e.Then); err != nil {
			return err
		}
		g.emit(asm.Ja.Label(lend))
		g.place(lelse)
		if err := g.exprStmt(e.Else); err != nil {
			return err
		}
		g.place(lend)
		g.emit(nopJump())
		return nil
	}
	t := e.Type()
	if t != nil && !isScalar(t) {
		_, err := g.evalMem(e)
		return err
	}
	_, err := g.evalInt(e)
	return err
}

// assign emits lhs OP= rhs.
func (g *gen) assign(n lang.Node, lhs lang.Expr, op string, rhs lang.Expr) error {
	switch l := lhs.(type) {
	case *lang.MapExpr:
		if rt := rhs.Type(); op == "=" && rt != nil && rt.Kind.IsAggregation() {
			call, ok := rhs.(*lang.CallExpr)
			if !ok {
				return g.errorf(rhs, "an aggregation must be a call like count()")
			}
			g.aggDest = l
			_, err := g.callBuiltin(call, call.Name, call.Args)
			g.aggDest = nil
			return err
		}
		if op == "=" {
			return g.mapWrite(l, rhs)
		}
		_, err := g.mapModify(n, l, strings.TrimSuffix(op, "="), rhs, false)
		return err
	case *lang.VarExpr:
		m, ok := g.vars[l.Info]
		if !ok {
			return g.errorf(l, "variable %s has no slot", l.Name)
		}
		vt := varType(l)
		if op == "=" {
			if isScalar(vt) {
				r, err := g.evalInt(rhs)
				if err != nil {
					return err
				}
				g.normalize(r, vt)
				g.storeReg(m, r, 8)
				return nil
			}
			return g.storeValue(m, vt, rhs)
		}
		_, err := g.varModify(n, l, strings.TrimSuffix(op, "="), rhs, false)
		return err
	}
	return g.errorf(lhs, "cannot assign to this expression")
}

// varModify emits $x OP= v and returns the new (or, postfix, old) value.
func (g *gen) varModify(n lang.Node, v *lang.VarExpr, op string, rhs lang.Expr, postfix bool) (asm.Register, error) {
	m, ok := g.vars[v.Info]
	vt := varType(v)
	if !ok || !isScalar(vt) {
		return 0, g.errorf(n, "%s needs an integer variable", op)
	}
	r, err := g.reg(n)
	if err != nil {
		return 0, err
	}
	base, off := g.baseOf(m, asm.R1)
	g.emit(asm.LoadMem(r, base, off, asm.DWord))
	var old asm.Register
	if postfix {
		if old, err = g.reg(n); err != nil {
			return 0, err
		}
		g.emit(asm.Mov.Reg(old, r))
	}
	rt := types.S64
	// A pointer variable steps by its pointee's size.
	scale := int64(1)
	if op == "+" || op == "-" {
		scale = elemScale(vt)
	}
	if rhs == nil {
		err = g.arith(n, op, r, 0, scale, true, g.signedOp(vt, rt))
	} else if c, ok := g.constInt(rhs); ok && fitsImm(c*scale) {
		err = g.arith(n, op, r, 0, c*scale, true, g.signedOp(vt, rhs.Type()))
	} else {
		ry, err2 := g.evalInt(rhs)
		if err2 != nil {
			return 0, err2
		}
		if scale != 1 {
			g.emit(asm.Mul.Imm(ry, int32(scale)))
		}
		err = g.arith(n, op, r, ry, 0, false, g.signedOp(vt, rhs.Type()))
		g.free(ry)
	}
	if err != nil {
		return 0, err
	}
	g.normalize(r, vt)
	g.storeReg(m, r, 8)
	if postfix {
		g.free(r)
		return old, nil
	}
	return r, nil
}

func (g *gen) incdec(e *lang.UnaryExpr) (asm.Register, error) {
	op := "+"
	if e.Op == "--" {
		op = "-"
	}
	switch x := e.X.(type) {
	case *lang.VarExpr:
		return g.varModify(e, x, op, nil, e.Postfix)
	case *lang.MapExpr:
		return g.mapModify(e, x, op, nil, e.Postfix)
	}
	return 0, g.errorf(e, "%s needs a variable or a map", e.Op)
}

// leaves reports whether a loop body can leave the program (return,
// exit() or a failed assert()).
func leaves(b *lang.Block) bool {
	found := false
	lang.Inspect(b, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.JumpStmt:
			if n.Kind == lang.Return {
				found = true
			}
		case *lang.CallExpr:
			if n.Name == "exit" || n.Name == "assert" {
				found = true
			}
		}
		return !found
	})
	return found
}
