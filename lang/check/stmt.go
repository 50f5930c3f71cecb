package check

import (
	"fmt"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// maxDepth caps expression and block nesting so hostile input cannot
// exhaust the stack.
const maxDepth = 1000

func (c *checker) checkProbe(p *lang.Probe) {
	c.probe = p
	c.providers, c.kinds = c.providers[:0], c.kinds[:0]
	c.vars = map[string]*lang.VarInfo{}
	c.scopes = nil
	c.loops = 0
	c.argsDone, c.argsType, c.argsOthers = false, nil, nil
	c.argsBases = map[lang.Node]bool{}
	lang.Inspect(p, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.FieldExpr:
			c.argsBases[n.X] = true
		case *lang.UnaryExpr:
			if n.Op == "*" {
				c.argsBases[n.X] = true
			}
		}
		return true
	})
	c.retDone, c.retType = false, nil
	clear(c.probeRefused)
	p.Vars = nil
	seen := map[lang.ProbeKind]bool{}
	for _, ap := range p.Attach {
		if ap.Provider == lang.ProbeNone {
			if !lang.HasParams(ap.Raw) {
				c.errorf(ap, "Invalid probe type: %s", ap.Raw)
			}
			continue // a failed substitution is reported by substituteAttachParams
		}
		if why := ap.Provider.Type().Refused; why != "" {
			c.errAt(ap.Span(), "", "%s", why)
			continue
		}
		if (ap.Provider == lang.ProbeKprobe || ap.Provider == lang.ProbeKretprobe) && ap.Target != "" && !c.opts.Compat.KprobeModules() {
			// bpftrace 0.17's kprobes take one part, FUNC[+OFFSET].
			c.errAt(ap.Span(), "", "%s probe type requires 1 argument", ap.Provider)
			continue
		}
		if !seen[ap.Provider] {
			seen[ap.Provider] = true
			c.kinds = append(c.kinds, ap.Provider)
			c.providers = append(c.providers, ap.Provider.String())
		}
	}
	if p.Pred != nil {
		t := c.expr(p.Pred, ctxValue)
		if !t.IsInvalid() && !isCondType(t) {
			c.errorf(p.Pred, "Invalid type for predicate: %s", types.KindWord(t, types.AsOperand))
		}
	}
	if p.Body != nil {
		c.block(p.Body)
	}
}

func isCondType(t *types.Type) bool {
	return t.IsInteger() || t.Kind == types.Pointer || t.Kind == types.Bool
}

func (c *checker) block(b *lang.Block) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDepth {
		c.errorf(b, "nesting too deep (more than %d levels)", maxDepth)
		return
	}
	c.scopes = append(c.scopes, map[string]*lang.VarInfo{})
	for _, s := range b.Stmts {
		c.stmt(s)
	}
	c.scopes = c.scopes[:len(c.scopes)-1]
}

func (c *checker) stmt(s lang.Stmt) {
	switch s := s.(type) {
	case *lang.ExprStmt:
		c.expr(s.X, ctxStmt)
	case *lang.AssignStmt:
		c.assign(s)
	case *lang.VarDeclStmt:
		c.varDecl(s)
	case *lang.IfStmt:
		if t := c.expr(s.Cond, ctxValue); !t.IsInvalid() && !isCondType(t) {
			c.errorf(s.Cond, "Invalid condition in if(): %s", types.KindWord(t, types.AsOperand))
		}
		if s.Then != nil {
			c.block(s.Then)
		}
		if s.Else != nil {
			c.stmt(s.Else)
		}
	case *lang.UnrollStmt:
		c.unroll(s)
	case *lang.WhileStmt:
		if t := c.expr(s.Cond, ctxValue); !t.IsInvalid() && !isCondType(t) {
			c.errorf(s.Cond, "Invalid condition in while(): %s", types.KindWord(t, types.AsOperand))
		}
		c.loops++
		if s.Body != nil {
			c.block(s.Body)
		}
		c.loops--
	case *lang.ForStmt:
		c.forStmt(s)
	case *lang.JumpStmt:
		if s.Value != nil {
			if c.opts.Compat.Legacy() {
				c.errHint(s.ValueTokSpan, func() string { return "bpftrace 0.26 added return with a value" }, "syntax error, unexpected %s, expecting }", s.ValueTok)
			} else {
				c.expr(s.Value, ctxValue)
			}
		}
		if s.Kind == lang.Break && c.loops == 0 {
			c.errorf(s, "break used outside of a loop")
		}
		if s.Kind == lang.Continue && c.loops == 0 {
			c.errorf(s, "continue used outside of a loop")
		}
	case *lang.BlockStmt:
		if s.Body != nil {
			c.block(s.Body)
		}
	case *lang.Block:
		c.block(s)
	case nil:
	default:
		c.errorf(s, "unsupported statement %T", s)
	}
}

