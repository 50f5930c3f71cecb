package check

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gotrace/gotrace/compat"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// DefaultStrLen is bpftrace 0.17's default maximum string length.
const DefaultStrLen = 64

// Check type-checks prog and annotates it in place. It reports every error
// of the script at once, as a *lang.Diagnostics sorted by position.
//
// Maps are global and may be read in one clause before the clause that
// assigns them, so Check runs twice: a silent first pass learns every map's
// key and value types from all clauses; the second pass starts from those
// types and reports errors. Scratch variables are clause-local and need no
// such help.
func Check(prog *lang.Program, opts Options) (res *Result, err error) {
	if prog == nil {
		return nil, fmt.Errorf("check: nil program")
	}
	strlen := opts.StrLen
	if strlen <= 0 {
		strlen = DefaultStrLen
	}
	apErrs := substituteAttachParams(prog, opts.Params)
	first := newChecker(prog, opts, strlen, false, nil)
	first.run()
	// A string variable that grows later in the text (in a loop) has its
	// final size at every read, as in bpftrace, so a tuple or key made from
	// it in an earlier statement is not cut short: the silent pass runs
	// again from the sizes it found until they stop growing.
	for i := 0; i < 3 && first.varsGrew(); i++ {
		seed := first.varFinal()
		first = newChecker(prog, opts, strlen, false, nil)
		first.varSeed = seed
		first.run()
	}
	second := newChecker(prog, opts, strlen, true, first.maps)
	second.varSeed = first.varFinal()
	second.lineStarts = first.lineStarts // same source: index it once
	second.diags.Items = append(second.diags.Items, apErrs...)
	second.checkDecls()
	second.run()
	second.fixup()
	second.recordConsts()
	for _, d := range prog.MapDecls {
		// bpftrace 0.26 warns about a declared map no probe uses.
		if st := second.maps[d.Map]; st == nil || !st.used {
			second.warnAt(d.Span(), "Unused map: %s", d.Map)
		}
	}

	res = &Result{Prog: prog, StrLen: strlen, Opts: opts}
	names := make([]string, 0, len(second.maps))
	for name, m := range second.maps {
		if m.used {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		res.Maps = append(res.Maps, second.maps[n].info)
	}
	if !second.diags.HasErrors() {
		// Warnings alone come in the order the checker met them, as
		// bpftrace's (an operator's after its operands').
		if len(second.diags.Items) > 0 {
			res.Warnings = second.diags
		}
		return res, nil
	}
	if opts.Compat.FinalPassDiagnostics() {
		second.diags.Items = finalPass017(second.diags.Items)
		return res, second.diags.Err()
	}
	second.diags.Sort()
	return res, second.diags.Err()
}

// finalPass017Prefixes are the errors bpftrace 0.17's semantic analyser reports
// only in its last walk (semantic_analyser.cpp, under is_final_pass()),
// by the start of their text; the others it reports in its first walk.
var finalPass017Prefixes = []string{
	"Undefined map: ",                            // visit(Map)
	"Type mismatch for '",                        // visit(Binop), not an assignment's
	"Ternary operator must return the same type", // visit(Ternary)
	"Invalid condition in if(): ",                // visit(If)
	"Invalid tuple index: ",                      // visit(FieldAccess)
	"Tuple type mismatch: ",                      // visit(AssignVarStatement)
	"Invalid expression for assignment: ",        // the assignments
	"Undefined variable: ",                       // visit(AssignVarStatement)
	"The array index operator [] can only be used on arrays and pointers",
	"printf: ", "system: ", "cat: ", // the format string (validate_format_string)
	"str() expects an integer or a pointer type as first argument",
	"buf() expects a length argument",
	"time() expects a string literal", "strftime() expects a string literal",
	"More than one BEGIN probe defined",
	"Invalid type for predicate expression",
}

// finalPass017Re: the same, for texts with a part in the middle.
var finalPass017Re = regexp.MustCompile(`^(The \S+ operator can not be used on expressions of type|[a-z_]+\(\) only supports \w+ arguments|Can not access field '[^']*' on expression of type)`)

func isFinalPass017(msg string) bool {
	for _, p := range finalPass017Prefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return finalPass017Re.MatchString(msg)
}

// finalPass017 orders a script's diagnostics as bpftrace 0.17 prints them
// (compat.FinalPassDiagnostics): the errors of its first walk alone, else
// every warning in the order met, then the last walk's errors.
func finalPass017(items []lang.Diagnostic) []lang.Diagnostic {
	var early, warns, late []lang.Diagnostic
	for _, it := range items {
		switch {
		case it.Severity != lang.Error:
			warns = append(warns, it)
		case isFinalPass017(it.Msg):
			late = append(late, it)
		default:
			early = append(early, it)
		}
	}
	byPlace := func(ds []lang.Diagnostic) {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Span.Start.Offset < ds[j].Span.Start.Offset })
	}
	if len(early) > 0 {
		byPlace(early)
		return early
	}
	byPlace(late)
	return append(warns, late...)
}

