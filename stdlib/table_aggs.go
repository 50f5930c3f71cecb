package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Aggregations: assigned to maps only (the checker enforces that); the
// value lives in a per-CPU map slot and is merged in userspace.

func intAgg(name string, kind types.Kind, gen GenFunc, doc string) *Builtin {
	return &Builtin{Name: name, Gen: gen, Kind: Agg, Sig: name + "(int64 n)", MinArgs: 1, MaxArgs: 1, Doc: doc,
		Check: func(c Checker, call *Call) *types.Type {
			a := call.Args[0].Type()
			if invalid(a) {
				return types.Agg(kind, true)
			}
			if !isInt(a) && a.Kind != types.Pointer {
				c.Errorf(call.Expr, "%s() only supports integer arguments (%s provided)", name, types.KindWord(a, types.AsArg))
				return types.InvalidType
			}
			return types.Agg(kind, a.Signed || a.Kind != types.Int)
		}}
}

// HistMaxK is the largest k of hist(n, k): 2^5 buckets per power of 2.
const HistMaxK = 5

func aggRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "count", Gen: genCount, Kind: Agg, Sig: "count()", Doc: "count events",
			Check: func(Checker, *Call) *types.Type { return types.Agg(types.Count, false) }},
		intAgg("sum", types.Sum, genSum, "sum of values"),
		intAgg("avg", types.Avg, avgStats(types.Avg), "average of values"),
		intAgg("min", types.Min, minMax(types.Min, asm.JSLE), "minimum of values"),
		intAgg("max", types.Max, minMax(types.Max, asm.JSGE), "maximum of values"),
		intAgg("stats", types.Stats, avgStats(types.Stats), "count, average and total of values"),
		&Builtin{Name: "hist", Gen: genHist, Kind: Agg, Sig: "hist(int64 n[, int k])", MinArgs: 1, MaxArgs: 2, MaxArgs017: 1, ArgsSince: "0.20",
			Doc: "log2 histogram of values; k (0..5, bpftrace 0.20) splits each power of 2 into 2^k buckets",
			Check: func(c Checker, call *Call) *types.Type {
				a := call.Args[0].Type()
				if !invalid(a) && !isInt(a) {
					c.Errorf(call.Expr, "hist() only supports integer arguments (%s provided)", types.KindWord(a, types.AsArg))
					return types.InvalidType
				}
				t := types.Agg(types.Hist, true)
				if len(call.Args) == 2 {
					k, ok := c.ConstInt(call.Args[1])
					switch {
					case !ok:
						c.Errorf(call.Expr, "hist(): the second argument (k) must be an integer literal")
						return types.InvalidType
					case k < 0 || k > HistMaxK:
						c.Errorf(call.Expr, "hist(): k must be in [0, %d], %d given", HistMaxK, k)
						return types.InvalidType
					}
					t.Lhist[0] = k // types.Type keeps Hist's k there
				}
				return t
			}},
		&Builtin{Name: "tseries", Gen: genTseries, Kind: Agg, Flags: ClockArg, Sig: "tseries(int64 n, int64 interval_ns, int64 num_intervals[, string agg])",
			MinArgs: 3, MaxArgs: 4, Since: "0.24", Helpers: []string{"bpf_ktime_get_tai_ns"},
			Doc:   "time series of n: num_intervals intervals of interval_ns, each the last value (or avg, max, min, sum)",
			Check: checkTseries},
		&Builtin{Name: "lhist", Gen: genLhist, Kind: Agg, Sig: "lhist(int64 n, int64 min, int64 max, int64 step)",
			MinArgs: 4, MaxArgs: 4, Doc: "linear histogram of values in [min, max) by step",
			Check: checkLhist},
	}
}

// TseriesMaxIntervals bounds tseries()'s num_intervals (one map entry
// per interval and key).
const TseriesMaxIntervals = 1000000

var tseriesAggs = map[string]int64{"avg": types.TseriesAvg, "max": types.TseriesMax, "min": types.TseriesMin, "sum": types.TseriesSum}