func (c *checker) unroll(s *lang.UnrollStmt) {
	sp := s.Span()
	if s.Count != nil {
		// bpftrace reports at `unroll(N)`.
		sp.End = s.Count.Span().End
		if end := c.tokenAfter(sp.End, ")"); end.Start.IsValid() {
			sp.End = end.End
		}
		c.expr(s.Count, ctxValue)
	}
	n, ok := int64(0), false
	if s.Count != nil {
		n, ok = c.ConstInt(s.Count)
	}
	switch {
	case !ok:
		if s.Count == nil || !s.Count.Type().IsInvalid() {
			c.errAt(sp, "", "unroll count must be a constant integer")
		}
	case n > 100:
		c.errAt(sp, "", "unroll maximum value is 100")
	case n < 1:
		c.errAt(sp, "", "unroll minimum value is 1")
	default:
		s.N = int(n)
	}
	if s.Body != nil {
		c.block(s.Body)
	}
}

func (c *checker) forStmt(s *lang.ForStmt) {
	var elem *types.Type = types.InvalidType
	if s.Map != nil {
		m := c.mapRef(s.Map)
		if m != nil {
			s.Map.Info = m.info
			if !m.defPass1 && !m.assigned {
				c.errHint(s.Map.Span(), func() string { return c.mapHint(s.Map.Name) }, "Undefined map: %s", s.Map.Name)
			} else if len(m.info.KeyParts) == 0 {
				c.errorf(s.Map, "%s has no explicit keys (scalar map), and cannot be used for iteration", s.Map.Name)
			} else if v := m.info.Value; v != nil && !v.IsInvalid() {
				key := keyOf(m.info)
				val := v
				switch v.Kind {
				case types.Count:
					val = types.U64
				case types.Sum, types.Min, types.Max:
					val = types.IntType(8, v.Signed)
				case types.Avg, types.Stats, types.Hist, types.Lhist, types.Tseries:
					c.errorf(s.Map, "Loop expression does not support type: %s", v.Kind)
					val = nil
				}
				if val != nil {
					elem = types.TupleOf(key, val)
				}
			}
			s.Map.SetType(m.info.Value)
		}
	}
	c.scopes = append(c.scopes, map[string]*lang.VarInfo{})
	if s.Var != nil {
		info := c.newVar(s.Var.Name, elem, true)
		s.Var.Info = info
		s.Var.SetType(elem)
	}
	c.loops++
	if s.Body != nil {
		c.block(s.Body)
	}
	c.loops--
	c.scopes = c.scopes[:len(c.scopes)-1]
}

func keyOf(info *lang.MapInfo) *types.Type {
	if len(info.KeyParts) == 1 {
		return info.KeyParts[0]
	}
	return types.TupleOf(info.KeyParts...)
}

// ---- variables ----

// lookupVar finds $name: `let` bindings innermost first, then the
// clause-wide variables bpftrace 0.17 creates on first assignment.
func (c *checker) lookupVar(name string) *lang.VarInfo {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if v, ok := c.scopes[i][name]; ok {
			return v
		}
	}
	return c.vars[name]
}

func (c *checker) newVar(name string, t *types.Type, scoped bool) *lang.VarInfo {
	info := &lang.VarInfo{Name: name, Type: t, ID: len(c.probe.Vars)}
	c.probe.Vars = append(c.probe.Vars, info)
	if scoped && len(c.scopes) > 0 {
		c.scopes[len(c.scopes)-1][name] = info
	} else {
		c.vars[name] = info
	}
	return info
}

func (c *checker) varNames() []string {
	var out []string
	for n := range c.vars {
		out = append(out, n)
	}
	for _, s := range c.scopes {
		for n := range s {
			out = append(out, n)
		}
	}
	return out
}

