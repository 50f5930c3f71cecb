package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// exprCtx says where an expression appears (aggregations are only allowed
// directly on the right of a map assignment).
type exprCtx uint8

const (
	ctxValue exprCtx = iota
	ctxStmt
	ctxMapAssign
	ctxVarAssign
)

// expr checks e, sets its type and returns it (never nil).
func (c *checker) expr(e lang.Expr, ctx exprCtx) (t *types.Type) {
	if e == nil {
		return types.InvalidType
	}
	c.depth++
	defer func() {
		c.depth--
		if t == nil {
			t = types.InvalidType
		}
		e.SetType(t)
	}()
	if c.depth > maxDepth {
		c.errorf(e, "expression nested too deeply (more than %d levels)", maxDepth)
		return types.InvalidType
	}
	switch e := e.(type) {
	case *lang.IntLit:
		// bpftrace 0.17: every integer literal is an int64, one of 2^63
		// or more wrapping to a negative value (`9223372036854775808 > 0`
		// is false); 0.26: such a literal is a uint64.
		if e.Value > math.MaxInt64 && !c.opts.Compat.Ints017() {
			return types.U64
		}
		return types.S64
	case *lang.StrLit:
		if len(e.Value) >= c.strlen && !c.inFormatCall && c.opts.Compat.Ints017() {
			// bpftrace 0.17's rule: a literal must fit with its NUL.
			c.errorf(e, "String is too long (over %d bytes): %s", c.strlen, e.Value)
			return types.InvalidType
		}
		return types.StringType(len(e.Value) + 1)
	case *lang.BoolLit:
		return types.BoolType
	case *lang.PositionalExpr:
		c.fillPositional(e)
		if e.IsUint {
			return types.U64
		}
		if e.IsInt {
			return types.S64
		}
		if !e.InStr && !e.Count && !c.opts.Compat.PositionalStrings() {
			c.errorf(e, "$%d used numerically but given \"%s\". Try using str($%d).", e.N, e.Text, e.N)
			return types.InvalidType
		}
		return types.StringType(len(e.Text) + 1)
	case *lang.BuiltinExpr:
		return c.builtinVar(e)
	case *lang.IdentExpr:
		return c.ident(e)
	case *lang.VarExpr:
		info := c.lookupVar(e.Name)
		if info == nil {
			c.errHint(e.Span(), func() string { return lang.Suggest(e.Name, c.varNames()) }, "Undefined or undeclared variable: %s", e.Name)
			return types.InvalidType
		}
		e.Info = info
		return info.Type
	case *lang.MapExpr:
		return c.mapRead(e)
	case *lang.CallExpr:
		return c.call(e, ctx)
	case *lang.BinaryExpr:
		return c.binary(e)
	case *lang.UnaryExpr:
		return c.unary(e)
	case *lang.TernaryExpr:
		return c.ternary(e)
	case *lang.FieldExpr:
		return c.field(e)
	case *lang.TupleIndexExpr:
		x := c.expr(e.X, ctxValue)
		if x.IsInvalid() {
			return types.InvalidType
		}
		if x.Kind != types.Tuple {
			c.errorf(e, "Can not access index '%d' on expression of type '%s'", e.Index, stdlib.TypeName(x))
			return types.InvalidType
		}
		if e.Index < 0 || e.Index >= len(x.Fields) {
			c.errorf(e, "Invalid tuple index: %d. Found %d elements in tuple.", e.Index, len(x.Fields))
			return types.InvalidType
		}
		return x.Fields[e.Index].Type
	case *lang.IndexExpr:
		return c.index(e)
	case *lang.CastExpr:
		return c.cast(e)
	case *lang.TupleExpr:
		elems := make([]*types.Type, len(e.Elems))
		bad := false
		for i, el := range e.Elems {
			elems[i] = c.expr(el, ctxValue)
			if elems[i].IsInvalid() {
				bad = true
			} else if elems[i].Kind == types.None || elems[i].Kind.IsAggregation() {
				c.errorf(el, "Invalid expression in tuple: %s", stdlib.TypeName(elems[i]))
				bad = true
			}
		}
		if bad {
			return types.InvalidType
		}
		t := types.TupleOf(elems...)
		for i, n := range e.Names {
			t.Fields[i].Name = n // a record
		}
		return t
	case *lang.SizeofExpr:
		var t *types.Type
		if e.Of != nil {
			t = c.resolveTypeExpr(e.Of)
		} else {
			t = c.expr(e.X, ctxValue)
		}
		if t.IsInvalid() {
			return types.InvalidType
		}
		e.Val = t.Size
		return types.U64
	case *lang.OffsetofExpr:
		return c.offsetof(e)
	}
	c.errorf(e, "unsupported expression %T", e)
	return types.InvalidType
}

func (c *checker) fillPositional(e *lang.PositionalExpr) {
	if e.Count {
		e.IsInt, e.Int = true, int64(len(c.opts.Params))
		e.Text = strconv.Itoa(len(c.opts.Params))
		return
	}
	if e.N < 1 || e.N > len(c.opts.Params) {
		// bpftrace treats a missing parameter as "" in string context and
		// 0 in integer context.
		e.Text, e.IsInt, e.Int = "", true, 0
		return
	}
	e.Text = c.opts.Params[e.N-1]
	if e.Offset > 0 && e.Offset <= len(e.Text) {
		e.Text = e.Text[e.Offset:]
	}
	if v, err := strconv.ParseInt(e.Text, 0, 64); err == nil {
		e.IsInt, e.Int = true, v
	} else if u, err := strconv.ParseUint(e.Text, 0, 64); err == nil && c.opts.Compat.PositionalStrings() {
		// Beyond int64: an unsigned 64-bit integer (bpftrace 0.26).
		e.IsInt, e.IsUint, e.Int = true, true, int64(u)
	} else {
		e.IsInt, e.Int = false, 0
	}
}

