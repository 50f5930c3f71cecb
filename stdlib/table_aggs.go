package stdlib

import (
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Aggregations: assigned to maps only (the checker enforces that); the
// value lives in a per-CPU map slot and is merged in userspace.

func intAgg(name string, kind types.Kind, doc string) *Builtin {
	return &Builtin{Name: name, Kind: Agg, Sig: name + "(int64 n)", MinArgs: 1, MaxArgs: 1, Doc: doc,
		Check: func(c Checker, call *Call) *types.Type {
			a := call.Args[0].Type()
			if invalid(a) {
				return types.Agg(kind, true)
			}
			if !isInt(a) && a.Kind != types.Pointer {
				c.Errorf(call.Expr, "%s() only supports integer arguments (%s provided)", name, KindOfValue(a))
				return types.InvalidType
			}
			return types.Agg(kind, a.Signed || a.Kind != types.Int)
		}}
}

// HistMaxK is the largest k of hist(n, k): 2^5 buckets per power of 2.
const HistMaxK = 5

var _ = rows(
	&Builtin{Name: "count", Kind: Agg, Sig: "count()", Doc: "count events",
		Check: func(Checker, *Call) *types.Type { return types.Agg(types.Count, false) }},
	intAgg("sum", types.Sum, "sum of values"),
	intAgg("avg", types.Avg, "average of values"),
	intAgg("min", types.Min, "minimum of values"),
	intAgg("max", types.Max, "maximum of values"),
	intAgg("stats", types.Stats, "count, average and total of values"),
	&Builtin{Name: "hist", Kind: Agg, Sig: "hist(int64 n[, int k])", MinArgs: 1, MaxArgs: 2, MaxArgs017: 1, ArgsSince: "0.20",
		Doc: "log2 histogram of values; k (0..5, bpftrace 0.20) splits each power of 2 into 2^k buckets",
		Check: func(c Checker, call *Call) *types.Type {
			a := call.Args[0].Type()
			if !invalid(a) && !isInt(a) {
				c.Errorf(call.Expr, "hist() only supports integer arguments (%s provided)", KindOfValue(a))
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
	&Builtin{Name: "tseries", Kind: Agg, Sig: "tseries(int64 n, int64 interval_ns, int64 num_intervals[, string agg])",
		MinArgs: 3, MaxArgs: 4, Since: "0.24", Helpers: []string{"bpf_ktime_get_tai_ns"},
		Doc:   "time series of n: num_intervals intervals of interval_ns, each the last value (or avg, max, min, sum)",
		Check: checkTseries},
	&Builtin{Name: "lhist", Kind: Agg, Sig: "lhist(int64 n, int64 min, int64 max, int64 step)",
		MinArgs: 4, MaxArgs: 4, Doc: "linear histogram of values in [min, max) by step",
		Check: checkLhist},
)

// TseriesMaxIntervals bounds tseries()'s num_intervals (one map entry
// per interval and key).
const TseriesMaxIntervals = 1000000

var tseriesAggs = map[string]int64{"avg": types.TseriesAvg, "max": types.TseriesMax, "min": types.TseriesMin, "sum": types.TseriesSum}

func checkTseries(c Checker, call *Call) *types.Type {
	a := call.Args[0].Type()
	if !invalid(a) && !isInt(a) {
		c.Errorf(call.Expr, "tseries() only supports integer arguments (%s provided)", KindOfValue(a))
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
		c.Errorf(call.Expr, "lhist() only supports integer arguments (%s provided)", KindOfValue(a))
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

var _ = rows(
	&Builtin{Name: "delete", Kind: MapFunc, Sig: "delete(@m[key]) | delete(@m, key)", MinArgs: 1, MaxArgs: 2,
		Helpers: []string{"bpf_map_delete_elem"}, Doc: "delete one element of a map",
		Check: func(c Checker, call *Call) *types.Type {
			if _, ok := mapArg(c, call, 0); !ok {
				return types.InvalidType
			}
			return types.NoneType
		}},
	&Builtin{Name: "clear", Kind: MapFunc, Sig: "clear(@m)", MinArgs: 1, MaxArgs: 1,
		Doc:   "delete every element of a map",
		Check: wholeMapRule(types.NoneType)},
	&Builtin{Name: "zero", Kind: MapFunc, Sig: "zero(@m)", MinArgs: 1, MaxArgs: 1,
		Doc:   "set every value of a map to zero",
		Check: wholeMapRule(types.NoneType)},
	&Builtin{Name: "len", Kind: MapFunc, Sig: "len(@m) | len(kstack|ustack)", MinArgs: 1, MaxArgs: 1,
		Doc: "number of elements in a map; frames of a stack (bpftrace 0.26)",
		Check: func(c Checker, call *Call) *types.Type {
			if t := call.Args[0].Type(); t != nil && t.Kind == types.Stack {
				return checkStackLen(c, call)
			}
			return wholeMapRule(types.S64)(c, call)
		}},
	&Builtin{Name: "has_key", Kind: MapFunc, Sig: "has_key(@m, key)", MinArgs: 2, MaxArgs: 2,
		Helpers: []string{"bpf_map_lookup_elem"}, Doc: "whether a map holds key",
		Check: wholeMapRule(types.BoolType)},
	&Builtin{Name: "print", Kind: MapFunc, Sig: "print(@m[, int top[, int div]]) | print(value)",
		MinArgs: 1, MaxArgs: 3, Doc: "print a map (optionally its top entries, values divided) or a value",
		Check: checkPrint},
)

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
