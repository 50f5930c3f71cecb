package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Code generation of the aggregations. Each describes its in-place update
// and its initial value; the compiler does the one lookup (and, only for a
// new key, the insert). Values are per-CPU, so plain loads and stores are
// enough: no other CPU touches this slot.

func init() {
	Gens["count"] = func(g Gen, c *Call) error {
		return g.Aggregate(c, AggOp{Kind: types.Count, ValueSize: 8,
			Update: addImm(0, 1), Init: storeImm(1)})
	}
	Gens["sum"] = func(g Gen, c *Call) error {
		return g.Aggregate(c, AggOp{Kind: types.Sum, Arg: c.Args[0], ValueSize: 8,
			Update: addArg(0), Init: storeArg})
	}
	avgStats := func(kind types.Kind) GenFunc {
		return func(g Gen, c *Call) error {
			// [0:8] count, [8:16] sum.
			return g.Aggregate(c, AggOp{Kind: kind, Arg: c.Args[0], ValueSize: 16,
				Update: func(g Gen, ptr, arg asm.Register) {
					addImm(0, 1)(g, ptr, arg)
					addArg(8)(g, ptr, arg)
				},
				Init: func(g Gen, ptr, arg asm.Register) {
					g.Emit(StImm(ptr, 0, 1, asm.DWord), asm.StoreMem(ptr, 8, arg, asm.DWord))
				}})
		}
	}
	Gens["avg"] = avgStats(types.Avg)
	Gens["stats"] = avgStats(types.Stats)
	minMax := func(kind types.Kind, keep asm.JumpOp) GenFunc {
		return func(g Gen, c *Call) error {
			// [0:8] value, [8:16] 1 once set (zero() clears it from userspace).
			return g.Aggregate(c, AggOp{Kind: kind, Arg: c.Args[0], ValueSize: 16,
				Update: func(g Gen, ptr, arg asm.Register) {
					store, done := g.Label("set"), g.Label("kept")
					g.Emit(asm.LoadMem(asm.R1, ptr, 8, asm.DWord), asm.JEq.Imm(asm.R1, 0, store),
						asm.LoadMem(asm.R1, ptr, 0, asm.DWord), keep.Reg(asm.R1, arg, done))
					g.Place(store)
					g.Emit(asm.StoreMem(ptr, 0, arg, asm.DWord), StImm(ptr, 8, 1, asm.DWord))
					g.Place(done)
					g.Emit(asm.Mov.Reg(asm.R1, asm.R1))
				},
				Init: func(g Gen, ptr, arg asm.Register) {
					g.Emit(asm.StoreMem(ptr, 0, arg, asm.DWord), StImm(ptr, 8, 1, asm.DWord))
				}})
		}
	}
	Gens["min"] = minMax(types.Min, asm.JSLE) // keep the current value when cur <= arg
	Gens["max"] = minMax(types.Max, asm.JSGE)
	Gens["hist"] = func(g Gen, c *Call) error {
		bucket := log2Bucket
		if t := c.Expr.Type(); t != nil && t.Lhist[0] > 0 {
			bucket = log2kBucket(int(t.Lhist[0]))
		}
		return g.Aggregate(c, AggOp{Kind: types.Hist, Arg: c.Args[0], ValueSize: 8,
			Bucket: bucket, Update: addImm(0, 1), Init: storeImm(1)})
	}
	Gens["lhist"] = func(g Gen, c *Call) error {
		t := c.Expr.Type()
		if t == nil {
			return fmt.Errorf("lhist() has no type")
		}
		min, max, step := t.Lhist[0], t.Lhist[1], t.Lhist[2]
		if step <= 0 || max <= min {
			return fmt.Errorf("lhist() parameters min %d, max %d, step %d are invalid", min, max, step)
		}
		return g.Aggregate(c, AggOp{Kind: types.Lhist, Arg: c.Args[0], ValueSize: 8,
			Bucket: linearBucket(min, max, step), Update: addImm(0, 1), Init: storeImm(1)})
	}
	Gens["tseries"] = genTseries
	attachGens()
}