func (c *checker) varDecl(s *lang.VarDeclStmt) {
	var t *types.Type
	if s.Type != nil {
		t = c.resolveTypeExpr(s.Type)
	}
	if s.Init != nil {
		it := c.expr(s.Init, ctxValue)
		if t == nil {
			t = it
		} else if !t.IsInvalid() && !it.IsInvalid() && !assignable(t, it) {
			c.errAt(s.Init.Span(), "", "Type mismatch for %s: trying to assign value of type '%s' when variable already has a type '%s'",
				s.Var.Name, stdlib.TypeName(it), stdlib.TypeName(t))
		}
	}
	if t == nil {
		t = types.InvalidType
	}
	if len(c.scopes) > 0 {
		if _, dup := c.scopes[len(c.scopes)-1][s.Var.Name]; dup {
			c.errorf(s.Var, "Variable %s was already declared in this scope", s.Var.Name)
		}
	}
	if t.Kind.IsAggregation() {
		c.errorf(s, "Value of type '%s' can not be stored in a variable", stdlib.TypeName(t))
		t = types.InvalidType
	}
	info := c.newVar(s.Var.Name, varType(t, c.strlen), true)
	s.Var.Info = info
	s.Var.SetType(info.Type)
}

// varType is the stored type of a variable holding a value of type t.
func varType(t *types.Type, strlen int) *types.Type {
	return t
}

// assignable reports whether a value of type v may be stored where values
// of type old live (a variable or map already typed old).
func assignable(old, v *types.Type) bool {
	if old.IsInvalid() || v.IsInvalid() {
		return true
	}
	switch {
	case old.Kind == types.Int && (v.Kind == types.Int || v.Kind == types.Bool || v.Kind == types.Enum):
		return true
	case old.Kind == types.Enum && v.IsInteger():
		return true
	case old.Kind == types.Bool && v.Kind == types.Bool:
		return true
	case old.Kind == types.String && v.Kind == types.String:
		return true
	case old.Kind == types.Buffer && v.Kind == types.Buffer:
		return true
	case old.Kind == types.Tuple && v.Kind == types.Tuple:
		if len(old.Fields) != len(v.Fields) {
			return false
		}
		for i := range old.Fields {
			if !assignable(old.Fields[i].Type, v.Fields[i].Type) {
				return false
			}
		}
		return true
	case old.Kind == types.Pointer && v.Kind == types.Pointer:
		return true
	case old.Kind == types.Array && v.Kind == types.Array:
		// `let $x: struct Foo *[2] = args.bar->foos`: the declared
		// element may be laid out in full where the value's points to
		// the DWARF stub of the same struct.
		return old.Len == v.Len && old.Size == v.Size && assignable(old.Elem, v.Elem)
	case old.Kind == types.Stack && v.Kind == types.Stack:
		return old.Stack.User == v.Stack.User && old.Stack.Dwarf == v.Stack.Dwarf
	case old.Kind.IsAggregation():
		return old.Kind == v.Kind
	}
	return types.Equal(old, v) || (old.Kind == v.Kind && old.Kind != types.Record && old.Kind != types.Array)
}

// merge returns the type that holds values of both a and b (strings and
// buffers grow to the larger size, tuples element-wise).
func merge(a, b *types.Type) *types.Type {
	if a.IsInvalid() {
		return b
	}
	if b.IsInvalid() {
		return a
	}
	switch {
	case a.Kind == types.Enum && b.Kind == types.Int:
		// An enum mixed with integers is an integer of the enum's width.
		return types.IntType(a.Size, a.Signed)
	case a.Kind == types.String && b.Kind == types.String && b.Size > a.Size:
		return types.StringType(b.Size)
	case a.Kind == types.Buffer && b.Kind == types.Buffer && b.Size > a.Size:
		return b
	case a.Kind == types.Tuple && b.Kind == types.Tuple && len(a.Fields) == len(b.Fields):
		changed := false
		elems := make([]*types.Type, len(a.Fields))
		for i := range a.Fields {
			elems[i] = merge(a.Fields[i].Type, b.Fields[i].Type)
			if elems[i] != a.Fields[i].Type {
				changed = true
			}
		}
		if changed {
			return types.TupleOf(elems...)
		}
	}
	return a
}

// ---- assignment ----

