// Package gen generates random well-typed bpftrace scripts, for property
// tests of the whole tool chain (gen_test.go): every script the checker
// accepts compiles, everything that compiles loads, and deterministic
// scripts print what bpftrace 0.17 prints.
//
// Generation is grammar-directed and typed: each expression is made for a
// type (integers of every width and sign, strings, tuples), each variable
// and map keeps the type of its first assignment, and the constructs bpftrace
// 0.17 evaluates differently depending on its optimiser (see KnownBugs) are
// guarded. A script is a tree of Nodes, so a failing one is shrunk (Shrink)
// by replacing subtrees with smaller ones of the same type and dropping
// statements, while the failure stays the same.
//
// Scripts are deterministic: BEGIN and END clauses only, no time, pid,
// randomness or addresses. The same seed gives the same script.
package gen

import (
	"fmt"
	"math/rand"
	"strings"
)

// Kind is what a Node is.
type Kind uint8

const (
	KExpr   Kind = iota // an expression of type Node.T
	KStmt               // a statement (droppable when shrinking)
	KBlock              // a braced list of statements
	KClause             // a probe clause
	KScript             // the whole script
	KFixed              // a statement that must stay (a loop's counter step)
)

// Type is a generated expression's type.
type Type struct {
	Str    bool // a string (else an integer)
	Size   int  // integer width in bytes: 1, 2, 4, 8
	Signed bool
}

func (t Type) String() string {
	if t.Str {
		return "string"
	}
	s := fmt.Sprintf("int%d", t.Size*8)
	if !t.Signed {
		s = "u" + s
	}
	return s
}

var (
	i64 = Type{Size: 8, Signed: true}
	u64 = Type{Size: 8}
	str = Type{Str: true}
)

// Node is a piece of a script: its text is Parts[0] Kids[0] Parts[1] ...
// Kids[n-1] Parts[n].
type Node struct {
	Kind  Kind
	T     Type
	Parts []string
	Kids  []*Node
	// Pure: an expression without side effects or names (shrinking may
	// put a literal in its place).
	Pure bool
}

func (n *Node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *Node) write(b *strings.Builder) {
	for i, p := range n.Parts {
		b.WriteString(p)
		if i < len(n.Kids) && n.Kids[i] != nil {
			n.Kids[i].write(b)
		}
	}
}

func leaf(k Kind, t Type, text string) *Node {
	return &Node{Kind: k, T: t, Parts: []string{text}, Pure: true}
}

func mk(k Kind, t Type, parts []string, kids ...*Node) *Node {
	n := &Node{Kind: k, T: t, Parts: parts, Kids: kids, Pure: true}
	for _, c := range kids {
		if c != nil && !c.Pure {
			n.Pure = false
		}
	}
	return n
}

// Config bounds a script.
type Config struct {
	MaxDepth  int // expression depth
	MaxStmts  int // statements per block
	MaxBlocks int // nesting of blocks
	// Prefix names the script's maps (@<Prefix>m0 ...), so that scripts
	// can share one run.
	Prefix string
}

// DefaultConfig is a small, varied script.
var DefaultConfig = Config{MaxDepth: 3, MaxStmts: 4, MaxBlocks: 2}

type variable struct {
	name string
	t    Type
}

type mapInfo struct {
	name string
	key  *Type // nil: no key
	val  Type
	agg  string // "" (a value), count, sum, min, max, avg, stats, hist, lhist
	set  bool   // assigned by a statement generated before
	// lhist is the bounds of an lhist map (one set per map).
	lhist string
}

type generator struct {
	r      *rand.Rand
	cfg    Config
	scopes [][]variable
	nvar   int
	maps   []*mapInfo
	blocks int
	// loops counts the while loops made (each has its own counter).
	loops int
	// mut, when set, injects one error (mutate.go).
	mut *mutation
}

// Script generates the script of a seed: BEGIN clauses (the last one calls
// exit()) and maybe an END clause.
func Script(seed int64, cfg Config) *Node {
	_, kids := Clauses(seed, cfg)
	return Join(kids)
}

