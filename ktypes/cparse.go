package ktypes

import (
	"fmt"
	"strings"
)

// The C declaration parser keeps declarations as written (cType trees) and
// lays them out only when asked: forward references work, and a name the C
// sources lack can still be found in BTF when (and only when) it is used.

type cKind uint8

const (
	ckBase    cKind = iota // int, unsigned long, char ... (name is canonical)
	ckTypedef              // a typedef name, resolved at layout
	ckTag                  // "struct x", "union x", "enum x", resolved at layout
	ckRecord               // an anonymous struct/union defined in place
	ckEnum                 // an anonymous enum defined in place
	ckPtr
	ckArray
	ckFunc
)

type cType struct {
	kind cKind
	name string
	rec  *cRecord
	enum *cEnum
	elem *cType
	n    int64 // array length; -1 for []
	pos  string
}

type cRecord struct {
	tag      string // "struct x" / "union x"; "" when anonymous
	alias    string // the typedef naming an anonymous record
	union    bool
	members  []cMember
	packed   bool
	align    int
	pos      string
	complete bool
}

type cMember struct {
	name   string
	typ    *cType
	bits   int // -1 unless a bitfield
	align  int // aligned(N) on the member
	packed bool
	pos    string
}

type cEnum struct {
	tag    string
	alias  string
	size   int
	signed bool
	values []enumConst
}

type enumConst struct {
	name  string
	value int64
	enum  *cEnum
}

// attrs are the __attribute__s the layout cares about.
type attrs struct {
	packed bool
	align  int
}

type cparser struct {
	d    *Decls
	toks []ctok
	i    int
}

func (p *cparser) peek() ctok { return p.peekN(0) }

func (p *cparser) peekN(n int) ctok {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	t := ctok{kind: tEOF, text: "end of input"}
	if len(p.toks) > 0 {
		last := p.toks[len(p.toks)-1]
		t.file, t.line = last.file, last.line
	}
	return t
}

func (p *cparser) next() ctok {
	t := p.peek()
	if p.i < len(p.toks) {
		p.i++
	}
	return t
}

func (p *cparser) accept(s string) bool {
	if p.peek().is(s) {
		p.i++
		return true
	}
	return false
}

func (p *cparser) expect(s string) error {
	if !p.accept(s) {
		t := p.peek()
		return fmt.Errorf("%s: expected '%s', found '%s'", t.pos(), s, t.text)
	}
	return nil
}

// parseAll parses a translation unit. A declaration that fails to parse is
// skipped (headers are full of things this parser need not understand);
// the error is kept.
func (p *cparser) parseAll() {
	for p.peek().kind != tEOF {
		start := p.i
		if err := p.external(); err != nil {
			p.d.addErr(err, p.toks[start].file)
			p.i = start
			p.skipDecl()
		}
		if p.i == start { // no progress: never loop forever
			p.i++
		}
	}
}

// skipDecl skips to the end of the current declaration: a ';' at depth 0,
// or a '}' closing a top-level brace group not followed by a declarator.
func (p *cparser) skipDecl() {
	depth := 0
	for p.peek().kind != tEOF {
		t := p.next()
		switch {
		case t.is("(") || t.is("[") || t.is("{"):
			depth++
		case t.is(")") || t.is("]"):
			depth--
		case t.is("}"):
			depth--
			if depth <= 0 && !p.peek().is(";") && p.peek().kind != tIdent && !p.peek().is("*") {
				return
			}
		case t.is(";") && depth <= 0:
			return
		}
	}
}

var storageWords = map[string]bool{
	"extern": true, "static": true, "inline": true, "__inline": true, "__inline__": true,
	"_Noreturn": true, "__extension__": true, "register": true, "auto": true, "_Thread_local": true,
	"__thread": true, "const": true, "volatile": true, "restrict": true, "__restrict": true,
	"__restrict__": true, "__const": true, "__volatile__": true, "__volatile": true, "_Atomic": true,
	"__signed": true, "__user": true, "__iomem": true, "__rcu": true, "__percpu": true,
	"__kernel": true, "__force": true, "__bitwise": true, "__bitwise__": true, "__must_check": true,
}

var baseWords = map[string]bool{
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true,
	"double": true, "signed": true, "unsigned": true, "_Bool": true, "__int128": true,
	"_Complex": true, "__signed__": true, "__int128_t": true, "__uint128_t": true,
}