func (c *checker) builtinVar(e *lang.BuiltinExpr) *types.Type {
	row, _, ok := stdlib.Resolve(e.Name)
	if !ok || (row.Kind != stdlib.Var && !(row.Kind == stdlib.Func && row.MinArgs == 0 && row.Has(stdlib.Bare))) {
		c.errHint(e.Span(), func() string { return lang.Suggest(e.Name, stdlib.Names(stdlib.Var)) }, "Unknown identifier: '%s'", e.Name)
		return types.InvalidType
	}
	if row.Check == nil {
		return types.InvalidType
	}
	call := &stdlib.Call{Expr: e, Name: stdlib.Canonical(e.Name), Probe: c.probe}
	if !c.checkProbes(row, call) {
		return types.InvalidType
	}
	return row.Check(c, call)
}

// knownIdent reports whether a bare name is a builtin variable or an
// enum constant (else it may name a type, as in offsetof(T, f)).
func (c *checker) knownIdent(name string) bool {
	if row, _, ok := stdlib.Resolve(name); ok && row.Kind == stdlib.Var {
		return true
	}
	if c.opts.Resolver != nil {
		if _, _, ok := c.opts.Resolver.Enum(name); ok {
			return true
		}
	}
	return false
}

func (c *checker) ident(e *lang.IdentExpr) *types.Type {
	if row, _, ok := stdlib.Resolve(e.Name); ok && (row.Kind == stdlib.Var || row.Has(stdlib.Bare)) {
		// A Bare function (dw_ustack) is also written without parentheses.
		call := &stdlib.Call{Expr: e, Name: stdlib.Canonical(e.Name), Probe: c.probe}
		if !c.checkProbes(row, call) {
			return types.InvalidType
		}
		return row.Check(c, call)
	}
	if c.opts.Resolver != nil {
		if v, t, ok := c.opts.Resolver.Enum(e.Name); ok {
			e.IsEnum, e.Value = true, v
			if t == nil || t.IsInvalid() {
				t = types.S64
			}
			if !c.opts.Compat.EnumConstantsTyped() {
				return types.U64
			}
			if t.Kind == types.Enum && t.Size < 8 {
				// bpftrace 0.26's enum constants are 64-bit values of the
				// enum's type: sizeof(BTF_VAR_STATIC) is 8.
				w := *t
				w.Size = 8
				t = &w
			}
			return t
		}
	}
	c.errHint(e.Span(), func() string { return lang.Suggest(e.Name, stdlib.Names(stdlib.Var)) }, "Unknown identifier: '%s'", e.Name)
	return types.InvalidType
}

// ---- calls ----