// Join makes a script of clauses.
func Join(clauses []*Node) *Node {
	ps := make([]string, len(clauses)+1)
	for i := 1; i < len(clauses); i++ {
		ps[i] = "\n"
	}
	ps[len(clauses)] = "\n"
	return &Node{Kind: KScript, Parts: ps, Kids: clauses}
}

// Clauses generates a seed's clauses; the last BEGIN one ends with exit().
// The first result says which of them are END clauses.
func Clauses(seed int64, cfg Config) ([]bool, []*Node) {
	if cfg.MaxDepth == 0 {
		cfg = DefaultConfig
	}
	g := &generator{r: rand.New(rand.NewSource(seed)), cfg: cfg}
	// bpftrace 0.17 allows one BEGIN clause; it ends with exit(), so a
	// predicate goes on END.
	isEnd := []bool{false}
	out := []*Node{g.clause("BEGIN", true)}
	if g.r.Intn(2) == 0 {
		out = append(out, g.clause("END", false))
		isEnd = append(isEnd, true)
	}
	return isEnd, out
}

func (g *generator) clause(name string, exit bool) *Node {
	g.scopes = [][]variable{{}}
	g.loops = 0
	head := name
	var pred *Node
	if name == "END" && g.r.Intn(4) == 0 {
		// A constant predicate (no names: nothing is assigned yet).
		saved := g.scopes
		g.scopes = [][]variable{{}}
		pred = g.intExpr(2, false)
		g.scopes = saved
	}
	body := g.stmts(g.cfg.MaxStmts)
	if exit {
		body = append(body, leaf(KFixed, Type{}, " exit();"))
	}
	blk := g.block(body)
	if pred != nil {
		return mk(KClause, Type{}, []string{head + " /", "/ ", ""}, pred, blk)
	}
	return mk(KClause, Type{}, []string{head + " ", ""}, blk)
}

func (g *generator) block(stmts []*Node) *Node {
	parts := []string{"{"}
	for range stmts {
		parts = append(parts, "")
	}
	parts[len(parts)-1] = " }"
	if len(stmts) == 0 {
		parts = []string{"{ }"}
	}
	return &Node{Kind: KBlock, Parts: parts, Kids: stmts}
}

func (g *generator) stmts(max int) []*Node {
	n := 1 + g.r.Intn(max)
	var out []*Node
	for i := 0; i < n; i++ {
		out = append(out, g.stmt())
	}
	return out
}

func (g *generator) pick(n int) int { return g.r.Intn(n) }

func (g *generator) stmt() *Node {
	if s := g.mutStmt(); s != nil {
		return s
	}
	for {
		switch g.pick(12) {
		case 0, 1:
			return g.printf()
		case 2, 3:
			return g.assignVar()
		case 4, 5:
			return g.assignMap()
		case 6:
			return g.aggregate()
		case 7:
			if g.blocks < g.cfg.MaxBlocks {
				return g.ifStmt()
			}
		case 8:
			if g.blocks < g.cfg.MaxBlocks {
				return g.whileStmt()
			}
		case 9:
			if g.blocks < g.cfg.MaxBlocks {
				return g.unrollStmt()
			}
		case 10:
			if m := g.someMap(func(m *mapInfo) bool { return m.set }); m != nil {
				switch g.pick(3) {
				case 0:
					return leaf(KStmt, Type{}, fmt.Sprintf(" print(%s);", m.name))
				case 1:
					return leaf(KStmt, Type{}, fmt.Sprintf(" clear(%s);", m.name))
				default:
					if m.key != nil && m.agg == "" {
						parts, kids := g.mapRef(m, 1)
						parts[0] = " delete(" + parts[0]
						parts[len(parts)-1] += ");"
						return &Node{Kind: KStmt, Parts: parts, Kids: kids}
					}
				}
			}
		case 11:
			return g.tupleStmt()
		}
	}
}

func (g *generator) nested(f func() []*Node) *Node {
	g.blocks++
	g.scopes = append(g.scopes, nil)
	b := g.block(f())
	g.scopes = g.scopes[:len(g.scopes)-1]
	g.blocks--
	return b
}