// startsType reports whether the token at p.i begins a type name.
func (p *cparser) startsType() bool {
	t := p.peek()
	if t.kind != tIdent {
		return false
	}
	if baseWords[t.text] || storageWords[t.text] || t.text == "struct" || t.text == "union" ||
		t.text == "enum" || t.text == "typeof" || t.text == "__typeof__" {
		return true
	}
	return p.d.isTypedef(t.text)
}

// external parses one top-level declaration.
func (p *cparser) external() error {
	if p.accept(";") {
		return nil
	}
	if p.peek().is("_Static_assert") || p.peek().is("static_assert") {
		p.skipDecl()
		return nil
	}
	if p.peek().is("asm") || p.peek().is("__asm__") {
		p.skipDecl()
		return nil
	}
	typedef := false
	base, at, err := p.specifiers(&typedef)
	if err != nil {
		return err
	}
	if p.accept(";") {
		return nil
	}
	for {
		name, typ, err := p.declarator(base)
		if err != nil {
			return err
		}
		a2 := p.attributes()
		if typedef {
			if name == "" {
				return fmt.Errorf("%s: typedef without a name", p.peek().pos())
			}
			if a2.align > 0 || at.align > 0 {
				// typedef int aligned_int __attribute__((aligned(8))):
				// keep the alignment with the name.
				al := a2.align
				if at.align > al {
					al = at.align
				}
				p.d.typedefAlign[name] = al
			}
			p.d.defineTypedef(name, typ)
		}
		if p.peek().is("{") { // a function definition
			p.skipBraces()
			return nil
		}
		if p.accept("=") {
			p.skipInitializer()
		}
		if p.accept(",") {
			continue
		}
		return p.expect(";")
	}
}

func (p *cparser) skipBraces() {
	depth := 0
	for p.peek().kind != tEOF {
		t := p.next()
		if t.is("{") {
			depth++
		} else if t.is("}") {
			if depth--; depth == 0 {
				return
			}
		}
	}
}

func (p *cparser) skipInitializer() {
	depth := 0
	for p.peek().kind != tEOF {
		t := p.peek()
		if depth == 0 && (t.is(",") || t.is(";")) {
			return
		}
		if t.is("(") || t.is("{") || t.is("[") {
			depth++
		} else if t.is(")") || t.is("}") || t.is("]") {
			depth--
		}
		p.i++
	}
}

// attributes skips __attribute__((...)), __asm__(...) and __declspec,
// keeping packed and aligned.
func (p *cparser) attributes() attrs {
	var a attrs
	for {
		t := p.peek()
		switch {
		case t.is("__attribute__") || t.is("__attribute"):
			p.i++
			start := p.i
			p.skipParens()
			body := p.toks[start:p.i]
			for k := 0; k < len(body); k++ {
				switch body[k].text {
				case "packed", "__packed__":
					a.packed = true
				case "aligned", "__aligned__":
					v := int64(16) // bare aligned: the ABI's largest alignment
					if k+1 < len(body) && body[k+1].is("(") {
						end := k + 2
						for depth := 1; end < len(body); end++ {
							if body[end].is("(") {
								depth++
							} else if body[end].is(")") {
								if depth--; depth == 0 {
									break
								}
							}
						}
						ev := p.evaluator(body[k+2 : end])
						if x, err := ev.expr(); err == nil {
							v = x
						}
						k = end
					}
					if int(v) > a.align {
						a.align = int(v)
					}
				}
			}
		case t.is("__asm__") || t.is("asm") || t.is("__asm") || t.is("__declspec"):
			p.i++
			p.skipParens()
		default:
			return a
		}
	}
}

func (p *cparser) skipParens() {
	if !p.peek().is("(") {
		return
	}
	depth := 0
	for p.peek().kind != tEOF {
		t := p.next()
		if t.is("(") {
			depth++
		} else if t.is(")") {
			if depth--; depth == 0 {
				return
			}
		}
	}
}