func (c *checker) call(e *lang.CallExpr, ctx exprCtx) *types.Type {
	row, _, ok := stdlib.Resolve(e.Name)
	if ok && row.Kind != stdlib.Var && e.Name != row.Name {
		ok = false // argN families and __builtin_ names are variables only
	}
	// bpftrace 0.26 also spells every builtin variable as a call, pid()
	// (some with a mode: pid(init), nsecs(boot)); 0.17 has none.
	if !ok || (row.Kind == stdlib.Var && (c.opts.Compat.Legacy() || row.Name == "argN" || row.Name == "sargN")) {
		nameSp := e.NameSpan
		if !nameSp.Start.IsValid() {
			nameSp = e.Span()
		}
		if ok && row.ArgsSince != "" && len(e.Args) > row.MaxArgs017 && c.opts.Compat.Legacy() {
			// comm(pid): a variable bpftrace 0.25 gave an argument.
			c.errAt(nameSp, "", "Unknown function: %s (%s(...) with %s was added in bpftrace %s; --compat 0.17 follows bpftrace 0.17)", e.Name, e.Name, argCount(len(e.Args)), row.ArgsSince)
			return types.InvalidType
		}
		c.errHint(nameSp, func() string { return lang.Suggest(e.Name, stdlib.Names(stdlib.Func, stdlib.Agg, stdlib.MapFunc)) }, "Unknown function: %s", e.Name)
		return types.InvalidType
	}
	if row.Since != "" && c.opts.Compat.Legacy() {
		nameSp := e.NameSpan
		if !nameSp.Start.IsValid() {
			nameSp = e.Span()
		}
		c.errAt(nameSp, "", "Unknown function: %s (added in bpftrace %s; --compat 0.17 follows bpftrace 0.17)", e.Name, row.Since)
		return types.InvalidType
	}
	if row.Has(stdlib.OutArg) {
		return c.findCall(e)
	}
	if row.Unsafe && !c.opts.Unsafe {
		if c.opts.Compat.UnsafeIsUnsafe() {
			c.errAt(e.Span(), "", "%s() is unsafe. To use you need the --unsafe flag", e.Name)
		} else {
			c.errAt(e.Span(), "run with --unsafe to allow it", "%s() is an unsafe function being used in safe mode", e.Name)
		}
	}
	n := len(e.Args)
	orig := row
	if row.Has(stdlib.ClockArg) && n > 0 {
		if m, ok := e.Args[n-1].(*lang.MapExpr); ok && m.Name == c.opts.DummyTseriesMap {
			n-- // the dummy clock (tseriesDummyClock), from an earlier pass
		}
	}
	if c.opts.Compat.Legacy() && row.MaxArgs017 > 0 {
		// A builtin bpftrace 0.26 gave more arguments (hist(n, k)).
		r := *row
		r.MaxArgs = row.MaxArgs017
		row = &r
	}
	if n < row.MinArgs || (row.MaxArgs >= 0 && n > row.MaxArgs) {
		if row.ArgsSince != "" && c.opts.Compat.Legacy() && n > row.MaxArgs && n <= orig.MaxArgs {
			c.errorf(e, "%s: %s with %s was added in bpftrace %s (--compat 0.17 follows bpftrace 0.17)", arityMsg(row, n), e.Name+"()", argCount(n), row.ArgsSince)
			return types.InvalidType
		}
		c.errorf(e, "%s", arityMsg(row, n))
		return types.InvalidType
	}
	if row.Has(stdlib.ClockArg) {
		c.tseriesDummyClock(e)
	}
	if row.Kind == stdlib.Agg && ctx != ctxMapAssign {
		for _, a := range e.Args {
			c.expr(a, ctxValue)
		}
		c.errorf(e, "%s() should be directly assigned to a map", e.Name)
		return types.InvalidType
	}
	if row.Has(stdlib.StrOfParam) && len(e.Args) > 0 {
		if p, ok := e.Args[0].(*lang.PositionalExpr); ok {
			p.InStr = true
		}
	}
	if row.Has(stdlib.StrOfParam) && !c.strOfPositional(e) {
		return types.InvalidType
	}
	if row.Has(stdlib.LoopWarn017) && c.loops > 0 && c.opts.Compat.Ints017() {
		c.warnAt(e.Span(), "Due to it's asynchronous nature using '%s()' in a loop can lead to unexpected behavior. The map will likely be updated before the runtime can 'print' it.", e.Name)
	}
	// The arguments of bpftrace's compile-time functions may be string
	// literals of any length; elsewhere a literal must fit a string.
	savedFmt := c.inFormatCall
	c.inFormatCall = row.Has(stdlib.LongStrArgs)
	defer func() { c.inFormatCall = savedFmt }()
	bad := false
	for i, a := range e.Args {
		var t *types.Type
		switch {
		case row.Kind == stdlib.MapFunc && i == 0:
			t = c.mapFuncArg(row, e, a)
		case row.Kind == stdlib.MapFunc && i == 1 && row.Has(stdlib.KeyArg):
			t = c.mapKeyArg(row, e, a)
		case i == 0 && (isMode(row, a) || badVarMode(row, a)):
			t = types.NoneType
			a.SetType(t)
		default:
			t = c.expr(a, ctxValue)
		}
		if t.IsInvalid() {
			bad = true
		}
	}
	if bad && row.Kind != stdlib.Agg && !row.Has(stdlib.CheckBadArgs) {
		// The argument's own error was reported; skip follow-on errors
		// but still type the call.
		if t := c.quietCheck(row, e); t != nil {
			return t
		}
		return types.InvalidType
	}
	if row.Check == nil {
		return types.NoneType
	}
	call := &stdlib.Call{Expr: e, Name: stdlib.Canonical(e.Name), Args: e.Args, Probe: c.probe}
	if !c.checkProbes(row, call) {
		return types.InvalidType
	}
	return row.Check(c, call)
}

// checkProbes enforces the row's probe rule (Probes, NotProbes) in the
// clause being checked, reporting the row's words; false when refused.
func (c *checker) checkProbes(row *stdlib.Builtin, call *stdlib.Call) bool {
	p, refused := row.RefusedIn(c.providers)
	if !refused {
		return true
	}
	if row.Has(stdlib.ProbeOnce) {
		if c.probeRefused[row] {
			return false
		}
		if c.probeRefused == nil {
			c.probeRefused = map[*stdlib.Builtin]bool{}
		}
		c.probeRefused[row] = true
	}
	c.errorf(call.Expr, "%s", row.ProbeMessage(c, call, p))
	return false
}

// quietCheck runs a row's rule with reporting off (to type a call whose
// arguments had errors without piling on follow-on errors).
func (c *checker) quietCheck(row *stdlib.Builtin, e *lang.CallExpr) *types.Type {
	if row.Check == nil {
		return nil
	}
	saved := c.report
	c.report = false
	defer func() { c.report = saved }()
	return row.Check(c, &stdlib.Call{Expr: e, Name: e.Name, Args: e.Args, Probe: c.probe})
}

// badVarMode: a builtin variable with modes (pid(init), nsecs(boot))
// called with another bare identifier, which its row reports as an
// invalid mode.
func badVarMode(row *stdlib.Builtin, a lang.Expr) bool {
	id, ok := a.(*lang.IdentExpr)
	if !ok || row.Kind != stdlib.Var || len(row.Modes) == 0 {
		return false
	}
	_, _, builtin := stdlib.Resolve(id.Name)
	return !builtin
}

func isMode(row *stdlib.Builtin, a lang.Expr) bool {
	_, ok := row.IsMode(a)
	return ok
}