func (g *generator) ifStmt() *Node {
	c := g.intExpr(g.cfg.MaxDepth-1, true)
	then := g.nested(func() []*Node { return g.stmts(3) })
	if g.pick(2) == 0 {
		return mk(KStmt, Type{}, []string{" if (", ") ", ""}, c, then)
	}
	els := g.nested(func() []*Node { return g.stmts(3) })
	return mk(KStmt, Type{}, []string{" if (", ") ", " else ", ""}, c, then, els)
}

func (g *generator) whileStmt() *Node {
	g.loops++
	ctr := fmt.Sprintf("$w%d_%d", g.blocks, g.loops)
	for g.lookup(ctr) != nil {
		g.loops++
		ctr = fmt.Sprintf("$w%d_%d", g.blocks, g.loops)
	}
	n := g.pick(5)
	// The counter is not visible to the body's generator: nothing else
	// assigns it, so the loop ends.
	body := g.nested(func() []*Node { return g.stmts(3) })
	inc := leaf(KFixed, Type{}, fmt.Sprintf(" %s = %s + 1;", ctr, ctr))
	body.Kids = append(body.Kids, inc)
	body.Parts = append(body.Parts[:len(body.Parts)-1], "", " }")
	if len(body.Kids) == 1 {
		body.Parts = []string{"{", " }"}
	}
	return &Node{Kind: KStmt, Parts: []string{fmt.Sprintf(" %s = 0; while (%s < %d) ", ctr, ctr, n), ""}, Kids: []*Node{body}}
}

func (g *generator) unrollStmt() *Node {
	n := 1 + g.pick(4)
	body := g.nested(func() []*Node { return g.stmts(2) })
	return &Node{Kind: KStmt, Parts: []string{fmt.Sprintf(" unroll(%d) ", n), ""}, Kids: []*Node{body}}
}

// ---- variables and maps ----

func (g *generator) lookup(name string) *variable {
	for i := len(g.scopes) - 1; i >= 0; i-- {
		for j := range g.scopes[i] {
			if g.scopes[i][j].name == name {
				return &g.scopes[i][j]
			}
		}
	}
	return nil
}

func (g *generator) varsOf(t Type) []variable {
	var out []variable
	for _, s := range g.scopes {
		for _, v := range s {
			if v.t == t || (t.Str && v.t.Str) {
				out = append(out, v)
			}
		}
	}
	return out
}

func (g *generator) allVars() []variable {
	var out []variable
	for _, s := range g.scopes {
		out = append(out, s...)
	}
	return out
}

var intTypes = []Type{
	{Size: 1, Signed: true}, {Size: 1}, {Size: 2, Signed: true}, {Size: 2},
	{Size: 4, Signed: true}, {Size: 4}, i64, u64,
}

func (g *generator) someType() Type {
	if g.pick(5) == 0 {
		return str
	}
	return intTypes[g.pick(len(intTypes))]
}

func (g *generator) assignVar() *Node {
	vs := g.allVars()
	if len(vs) > 0 && g.pick(2) == 0 {
		v := vs[g.pick(len(vs))]
		if !strings.HasPrefix(v.name, "$w") {
			return mk(KStmt, Type{}, []string{" " + v.name + " = ", ";"}, g.typed(v.t, g.cfg.MaxDepth))
		}
	}
	t := g.someType()
	g.nvar++
	name := fmt.Sprintf("$v%d", g.nvar)
	e := g.typed(t, g.cfg.MaxDepth)
	g.scopes[len(g.scopes)-1] = append(g.scopes[len(g.scopes)-1], variable{name, t})
	return mk(KStmt, Type{}, []string{" " + name + " = ", ";"}, e)
}

// typed is an expression of exactly type t: an integer one cast to it.
func (g *generator) typed(t Type, depth int) *Node {
	if t.Str {
		return g.strExpr(depth)
	}
	return castTo(t, g.intExpr(depth, true))
}

func castTo(t Type, e *Node) *Node {
	return mk(KExpr, t, []string{"(" + t.String() + ")(", ")"}, e)
}

