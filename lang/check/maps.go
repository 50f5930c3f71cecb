package check

import (
	"strings"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// mapRef returns the state of m's map, creating it on first sight.
func (c *checker) mapRef(m *lang.MapExpr) *mapState {
	st, ok := c.maps[m.Name]
	if !ok {
		st = &mapState{info: &lang.MapInfo{Name: m.Name}}
		c.maps[m.Name] = st
	}
	st.used = true
	m.Info = st.info
	return st
}

// mapHint suggests an assigned map for a misspelt one.
func (c *checker) mapHint(name string) string {
	var names []string
	for n, st := range c.maps {
		if st.assigned || st.defPass1 {
			names = append(names, n)
		}
	}
	return lang.Suggest(name, names)
}

// mapAccess checks an access `@m[keys]` (a read or, with write, a store)
// and unifies its key with the map's.
func (c *checker) mapAccess(m *lang.MapExpr, write bool) *mapState {
	parts := make([]*types.Type, len(m.Keys))
	bad := false
	for i, k := range m.Keys {
		t := c.expr(k, ctxValue)
		parts[i] = t
		if t.IsInvalid() {
			bad = true
			continue
		}
		switch {
		case t.Kind == types.None:
			c.errorf(k, "Invalid map key type: none")
			bad = true
		case t.Kind.IsAggregation():
			c.errorf(k, "%s cannot be used as a map key", stdlib.TypeName(t))
			bad = true
		}
	}
	st := c.mapRef(m)
	if bad {
		return st
	}
	if len(parts) == 1 && parts[0].Kind == types.Tuple && c.opts.Compat.FlatTupleKeys() &&
		!(len(parts[0].Fields) > 0 && parts[0].Fields[0].Name != "") {
		// (A record stays one key: it prints as { .a = 1, ... }.)
		// bpftrace 0.26: @[(1, "a")] is @[1, "a"].
		elems := parts[0].Fields
		parts = make([]*types.Type, len(elems))
		for i, f := range elems {
			parts[i] = f.Type
		}
	}
	for i, t := range parts {
		parts[i] = widenKey(t, c.opts.Compat.BoolWords())
	}
	c.unifyKey(st, m, parts, m.Span())
	return st
}

// widenKey: integer key parts are stored as 64-bit, keeping their sign;
// bools too, unless keepBool (bpftrace 0.26 prints them as words).
func widenKey(t *types.Type, keepBool bool) *types.Type {
	if t.Kind == types.Int && t.Size < 8 {
		return types.IntType(8, t.Signed)
	}
	if t.Kind == types.Enum && t.Size < 8 {
		w := *t // keeps its enumerators, for printing
		w.Size, w.Align = 8, 0
		return &w
	}
	if t.Kind == types.Bool && !keepBool {
		return types.IntType(8, false)
	}
	return t
}

func (c *checker) unifyKey(st *mapState, m *lang.MapExpr, parts []*types.Type, at lang.Span) {
	if !st.keySet {
		st.keySet = true
		st.info.KeyParts = parts
		finishKey(st.info)
		return
	}
	old := st.info.KeyParts
	ok := len(old) == len(parts)
	if ok {
		for i := range parts {
			if !keyCompatible(old[i], parts[i]) {
				ok = false
			}
		}
	}
	if !ok {
		c.errAt(at, "", "Argument mismatch for %s: trying to access with arguments: %s when map expects arguments: %s",
			m.Name, keyList(parts), keyList(old))
		return
	}
	changed := false
	merged := make([]*types.Type, len(old))
	for i := range old {
		merged[i] = merge(old[i], parts[i])
		if merged[i] != old[i] {
			changed = true
		}
	}
	if changed {
		st.info.KeyParts = merged
		finishKey(st.info)
	}
}

func keyCompatible(a, b *types.Type) bool {
	if a.IsInvalid() || b.IsInvalid() {
		return true
	}
	switch {
	case a.IsInteger() && b.IsInteger() && a.Kind == b.Kind:
		return true
	case a.Kind == types.Int && b.Kind == types.Int:
		return true
	case a.Kind == types.Int && b.Kind == types.Enum, a.Kind == types.Enum && b.Kind == types.Int:
		// An enum key mixed with integer keys: the key is an integer
		// (bpftrace 0.26 then prints numbers, "no symbolize enum after
		// arithmetic mixed").
		return true
	case a.Kind == types.String && b.Kind == types.String:
		return true
	case a.Kind == types.Stack && b.Kind == types.Stack:
		return a.Stack.User == b.Stack.User && a.Stack.Dwarf == b.Stack.Dwarf
	case a.Kind == types.Tuple && b.Kind == types.Tuple:
		return assignable(a, b)
	}
	return types.Equal(a, b) || (a.Kind == b.Kind && a.Kind == types.Buffer) ||
		(a.Kind == b.Kind && a.Kind == types.Pointer)
}

// keyList spells key parts as bpftrace's argument-mismatch message does
// (integer keys are printed as "unsigned int64" whatever their sign).
func keyList(parts []*types.Type) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		if p.Kind == types.Int {
			s[i] = "unsigned int64"
		} else {
			s[i] = stdlib.TypeName(p)
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// mapRead types a map used as a value.
func (c *checker) mapRead(m *lang.MapExpr) *types.Type {
	st := c.mapAccess(m, false)
	if st.info.Value == nil && m.Name == c.selfMap {
		return types.S64
	}
	if !st.assigned && !st.defPass1 {
		c.errHint(m.Span(), func() string { return c.mapHint(m.Name) }, "Undefined map: %s", m.Name)
		return types.InvalidType
	}
	if st.info.Value == nil {
		return types.InvalidType
	}
	return c.aggRead(m, st.info.Value)
}

// ---- probe context ----

// ProbeArgs resolves the clause's `args` once. With several attach points
// the first decides the type; wildcard tracepoints are resolved through the
// Resolver with the pattern as written (its first match).
func (c *checker) ProbeArgs(n lang.Node) *types.Type {
	if c.argsDone {
		if c.argsType == nil {
			return types.InvalidType
		}
		return c.argsUse(n)
	}
	c.argsDone = true
	// The args row's Probes refused other providers (checkProbes).
	if c.probe == nil || len(c.probe.Attach) == 0 {
		return types.InvalidType
	}
	ap := c.probe.Attach[0]
	if c.opts.Resolver == nil {
		c.errAt(n.Span(), "", "Can not resolve args of %s: no type information available", ap.Raw)
		return types.InvalidType
	}
	var rec *types.Type
	var err error
	switch ap.Provider.Type().Args {
	case lang.ArgsFormat:
		if ap.Wildcard {
			matches, merr := c.opts.Resolver.TracepointMatches(ap.Target, ap.Func)
			if merr == nil && len(matches) > 0 {
				rec, err = c.opts.Resolver.Tracepoint(matches[0][0], matches[0][1])
				// bpftrace checks args' fields against every match.
				for _, m := range matches[1:] {
					if r, merr := c.opts.Resolver.Tracepoint(m[0], m[1]); merr == nil && r != nil {
						c.argsOthers = append(c.argsOthers, r)
					}
				}
				break
			}
		}
		rec, err = c.opts.Resolver.Tracepoint(ap.Target, ap.Func)
	case lang.ArgsRawTracepoint:
		rec, err = c.opts.Resolver.RawTracepoint(ap.Func)
	case lang.ArgsBTF:
		rec, _, err = c.opts.Resolver.Func(ap.Func)
	case lang.ArgsDWARF:
		rec, err = c.opts.Resolver.UprobeArgs(ap.Target, ap.Func)
	}
	if err != nil || rec == nil {
		msg := "not found"
		if err != nil {
			msg = err.Error()
		}
		c.errAt(n.Span(), msg, "Can not resolve args of %s", ap.Raw)
		return types.InvalidType
	}
	c.argsType = types.PointerTo(rec, types.AddrKernel)
	return c.argsUse(n)
}

// argsUse is the type of one use of `args`: a pointer to its record when
// read through a field or `*`; a uprobe's used whole is the record itself
// in bpftrace 0.26 (the compiler builds it from the argument registers).
func (c *checker) argsUse(n lang.Node) *types.Type {
	if !c.argsBases[n] && c.opts.Compat.ArgsValue() && len(c.probe.Attach) > 0 && c.probe.Attach[0].Provider == lang.ProbeUprobe {
		return c.argsType.Elem
	}
	return c.argsType
}

// ProbeRetval is the type of `retval`.
func (c *checker) ProbeRetval(n lang.Node) *types.Type {
	if c.retDone {
		if c.retType == nil {
			return types.InvalidType
		}
		return c.retType
	}
	c.retDone = true
	// The retval row's Probes refused other providers (checkProbes).
	c.retType = types.U64
	if c.probe != nil && len(c.probe.Attach) > 0 && c.probe.Attach[0].Provider == lang.ProbeKretfunc && c.opts.Resolver != nil {
		_, ret, err := c.opts.Resolver.Func(c.probe.Attach[0].Func)
		if err != nil {
			c.errAt(n.Span(), err.Error(), "Can not resolve the return type of %s", c.probe.Attach[0].Raw)
			c.retType = nil
			return types.InvalidType
		}
		if ret != nil {
			c.retType = ret
		}
	}
	return c.retType
}