// mapState is what the checker knows about one map.
type mapState struct {
	info     *lang.MapInfo
	keySet   bool // KeyParts fixed by the first access
	assigned bool // some statement stores a value into it
	used     bool // referenced in this pass
	defPass1 bool // assigned somewhere (learned by the first pass)
}

type checker struct {
	// selfMap is the map being assigned while its value type is unknown.
	selfMap string
	// wholeAgg is print()'s or delete()'s map argument, which keeps its
	// aggregation type (v026.go).
	wholeAgg *lang.MapExpr
	prog     *lang.Program
	src      *lang.Source
	opts     Options
	strlen   int
	report   bool
	diags    *lang.Diagnostics
	maps     map[string]*mapState

	// The clause being checked.
	probe     *lang.Probe
	providers []string         // the clause's probe types, by name (stdlib.Checker)
	kinds     []lang.ProbeKind // the same
	vars      map[string]*lang.VarInfo
	scopes    []map[string]*lang.VarInfo
	loops     int
	// inFormatCall: checking the arguments of printf, system, cat.
	inFormatCall bool
	// quietOp: a compound assignment's operator gives no warning.
	quietOp  bool
	argsDone bool
	argsType *types.Type
	// argsBases are the `args` of the probe read through a field or `*`
	// (args.f, args->f, *args): the others are used whole.
	argsBases map[lang.Node]bool
	// argsOthers are the records of a wildcard tracepoint's further
	// matches: a field of args must be in each of them too.
	argsOthers []*types.Type
	retDone    bool
	retType    *types.Type
	// probeRefused are the ProbeOnce rows refused in this clause.
	probeRefused map[*stdlib.Builtin]bool
	typeCache    map[string]*types.Type
	depth        int
	// lineStarts are the offsets where each source line begins, built on
	// first use so posAt is a binary search, not a scan from the start
	// (lang.Source.PosAt is linear, and spans are computed per expression).
	lineStarts []int
	// varMade is the variable each assignment created, with the type it
	// was created with; varSeed, a previous pass's final types of them.
	varMade map[*lang.AssignStmt]madeVar
	varSeed map[*lang.AssignStmt]*types.Type
}

type madeVar struct {
	info *lang.VarInfo
	t    *types.Type
}

// varsGrew: a variable's type grew after the assignment that created it.
func (c *checker) varsGrew() bool {
	for _, m := range c.varMade {
		if m.info.Type != m.t {
			return true
		}
	}
	return false
}

// varFinal is the final type of the variable each assignment created.
func (c *checker) varFinal() map[*lang.AssignStmt]*types.Type {
	out := make(map[*lang.AssignStmt]*types.Type, len(c.varMade))
	for s, m := range c.varMade {
		out[s] = m.info.Type
	}
	return out
}

// posAt is c.src.PosAt(off) in O(log lines): same line and byte column.
func (c *checker) posAt(off int) lang.Pos {
	t := c.src.Text
	if off > len(t) {
		off = len(t)
	}
	if c.lineStarts == nil {
		c.lineStarts = []int{0}
		for i := 0; i < len(t); i++ {
			if t[i] == '\n' {
				c.lineStarts = append(c.lineStarts, i+1)
			}
		}
	}
	// The line is the last one starting at or before off.
	line := sort.Search(len(c.lineStarts), func(i int) bool { return c.lineStarts[i] > off })
	return lang.Pos{Offset: off, Line: line, Col: off - c.lineStarts[line-1] + 1}
}

func newChecker(prog *lang.Program, opts Options, strlen int, report bool, seed map[string]*mapState) *checker {
	c := &checker{
		prog: prog, src: prog.Src, opts: opts, strlen: strlen, report: report,
		diags:     &lang.Diagnostics{Src: prog.Src},
		maps:      map[string]*mapState{},
		typeCache: map[string]*types.Type{},
	}
	// Seed the second pass with the first pass's map types.
	for name, m := range seed {
		info := &lang.MapInfo{Name: name, Value: m.info.Value, KeyParts: m.info.KeyParts, Key: m.info.Key}
		c.maps[name] = &mapState{info: info, keySet: m.keySet, defPass1: m.assigned}
	}
	return c
}

func (c *checker) run() {
	for _, p := range c.prog.Probes {
		c.checkProbe(p)
	}
}