// specifiers parses declaration specifiers into a base type.
func (p *cparser) specifiers(typedef *bool) (*cType, attrs, error) {
	var at attrs
	var words []string
	var typ *cType
	start := p.peek()
	for {
		a := p.attributes()
		at.packed = at.packed || a.packed
		if a.align > at.align {
			at.align = a.align
		}
		t := p.peek()
		if t.kind != tIdent {
			break
		}
		switch {
		case t.text == "typedef":
			p.i++
			if typedef == nil {
				return nil, at, fmt.Errorf("%s: unexpected typedef", t.pos())
			}
			*typedef = true
		case storageWords[t.text]:
			p.i++
			if t.text == "__signed" {
				words = append(words, "signed")
			}
		case baseWords[t.text]:
			p.i++
			words = append(words, t.text)
		case t.text == "struct" || t.text == "union" || t.text == "enum":
			if typ != nil || len(words) > 0 {
				return nil, at, fmt.Errorf("%s: two types in one declaration", t.pos())
			}
			var err error
			if t.text == "enum" {
				typ, err = p.enumSpec()
			} else {
				typ, err = p.recordSpec()
			}
			if err != nil {
				return nil, at, err
			}
		case t.text == "typeof" || t.text == "__typeof__" || t.text == "__typeof":
			return nil, at, fmt.Errorf("%s: typeof is not supported in declarations", t.pos())
		default:
			// A typedef name, known or not: an unknown one is taken as a type
			// name when a declarator follows it (found in BTF at layout).
			if typ != nil || len(words) > 0 {
				goto done
			}
			n := p.peekN(1)
			if p.d.isTypedef(t.text) || n.kind == tIdent || n.is("*") || (n.is("(") && p.peekN(2).is("*")) {
				p.i++
				typ = &cType{kind: ckTypedef, name: t.text, pos: t.pos()}
				continue
			}
			goto done
		}
	}
done:
	if typ != nil {
		if len(words) > 0 {
			return nil, at, fmt.Errorf("%s: two types in one declaration", start.pos())
		}
		return typ, at, nil
	}
	if len(words) == 0 {
		return nil, at, fmt.Errorf("%s: expected a type, found '%s'", p.peek().pos(), p.peek().text)
	}
	name, err := canonicalBase(words)
	if err != nil {
		return nil, at, fmt.Errorf("%s: %w", start.pos(), err)
	}
	return &cType{kind: ckBase, name: name, pos: start.pos()}, at, nil
}

// canonicalBase turns specifier words into one base type name.
func canonicalBase(words []string) (string, error) {
	var signed, unsigned, short, long, char, intw, other int
	var otherName string
	for _, w := range words {
		switch w {
		case "signed", "__signed__":
			signed++
		case "unsigned":
			unsigned++
		case "short":
			short++
		case "long":
			long++
		case "char":
			char++
		case "int":
			intw++
		case "__int128_t":
			otherName, other = "__int128", other+1
		case "__uint128_t":
			otherName, other, unsigned = "__int128", other+1, unsigned+1
		default:
			otherName, other = w, other+1
		}
	}
	bad := fmt.Errorf("invalid type '%s'", strings.Join(words, " "))
	if signed > 0 && unsigned > 0 || short > 0 && long > 0 || char > 1 || intw > 1 || other > 1 || long > 2 {
		return "", bad
	}
	prefix := ""
	if unsigned > 0 {
		prefix = "unsigned "
	}
	switch {
	case other == 1:
		switch otherName {
		case "double":
			if long == 1 {
				return "long double", nil
			}
			if char+short+intw+signed+unsigned+long > 0 {
				return "", bad
			}
			return "double", nil
		case "__int128":
			if char+short+intw+long > 0 {
				return "", bad
			}
			return prefix + "__int128", nil
		default: // void, float, _Bool, _Complex
			if char+short+intw+signed+unsigned+long > 0 {
				return "", bad
			}
			return otherName, nil
		}
	case char == 1:
		if short+long+intw > 0 {
			return "", bad
		}
		if signed > 0 {
			return "signed char", nil
		}
		return prefix + "char", nil
	case short == 1:
		return prefix + "short", nil
	case long == 1:
		return prefix + "long", nil
	case long == 2:
		return prefix + "long long", nil
	}
	return prefix + "int", nil
}

func (p *cparser) recordSpec() (*cType, error) {
	kw := p.next()
	a := p.attributes()
	tag := ""
	pos := kw.pos()
	if p.peek().kind == tIdent {
		tag = kw.text + " " + p.next().text
	}
	a2 := p.attributes()
	a.packed = a.packed || a2.packed
	if a2.align > a.align {
		a.align = a2.align
	}
	if !p.peek().is("{") {
		if tag == "" {
			return nil, fmt.Errorf("%s: %s without a name or a body", pos, kw.text)
		}
		return &cType{kind: ckTag, name: tag, pos: pos}, nil
	}
	p.i++
	rec := &cRecord{tag: tag, union: kw.text == "union", pos: pos}
	for !p.accept("}") {
		if p.peek().kind == tEOF {
			return nil, fmt.Errorf("%s: %s has no closing '}'", pos, kw.text)
		}
		if err := p.memberDecl(rec); err != nil {
			return nil, err
		}
	}
	a3 := p.attributes()
	rec.packed = a.packed || a3.packed
	rec.align = max(a.align, a3.align)
	rec.complete = true
	if tag == "" {
		return &cType{kind: ckRecord, rec: rec, pos: pos}, nil
	}
	p.d.defineTag(tag, &tagDef{rec: rec})
	return &cType{kind: ckTag, name: tag, pos: pos}, nil
}