// genTseries: the key is the user key and the interval's slot (epoch %
// num_intervals, epoch = timestamp / interval); the per-CPU value is
// [0:8] value, [8:16] meta (the last value's timestamp; avg: the count),
// [16:24] epoch, bpftrace's layout. A slot holding an older epoch starts
// over. The clock is CLOCK_TAI (bpftrace), or the dummy map bpftrace's
// tests name (BPFTRACE_DUMMY_TS_MAP, the call's last argument).
func genTseries(g Gen, c *Call) error {
	t := c.Expr.Type()
	if t == nil || t.Kind != types.Tseries {
		return fmt.Errorf("tseries() has no type")
	}
	interval, n, agg := t.Lhist[0], t.Lhist[1], t.Lhist[2]
	if interval <= 0 || n <= 0 {
		return fmt.Errorf("tseries() interval %d, num_intervals %d are invalid", interval, n)
	}
	var dummy lang.Expr
	if k := len(c.Args); k > 3 {
		if m, ok := c.Args[k-1].(*lang.MapExpr); ok {
			dummy = m
		}
	}
	epoch := func(g Gen, dst, ts asm.Register) {
		g.Emit(asm.Mov.Reg(dst, ts), asm.LoadImm(asm.R2, interval, asm.DWord), asm.Div.Reg(dst, asm.R2))
	}
	reset := func(g Gen, ptr, arg, aux asm.Register) {
		g.Emit(asm.StoreMem(ptr, 0, arg, asm.DWord))
		switch agg {
		case types.TseriesLast:
			g.Emit(asm.StoreMem(ptr, 8, aux, asm.DWord))
		case types.TseriesAvg:
			g.Emit(StImm(ptr, 8, 1, asm.DWord))
		default:
			g.Emit(StImm(ptr, 8, 0, asm.DWord))
		}
		g.Emit(asm.StoreMem(ptr, 16, asm.R1, asm.DWord))
	}
	lt, gt := asm.JLE, asm.JGE
	if t.Signed {
		lt, gt = asm.JSLE, asm.JSGE
	}
	return g.Aggregate(c, AggOp{Kind: types.Tseries, Arg: c.Args[0], ValueSize: 24,
		Aux: func(g Gen, dst asm.Register) error {
			if dummy != nil {
				r, err := g.EvalInt(dummy)
				if err != nil {
					return err
				}
				g.Emit(asm.Mov.Reg(dst, r))
				g.Free(r)
				return nil
			}
			g.Emit(asm.FnKtimeGetTaiNs.Call(), asm.Mov.Reg(dst, asm.R0))
			return nil
		},
		Bucket: func(g Gen, dst, ts asm.Register) error {
			epoch(g, dst, ts)
			g.Emit(asm.LoadImm(asm.R2, n, asm.DWord), asm.Mod.Reg(dst, asm.R2))
			return nil
		},
		InitAux: func(g Gen, ptr, arg, aux asm.Register) {
			epoch(g, asm.R1, aux)
			reset(g, ptr, arg, aux)
		},
		UpdateAux: func(g Gen, ptr, arg, aux asm.Register) {
			same, done := g.Label("tssame"), g.Label("tsdone")
			epoch(g, asm.R1, aux)
			g.Emit(asm.LoadMem(asm.R2, ptr, 16, asm.DWord), asm.JEq.Reg(asm.R2, asm.R1, same))
			reset(g, ptr, arg, aux)
			g.Emit(asm.Ja.Label(done))
			g.Place(same)
			switch agg {
			case types.TseriesLast:
				g.Emit(asm.StoreMem(ptr, 0, arg, asm.DWord), asm.StoreMem(ptr, 8, aux, asm.DWord))
			case types.TseriesAvg:
				addArg(0)(g, ptr, arg)
				addImm(8, 1)(g, ptr, arg)
			case types.TseriesSum:
				addArg(0)(g, ptr, arg)
			case types.TseriesMin, types.TseriesMax:
				keep := lt // keep the current value when cur <= arg
				if agg == types.TseriesMax {
					keep = gt
				}
				g.Emit(asm.LoadMem(asm.R1, ptr, 0, asm.DWord), keep.Reg(asm.R1, arg, done),
					asm.StoreMem(ptr, 0, arg, asm.DWord))
			}
			g.Place(done)
			g.Emit(asm.Mov.Reg(asm.R1, asm.R1))
		},
	})
}

func addImm(off int16, v int32) func(g Gen, ptr, arg asm.Register) {
	return func(g Gen, ptr, arg asm.Register) {
		g.Emit(asm.LoadMem(asm.R1, ptr, off, asm.DWord), asm.Add.Imm(asm.R1, v), asm.StoreMem(ptr, off, asm.R1, asm.DWord))
	}
}

func addArg(off int16) func(g Gen, ptr, arg asm.Register) {
	return func(g Gen, ptr, arg asm.Register) {
		g.Emit(asm.LoadMem(asm.R1, ptr, off, asm.DWord), asm.Add.Reg(asm.R1, arg), asm.StoreMem(ptr, off, asm.R1, asm.DWord))
	}
}

func storeImm(v int64) func(g Gen, ptr, arg asm.Register) {
	return func(g Gen, ptr, arg asm.Register) { g.Emit(StImm(ptr, 0, v, asm.DWord)) }
}

func storeArg(g Gen, ptr, arg asm.Register) { g.Emit(asm.StoreMem(ptr, 0, arg, asm.DWord)) }