// checkDecls reports the script's C declaration errors, each at the
// declaration it concerns (the first one when the text does not parse).
func (c *checker) checkDecls() {
	dc := c.opts.Resolver
	if dc == nil || len(c.prog.Decls) == 0 {
		return
	}
	for _, e := range dc.CheckDecls() {
		at := c.prog.Decls[0]
		for _, d := range c.prog.Decls {
			if e.Name != "" && d.Kind+" "+d.Name == e.Name {
				at = d
				break
			}
		}
		c.errAt(at.Span(), "", "%s", e.Err)
	}
}

// ---- diagnostics ----

// btSpan is sp as bpftrace reports it (lang.LexerStart; 0.17's columns
// also lang.ShiftColumns).
func (c *checker) btSpan(sp lang.Span) lang.Span {
	sp = lang.LexerStart(c.src, sp, c.posAt)
	if c.opts.Compat.Legacy() {
		sp = lang.ShiftColumns(c.src, sp)
	}
	return sp
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func (c *checker) errAt(sp lang.Span, hint, format string, args ...any) {
	if !c.report {
		return
	}
	c.diags.Add(lang.Error, c.btSpan(sp), hint, format, args...)
}

// errHint is errAt with a did-you-mean hint computed only when the error is
// reported: the silent first pass sees the same errors and would otherwise
// pay for edit distances it throws away.
func (c *checker) errHint(sp lang.Span, hint func() string, format string, args ...any) {
	if !c.report {
		return
	}
	c.diags.Add(lang.Error, c.btSpan(sp), hint(), format, args...)
}

func (c *checker) errorf(n lang.Node, format string, args ...any) {
	c.errAt(n.Span(), "", format, args...)
}

// tokenAfter finds the span of tok in the source after offset off, skipping
// whitespace (for places bpftrace reports at an operator token).
// The place is at's, in at's source (the script or an imported one).
func (c *checker) tokenAfter(at lang.Pos, tok string) lang.Span {
	src := c.srcOf(at)
	if src == nil {
		return lang.Span{}
	}
	t := src.Text
	i := at.Offset
	if i < 0 || i > len(t) {
		return lang.Span{}
	}
	for i < len(t) && isSpace(t[i]) {
		i++
	}
	if strings.HasPrefix(t[i:], tok) {
		return lang.Span{Start: c.posIn(at, i), End: c.posIn(at, i+len(tok))}
	}
	return lang.Span{}
}

// srcOf is the source at is in: an imported script (Pos.File) or the
// script.
func (c *checker) srcOf(at lang.Pos) *lang.Source {
	if at.File != nil {
		return at.File
	}
	return c.src
}

// posIn is the position of offset off in at's source.
func (c *checker) posIn(at lang.Pos, off int) lang.Pos {
	if at.File != nil {
		return at.File.PosAt(off)
	}
	return c.posAt(off)
}

// opSpan is the span of a binary operator token between x and y.
func (c *checker) opSpan(e *lang.BinaryExpr) lang.Span {
	xe := e.X.Span().End
	sp := c.tokenAfter(xe, e.Op)
	if src := c.srcOf(xe); !sp.Start.IsValid() && src != nil {
		// x may be parenthesized: its span ends inside the parentheses.
		t := src.Text
		i := xe.Offset
		for i < len(t) && i < e.Y.Span().Start.Offset && (isSpace(t[i]) || t[i] == ')') {
			i++
		}
		at := xe
		at.Offset = i
		sp = c.tokenAfter(at, e.Op)
	}
	if !sp.Start.IsValid() {
		return e.Span()
	}
	return sp
}

// ---- stdlib.Checker ----

var _ stdlib.Checker = (*checker)(nil)

func (c *checker) Errorf(n lang.Node, format string, args ...any) { c.errorf(n, format, args...) }
func (c *checker) ErrorHint(n lang.Node, hint, format string, args ...any) {
	c.errAt(n.Span(), hint, format, args...)
}
func (c *checker) Providers() []string { return c.providers }
func (c *checker) StrLen() int         { return c.strlen }
func (c *checker) StackMode() types.StackMode {
	return c.opts.StackMode
}
func (c *checker) Unsafe() bool { return c.opts.Unsafe }

func (c *checker) NamedParams() stdlib.NamedParams { return c.opts.NamedParams }

func (c *checker) Compat() compat.Version { return c.opts.Compat }
func (c *checker) NoCpid() bool           { return c.opts.NoCpid }
func (c *checker) NoTarget() bool         { return c.opts.NoTarget }

func truncInt(v int64, t *types.Type) int64 {
	if t.Size >= 8 {
		return v
	}
	bits := uint(t.Size * 8)
	u := uint64(v) & (1<<bits - 1)
	if t.Signed && u&(1<<(bits-1)) != 0 {
		return int64(u) - int64(1)<<bits
	}
	return int64(u)
}

// ConstStr evaluates a constant string (a literal or positional parameter).
func (c *checker) ConstStr(e lang.Expr) (string, bool) {
	switch e := e.(type) {
	case *lang.StrLit:
		return e.Value, true
	case *lang.PositionalExpr:
		if e.Count {
			return "", false
		}
		c.fillPositional(e)
		if e.IsInt && e.Text != "" {
			return "", false
		}
		return e.Text, true
	case *lang.CallExpr:
		// str($N): the parameter's text as a string literal, even when
		// it looks like a number (kaddr(str($1))).
		if p, ok := strOfParam(e); ok {
			c.fillPositional(p)
			return p.Text, true
		}
	}
	return "", false
}

// strOfParam returns $N of str($N) (a single argument, not $#).
func strOfParam(e *lang.CallExpr) (*lang.PositionalExpr, bool) {
	if row, ok := stdlib.Lookup(e.Name); !ok || !row.Has(stdlib.StrOfParam) || len(e.Args) != 1 {
		return nil, false
	}
	p, ok := e.Args[0].(*lang.PositionalExpr)
	return p, ok && !p.Count
}

// LookupType resolves a named type through the Resolver (script
// declarations reach it through the layout package).
func (c *checker) LookupType(name string) (*types.Type, error) {
	if t, ok := c.typeCache[name]; ok {
		return t, nil
	}
	if c.opts.Resolver == nil {
		return nil, fmt.Errorf("no type information available for %s (no resolver)", name)
	}
	t, err := c.opts.Resolver.Type(name)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("%s: not found", name)
	}
	c.typeCache[name] = t
	return t, nil
}

