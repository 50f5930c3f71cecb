package gen

import (
	"fmt"
	"math/rand"
	"strings"
)

// Mutated scripts: a generated, well-typed script with exactly one error
// injected, for the error-path property (TestErrorsSameAsBpftrace: gotrace
// --compat 0.17 prints the same diagnostics, byte for byte, as bpftrace
// 0.17). A mutation is either a bad statement put where the generator was
// about to write a statement (so it sees the variables and maps of that
// place, with their types), a bad probe clause, a C struct definition
// whose field is misnamed, or a token dropped from or added to the text.
// The injected statement is KFixed: shrinking never drops it.

// Mutation names the families (the first word of a mutated script's kind).
var Mutations = []string{
	"binop", "assign", "mapvalue", "mapkey", "tuple", "printf", "builtin",
	"unknownfunc", "undefined", "cast", "field", "cstruct", "probe", "unroll",
	"misc",
	// Not yet "drop" and "extra" (tokenEdit): KnownErrorGaps, syntax errors.
}

type mutation struct {
	family string
	kind   string // family and the variant, e.g. "binop str+int"
	target int    // which statement (in generation order) becomes the bad one
	count  int
	done   bool
}

// MutatedScript generates the script of seed with one error injected;
// kind says which.
func MutatedScript(seed int64) (*Node, string) {
	r := rand.New(rand.NewSource(seed*7919 + 17))
	m := &mutation{family: Mutations[r.Intn(len(Mutations))], target: r.Intn(6)}
	switch m.family {
	case "probe", "drop", "extra", "cstruct":
		m.done = true // not a statement
	}
	cfg := DefaultConfig
	g := &generator{r: rand.New(rand.NewSource(seed)), cfg: cfg, mut: m}
	out := []*Node{g.clause("BEGIN", true)}
	if g.r.Intn(2) == 0 {
		out = append(out, g.clause("END", false))
	}
	if !m.done {
		// Fewer statements than the target: at the end of the last
		// clause (before BEGIN's exit()), whose variables are in scope.
		if s := g.forceMut(); s != nil {
			blk := out[len(out)-1].Kids[len(out[len(out)-1].Kids)-1]
			at := len(blk.Kids)
			if len(out) == 1 {
				at-- // before exit()
			}
			blk.Kids = append(append(append([]*Node{}, blk.Kids[:at]...), s), blk.Kids[at:]...)
			blk.Parts = append([]string{"{"}, append(make([]string, len(blk.Kids)-1), " }")...)
		}
	}
	n := Join(out)
	switch m.family {
	case "probe":
		g.badClause(n)
	case "cstruct":
		g.cstruct(n)
	case "drop", "extra":
		g.tokenEdit(n, m.family == "drop")
	}
	return n, m.kind
}

// mutStmt is called where the generator writes a statement: the target
// one is the bad statement instead.
func (g *generator) mutStmt() *Node {
	m := g.mut
	if m == nil || m.done {
		return nil
	}
	if m.count < m.target {
		m.count++
		return nil
	}
	return g.forceMut()
}

// forceMut makes the bad statement now (nil: the family has none here).
func (g *generator) forceMut() *Node {
	m := g.mut
	m.done = true
	for try := 0; try < 40; try++ {
		if try == 20 {
			// Nothing of what the family needs is in scope here.
			m.family = "undefined"
		}
		if s := g.badStmt(m); s != nil {
			s.Kind = KFixed
			if p := &s.Parts[len(s.Parts)-1]; strings.HasSuffix(*p, "};") {
				*p = strings.TrimSuffix(*p, ";") // a block ends the statement
			}
			return s
		}
	}
	return nil
}

func (g *generator) oneOf(xs ...string) string { return xs[g.pick(len(xs))] }

func (g *generator) newName(prefix string) string {
	g.nvar++
	return fmt.Sprintf("%s%d", prefix, g.nvar)
}

// stmtOf is " " + parts interleaved with kids + ";".
func stmtOf(parts []string, kids ...*Node) *Node {
	parts = append([]string(nil), parts...)
	parts[0] = " " + parts[0]
	parts[len(parts)-1] += ";"
	return mk(KStmt, Type{}, parts, kids...)
}

