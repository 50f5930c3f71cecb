package compiler

import (
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/stdlib"
)

// Splitting a run-once clause (BEGIN, END, self:signal) whose body is too
// big for the verifier into several programs run one after another.
//
// The verifier walks a program's first path to its end before any branch
// it left for later, and refuses a program once more than 8,192 of those
// are pending (BPF_COMPLEXITY_LIMIT_JMP_SEQ, "The sequence of 8193 jumps
// is too complex"): every map update's map-full check is such a branch,
// so a BEGIN of 8,200 map assignments did not load (bpftrace's does not
// finish compiling either). A clause the runtime runs once with test-run,
// whose top-level statements share nothing but maps, runs the same when
// its statements are cut into consecutive programs, each run in turn:
// no scratch variables (they live on the program's stack), no predicate,
// and nothing before the last part that can end the probe early (exit(),
// return, assert()), which would have skipped the statements after it.

// splitJumps is the most conditional jumps a program keeps before its
// clause is split (half the verifier's limit: each part stays well clear).
const splitJumps = 4096

// condJumps counts insns' conditional jumps.
func condJumps(insns asm.Instructions) int {
	n := 0
	for _, ins := range insns {
		op := ins.OpCode
		if !op.Class().IsJump() {
			continue
		}
		switch op.JumpOp() {
		case asm.Ja, asm.Call, asm.Exit:
			continue
		}
		n++
	}
	return n
}

// splittable reports whether clause p (on attach points aps) runs once
// and may be cut between its top-level statements.
func splittable(p *lang.Probe, aps []*lang.AttachPoint) bool {
	if p.Pred != nil || len(p.Vars) > 0 || p.Body == nil || len(p.Body.Stmts) < 2 {
		return false
	}
	for _, ap := range aps {
		switch ap.Provider.Type().Trigger {
		case lang.TriggerBegin, lang.TriggerEnd, lang.TriggerSignal:
		default:
			return false
		}
	}
	return true
}

// mayEnd reports whether s can end its probe early: a return, exit(),
// assert(), or a call that is no builtin (a macro, whose body is not
// looked into).
func mayEnd(s lang.Stmt) bool {
	end := false
	lang.Inspect(s, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.JumpStmt:
			if n.Kind == lang.Return {
				end = true
			}
		case *lang.CallExpr:
			b, _, ok := stdlib.Resolve(n.Name)
			if !ok || b.Name == "exit" || b.Name == "assert" {
				end = true
			}
		}
		return !end
	})
	return end
}

// compileClause compiles clause p's programs on attach points aps,
// appending them to the spec: one, or for a run-once clause too big for
// the verifier, several, each a run of its statements, in order.
func (c *compiler) compileClause(clause int, p *lang.Probe, aps []*lang.AttachPoint) error {
	if !splittable(p, aps) {
		prog, err := c.compileProgram(clause, p, aps)
		if err != nil {
			return err
		}
		c.spec.Programs = append(c.spec.Programs, prog)
		return nil
	}
	return c.compileParts(clause, p, aps, p.Body.Stmts, mayEndAt(p.Body.Stmts), false)
}

// mayEndAt is the index of the first statement that may end the probe
// early, or len(stmts).
func mayEndAt(stmts []lang.Stmt) int {
	for i, s := range stmts {
		if mayEnd(s) {
			return i
		}
	}
	return len(stmts)
}

// compileParts compiles stmts (the whole body, or a run of it) as one
// program, or, when that has more than splitJumps conditional jumps and
// the run may be cut, as the programs of two shorter runs. stmts[endAt]
// is the first statement that may end the probe: it and every statement
// after it stay in one part (the last), so a cut comes before
// stmts[endAt] at the latest. cont marks a part that continues the
// clause's previous one.
func (c *compiler) compileParts(clause int, p *lang.Probe, aps []*lang.AttachPoint, stmts []lang.Stmt, endAt int, cont bool) error {
	sub := p
	if len(stmts) != len(p.Body.Stmts) {
		cp := *p
		cp.Body = &lang.Block{Loc: p.Body.Loc, Stmts: stmts}
		sub = &cp
	}
	events := len(c.spec.Events)
	prog, err := c.compileProgram(clause, sub, aps)
	if err != nil {
		return err
	}
	maxCut := min(endAt, len(stmts)-1)
	if condJumps(prog.Insns) <= splitJumps || maxCut < 1 {
		prog.Continues = cont
		c.spec.Programs = append(c.spec.Programs, prog)
		return nil
	}
	// Dropped: its two parts take its place (and its events' IDs).
	delete(c.names, prog.Name)
	c.spec.Events = c.spec.Events[:events]
	mid := min(len(stmts)/2, maxCut)
	if err := c.compileParts(clause, p, aps, stmts[:mid], mid, cont); err != nil {
		return err
	}
	return c.compileParts(clause, p, aps, stmts[mid:], endAt-mid, true)
}