func (p *cparser) memberDecl(rec *cRecord) error {
	if p.accept(";") {
		return nil
	}
	if p.peek().is("_Static_assert") || p.peek().is("static_assert") {
		p.skipDecl()
		return nil
	}
	base, at, err := p.specifiers(nil)
	if err != nil {
		return err
	}
	// clang accepts a member list whose last ';' is missing (with a
	// warning), and so does bpftrace: `struct x { unsigned long x }`.
	if p.accept(";") || p.peek().is("}") {
		// An anonymous struct/union member; anything else declares nothing.
		if base.kind == ckRecord {
			rec.members = append(rec.members, cMember{typ: base, bits: -1, align: at.align, pos: base.pos})
		}
		return nil
	}
	for {
		m := cMember{bits: -1, pos: p.peek().pos(), align: at.align, packed: at.packed}
		if !p.peek().is(":") {
			m.name, m.typ, err = p.declarator(base)
			if err != nil {
				return err
			}
		} else {
			m.typ = base
		}
		if p.accept(":") {
			ev := p.evaluator(nil)
			ev.toks, ev.i = p.toks, p.i
			w, err := ev.binary(0)
			if err != nil {
				return fmt.Errorf("%s: bitfield width: %w", m.pos, err)
			}
			p.i = ev.i
			if w < 0 || w > 128 {
				return fmt.Errorf("%s: bitfield width %d is out of range", m.pos, w)
			}
			m.bits = int(w)
		}
		a := p.attributes()
		m.packed = m.packed || a.packed
		if a.align > m.align {
			m.align = a.align
		}
		rec.members = append(rec.members, m)
		if p.accept(",") {
			continue
		}
		if p.peek().is("}") { // the last member's ';' may be left out
			return nil
		}
		return p.expect(";")
	}
}

func (p *cparser) enumSpec() (*cType, error) {
	kw := p.next()
	p.attributes()
	tag := ""
	if p.peek().kind == tIdent {
		tag = "enum " + p.next().text
	}
	if p.accept(":") { // C23 fixed underlying type
		if _, _, err := p.specifiers(nil); err != nil {
			return nil, err
		}
	}
	if !p.peek().is("{") {
		if tag == "" {
			return nil, fmt.Errorf("%s: enum without a name or a body", kw.pos())
		}
		return &cType{kind: ckTag, name: tag, pos: kw.pos()}, nil
	}
	p.i++
	e := &cEnum{tag: tag, size: 4}
	next := int64(0)
	for !p.accept("}") {
		t := p.next()
		if t.kind != tIdent {
			return nil, fmt.Errorf("%s: expected an enumerator, found '%s'", t.pos(), t.text)
		}
		p.attributes()
		v := next
		if p.accept("=") {
			ev := p.evaluator(nil)
			ev.toks, ev.i = p.toks, p.i
			x, err := ev.expr()
			if err != nil {
				return nil, fmt.Errorf("%s: value of %s: %w", t.pos(), t.text, err)
			}
			p.i = ev.i
			v = x
		}
		c := enumConst{name: t.text, value: v, enum: e}
		e.values = append(e.values, c)
		p.d.enumerators[t.text] = c
		next = v + 1
		if !p.accept(",") {
			if err := p.expect("}"); err != nil {
				return nil, err
			}
			break
		}
	}
	a := p.attributes()
	var lo, hi int64
	for _, c := range e.values {
		lo, hi = min(lo, c.value), max(hi, c.value)
	}
	e.signed = lo < 0
	switch {
	case a.packed:
		e.size = 1
		if lo < -128 || hi > 255 || (e.signed && hi > 127) {
			e.size = 2
		}
		if lo < -32768 || hi > 65535 || (e.signed && hi > 32767) {
			e.size = 4
		}
		if lo < -1<<31 || hi > 1<<32-1 || (e.signed && hi > 1<<31-1) {
			e.size = 8
		}
	case lo < -1<<31 || hi > 1<<32-1 || (e.signed && hi > 1<<31-1):
		e.size = 8
	}
	if tag == "" {
		return &cType{kind: ckEnum, enum: e, pos: kw.pos()}, nil
	}
	p.d.defineTag(tag, &tagDef{enum: e})
	return &cType{kind: ckTag, name: tag, pos: kw.pos()}, nil
}