func (g *generator) intVars() []variable {
	var out []variable
	for _, v := range g.allVars() {
		if !v.t.Str && !strings.HasPrefix(v.name, "$w") && !strings.HasPrefix(v.name, "$t") {
			out = append(out, v)
		}
	}
	return out
}

func (g *generator) strVars() []variable { return g.varsOf(str) }

func (g *generator) tupleVars() []variable {
	var out []variable
	for _, v := range g.allVars() {
		if strings.HasPrefix(v.name, "$t") {
			out = append(out, v)
		}
	}
	return out
}

// anInt is an integer expression, often a variable or map of the place.
func (g *generator) anInt() *Node { return g.intExpr(1+g.pick(2), true) }

func (g *generator) aStr() *Node { return g.strExpr(1) }

func (g *generator) badStmt(m *mutation) *Node {
	set := func(k string) { m.kind = m.family + " " + k }
	switch m.family {
	case "binop":
		op := g.oneOf("+", "-", "*", "/", "%", "&", "|", "^", "<<", "==", "!=", "<", ">=", "&&", "||")
		a, b := g.anInt(), g.aStr()
		parts := []string{g.newName("$e") + " = (", " " + op + " ", ")"}
		if g.pick(2) == 0 {
			a, b = b, a
			set("str" + op + "int")
		} else {
			set("int" + op + "str")
		}
		if g.pick(4) == 0 {
			// A tuple operand.
			if ts := g.tupleVars(); len(ts) > 0 {
				set("tuple" + op + "int")
				return stmtOf(parts, leaf(KExpr, Type{}, ts[g.pick(len(ts))].name), a)
			}
			// Not a tuple literal operand (KnownErrorGaps: its place).
		}
		return stmtOf(parts, a, b)
	case "assign":
		vs := append(g.intVars(), g.strVars()...)
		if len(vs) == 0 {
			return nil
		}
		v := vs[g.pick(len(vs))]
		switch {
		case v.t.Str && g.pick(3) > 0 && false: // KnownErrorGaps: string size warning
			set("str=int")
			return stmtOf([]string{v.name + " = ", ""}, g.anInt())
		case v.t.Str:
			set("str=tuple")
			return stmtOf([]string{v.name + " = (", ", ", ")"}, g.anInt(), g.aStr())
		case g.pick(3) == 0:
			set("int=tuple")
			return stmtOf([]string{v.name + " = (", ", ", ")"}, g.anInt(), g.aStr())
		case g.pick(3) == 0:
			// Another width or sign: bpftrace 0.17 may take it.
			t := intTypes[g.pick(len(intTypes))]
			set("int=" + t.String())
			return stmtOf([]string{v.name + " = ", ""}, castTo(t, g.anInt()))
		default:
			set("int=tuple")
			return stmtOf([]string{v.name + " = (", ", ", ")"}, g.anInt(), g.aStr())
		}
	case "mapvalue":
		mi := g.someMap(func(m *mapInfo) bool { return m.set })
		if mi == nil {
			return nil
		}
		parts, kids := g.mapRef(mi, 1)
		parts[len(parts)-1] += " = "
		switch {
		case mi.agg != "":
			other := g.oneOf("count()", "sum(1)", "avg(2)", "hist(3)", "max(4)", "0", `"s"`)
			if strings.HasPrefix(other, mi.agg) {
				other = "stats(5)"
			}
			set(mi.agg + "=" + strings.TrimRight(other, "()0123456789"))
			parts = append(parts, other)
			return stmtOf(parts, append(kids, nil)...)
		case mi.val.Str:
			set("str=" + g.oneOf("int", "count"))
			if strings.HasSuffix(m.kind, "count") {
				parts = append(parts, "count()")
				return stmtOf(parts, append(kids, nil)...)
			}
			return stmtOf(append(parts, ""), append(kids, g.anInt())...)
		default:
			switch g.pick(4) {
			case 0:
				set("int=count")
				parts = append(parts, "count()")
				return stmtOf(parts, append(kids, nil)...)
			case 1:
				set("int=tuple")
				parts[len(parts)-1] += "("
				parts = append(parts, ", ", ")")
				return stmtOf(parts, append(kids, g.anInt(), g.aStr())...)
			default:
				set("int=count")
				parts = append(parts, "count()")
				return stmtOf(parts, append(kids, nil)...)
			}
		}
	case "mapkey":
		mi := g.someMap(func(m *mapInfo) bool { return m.set })
		if mi == nil {
			return nil
		}
		val := " = 1"
		if mi.agg != "" {
			val = " = count()"
			if mi.agg != "count" {
				val = " = " + mi.agg + "(1" + map[bool]string{true: ", 0, 10, 1", false: ""}[mi.agg == "lhist"] + ")"
			}
		} else if mi.val.Str {
			val = ` = "v"`
		}
		if g.pick(3) == 0 {
			val = "" // read it
		}
		lhs, rhs := mi.name+"[", "]"
		var kids []*Node
		switch {
		case mi.key == nil:
			set("keyless[int]")
			lhs += "1"
		case mi.key.Str:
			set("str[int]")
			kids = append(kids, g.anInt())
		case g.pick(3) == 0:
			set("int[int,int]")
			lhs += "1, "
			kids = append(kids, g.anInt())
		case g.pick(2) == 0:
			set("int[]")
			lhs, rhs = mi.name, ""
		default:
			set("int[str]")
			kids = append(kids, g.aStr())
		}
		if val == "" {
			parts := []string{g.newName("$e") + " = " + lhs, rhs}
			if len(kids) == 0 {
				parts = []string{parts[0] + rhs}
			}
			m.kind += " read"
			return stmtOf(parts, kids...)
		}
		if len(kids) == 0 {
			return stmtOf([]string{lhs + rhs + val})
		}
		return stmtOf([]string{lhs, rhs + val}, kids...)
	case "tuple":
		ts := g.tupleVars()
		name := ""
		var pre []string
		if len(ts) > 0 {
			name = ts[g.pick(len(ts))].name
		} else {
			name = g.newName("$t")
			pre = []string{name + " = (1, \"a\"); "}
		}
		p := func(s string) []string {
			if pre != nil {
				return []string{pre[0] + s}
			}
			return []string{s}
		}
		// Not an index out of range (KnownErrorGaps: follow-on errors).
		switch 1 + g.pick(4) {
		case 1:
			set("assign element")
			return stmtOf(p(name + ".0 = 1"))
		case 2:
			set("element type")
			return stmtOf(p(name + ` = ("x", 1)`))
		case 3:
			set("arity")
			return stmtOf(p(name + ` = (1, "a", 2)`))
		default:
			set("printf")
			return stmtOf(p(`printf("%d\n", ` + name + ")"))
		}
	case "printf":
		switch g.pick(5) {
		case 0:
			set("%d str")
			return stmtOf([]string{g.oneOf(`printf("%d\n", `, `printf("x %ld y\n", `, `printf("%u %s\n", `), ")"}, g.aStr())
		case 1:
			set("%s int")
			return stmtOf([]string{`printf("%s\n", `, ")"}, g.anInt())
		case 2:
			set("too few")
			return stmtOf([]string{`printf("%d %s %d\n", `, ", ", ")"}, g.anInt(), g.aStr())
		case 3:
			set("too many")
			return stmtOf([]string{`printf("%d\n", `, ", ", ")"}, g.anInt(), g.anInt())
		default:
			set("format not literal")
			if vs := g.strVars(); len(vs) > 0 {
				return stmtOf([]string{"printf(" + vs[0].name + ")"})
			}
			return stmtOf([]string{"printf(", ")"}, g.anInt())
		}
	case "builtin":
		i, s := g.anInt(), g.aStr()
		calls := []struct {
			name  string
			parts []string
			kids  []*Node
		}{
			{"str()", []string{"$e = str()"}, nil},
			{"str(str)", []string{"$e = str(", ")"}, []*Node{s}},
			{"str(int,int,int)", []string{"$e = str(", ", 1, 2)"}, []*Node{i}},
			{"hist(str)", []string{"@e = hist(", ")"}, []*Node{s}},
			{"hist()", []string{"@e = hist()"}, nil},
			{"lhist 3 args", []string{"@e = lhist(", ", 0, 10)"}, []*Node{i}},
			{"lhist step 0", []string{"@e = lhist(", ", 0, 10, 0)"}, []*Node{i}},
			{"lhist str", []string{"@e = lhist(", ", 0, 10, 1)"}, []*Node{s}},
			{"count(int)", []string{"@e = count(", ")"}, []*Node{i}},
			{"sum()", []string{"@e = sum()"}, nil},
			{"sum(str)", []string{"@e = sum(", ")"}, []*Node{s}},
			{"avg(str)", []string{"@e = avg(", ")"}, []*Node{s}},
			{"min(str)", []string{"@e = min(", ")"}, []*Node{s}},
			{"max(int,int)", []string{"@e = max(", ", 1)"}, []*Node{i}},
			{"stats()", []string{"@e = stats()"}, nil},
			{"count unassigned", []string{"$e = count()"}, nil},
			{"strncmp(str,int)", []string{"$e = strncmp(", ", ", ", 2)"}, []*Node{s, i}},
			{"strncmp negative", []string{"$e = strncmp(", `, "ab", -1)`}, []*Node{s}},
			{"delete(int)", []string{"delete(", ")"}, []*Node{i}},
			{"clear(int)", []string{"clear(", ")"}, []*Node{i}},
			{"zero(str)", []string{"zero(", ")"}, []*Node{s}},
			{"print(int,int)", []string{"print(", ", 2)"}, []*Node{i}},
			{"printf()", []string{"printf()"}, nil},
			{"ksym(str)", []string{"$e = ksym(", ")"}, []*Node{s}},
			{"kaddr(int)", []string{"$e = kaddr(", ")"}, []*Node{i}},
			{"cat(int)", []string{"cat(", ")"}, []*Node{i}},
			{"time(int)", []string{"time(", ")"}, []*Node{i}},
			{"buf(int)", []string{"$e = buf(", ")"}, []*Node{i}},
			{"ntop(str)", []string{"$e = ntop(", ")"}, []*Node{s}},
			{"strftime(int,int)", []string{"$e = strftime(", ", 1)"}, []*Node{i}},
			{"system(int)", []string{"system(", ")"}, []*Node{i}},
			{"kstack(str)", []string{"$e = kstack(", ")"}, []*Node{s}},
			{"ustack(int,int,int)", []string{"$e = ustack(1, 2, ", ")"}, []*Node{i}},
			{"cgroupid(int)", []string{"$e = cgroupid(", ")"}, []*Node{i}},
			{"sizeof(str)", []string{"$e = sizeof(", ")"}, []*Node{s}},
			{"print(int,int,int,int)", []string{"print(", ", 1, 2, 3)"}, []*Node{i}},
		}
		c := calls[g.pick(len(calls))]
		set(c.name)
		parts := append([]string(nil), c.parts...)
		parts[0] = strings.Replace(parts[0], "$e", g.newName("$e"), 1)
		parts[0] = strings.Replace(parts[0], "@e", "@"+g.cfg.Prefix+"e"+fmt.Sprint(g.nvar), 1)
		return stmtOf(parts, c.kids...)
	case "unknownfunc":
		name := g.oneOf("foo", "cuont", "sttr", "prinft", "hsit", "lhsit", "pritn", "abs", "sqrt", "bar_baz", "printk", "avgg", "Count", "STR", "exitt", "kprobe", "sizof")
		set(name)
		switch g.pick(3) {
		case 0:
			return stmtOf([]string{"@" + g.cfg.Prefix + "u" + fmt.Sprint(g.pick(9)) + " = " + name + "()"})
		case 1:
			return stmtOf([]string{name + "(", ")"}, g.anInt())
		default:
			return stmtOf([]string{g.newName("$e") + " = " + name + "(", ", ", ")"}, g.aStr(), g.anInt())
		}
	case "undefined":
		v := g.oneOf("$undef", "$x", "$v99", "$w0", "$t")
		mp := g.oneOf("@undef", "@x", "@m99", "@")
		switch g.pick(6) {
		case 0, 2: // not `@undef + x`: KnownErrorGaps, follow-on errors
			set("var in expr")
			return stmtOf([]string{g.newName("$e") + " = (", " + " + v + ")"}, g.anInt())
		case 1:
			set("var in printf")
			return stmtOf([]string{`printf("%d %d\n", `, ", " + v + ")"}, g.anInt())
		case 3:
			set("print map")
			return stmtOf([]string{g.oneOf("print", "clear", "zero") + "(" + mp + ")"})
		case 4:
			set("delete map")
			return stmtOf([]string{"delete(" + mp + "[", "])"}, g.anInt())
		default:
			set("var as condition")
			return stmtOf([]string{"if (" + v + ") { printf(\"x\\n\"); }"})
		}
	case "cast":
		// Not struct casts, unknown type names, sizeof of an unknown
		// struct (KnownErrorGaps: their places and words).
		switch g.pick(2) {
		case 0:
			set("(int)str")
			return stmtOf([]string{g.newName("$e") + " = (" + intTypes[g.pick(len(intTypes))].String() + ")", ""}, g.aStr())
		default:
			set("(int)tuple")
			return stmtOf([]string{g.newName("$e") + " = (int32)(", ", ", ")"}, g.anInt(), g.aStr())
		}
	case "field":
		f := g.oneOf("nope", "pdi", "tigd", "comm2", "real_prent", "mm->nope")
		// Not a field of an integer or a string (KnownErrorGaps).
		switch g.pick(3) {
		case 0:
			set("curtask->" + f)
			return stmtOf([]string{g.newName("$e") + " = curtask->" + f})
		case 1:
			set("curtask.pid")
			return stmtOf([]string{g.newName("$e") + " = curtask.pid"})
		default:
			set("cast->" + f)
			return stmtOf([]string{g.newName("$e") + " = ((struct task_struct *)curtask)->" + f})
		}
	case "unroll":
		n := g.oneOf("0", "101", "1000", "-1")
		set("unroll(" + n + ")")
		return stmtOf([]string{"unroll(" + n + ") { printf(\"u\\n\"); }"})
	case "misc":
		// Not break/continue (KnownErrorGaps: unreachable-code warnings),
		// not if (str) (KnownBugs: no place).
		switch []int{2, 4, 6, 7, 8}[g.pick(5)] { // KnownErrorGaps: int[0], ternary places
		case 2:
			if vs := g.strVars(); len(vs) > 0 {
				set("str++")
				return stmtOf([]string{vs[0].name + "++"})
			}
		case 3:
			if vs := g.intVars(); len(vs) > 0 {
				set("int[0]")
				return stmtOf([]string{g.newName("$e") + " = " + vs[0].name + "[0]"})
			}
		case 4:
			b := g.oneOf("args", "retval", "func", "arg0", "args->x", "sarg0", "cpid")
			set("builtin " + b)
			return stmtOf([]string{g.newName("$e") + " = " + b})
		case 5:
			set("ternary types")
			return stmtOf([]string{g.newName("$e") + " = (", " ? ", " : ", ")"}, g.anInt(), g.anInt(), g.aStr())
		case 6:
			set("str<str")
			return stmtOf([]string{g.newName("$e") + " = (", g.oneOf(" < ", " > ", " <= "), ")"}, g.aStr(), g.aStr())
		case 7:
			op := g.oneOf("!", "-", "~")
			set(op + "str")
			return stmtOf([]string{g.newName("$e") + " = " + op + "(", ")"}, g.aStr())
		case 8:
			if mi := g.someMap(func(m *mapInfo) bool { return m.set && m.agg != "" }); mi != nil {
				set("read " + mi.agg)
				parts, kids := g.mapRef(mi, 1)
				parts[0] = g.newName("$e") + " = (" + parts[0]
				parts[len(parts)-1] += " + 1)"
				return stmtOf(parts, kids...)
			}
		case 9: // not made: KnownErrorGaps (sum++ place)
			if mi := g.someMap(func(m *mapInfo) bool { return m.set && m.agg != "" && m.agg != "count" }); mi != nil {
				set(mi.agg + "++")
				parts, kids := g.mapRef(mi, 1)
				parts[len(parts)-1] += "++"
				return stmtOf(parts, kids...)
			}
		default:
			set("assign to builtin")
			return stmtOf([]string{g.oneOf("pid", "comm", "nsecs") + " = ", ""}, g.anInt())
		}
	}
	return nil
}