// argCount spells n arguments as messages do ("one argument").
func argCount(n int) string {
	switch n {
	case 0:
		return "no arguments"
	case 1:
		return "one argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

func arityMsg(row *stdlib.Builtin, n int) string {
	count := func(k int) string {
		switch k {
		case 0:
			return "no arguments"
		case 1:
			return "one argument"
		}
		return fmt.Sprintf("%d arguments", k)
	}
	if n < row.MinArgs {
		if row.MinArgs == row.MaxArgs {
			return fmt.Sprintf("%s() requires %s (%d provided)", row.Name, count(row.MinArgs), n)
		}
		return fmt.Sprintf("%s() requires at least %s (%d provided)", row.Name, count(row.MinArgs), n)
	}
	if row.MinArgs == row.MaxArgs {
		return fmt.Sprintf("%s() requires %s (%d provided)", row.Name, count(row.MinArgs), n)
	}
	return fmt.Sprintf("%s() takes up to %d arguments (%d provided)", row.Name, row.MaxArgs, n)
}

// mapFuncArg checks the map argument of delete/clear/zero/print/len/has_key:
// a bare `@m` names the whole map.
func (c *checker) mapFuncArg(row *stdlib.Builtin, call *lang.CallExpr, a lang.Expr) *types.Type {
	m, ok := a.(*lang.MapExpr)
	if !ok || len(m.Keys) > 0 {
		if row.Has(stdlib.ElemArg) {
			c.wholeAgg = m
			defer func() { c.wholeAgg = nil }()
			return c.expr(a, ctxValue)
		}
		if ok {
			return c.expr(a, ctxValue)
		}
		t := c.expr(a, ctxValue)
		if t.IsInvalid() {
			return t
		}
		return t
	}
	st := c.mapRef(m)
	if st == nil {
		m.SetType(types.InvalidType)
		return types.InvalidType
	}
	m.Info = st.info
	if !st.assigned && !st.defPass1 {
		c.errHint(m.Span(), func() string { return c.mapHint(m.Name) }, "Undefined map: %s", m.Name)
		m.SetType(types.InvalidType)
		return types.InvalidType
	}
	t := st.info.Value
	if t == nil {
		t = types.InvalidType
	}
	m.SetType(t)
	return t
}

// mapKeyArg checks the key of delete(@m, k) / has_key(@m, k) against @m.
func (c *checker) mapKeyArg(row *stdlib.Builtin, call *lang.CallExpr, a lang.Expr) *types.Type {
	t := c.expr(a, ctxValue)
	if t.IsInvalid() || len(call.Args) == 0 {
		return t
	}
	m, ok := call.Args[0].(*lang.MapExpr)
	if !ok || m.Info == nil {
		return t
	}
	st := c.maps[m.Name]
	if st == nil || !st.keySet {
		return t
	}
	if row.Has(stdlib.KeyedMap) && len(st.info.KeyParts) == 0 && !c.opts.Compat.Legacy() {
		// bpftrace 0.26's words.
		c.errorf(call, "call to has_key() expects a map with explicit keys (non-scalar map)")
		return types.InvalidType
	}
	parts := []*types.Type{t}
	if t.Kind == types.Tuple && len(st.info.KeyParts) > 1 {
		parts = parts[:0]
		for _, f := range t.Fields {
			parts = append(parts, f.Type)
		}
	}
	c.unifyKey(st, m, parts, lang.Join(call.Args[0].Span(), a.Span()))
	return t
}

// ---- operators ----

func isArith(op string) bool {
	switch op {
	case "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^":
		return true
	}
	return false
}

func isCompare(op string) bool {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// intResult is bpftrace 0.17's result type of an integer binary operation:
// 64-bit, signed only when both operands are signed.
func intResult(x, y *types.Type) *types.Type {
	return types.IntType(8, signedOf(x) && signedOf(y))
}

func signedOf(t *types.Type) bool {
	switch t.Kind {
	case types.Int, types.Enum:
		return t.Signed
	case types.Bool:
		return true
	}
	return false
}

func (c *checker) binary(e *lang.BinaryExpr) *types.Type {
	x := c.expr(e.X, ctxValue)
	y := c.expr(e.Y, ctxValue)
	if x.IsInvalid() || y.IsInvalid() {
		return types.InvalidType
	}
	op := e.Op
	mismatch := func() *types.Type {
		c.errAt(c.operandsLoc(e), "", "Type mismatch for '%s': comparing '%s' with '%s'", op, stdlib.TypeName(x), stdlib.TypeName(y))
		return types.InvalidType
	}
	opErr := func() *types.Type {
		c.errAt(c.opSpan(e), "", "The %s operator can not be used on expressions of types %s, %s", op, stdlib.TypeName(x), stdlib.TypeName(y))
		return types.InvalidType
	}
	xi, yi := x.IsInteger(), y.IsInteger()
	xp, yp := x.Kind == types.Pointer || x.Kind == types.Ctx, y.Kind == types.Pointer || y.Kind == types.Ctx
	switch {
	case op == "&&" || op == "||":
		if xi && yi {
			if c.opts.Compat.Ints017() {
				return c.truth(intResult(x, y)) // 0.17: (uint16)a && 1 is unsigned
			}
			return c.truth(types.S64)
		}
		if (xi || xp) && (yi || yp) {
			return c.truth(types.S64)
		}
		return mismatch()
	case xi && yi:
		c.warnSigns(op, e.X, e.Y, x, y, c.opSpan(e))
		if x.Kind == types.Bool && y.Kind == types.Bool && (isCompare(op) || op == "&" || op == "|" || op == "^") {
			return types.BoolType
		}
		if isCompare(op) {
			return c.truth(intResult(x, y))
		}
		if (op == "<<" || op == ">>") && c.opts.Compat.Ints017() {
			// A shift has its left operand's sign (bpftrace 0.17).
			return types.IntType(8, signedOf(x))
		}
		if !c.opts.Compat.Ints017() {
			switch op {
			case "+", "-", "*", "&", "|", "^":
				// bpftrace 0.26 (its binop_int): a subtraction is an
				// int64 whatever its operands (`(uint64)1 - 2` is -1), as
				// is an operation with a signed operand. The bits are
				// those of the unsigned result; only the type differs.
				return types.IntType(8, op == "-" || signedOf(x) || signedOf(y))
			}
		}
		return intResult(x, y)
	case xp && yi || xi && yp:
		if isCompare(op) {
			return c.truth(types.S64)
		}
		if op == "+" || (op == "-" && xp) {
			if xp {
				return x
			}
			return y
		}
		if op == "&" || op == "|" || op == "^" || op == "*" || op == "/" || op == "%" || op == "<<" || op == ">>" {
			return types.U64
		}
		return opErr()
	case xp && yp:
		if isCompare(op) {
			return c.truth(types.S64)
		}
		return opErr()
	case x.Kind == types.String && y.Kind == types.String:
		if op == "==" || op == "!=" {
			if op == "==" {
				c.warnLongLiteral(e, x, y)
			}
			return c.truth(types.U64)
		}
		return opErr()
	case x.Kind == types.Buffer && y.Kind == types.Buffer:
		if op == "==" || op == "!=" {
			return c.truth(types.U64)
		}
		return opErr()
	case x.Kind == types.Tuple && y.Kind == types.Tuple && (op == "==" || op == "!=") && c.tuplesCompare(x, y):
		return types.BoolType
	case x.Kind == types.Array && y.Kind == types.Array:
		if (op == "==" || op == "!=") && types.Equal(x, y) {
			return c.truth(types.U64)
		}
		if op == "==" || op == "!=" {
			return mismatch()
		}
		return opErr()
	}
	return mismatch()
}

func (c *checker) unary(e *lang.UnaryExpr) *types.Type {
	switch e.Op {
	case "++", "--":
		return c.incdec(e)
	}
	x := c.expr(e.X, ctxValue)
	if x.IsInvalid() {
		return types.InvalidType
	}
	switch e.Op {
	case "!":
		if x.IsInteger() || x.Kind == types.Pointer {
			if t := c.truth(nil); t != nil {
				return t
			}
			if x.Kind == types.Bool {
				return x
			}
			if !c.opts.Compat.Ints017() {
				if x.Kind == types.Int {
					return x
				}
				return types.S64
			}
			if x.Kind == types.Int {
				// bpftrace 0.17: !x is unsigned, of x's width.
				return types.IntType(x.Size, false)
			}
			return types.U64
		}
	case "-", "~":
		if x.IsInteger() {
			return types.IntType(8, signedOf(x))
		}
	case "*":
		switch x.Kind {
		case types.Pointer, types.Ctx:
			if x.Elem == nil || x.Elem.Kind == types.None {
				c.errorf(e, "Can not dereference a void pointer")
				return types.InvalidType
			}
			full := c.complete(e, x.Elem)
			if full == nil {
				return types.InvalidType
			}
			el := *full
			if el.Kind == types.Pointer && el.Space == types.AddrNone {
				el.Space = x.Space
			}
			return &el
		case types.Int:
			return types.IntType(8, x.Signed)
		}
		c.errorf(e, "Can not dereference type '%s'", stdlib.TypeName(x))
		return types.InvalidType
	case "&":
		if t := c.addrOf026(e, x); t != nil {
			return t
		}
		c.errorf(e, "The & operator is not supported")
		return types.InvalidType
	}
	at := e.Span()
	if c.opts.Compat.OperatorPlaces() {
		at = c.nodeLoc017(e)
	}
	c.errAt(at, "", "The %s operator can not be used on expressions of type '%s'", e.Op, stdlib.TypeName(x))
	return types.InvalidType
}

func (c *checker) incdec(e *lang.UnaryExpr) *types.Type {
	switch x := e.X.(type) {
	case *lang.MapExpr:
		st := c.mapAccess(x, true)
		if st == nil {
			return types.InvalidType
		}
		t := st.info.Value
		if t == nil || t.IsInvalid() || (!st.assigned && !st.defPass1) {
			c.storeMap(st, x, types.S64, x.Span())
			t = st.info.Value
		} else {
			st.assigned = true
		}
		x.SetType(t)
		if t != nil && !t.IsInvalid() && !t.IsInteger() && t.Kind != types.Pointer {
			c.errorf(e, "The %s operator can not be used on expressions of type '%s'", e.Op, stdlib.TypeName(t))
			return types.InvalidType
		}
		return t
	case *lang.VarExpr:
		t := c.expr(x, ctxValue)
		if t.IsInvalid() {
			return t
		}
		if !t.IsInteger() && t.Kind != types.Pointer {
			c.errorf(e, "The %s operator can not be used on expressions of type '%s'", e.Op, stdlib.TypeName(t))
			return types.InvalidType
		}
		return t
	}
	c.expr(e.X, ctxValue)
	c.errorf(e, "The %s operator must be applied to a map or variable", e.Op)
	return types.InvalidType
}

func (c *checker) ternary(e *lang.TernaryExpr) *types.Type {
	cond := c.expr(e.Cond, ctxValue)
	a := c.expr(e.Then, ctxStmt)
	b := c.expr(e.Else, ctxStmt)
	if cond.IsInvalid() || a.IsInvalid() || b.IsInvalid() {
		return types.InvalidType
	}
	if !isCondType(cond) {
		c.errorf(e.Cond, "Invalid condition in ternary: %s", types.KindWord(cond, types.AsOperand))
		return types.InvalidType
	}
	switch {
	case a.Kind == types.Bool && b.Kind == types.Bool && c.truth(nil) != nil:
		return types.BoolType
	case a.IsInteger() && b.IsInteger():
		// bpftrace 0.17: 64 bits, with the sign of the first branch.
		if c.opts.Compat.Ints017() {
			return types.IntType(8, signedOf(a))
		}
		return types.IntType(8, signedOf(a) || signedOf(b))
	case a.Kind == types.String && b.Kind == types.String:
		return types.StringType(max(a.Size, b.Size, c.strlen))
	case a.Kind == types.None && b.Kind == types.None:
		return types.NoneType
	case a.Kind == b.Kind && a.Kind != types.Record && assignable(a, b):
		return merge(a, b)
	}
	c.errorf(e, "Ternary operator must return the same type: have '%s' and '%s'", types.KindWord(a, types.AsOperand), types.KindWord(b, types.AsOperand))
	return types.InvalidType
}

// ---- fields, indexes, casts ----

func (c *checker) dotSpan(e *lang.FieldExpr) lang.Span {
	tok := "."
	if e.Arrow {
		tok = "->"
	}
	sp := c.tokenAfter(e.X.Span().End, tok)
	if !sp.Start.IsValid() {
		return e.Span()
	}
	return sp
}

func (c *checker) field(e *lang.FieldExpr) *types.Type {
	x := c.expr(e.X, ctxValue)
	if x.IsInvalid() {
		return types.InvalidType
	}
	rec := x
	isArgs := false
	if b, ok := e.X.(*lang.BuiltinExpr); ok {
		row, _, found := stdlib.Resolve(b.Name)
		isArgs = found && row.Has(stdlib.DotDeref)
	}
	if e.Arrow && x.Kind == types.Record && c.opts.Compat.DotDerefs() {
		// bpftrace 0.26: `s->f` on a struct value reads like `s.f` (a
		// struct copied into a map: `@s = *curtask; @s->pid`).
		e.Arrow = false
	}
	if e.Arrow {
		if x.Kind != types.Pointer || x.Elem == nil || x.Elem.Kind != types.Record {
			c.errorf(e, "Can not access field '%s' on expression of type '%s'", e.Field, stdlib.TypeName(x))
			return types.InvalidType
		}
		rec = x.Elem
	} else {
		if x.Kind == types.Pointer && isArgs && x.Elem != nil && x.Elem.Kind == types.Record {
			// `args.f` is accepted like `args->f` (gotrace's SPEC; the
			// row's DotDeref).
			rec = x.Elem
		} else if x.Kind == types.Pointer && x.Elem != nil && x.Elem.Kind == types.Record && c.opts.Compat.DotDerefs() {
			// bpftrace 0.26: `p.f` on a struct pointer reads like `p->f`.
			rec = x.Elem
		} else if x.Kind == types.Pointer && x.Elem != nil && x.Elem.Kind == types.Record {
			c.errAt(c.dotSpan(e), "use '->' to access a member through a pointer",
				"Can not access field '%s' on type '%s'. Try dereferencing it first, or using '->'", e.Field, stdlib.TypeName(x))
			return types.InvalidType
		} else if x.Kind == types.Tuple && len(x.Fields) > 0 && x.Fields[0].Name != "" {
			// A record's field (bpftrace 0.24): an element of the tuple.
			for _, f := range x.Fields {
				if f.Name == e.Field {
					e.Offset = f.Offset
					return f.Type
				}
			}
			c.errAt(c.dotSpan(e), "", "Record does not contain a field named '%s'", e.Field)
			return types.InvalidType
		} else if x.Kind != types.Record {
			c.errAt(c.dotSpan(e), "", "Can not access field '%s' on expression of type '%s'", e.Field, stdlib.TypeName(x))
			return types.InvalidType
		}
	}
	if rec = c.complete(e, rec); rec == nil {
		return types.InvalidType
	}
	f, ok := rec.Field(e.Field)
	// A wildcard tracepoint's args need the field in every match; like
	// bpftrace, report each match that lacks it, in match order.
	missing := false
	if isArgs {
		for _, r := range c.argsOthers {
			if _, has := r.Field(e.Field); !has {
				missing = true
			}
		}
	}
	if !ok || missing {
		recs := []*types.Type{rec}
		if isArgs {
			recs = append(recs, c.argsOthers...)
		}
		for _, r := range recs {
			if _, has := r.Field(e.Field); has {
				continue
			}
			sp := e.Span()
			if !e.Arrow && !isArgs {
				sp = c.dotSpan(e)
			}
			c.errHint(sp, func() string {
				var names []string
				collectFieldNames(r, &names)
				return lang.Suggest(e.Field, names)
			}, "Struct/union of type '%s' does not contain a field named '%s'", r.Name, e.Field)
		}
		return types.InvalidType
	}
	e.Offset, e.BitOff, e.BitWidth = f.Offset, f.BitOff, f.BitWidth
	t := f.Type
	if t == nil {
		return types.InvalidType
	}
	space := x.Space
	if t.Kind == types.Pointer && t.Space == types.AddrNone && space != types.AddrNone {
		cp := *t
		cp.Space = space
		t = &cp
	}
	return t
}

// complete returns the full layout of a record reached through a pointer
// (the layout package leaves such records as named stubs), reporting at n
// when no source knows it.
func (c *checker) complete(n lang.Node, t *types.Type) *types.Type {
	if t == nil || t.Kind != types.Record || !t.Opaque || len(t.Fields) > 0 {
		return t
	}
	if t.Name != "" {
		if full, err := c.LookupType(t.Name); err == nil && full != nil && !(full.Opaque && len(full.Fields) == 0) {
			return full
		} else if err != nil {
			c.errAt(n.Span(), err.Error(), "Unknown struct/union: '%s'", t.Name)
			return nil
		}
	}
	c.errorf(n, "Unknown struct/union: '%s'", t.Name)
	return nil
}

func collectFieldNames(t *types.Type, out *[]string) {
	for _, f := range t.Fields {
		if f.Name == "" && f.Type != nil && f.Type.Kind == types.Record {
			collectFieldNames(f.Type, out)
		} else if f.Name != "" {
			*out = append(*out, f.Name)
		}
	}
}

func (c *checker) index(e *lang.IndexExpr) *types.Type {
	x := c.expr(e.X, ctxValue)
	it := c.expr(e.Index, ctxValue)
	if x.IsInvalid() || it.IsInvalid() {
		return types.InvalidType
	}
	if !it.IsInteger() {
		c.errorf(e.Index, "The array index operator [] expects an integer index (%s provided)", types.KindWord(it, types.AsOperand))
		return types.InvalidType
	}
	switch x.Kind {
	case types.Array:
		if v, ok := c.ConstInt(e.Index); ok && (v < 0 || v >= int64(x.Len)) && x.Len > 0 {
			c.errorf(e, "the index %d is out of bounds for array of size %d", v, x.Len)
			return types.InvalidType
		}
		return x.Elem
	case types.Pointer:
		if x.Elem == nil || x.Elem.Kind == types.None {
			c.errorf(e, "Can not index a void pointer")
			return types.InvalidType
		}
		el := *x.Elem
		if el.Kind == types.Pointer && el.Space == types.AddrNone {
			el.Space = x.Space
		}
		return &el
	case types.Tuple, types.String:
		// bpftrace 0.24: a tuple's element or a string's character, by a
		// constant index.
		v, ok := c.ConstInt(e.Index)
		if !ok && x.Kind == types.String && !c.opts.Compat.Legacy() {
			// A string's character by an index known at run time (0 out
			// of bounds).
			if it := e.Index.Type(); it != nil && !it.IsInvalid() && !it.IsInteger() {
				c.errorf(e.Index, "The index of a string must be an integer")
				return types.InvalidType
			}
			return types.IntType(1, true)
		}
		if !ok {
			c.errorf(e.Index, "The index of a %s must be a constant integer", types.KindWord(x, types.AsOperand))
			return types.InvalidType
		}
		n := x.Size
		if x.Kind == types.Tuple {
			n = len(x.Fields)
		}
		if v < 0 || v >= int64(n) {
			c.errorf(e, "the index %d is out of bounds for %s of size %d", v, types.KindWord(x, types.AsOperand), n)
			return types.InvalidType
		}
		if x.Kind == types.Tuple {
			return x.Fields[v].Type
		}
		return types.IntType(1, true)
	}
	c.errorf(e, "The array index operator [] can only be used on arrays and pointers, found %s.", types.KindWord(x, types.AsOperand))
	return types.InvalidType
}

func (c *checker) cast(e *lang.CastExpr) *types.Type {
	// bpftrace reports cast errors at the parenthesised type.
	at := lang.Loc(e.Span())
	if e.To != nil {
		if cl := c.tokenAfter(e.To.Span().End, ")"); cl.Start.IsValid() {
			at = lang.Loc(lang.Span{Start: e.Span().Start, End: cl.End})
		}
	}
	to := types.InvalidType
	if e.To != nil {
		to = c.resolveTypeAt(e.To, at)
	}
	x := c.expr(e.X, ctxValue)
	if to.IsInvalid() || x.IsInvalid() {
		return types.InvalidType
	}
	if t := c.castArray026(e, to, x); t != nil {
		return t
	}
	switch to.Kind {
	case types.Record:
		c.errorf(e, "Cannot cast to struct type \"%s\"", to.Name)
		return types.InvalidType
	case types.Int, types.Pointer, types.Bool, types.Enum:
		if x.IsInteger() || x.Kind == types.Pointer || x.Kind == types.Ctx {
			return to
		}
		if to.Kind == types.Bool && x.Kind == types.String {
			return to // bpftrace 0.26: a non-empty string is true
		}
	case types.Array:
		if (x.IsInteger() || x.Kind == types.Array) && x.Size == to.Size {
			return to
		}
		c.errorf(at, "Cannot cast from \"%s\" to \"%s\"", stdlib.TypeName(x), stdlib.TypeName(to))
		return types.InvalidType
	}
	c.errorf(at, "Casts are not supported for type: \"%s\"", stdlib.TypeName(x))
	return types.InvalidType
}

// baseTypes are the type names bpftrace knows without any type source.
var baseTypes = map[string]*types.Type{
	"int8": types.S8, "int16": types.S16, "int32": types.S32, "int64": types.S64,
	"uint8": types.U8, "uint16": types.U16, "uint32": types.U32, "uint64": types.U64,
	"bool": types.BoolType,
	"char": types.S8, "signed char": types.S8, "unsigned char": types.U8,
	"short": types.S16, "unsigned short": types.U16, "int": types.S32, "unsigned int": types.U32,
	"unsigned": types.U32, "long": types.S64, "unsigned long": types.U64, "long long": types.S64,
	"unsigned long long": types.U64,
	"u8":                 types.U8, "u16": types.U16, "u32": types.U32, "u64": types.U64,
	"s8": types.S8, "s16": types.S16, "s32": types.S32, "s64": types.S64,
	"__u8": types.U8, "__u16": types.U16, "__u32": types.U32, "__u64": types.U64,
	"__s8": types.S8, "__s16": types.S16, "__s32": types.S32, "__s64": types.S64,
	"uint8_t": types.U8, "uint16_t": types.U16, "uint32_t": types.U32, "uint64_t": types.U64,
	"int8_t": types.S8, "int16_t": types.S16, "int32_t": types.S32, "int64_t": types.S64,
	"size_t": types.U64, "ssize_t": types.S64, "pid_t": types.S32, "uid_t": types.U32, "gid_t": types.U32,
}

// resolveTypeExpr resolves a written type and stores it in te.Resolved.
func (c *checker) resolveTypeExpr(te *lang.TypeExpr) *types.Type { return c.resolveTypeAt(te, te) }

// resolveTypeAt resolves te, reporting an unknown type at `at`.
func (c *checker) resolveTypeAt(te *lang.TypeExpr, at lang.Node) *types.Type {
	name := strings.Join(strings.Fields(te.Name), " ")
	var t *types.Type
	switch {
	case te.Of != nil:
		// typeof(expr): the expression's type (it is not evaluated).
		t = c.expr(te.Of, ctxValue)
		if t.IsInvalid() {
			te.Resolved = types.InvalidType
			return t
		}
	case name == "void":
		t = &types.Type{Kind: types.None}
	case name == "string":
		t = types.StringType(c.strlen)
	case baseTypes[name] != nil:
		t = baseTypes[name]
	default:
		rt, err := c.LookupType(name)
		if err != nil || rt == nil {
			hint := ""
			if err != nil {
				hint = err.Error()
			}
			c.errAt(at.Span(), hint, "Unknown struct/union: '%s'", name)
			te.Resolved = types.InvalidType
			return types.InvalidType
		}
		t = rt
	}
	for i := 0; i < te.Ptr; i++ {
		t = types.PointerTo(t, types.AddrNone)
	}
	if te.ArrayLen > 0 {
		t = types.ArrayOf(t, te.ArrayLen)
	}
	te.Resolved = t
	return t
}

func (c *checker) offsetof(e *lang.OffsetofExpr) *types.Type {
	var rec *types.Type
	if id, ok := e.X.(*lang.IdentExpr); ok && e.Of == nil && !c.knownIdent(id.Name) {
		// offsetof(qspinlock, f): bpftrace 0.26 also takes a type by its
		// bare name (a struct or union, or a typedef of one).
		if t, err := c.LookupType("struct " + id.Name); err == nil && t != nil {
			rec = t
		} else if t, err := c.LookupType("union " + id.Name); err == nil && t != nil {
			rec = t
		} else if t, err := c.LookupType(id.Name); err == nil && t != nil {
			rec = t
		}
	}
	switch {
	case rec != nil:
	case e.Of != nil:
		rec = c.resolveTypeExpr(e.Of)
	default:
		rec = c.expr(e.X, ctxValue)
	}
	if rec.IsInvalid() {
		return types.InvalidType
	}
	off := 0
	for _, name := range e.Fields {
		if rec.Kind != types.Record {
			c.errorf(e, "offsetof() expects a struct or union type, got '%s'", stdlib.TypeName(rec))
			return types.InvalidType
		}
		f, ok := rec.Field(name)
		if !ok {
			c.errHint(e.Span(), func() string {
				var names []string
				collectFieldNames(rec, &names)
				return lang.Suggest(name, names)
			}, "Struct/union of type '%s' does not contain a field named '%s'", rec.Name, name)
			return types.InvalidType
		}
		off += f.Offset
		rec = f.Type
	}
	e.Val = off
	return types.U64
}

// strOfPositional folds str($N + K) (K an integer literal, either side of
// the '+') into the parameter's text from byte K, as bpftrace does: a
// positional parameter inside str() is a string literal, and adding to it
// moves its start. Any other arithmetic on a parameter inside str() is an
// error, with bpftrace's messages and places; false after an error.
func (c *checker) strOfPositional(e *lang.CallExpr) bool {
	bin, ok := e.Args[0].(*lang.BinaryExpr)
	if !ok {
		return true
	}
	direct := func(x lang.Expr) *lang.PositionalExpr {
		if p, ok := x.(*lang.PositionalExpr); ok && !p.Count {
			return p
		}
		return nil
	}
	var nested func(x lang.Expr) bool
	nested = func(x lang.Expr) bool {
		switch x := x.(type) {
		case *lang.PositionalExpr:
			return !x.Count
		case *lang.BinaryExpr:
			return nested(x.X) || nested(x.Y)
		}
		return false
	}
	pos, other := direct(bin.X), bin.Y
	if pos == nil {
		pos, other = direct(bin.Y), bin.X
	}
	if pos == nil {
		if nested(bin) {
			c.errorf(e, "str() only accepts positional parameters directly or with a single constant offset added")
			return false
		}
		return true
	}
	text := ""
	if pos.N >= 1 && pos.N <= len(c.opts.Params) {
		text = c.opts.Params[pos.N-1]
	}
	lit, isLit := other.(*lang.IntLit)
	if bin.Op != "+" || !isLit || lit.Value > uint64(len(text)) {
		// bpftrace marks the operator and the right operand.
		sp := lang.Span{Start: bin.Span().Start, End: bin.Span().End}
		if xe, ys := bin.X.Span().End, bin.Y.Span().Start; c.srcOf(xe) != nil && xe.IsValid() && ys.IsValid() && ys.Offset <= len(c.srcOf(xe).Text) && xe.Offset <= ys.Offset {
			if i := strings.Index(c.srcOf(xe).Text[xe.Offset:ys.Offset], bin.Op); i >= 0 {
				sp.Start = c.posIn(xe, xe.Offset+i)
			}
		}
		c.errAt(sp, "", "only addition of a single constant less or equal to the length of $%d (which is %d) is allowed inside str()", pos.N, len(text))
		return false
	}
	e.Args[0] = &lang.PositionalExpr{Loc: bin.Loc, N: pos.N, Offset: int(lit.Value), InStr: true}
	return true
}

// tseriesDummyClock: with BPFTRACE_DUMMY_TS_MAP=@name (bpftrace's test
// hook), tseries() reads its timestamps from the map @name instead of the
// clock; the map read becomes the call's last argument.
func (c *checker) tseriesDummyClock(e *lang.CallExpr) {
	name := c.opts.DummyTseriesMap
	if name == "" {
		return
	}
	if n := len(e.Args); n > 0 {
		if m, ok := e.Args[n-1].(*lang.MapExpr); ok && m.Name == name {
			return // checked before
		}
	}
	e.Args = append(e.Args, &lang.MapExpr{Loc: e.Loc, Name: name})
}