// declarator parses a (possibly abstract) declarator around base.
func (p *cparser) declarator(base *cType) (string, *cType, error) {
	t := base
	for {
		p.attributes()
		if p.accept("*") {
			t = &cType{kind: ckPtr, elem: t, pos: t.pos}
			for p.peek().kind == tIdent && storageWords[p.peek().text] {
				p.i++
			}
			continue
		}
		break
	}
	p.attributes()
	// A parenthesised declarator: (*name)[N], (*fn)(args) ... Its suffixes
	// apply to the type first, then the inner declarator wraps the result.
	if p.peek().is("(") && (p.peekN(1).is("*") || p.peekN(1).is("(") || p.peekN(1).is("^") ||
		(p.peekN(1).kind == tIdent && !p.d.isTypedef(p.peekN(1).text) && !baseWords[p.peekN(1).text] &&
			!storageWords[p.peekN(1).text] && !p.peekN(1).is("__attribute__"))) {
		innerStart := p.i + 1
		p.skipParens()
		outer, err := p.suffixes(t)
		if err != nil {
			return "", nil, err
		}
		end := p.i
		p.i = innerStart
		name, typ, err := p.declarator(outer)
		if err != nil {
			return "", nil, err
		}
		if err := p.expect(")"); err != nil {
			return "", nil, err
		}
		p.i = end
		return name, typ, nil
	}
	name := ""
	if p.peek().kind == tIdent && !p.peek().is("__attribute__") {
		name = p.next().text
	}
	typ, err := p.suffixes(t)
	return name, typ, err
}

// suffixes parses array and function suffixes after a declarator name.
func (p *cparser) suffixes(t *cType) (*cType, error) {
	type suffix struct {
		fn bool
		n  int64
	}
	var sfx []suffix
	for {
		if p.accept("[") {
			n := int64(-1)
			for p.peek().kind == tIdent && (storageWords[p.peek().text] || p.peek().is("static")) {
				p.i++
			}
			if !p.peek().is("]") {
				ev := p.evaluator(nil)
				ev.toks, ev.i = p.toks, p.i
				v, err := ev.expr()
				if err != nil {
					return nil, fmt.Errorf("%s: array size: %w", p.peek().pos(), err)
				}
				p.i = ev.i
				if v < 0 {
					return nil, fmt.Errorf("%s: negative array size %d", p.peek().pos(), v)
				}
				n = v
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			sfx = append(sfx, suffix{n: n})
			continue
		}
		if p.peek().is("(") {
			p.skipParens()
			sfx = append(sfx, suffix{fn: true})
			continue
		}
		break
	}
	for k := len(sfx) - 1; k >= 0; k-- {
		if sfx[k].fn {
			t = &cType{kind: ckFunc, elem: t, pos: t.pos}
		} else {
			t = &cType{kind: ckArray, elem: t, n: sfx[k].n, pos: t.pos}
		}
	}
	return t, nil
}

// typeName parses a type name (specifiers and an abstract declarator), as
// in a cast or sizeof, or a lookup like "struct task_struct *".
func (p *cparser) typeName() (*cType, error) {
	base, _, err := p.specifiers(nil)
	if err != nil {
		return nil, err
	}
	name, t, err := p.declarator(base)
	if err != nil {
		return nil, err
	}
	if name != "" {
		return nil, fmt.Errorf("unexpected name '%s' in a type name", name)
	}
	return t, nil
}

// evaluator returns a constant evaluator that knows enumerators and can
// take sizeof of (and cast to) types declared so far.
func (p *cparser) evaluator(toks []ctok) *evaluator {
	ev := &evaluator{toks: toks}
	ev.ident = func(name string) (int64, bool) {
		c, ok := p.d.enumerators[name]
		return c.value, ok
	}
	ev.typeName = func(ev *evaluator) (int64, int64, bool, bool, error) {
		sub := &cparser{d: p.d, toks: ev.toks, i: ev.i}
		if !sub.startsType() {
			return 0, 0, false, false, nil
		}
		ct, err := sub.typeName()
		if err != nil {
			return 0, 0, false, false, err
		}
		ev.i = sub.i
		t, err := p.d.layout(ct)
		if err != nil {
			return 0, 0, false, false, err
		}
		return int64(t.Size), int64(t.Alignment()), t.Signed, true, nil
	}
	return ev
}