// badProbes are attach points that do not exist or do not parse.
var badProbes = []string{
	// Only these: the others' words differ from bpftrace 0.17's
	// (KnownErrorGaps: attach points).
	"interval:s:1,", "tracepoint:syscalls:sys_enter_openat /args->nope/",
}

// badClause adds a clause with a bad attach point (first, last or between).
func (g *generator) badClause(n *Node) {
	p := g.oneOf(badProbes...)
	g.mut.kind = "probe " + p
	body := "{ printf(\"x\\n\"); }"
	if g.pick(2) == 0 {
		body = "{ @" + g.cfg.Prefix + "p = count(); }"
	}
	c := leaf(KFixed, Type{}, p+" "+body)
	at := g.pick(len(n.Kids) + 1)
	kids := append(append(append([]*Node{}, n.Kids[:at]...), c), n.Kids[at:]...)
	n.Kids = kids
	n.Parts = make([]string, len(kids)+1)
	for i := 1; i <= len(kids); i++ {
		n.Parts[i] = "\n"
	}
}

// cstruct puts a C struct definition first and reads a field it lacks
// (or reads it wrongly) in a new statement of the first clause.
func (g *generator) cstruct(n *Node) {
	name := g.oneOf("S", "foo", "Point", "s1")
	def := fmt.Sprintf("struct %s { int a; char b[4]; unsigned long c; }", name)
	var use string
	switch g.pick(4) { // not a cast to another name: KnownErrorGaps
	case 0:
		g.mut.kind = "cstruct no field"
		use = fmt.Sprintf(" $p = (struct %s *)0; $q = $p->%s;", name, g.oneOf("d", "x", "aa", "B"))
	case 1:
		g.mut.kind = "cstruct . on pointer"
		use = fmt.Sprintf(" $p = (struct %s *)0; $q = $p.a;", name)
	case 2:
		g.mut.kind = "cstruct field type"
		use = fmt.Sprintf(" $p = (struct %s *)0; $q = $p->b + 1;", name)
	default:
		g.mut.kind = "cstruct sizeof then error"
		use = fmt.Sprintf(" $p = sizeof(struct %s); $q = $p + \"s\";", name)
	}
	sep := g.oneOf("\n", " ", "\n\n")
	n.Parts[0] = def + sep + n.Parts[0]
	// Into the first clause's block, first.
	blk := n.Kids[0].Kids[len(n.Kids[0].Kids)-1]
	st := leaf(KFixed, Type{}, use)
	blk.Kids = append([]*Node{st}, blk.Kids...)
	if len(blk.Parts) == 1 { // "{ }"
		blk.Parts = []string{"{", " }"}
	} else {
		blk.Parts = append([]string{"{", ""}, blk.Parts[1:]...)
	}
}