// log2Bucket: 0 for n < 0, 1 for n == 0, 2 + floor(log2 n) otherwise
// (ABI.md), found by a binary search over the bit position.
func log2Bucket(g Gen, dst, arg asm.Register) error {
	done := g.Label("log2")
	g.Emit(asm.Mov.Imm(dst, 0), asm.JSLT.Imm(arg, 0, done),
		asm.Mov.Imm(dst, 1), asm.JEq.Imm(arg, 0, done),
		asm.Mov.Imm(dst, 2), asm.Mov.Reg(asm.R2, arg))
	for _, s := range []int32{32, 16, 8, 4, 2, 1} {
		skip := g.Label("bit")
		g.Emit(asm.Mov.Reg(asm.R1, asm.R2), asm.RSh.Imm(asm.R1, s), asm.JEq.Imm(asm.R1, 0, skip),
			asm.Mov.Reg(asm.R2, asm.R1), asm.Add.Imm(dst, s))
		g.Place(skip)
	}
	g.Place(done)
	g.Emit(asm.Mov.Reg(dst, dst))
	return nil
}

// log2kBucket is hist(n, k)'s bucket (bpftrace 0.20): 0 for n < 0; n + 1
// for n < 2^k; else, with l the index of n's top bit, the k bits below it
// pick one of 2^k buckets of the power: ((l-k+1) << k) + those bits + 1.
// (k = 0 gives log2Bucket's numbering.)
func log2kBucket(k int) func(g Gen, dst, arg asm.Register) error {
	return func(g Gen, dst, arg asm.Register) error {
		done := g.Label("log2k")
		mask := int32(1)<<k - 1
		// dst = l, the top bit's index (n >= 2^k > 0 here), in R2 the rest.
		g.Emit(asm.Mov.Imm(dst, 0), asm.JSLT.Imm(arg, 0, done),
			asm.Mov.Reg(dst, arg), asm.Add.Imm(dst, 1), asm.JSLE.Imm(arg, mask, done),
			asm.Mov.Imm(dst, 0), asm.Mov.Reg(asm.R2, arg))
		for _, s := range []int32{32, 16, 8, 4, 2, 1} {
			skip := g.Label("bit")
			g.Emit(asm.Mov.Reg(asm.R1, asm.R2), asm.RSh.Imm(asm.R1, s), asm.JEq.Imm(asm.R1, 0, skip),
				asm.Mov.Reg(asm.R2, asm.R1), asm.Add.Imm(dst, s))
			g.Place(skip)
		}
		// R1 = (n >> (l-k)) & mask; dst = ((l-k+1) << k) + R1 + 1
		g.Emit(asm.Mov.Reg(asm.R1, arg), asm.Mov.Reg(asm.R3, dst), asm.Sub.Imm(asm.R3, int32(k)),
			asm.RSh.Reg(asm.R1, asm.R3), asm.And.Imm(asm.R1, mask),
			asm.Add.Imm(asm.R3, 1), asm.LSh.Imm(asm.R3, int32(k)),
			asm.Mov.Reg(dst, asm.R3), asm.Add.Reg(dst, asm.R1), asm.Add.Imm(dst, 1))
		g.Place(done)
		g.Emit(asm.Mov.Reg(dst, dst))
		return nil
	}
}

// HistBucketK is log2kBucket in Go: the bucket of n in hist(n, k).
func HistBucketK(n int64, k int) int {
	if n < 0 {
		return 0
	}
	if n < 1<<k {
		return int(n) + 1
	}
	l := 63
	for n>>uint(l) == 0 {
		l--
	}
	sub := int(n>>uint(l-k)) & (1<<k - 1)
	return (l-k+1)<<k + sub + 1
}

// linearBucket: 0 below min, 1 + (n-min)/step inside, N+1 at or above max.
func linearBucket(min, max, step int64) func(g Gen, dst, arg asm.Register) error {
	return func(g Gen, dst, arg asm.Register) error {
		n := (max - min) / step
		done := g.Label("lin")
		g.Emit(asm.Mov.Imm(dst, 0))
		g.Emit(asm.LoadImm(asm.R1, min, asm.DWord), asm.JSLT.Reg(arg, asm.R1, done),
			asm.Mov.Imm(dst, int32(n+1)),
			asm.LoadImm(asm.R1, max, asm.DWord), asm.JSGE.Reg(arg, asm.R1, done),
			asm.Mov.Reg(dst, arg))
		if min != 0 {
			g.Emit(asm.LoadImm(asm.R1, min, asm.DWord), asm.Sub.Reg(dst, asm.R1))
		}
		if step != 1 {
			g.Emit(asm.LoadImm(asm.R1, step, asm.DWord), asm.Div.Reg(dst, asm.R1))
		}
		g.Emit(asm.Add.Imm(dst, 1))
		g.Place(done)
		g.Emit(asm.Mov.Reg(dst, dst))
		return nil
	}
}