func (c *checker) assign(s *lang.AssignStmt) {
	op := s.Op
	if op == "" {
		op = "="
	}
	switch lhs := s.Lhs.(type) {
	case *lang.MapExpr:
		c.assignMap(s, lhs, op)
	case *lang.VarExpr:
		c.assignVar(s, lhs, op)
	case *lang.TupleIndexExpr:
		c.expr(lhs, ctxValue)
		c.expr(s.Rhs, ctxValue)
		c.errAt(lang.Join(s.Lhs.Span(), s.Rhs.Span()), "", "Tuples are immutable once created. Consider creating a new tuple and assigning it instead.")
	default:
		c.expr(s.Lhs, ctxValue)
		c.expr(s.Rhs, ctxValue)
		c.errorf(s.Lhs, "Invalid assignment target: only maps ($ and @ variables) can be assigned to")
	}
}

// compound checks `x OP= rhs` where x has type old; it returns the stored type.
func (c *checker) compound(s *lang.AssignStmt, op string, old, rhs *types.Type) *types.Type {
	bop := op[:len(op)-1]
	if old.IsInvalid() || rhs.IsInvalid() {
		return types.InvalidType
	}
	if old.Kind == types.Pointer && rhs.IsInteger() && (bop == "+" || bop == "-") {
		return old
	}
	if !old.IsInteger() || !rhs.IsInteger() {
		c.errAt(lang.Join(s.Lhs.Span(), s.Rhs.Span()), "", "Type mismatch for '%s': comparing '%s' with '%s'", bop, stdlib.TypeName(old), stdlib.TypeName(rhs))
		return types.InvalidType
	}
	at := c.tokenAfter(s.Lhs.Span().End, op)
	if !at.Start.IsValid() {
		at = s.Span()
	}
	if !c.quietOp {
		c.warnSigns(bop, s.Lhs, s.Rhs, old, rhs, at)
	}
	return old
}

func (c *checker) assignVar(s *lang.AssignStmt, v *lang.VarExpr, op string) {
	info := c.lookupVar(v.Name)
	if op != "=" {
		if info == nil {
			c.errHint(v.Span(), func() string { return lang.Suggest(v.Name, c.varNames()) }, "Undefined or undeclared variable: %s", v.Name)
			c.expr(s.Rhs, ctxValue)
			return
		}
		rt := c.expr(s.Rhs, ctxValue)
		c.compound(s, op, info.Type, rt)
		v.Info = info
		v.SetType(info.Type)
		return
	}
	if info != nil && info.Type != nil {
		reorderRecord(s.Rhs, info.Type)
	}
	rt := c.expr(s.Rhs, ctxVarAssign)
	if rt.Kind == types.None {
		c.errorf(s.Rhs, "Invalid expression for assignment: none")
		rt = types.InvalidType
	}
	eqSpan := c.tokenAfter(v.Span().End, "=")
	if !eqSpan.Start.IsValid() {
		eqSpan = s.Span()
	}
	if info == nil {
		// bpftrace 0.26: a variable lives in the block that first assigns
		// it; 0.17: in the whole probe.
		t := rt
		if seed := c.varSeed[s]; seed != nil && assignable(rt, seed) {
			t = merge(rt, seed) // only grows a string (or a tuple's strings)
		}
		info = c.newVar(v.Name, t, c.opts.Compat.BlockScopes())
		if c.varMade == nil {
			c.varMade = map[*lang.AssignStmt]madeVar{}
		}
		c.varMade[s] = madeVar{info, t}
	} else if info.Type.IsInvalid() {
		info.Type = rt
	} else if !rt.IsInvalid() {
		if !assignable(info.Type, rt) {
			if info.Type.Kind == types.Tuple && rt.Kind == types.Tuple {
				c.errAt(eqSpan, "", "Tuple type mismatch: %s != %s.", stdlib.TypeName(info.Type), stdlib.TypeName(rt))
			} else {
				c.errAt(eqSpan, "", "Type mismatch for %s: trying to assign value of type '%s' when variable already contains a value of type '%s'",
					v.Name, stdlib.TypeName(rt), stdlib.TypeName(info.Type))
			}
		} else {
			info.Type = merge(info.Type, rt)
		}
	}
	v.Info = info
	v.SetType(info.Type)
}