func checkTseries(c Checker, call *Call) *types.Type {
	a := call.Args[0].Type()
	if !invalid(a) && !isInt(a) {
		c.Errorf(call.Expr, "tseries() only supports integer arguments (%s provided)", types.KindWord(a, types.AsArg))
		return types.InvalidType
	}
	interval, ok := c.ConstInt(call.Args[1])
	if !ok {
		c.Errorf(call.Expr, "tseries() interval_ns must be an integer literal or a duration (1ms, 5s)")
		return types.InvalidType
	}
	if interval <= 0 {
		c.Errorf(call.Expr, "tseries() interval_ns must be >= 1 (%d provided)", interval)
		return types.InvalidType
	}
	n, ok := c.ConstInt(call.Args[2])
	if !ok {
		c.Errorf(call.Expr, "tseries() num_intervals must be an integer literal")
		return types.InvalidType
	}
	if n <= 0 || n > TseriesMaxIntervals {
		c.Errorf(call.Expr, "tseries() num_intervals must be >= 1 and <= %d (%d provided)", TseriesMaxIntervals, n)
		return types.InvalidType
	}
	agg := int64(types.TseriesLast)
	if len(call.Args) > 3 {
		if _, dummy := call.Args[3].(*lang.MapExpr); !dummy {
			s, ok := c.ConstStr(call.Args[3])
			code, known := tseriesAggs[s]
			if !ok || !known {
				c.Errorf(call.Expr, "tseries() expects one of the following aggregation functions: avg, max, min, sum (\"%s\" provided)", s)
				return types.InvalidType
			}
			agg = code
		}
	}
	t := types.Agg(types.Tseries, a == nil || a.Signed || a.Kind != types.Int)
	t.Lhist = [3]int64{interval, n, agg}
	return t
}

func checkLhist(c Checker, call *Call) *types.Type {
	a := call.Args[0].Type()
	if !invalid(a) && !isInt(a) {
		c.Errorf(call.Expr, "lhist() only supports integer arguments (%s provided)", types.KindWord(a, types.AsArg))
		return types.InvalidType
	}
	var p [3]int64
	for i := 1; i <= 3; i++ {
		v, ok := wantIntLit(c, call, i)
		if !ok {
			return types.InvalidType
		}
		p[i-1] = v
	}
	min, max, step := p[0], p[1], p[2]
	bad := false
	if step < 1 {
		c.Errorf(call.Expr, "lhist() step must be >= 1 (%d provided)", step)
		return types.InvalidType
	}
	if min < 0 {
		c.Errorf(call.Expr, "lhist() min must be non-negative (provided min %d)", min)
		bad = true
	}
	if min > max {
		c.Errorf(call.Expr, "lhist() min must be less than max (provided min %d and max %d)", min, max)
		bad = true
	}
	if max-min < step {
		c.Errorf(call.Expr, "lhist() step is too large for the given range (provided step %d for range %d)", step, max-min)
		bad = true
	}
	if !bad && (max-min)/step > 1000 {
		c.Errorf(call.Expr, "lhist() too many buckets, must be <= 1000 (would need %d)", (max-min)/step)
		bad = true
	}
	if bad {
		return types.InvalidType
	}
	t := types.Agg(types.Lhist, true)
	t.Lhist = p
	return t
}

// Map functions: the first argument names a map. The checker treats a bare
// `@m` there as the whole map (no key check).

func mapArg(c Checker, call *Call, i int) (*lang.MapExpr, bool) {
	if i < len(call.Args) {
		if m, ok := call.Args[i].(*lang.MapExpr); ok {
			return m, true
		}
	}
	c.Errorf(call.Expr, "%s() expects a map to be provided", call.Name)
	return nil, false
}

func wholeMapArg(c Checker, call *Call) bool {
	m, ok := mapArg(c, call, 0)
	if !ok {
		return false
	}
	if len(m.Keys) > 0 {
		c.Errorf(call.Expr, "The map passed to %s() should not be indexed by a key", call.Name)
		return false
	}
	return true
}

func mapFuncRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "delete", Gen: genMapCall(MapDelete), Kind: MapFunc, Flags: ElemArg | KeyArg, Sig: "delete(@m[key]) | delete(@m, key)", MinArgs: 1, MaxArgs: 2,
			Helpers: []string{"bpf_map_delete_elem"}, Doc: "delete one element of a map",
			Check: func(c Checker, call *Call) *types.Type {
				if _, ok := mapArg(c, call, 0); !ok {
					return types.InvalidType
				}
				if c.Compat().DeleteReturnsBool() {
					// bpftrace 0.26: whether an element was deleted.
					return types.BoolType
				}
				return types.NoneType
			}},
		&Builtin{Name: "clear", Gen: genMapCall(MapClear), Kind: MapFunc, Sig: "clear(@m)", MinArgs: 1, MaxArgs: 1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "delete every element of a map",
			Check: wholeMapRule(types.NoneType)},
		&Builtin{Name: "zero", Gen: genMapCall(MapZero), Kind: MapFunc, Sig: "zero(@m)", MinArgs: 1, MaxArgs: 1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "set every value of a map to zero",
			Check: wholeMapRule(types.NoneType)},
		&Builtin{Name: "len", Gen: genLen, Kind: MapFunc, Sig: "len(@m) | len(kstack|ustack)", MinArgs: 1, MaxArgs: 1,
			Doc: "number of elements in a map; frames of a stack (bpftrace 0.26)",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); t != nil && t.Kind == types.Stack {
					return checkStackLen(c, call)
				}
				return wholeMapRule(types.S64)(c, call)
			}},
		&Builtin{Name: "has_key", Gen: genMapCall(MapHasKey), Kind: MapFunc, Flags: KeyArg | KeyedMap, Sig: "has_key(@m, key)", MinArgs: 2, MaxArgs: 2,
			Helpers: []string{"bpf_map_lookup_elem"}, Doc: "whether a map holds key",
			Check: wholeMapRule(types.BoolType)},
		&Builtin{Name: "print", Gen: genPrint, Kind: MapFunc, Flags: ElemArg | CheckBadArgs | LoopWarn017, Sig: "print(@m[, int top[, int div]]) | print(value)",
			MinArgs: 1, MaxArgs: 3, Helpers: []string{"bpf_ringbuf_output"}, Doc: "print a map (optionally its top entries, values divided) or a value",
			Check: checkPrint},
		&Builtin{Name: "find", Gen: genFind, Kind: MapFunc, Flags: OutArg, Sig: "find(@map, key, $value)", MinArgs: 3, MaxArgs: 3, Since: "0.25",
			Helpers: []string{"bpf_map_lookup_elem"},
			Doc:     "true and $value = @map[key] if key is in the map, else false ($value untouched)",
			// The checker types find() itself (lang/check/find.go).
			Check: func(Checker, *Call) *types.Type { return types.BoolType }},
	}
}

func checkPrint(c Checker, call *Call) *types.Type {
	if m, ok := call.Args[0].(*lang.MapExpr); ok && len(m.Keys) == 0 {
		for i := 1; i < len(call.Args); i++ {
			if v, ok := wantIntLit(c, call, i); !ok {
				return types.InvalidType
			} else if v < 0 {
				c.Errorf(call.Expr, "print() top and div arguments must be non-negative (%d provided)", v)
				return types.InvalidType
			}
		}
		return types.NoneType
	}
	if len(call.Args) > 1 {
		c.Errorf(call.Expr, "Non-map print() only takes 1 argument, %d found", len(call.Args))
		return types.InvalidType
	}
	t := call.Args[0].Type()
	if invalid(t) {
		return types.NoneType
	}
	if t.Kind == types.None {
		c.Errorf(call.Expr, "none type passed to print() is not printable")
		return types.InvalidType
	}
	return types.NoneType
}

// wholeMapRule is the type rule of a map function taking only a whole map
// (clear, zero, len ...).
func wholeMapRule(result *types.Type) func(Checker, *Call) *types.Type {
	return func(c Checker, call *Call) *types.Type {
		if !wholeMapArg(c, call) {
			return types.InvalidType
		}
		return result
	}
}

// Code generation of the aggregations. Each describes its in-place update
// and its initial value; the compiler does the one lookup (and, only for a
// new key, the insert). Values are per-CPU, so plain loads and stores are
// enough: no other CPU touches this slot.

// avgStats is avg() or stats(): [0:8] count, [8:16] sum.
func avgStats(kind types.Kind) GenFunc {
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

// minMax is min() (keep is JSLE: the current value stays when cur <= arg)
// or max() (JSGE).
func minMax(kind types.Kind, keep asm.JumpOp) GenFunc {
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

func genCount(g Gen, c *Call) error {
	return g.Aggregate(c, AggOp{Kind: types.Count, ValueSize: 8,
		Update: addImm(0, 1), Init: storeImm(1)})
}

func genSum(g Gen, c *Call) error {
	return g.Aggregate(c, AggOp{Kind: types.Sum, Arg: c.Args[0], ValueSize: 8,
		Update: addArg(0), Init: storeArg})
}

func genHist(g Gen, c *Call) error {
	bucket := log2Bucket
	if t := c.Expr.Type(); t != nil && t.Lhist[0] > 0 {
		bucket = log2kBucket(int(t.Lhist[0]))
	}
	return g.Aggregate(c, AggOp{Kind: types.Hist, Arg: c.Args[0], ValueSize: 8,
		Bucket: bucket, Update: addImm(0, 1), Init: storeImm(1)})
}

func genLhist(g Gen, c *Call) error {
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

func genFind(g Gen, c *Call) error { return g.MapCall(c, MapFind) }