func (g *generator) someMap(f func(*mapInfo) bool) *mapInfo {
	var ms []*mapInfo
	for _, m := range g.maps {
		if f(m) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	return ms[g.pick(len(ms))]
}

func (g *generator) newMap(agg string) *mapInfo {
	m := &mapInfo{name: fmt.Sprintf("@%sm%d", g.cfg.Prefix, len(g.maps)), agg: agg}
	if g.pick(4) != 0 {
		k := i64
		switch g.pick(4) {
		case 0:
			k = str
		case 1:
			k = u64
		}
		m.key = &k
	}
	if agg == "" {
		m.val = g.someType()
	} else {
		m.val = i64
	}
	g.maps = append(g.maps, m)
	return m
}

// mapRef is m or m[key]; the key is an expression of depth at most depth
// (0: a literal).
func (g *generator) mapRef(m *mapInfo, depth int) (parts []string, kids []*Node) {
	if m.key == nil {
		return []string{m.name}, nil
	}
	var k *Node
	switch {
	case m.key.Str:
		// A literal only (KnownBugs: 0.17's string keys from a variable or
		// a ternary are clobbered or keep stale bytes after their NUL).
		k = g.strLit()
	case depth > 0:
		k = g.typed(*m.key, depth)
	default:
		k = castTo(*m.key, g.intLit())
	}
	return []string{m.name + "[", "]"}, []*Node{k}
}

func (g *generator) assignMap() *Node {
	m := g.someMap(func(m *mapInfo) bool { return m.agg == "" })
	if m == nil || g.pick(3) == 0 {
		m = g.newMap("")
	}
	parts, kids := g.mapRef(m, 2)
	wasSet := m.set
	m.set = true
	if !m.val.Str && wasSet && g.pick(4) == 0 {
		// Compound assignment, or an increment.
		if g.pick(2) == 0 {
			parts[0] = " " + parts[0]
			parts[len(parts)-1] += "++;"
			return &Node{Kind: KStmt, Parts: parts, Kids: kids}
		}
		op := []string{"+=", "-=", "*=", "&=", "|=", "^="}[g.pick(6)]
		parts[0] = " " + parts[0]
		parts[len(parts)-1] += " " + op + " "
		parts = append(parts, ";")
		kids = append(kids, g.typed(m.val, 2))
		return &Node{Kind: KStmt, Parts: parts, Kids: kids}
	}
	parts[0] = " " + parts[0]
	parts[len(parts)-1] += " = "
	parts = append(parts, ";")
	// The value may read the map only once it has a type (bpftrace 0.17
	// refuses a first assignment that reads the map itself).
	m.set = wasSet
	kids = append(kids, g.typed(m.val, g.cfg.MaxDepth))
	m.set = true
	return &Node{Kind: KStmt, Parts: parts, Kids: kids}
}

var aggs = []string{"count", "sum", "min", "max", "avg", "stats", "hist", "lhist"}

func (g *generator) aggregate() *Node {
	agg := aggs[g.pick(len(aggs))]
	m := g.someMap(func(m *mapInfo) bool { return m.agg == agg })
	if m == nil || g.pick(3) == 0 {
		m = g.newMap(agg)
	}
	parts, kids := g.mapRef(m, 2)
	m.set = true
	parts[0] = " " + parts[0]
	switch agg {
	case "count":
		parts[len(parts)-1] += " = count();"
	case "lhist":
		if m.lhist == "" {
			m.lhist = fmt.Sprintf(", 0, %d, %d);", 10*(1+g.pick(10)), 1+g.pick(5))
		}
		parts[len(parts)-1] += " = lhist("
		parts = append(parts, m.lhist)
		kids = append(kids, g.typed(i64, 2))
	case "hist":
		// Values below 2^32 only (KnownBugs: 0.17's log2 stops there).
		parts[len(parts)-1] += " = hist(("
		parts = append(parts, ") & 0xffffffff);")
		kids = append(kids, g.typed(i64, 3))
	case "max":
		// Non-negative values only (KnownBugs: 0.17's max() stores nothing
		// below 0 into a new entry).
		parts[len(parts)-1] += " = max(("
		parts = append(parts, ") & 0x7fffffffffffffff);")
		kids = append(kids, g.typed(i64, 3))
	case "min":
		// 32-bit values only (KnownBugs: 0.17's min() keeps 0xffffffff - v).
		parts[len(parts)-1] += " = min((int64)(int32)("
		parts = append(parts, "));")
		kids = append(kids, g.typed(i64, 3))
	default:
		parts[len(parts)-1] += " = " + agg + "("
		parts = append(parts, ");")
		kids = append(kids, g.typed(i64, 3))
	}
	return &Node{Kind: KStmt, Parts: parts, Kids: kids}
}

func (g *generator) tupleStmt() *Node {
	// A tuple variable, read back by index in a printf.
	g.nvar++
	name := fmt.Sprintf("$t%d", g.nvar)
	a, b := g.typed(i64, 2), g.strExpr(1)
	return mk(KStmt, Type{}, []string{" " + name + " = (", ", ", fmt.Sprintf("); printf(\"%%ld %%s\\n\", %s.0, %s.1);", name, name)}, a, b)
}

// ---- printf ----

var intVerbs = []string{"%d", "%u", "%x", "%ld", "%lu", "%lx", "%lld", "%5d", "%-4d|", "%08x", "%llx"}

func (g *generator) printf() *Node {
	n := g.pick(4)
	var fmtParts []string
	var args []*Node
	for i := 0; i < n; i++ {
		if g.pick(4) == 0 {
			fmtParts = append(fmtParts, []string{"%s", "[%s]", "%-6s|"}[g.pick(3)])
			args = append(args, g.strExpr(2))
			continue
		}
		fmtParts = append(fmtParts, intVerbs[g.pick(len(intVerbs))])
		args = append(args, g.intExpr(g.cfg.MaxDepth, true))
	}
	format := fmt.Sprintf("p%d", g.pick(100))
	if len(fmtParts) > 0 {
		format += " " + strings.Join(fmtParts, " ")
	}
	parts := []string{fmt.Sprintf(" printf(\"%s\\n\"", format)}
	for range args {
		parts[len(parts)-1] += ", "
		parts = append(parts, "")
	}
	parts[len(parts)-1] += ");"
	return &Node{Kind: KStmt, Parts: parts, Kids: args}
}

// ---- expressions ----

var literals = []string{
	"0", "1", "2", "3", "7", "10", "100", "127", "128", "255", "256", "1000",
	"32767", "32768", "65535", "65536", "2147483647", "2147483648", "4294967295",
	"4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551615",
	"0x10", "0xff", "077", "1_000",
}

func (g *generator) intLit() *Node {
	if g.pick(3) == 0 {
		return leaf(KExpr, i64, fmt.Sprint(g.r.Int63n(1<<uint(1+g.pick(62)))))
	}
	return leaf(KExpr, i64, literals[g.pick(len(literals))])
}

// intExpr is an integer expression (its type is tracked on the node).
// names: variables and maps may appear.
func (g *generator) intExpr(depth int, names bool) *Node {
	if depth <= 0 {
		return g.intAtom(names)
	}
	switch g.pick(14) {
	case 0, 1:
		return g.intAtom(names)
	case 2:
		t := intTypes[g.pick(len(intTypes))]
		return castTo(t, g.intExpr(depth-1, names))
	case 3, 4, 5:
		op := []string{"+", "-", "*", "&", "|", "^"}[g.pick(6)]
		x, y := g.intExpr(depth-1, names), g.intExpr(depth-1, names)
		return mk(KExpr, binType(x.T, y.T), []string{"(", " " + op + " ", ")"}, x, y)
	case 6:
		// Division and modulo by an odd divisor: never 0 (bpftrace's LLVM
		// folds a division by a known 0 its own way: KnownBugs).
		op := []string{"/", "%"}[g.pick(2)]
		x, y := g.intExpr(depth-1, names), g.intExpr(depth-1, names)
		t := binType(x.T, y.T)
		return mk(KExpr, t, []string{"(", " " + op + " (", " | 1))"}, x, y)
	case 7:
		// Shifts by 0..63 only (KnownBugs).
		op := []string{"<<", ">>"}[g.pick(2)]
		x, y := g.intExpr(depth-1, names), g.intExpr(depth-1, names)
		return mk(KExpr, binType(x.T, i64), []string{"(", " " + op + " (", " & 63))"}, x, y)
	case 8:
		op := []string{"==", "!=", "<", "<=", ">", ">="}[g.pick(6)]
		x, y := g.intExpr(depth-1, names), g.intExpr(depth-1, names)
		return mk(KExpr, binType(x.T, y.T), []string{"(", " " + op + " ", ")"}, x, y)
	case 9:
		op := []string{"&&", "||"}[g.pick(2)]
		x, y := g.intExpr(depth-1, names), g.intExpr(depth-1, names)
		return mk(KExpr, i64, []string{"(", " " + op + " ", ")"}, x, y)
	case 10:
		// Unary - and ~ on 64-bit operands only (KnownBugs).
		op := []string{"-", "~", "!"}[g.pick(3)]
		x := g.intExpr(depth-1, names)
		if op == "!" {
			return mk(KExpr, x.T, []string{"!(", ")"}, x)
		}
		t := Type{Size: 8, Signed: x.T.Signed}
		return mk(KExpr, t, []string{op + "(" + t.String() + ")(", ")"}, x)
	case 11:
		c, a, b := g.intExpr(depth-1, names), g.intExpr(depth-1, names), g.intExpr(depth-1, names)
		// Both branches of one type: bpftrace 0.17 wants them alike.
		t := a.T
		return mk(KExpr, t, []string{"(", " ? ", " : ", ")"}, c, a, castTo(t, b))
	case 12:
		if names {
			a, b := g.strExpr(1), g.strExpr(1)
			if g.pick(2) == 0 {
				return mk(KExpr, i64, []string{"(", " == ", ")"}, a, b)
			}
			return mk(KExpr, i64, []string{"strncmp(", ", ", fmt.Sprintf(", %d)", g.pick(6))}, a, b)
		}
	case 13:
		return leaf(KExpr, u64, "sizeof("+intTypes[g.pick(len(intTypes))].String()+")")
	}
	return g.intAtom(names)
}

func binType(x, y Type) Type {
	if x.Signed && y.Signed {
		return i64
	}
	return u64
}

func (g *generator) intAtom(names bool) *Node {
	if names && g.pick(2) == 0 {
		var ints []variable
		for _, v := range g.allVars() {
			if !v.t.Str {
				ints = append(ints, v)
			}
		}
		if len(ints) > 0 && g.pick(3) > 0 {
			v := ints[g.pick(len(ints))]
			n := leaf(KExpr, v.t, v.name)
			n.Pure = false
			return n
		}
		if m := g.someMap(func(m *mapInfo) bool { return m.set && m.agg == "" && !m.val.Str }); m != nil {
			parts, kids := g.mapRef(m, 0)
			n := mk(KExpr, m.val, parts, kids...)
			n.Pure = false
			return n
		}
	}
	return g.intLit()
}

const strChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-+.,:;!?=()[]{}<>/#@~"

func (g *generator) strLit() *Node {
	n := g.pick(12)
	if g.pick(8) == 0 {
		n = 20 + g.pick(44) // bpftrace 0.17 refuses literals of 64 bytes or more
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = strChars[g.pick(len(strChars))]
	}
	return leaf(KExpr, str, `"`+string(b)+`"`)
}

func (g *generator) strExpr(depth int) *Node {
	switch g.pick(4) {
	case 0:
		if vs := g.varsOf(str); len(vs) > 0 {
			n := leaf(KExpr, str, vs[g.pick(len(vs))].name)
			n.Pure = false
			return n
		}
	case 1:
		if depth > 0 {
			c := g.intExpr(depth-1, true)
			return mk(KExpr, str, []string{"(", " ? ", " : ", ")"}, c, g.strLit(), g.strLit())
		}
	}
	return g.strLit()
}
