package compiler

import (
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// aggReadInt reads a count/sum/min/max/avg map value as one integer, merged
// over the CPUs as bpftrace 0.26 does (`if (@c > 5)`): it loops over the
// possible CPUs with bpf_map_lookup_percpu_elem until a lookup fails,
// keeping its state on the stack (R6-R9 may hold live temporaries).
// count/sum: the sum; min/max: the extreme of the CPUs that set a value
// (0 if none did); avg: total / count (0 without values).
func (g *gen) aggReadInt(e *lang.MapExpr, ms *MapSpec, lay *mapLayout) (asm.Register, error) {
	if err := g.checkHelpers(e, "reading "+e.Name, asm.Instructions{asm.FnMapLookupPercpuElem.Call()}); err != nil {
		return 0, err
	}
	key, err := g.buildKey(e, lay)
	if err != nil {
		return 0, err
	}
	st, err := g.allocStack(32) // acc, cpu, count (avg) or set flags (min/max), tmp
	if err != nil {
		return 0, err
	}
	acc, cpu, aux, tmp := int16(st.off), int16(st.off+8), int16(st.off+16), int16(st.off+24)
	kind := lay.value.Kind
	g.emit(asm.Mov.Imm(asm.R0, 0),
		asm.StoreMem(asm.R10, acc, asm.R0, asm.DWord),
		asm.StoreMem(asm.R10, cpu, asm.R0, asm.DWord),
		asm.StoreMem(asm.R10, aux, asm.R0, asm.DWord))
	top, next, done := g.label("aggcpu"), g.label("aggnext"), g.label("aggdone")
	g.place(top)
	g.emit(asm.LoadMem(asm.R3, asm.R10, cpu, asm.DWord), asm.JGE.Imm(asm.R3, maxCPUs, done))
	g.mapPtr(asm.R1, ms)
	g.addr(asm.R2, key)
	g.emit(asm.FnMapLookupPercpuElem.Call(), asm.JEq.Imm(asm.R0, 0, done))
	switch kind {
	case types.Count, types.Sum:
		g.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, asm.R10, acc, asm.DWord),
			asm.Add.Reg(asm.R2, asm.R1),
			asm.StoreMem(asm.R10, acc, asm.R2, asm.DWord))
	case types.Avg, types.Stats:
		// [0:8] count, [8:16] total.
		g.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, asm.R10, aux, asm.DWord),
			asm.Add.Reg(asm.R2, asm.R1),
			asm.StoreMem(asm.R10, aux, asm.R2, asm.DWord),
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.LoadMem(asm.R2, asm.R10, acc, asm.DWord),
			asm.Add.Reg(asm.R2, asm.R1),
			asm.StoreMem(asm.R10, acc, asm.R2, asm.DWord))
	case types.Min, types.Max:
		// [0:8] value x, [8:16] set flag f: CPUs without a value do not
		// count. Branch-free, so that the verifier walks one path per CPU:
		//   noval = (aux-1) s>> 63      (all ones before the first value)
		//   lt    = signed less-than mask (x < acc for min, acc < x for max)
		//   take  = (lt | noval) & -f;  acc ^= (acc ^ x) & take;  aux |= f
		a, b := asm.R1, asm.R2
		if kind == types.Max {
			a, b = asm.R2, asm.R1
		}
		g.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R3, asm.R0, 8, asm.DWord),
			asm.LoadMem(asm.R2, asm.R10, acc, asm.DWord),
			asm.LoadMem(asm.R4, asm.R10, aux, asm.DWord),
			asm.Mov.Reg(asm.R5, asm.R4), asm.Sub.Imm(asm.R5, 1), asm.ArSh.Imm(asm.R5, 63),
			asm.Or.Reg(asm.R4, asm.R3), asm.StoreMem(asm.R10, aux, asm.R4, asm.DWord),
			asm.Neg.Imm(asm.R3, 0),
			asm.And.Reg(asm.R5, asm.R3), asm.StoreMem(asm.R10, tmp, asm.R5, asm.DWord),
			// lt: the sign of (a-b) ^ ((a^b) & ((a-b)^a)) (Hacker's Delight).
			asm.Mov.Reg(asm.R0, a), asm.Sub.Reg(asm.R0, b),
			asm.Mov.Reg(asm.R4, a), asm.Xor.Reg(asm.R4, b),
			asm.Mov.Reg(asm.R5, asm.R0), asm.Xor.Reg(asm.R5, a),
			asm.And.Reg(asm.R4, asm.R5),
			asm.Xor.Reg(asm.R0, asm.R4), asm.ArSh.Imm(asm.R0, 63),
			asm.And.Reg(asm.R0, asm.R3),
			asm.LoadMem(asm.R5, asm.R10, tmp, asm.DWord), asm.Or.Reg(asm.R0, asm.R5),
			asm.Mov.Reg(asm.R4, asm.R2), asm.Xor.Reg(asm.R4, asm.R1), asm.And.Reg(asm.R4, asm.R0),
			asm.Xor.Reg(asm.R2, asm.R4),
			asm.StoreMem(asm.R10, acc, asm.R2, asm.DWord))
	}
	g.place(next)
	g.emit(asm.LoadMem(asm.R3, asm.R10, cpu, asm.DWord), asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.R10, cpu, asm.R3, asm.DWord), asm.Ja.Label(top))
	g.place(done)
	r, err := g.reg(e)
	if err != nil {
		return 0, err
	}
	g.emit(asm.LoadMem(r, asm.R10, acc, asm.DWord))
	if kind == types.Min || kind == types.Max {
		// No CPU set a value: 0, as a zeroed map prints.
		set := g.label("aggset")
		g.emit(asm.LoadMem(asm.R1, asm.R10, aux, asm.DWord), asm.JNE.Imm(asm.R1, 0, set), asm.Mov.Imm(r, 0))
		g.place(set)
		g.emit(asm.Mov.Reg(r, r))
	}
	if kind == types.Avg || kind == types.Stats {
		zero := g.label("aggzero")
		g.emit(asm.LoadMem(asm.R1, asm.R10, aux, asm.DWord), asm.JEq.Imm(asm.R1, 0, zero))
		if t := e.Type(); t != nil && t.Signed {
			// The average of signed values divides signed: avg(-1),
			// avg(-1), avg(-10) is -4.
			if err := g.divmod(nil, false, r, asm.R1, 0, false, true); err != nil {
				return 0, err
			}
		} else {
			g.emit(asm.Div.Reg(r, asm.R1))
		}
		g.place(zero)
		g.emit(asm.Mov.Reg(r, r))
	}
	return r, nil
}