var tokenChars = "(){}[];,=+-*/<>!&|?:.\"$@"

// tokenEdit drops one token character from the fixed text of a random node
// (outside string literals), or puts an extra token at a random place.
func (g *generator) tokenEdit(n *Node, drop bool) {
	type site struct {
		n   *Node
		i   int
		off int
	}
	var sites []site
	var walk func(x *Node)
	walk = func(x *Node) {
		for i, p := range x.Parts {
			inStr := false
			for off := 0; off <= len(p); off++ {
				if off < len(p) && p[off] == '"' && (off == 0 || p[off-1] != '\\') {
					inStr = !inStr
					continue
				}
				if inStr {
					continue
				}
				if drop && off < len(p) && strings.IndexByte(tokenChars, p[off]) >= 0 && p[off] != '"' {
					sites = append(sites, site{x, i, off})
				}
				if !drop && (off == len(p) || p[off] == ' ') {
					sites = append(sites, site{x, i, off})
				}
			}
		}
		for _, k := range x.Kids {
			if k != nil {
				walk(k)
			}
		}
	}
	walk(n)
	if len(sites) == 0 {
		g.mut.kind = "none"
		return
	}
	s := sites[g.pick(len(sites))]
	p := s.n.Parts[s.i]
	if drop {
		g.mut.kind = "drop " + string(p[s.off])
		s.n.Parts[s.i] = p[:s.off] + p[s.off+1:]
	} else {
		tok := g.oneOf(")", "(", "}", "{", ";", ",", "]", "+", "=", "1", "$x", "@", "if", "else", ":", "?", "\"s\"", "::", "->")
		g.mut.kind = "extra " + tok
		s.n.Parts[s.i] = p[:s.off] + " " + tok + p[s.off:]
	}
	// The edited node must survive shrinking unchanged: its text now
	// carries the error.
	if s.n.Kind == KStmt {
		s.n.Kind = KFixed
	}
}