// ---- fixup ----

// fixup gives every variable and map reference its final type: a string
// variable or map may grow after its first use.
func (c *checker) fixup() {
	for _, m := range c.maps {
		finishKey(m.info)
	}
	lang.Inspect(c.prog, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.VarExpr:
			if n.Info != nil && n.Info.Type != nil && !n.Type().IsInvalid() {
				n.SetType(n.Info.Type)
			}
		case *lang.MapExpr:
			if n.Info != nil && n.Info.Value != nil && !n.Type().IsInvalid() && !aggReadAsInt(n) {
				n.SetType(n.Info.Value)
			}
		}
		return true
	})
}

func finishKey(info *lang.MapInfo) {
	switch len(info.KeyParts) {
	case 0:
		info.Key = nil
	case 1:
		info.Key = info.KeyParts[0]
	default:
		info.Key = types.TupleOf(info.KeyParts...)
	}
}

// nodeLoc017 is e's place as bpftrace 0.17's parser records it on the
// node (compat.OperatorPlaces): a binary or prefix operator at its
// operator token, a cast at its `(type)`, anything in parentheses at the
// inside; the rest at their text. bpftrace places an operator's operand
// mismatch from its left operand's place to its right one's.
func (c *checker) nodeLoc017(e lang.Expr) lang.Span {
	sp := e.Span()
	src := c.srcOf(sp.Start)
	if src == nil || !sp.Start.IsValid() {
		return sp
	}
	t := src.Text
	switch x := e.(type) {
	case *lang.BinaryExpr:
		// The operator: after the left operand and any ')' closing it.
		i := x.X.Span().End.Offset
		for i >= 0 && i < len(t) && (isSpace(t[i]) || t[i] == ')') {
			i++
		}
		if i >= 0 && i < len(t) && strings.HasPrefix(t[i:], x.Op) {
			return lang.Span{Start: c.posIn(sp.Start, i), End: c.posIn(sp.Start, i+len(x.Op))}
		}
	case *lang.UnaryExpr:
		if !x.Postfix && strings.HasPrefix(t[sp.Start.Offset:], x.Op) {
			i := sp.Start.Offset
			return lang.Span{Start: c.posIn(sp.Start, i), End: c.posIn(sp.Start, i+len(x.Op))}
		}
	case *lang.CastExpr:
		if x.To != nil {
			i := x.To.Span().End.Offset
			for i >= 0 && i < len(t) && t[i] != ')' {
				i++
			}
			if i < len(t) && t[sp.Start.Offset] == '(' {
				return lang.Span{Start: sp.Start, End: c.posIn(sp.Start, i+1)}
			}
		}
	}
	return sp
}

// operandsLoc is where bpftrace 0.17 places a mismatch of e's operands.
func (c *checker) operandsLoc(e *lang.BinaryExpr) lang.Span {
	if !c.opts.Compat.OperatorPlaces() {
		return e.Span()
	}
	x, y := c.nodeLoc017(e.X), c.nodeLoc017(e.Y)
	return lang.Span{Start: x.Start, End: y.End}
}