func (c *checker) assignMap(s *lang.AssignStmt, m *lang.MapExpr, op string) {
	st := c.mapAccess(m, true)
	if op != "=" {
		// bpftrace 0.17 reads `@m[k] OP= v` as `@m[k] = @m[k] OP v`: the
		// key's warnings come twice.
		for _, k := range m.Keys {
			c.rewarn(k)
		}
		rt := c.expr(s.Rhs, ctxValue)
		if st == nil {
			return
		}
		old := st.info.Value
		fresh := old == nil || (!st.assigned && !st.defPass1)
		if fresh {
			// `@x += 1` on a fresh map starts it at 0 as an int64.
			old = types.S64
			if !rt.IsInvalid() && rt.Kind == types.Pointer {
				old = rt
			}
		}
		// A map without a type yet gives its operator no warning
		// (bpftrace 0.17 does not know the type then).
		c.quietOp = fresh
		t := c.compound(s, op, old, rt)
		c.quietOp = false
		c.storeMap(st, m, t, m.Span())
		return
	}
	// A map whose first assignment reads itself (`@t = @t + 1`) has no
	// type yet at that read: it counts as an int64, as in bpftrace.
	prevSelf := c.selfMap
	if st != nil && st.info.Value == nil {
		c.selfMap = m.Name
	}
	rt := c.expr(s.Rhs, ctxMapAssign)
	c.selfMap = prevSelf
	if rt.Kind == types.None {
		c.errorf(s.Rhs, "Invalid expression for assignment: none")
		rt = types.InvalidType
	}
	if st == nil {
		return
	}
	c.storeMap(st, m, rt, m.Span())
}

// storeMap records that a value of type v is stored into map st.
func (c *checker) storeMap(st *mapState, m *lang.MapExpr, v *types.Type, at lang.Span) {
	st.assigned = true
	if v.IsInvalid() {
		m.SetType(st.info.Value)
		return
	}
	v = widenValue(v)
	old := st.info.Value
	if old == nil || old.IsInvalid() {
		st.info.Value = v
	} else if !assignable(old, v) {
		if old.Kind == types.Tuple && v.Kind == types.Tuple {
			eq := c.tokenAfter(m.Span().End, "=")
			c.errAt(eq, "", "Tuple type mismatch: %s != %s.", stdlib.TypeName(old), stdlib.TypeName(v))
		} else {
			// bpftrace 0.17 leaves the closing quote off this message.
			c.errAt(at, "", "Type mismatch for %s: trying to assign value of type '%s' when map already contains a value of type '%s",
				m.Name, stdlib.TypeName(v), stdlib.TypeName(old))
		}
	} else if old.Kind == types.Lhist && old.Lhist != v.Lhist && v.Lhist != [3]int64{} {
		c.errAt(at, "", "Different lhist bounds in a single map unsupported")
	} else if old.Kind == types.Hist && old.Lhist != v.Lhist {
		// hist(n, k): the map's buckets are those of one k.
		c.errAt(at, "", "Different hist bucket counts (k = %d and k = %d) in a single map unsupported", old.Lhist[0], v.Lhist[0])
	} else if old.Kind == types.Tseries && old.Lhist != v.Lhist && v.Lhist != [3]int64{} {
		c.errAt(at, "", "Different tseries parameters (interval, num_intervals, agg) in a single map unsupported")
	} else {
		st.info.Value = merge(old, v)
	}
	m.SetType(st.info.Value)
}

// widenValue is the type a map stores for a value: integers become 64-bit
// (keeping their sign), as bpftrace does.
func widenValue(t *types.Type) *types.Type {
	if t.Kind == types.Int && t.Size < 8 {
		return types.IntType(8, t.Signed)
	}
	if t.Kind == types.Bool {
		return t
	}
	return t
}

var _ = fmt.Sprintf

// reorderRecord puts the fields of a record literal assigned to a record
// variable in the variable's order (bpftrace 0.24: a record's type is its
// set of field names). The elements were already evaluated in the order
// written only if they are plain values; block expressions ran before the
// statement (lang's hoisting), so reordering keeps their order.
func reorderRecord(e lang.Expr, t *types.Type) {
	r, ok := e.(*lang.TupleExpr)
	if !ok || len(r.Names) == 0 || t.Kind != types.Tuple || len(t.Fields) != len(r.Names) {
		return
	}
	idx := map[string]int{}
	for i, n := range r.Names {
		idx[n] = i
	}
	elems := make([]lang.Expr, len(r.Elems))
	names := make([]string, len(r.Names))
	for i, f := range t.Fields {
		j, ok := idx[f.Name]
		if !ok {
			return // not the same record: the assignment's check reports it
		}
		elems[i], names[i] = r.Elems[j], f.Name
	}
	r.Elems, r.Names = elems, names
}
