package ktypes

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/gotrace/gotrace/lang/types"
)

// abi is the target's C data model. Both supported targets are LP64 and lay
// out structs, unions and bitfields the same way (SysV x86-64 psABI and
// AAPCS64 agree for these); they differ in the signedness of plain char and
// in va_list.
type abi struct {
	name       string // "x86_64" or "arm64"
	charSigned bool
	vaListSize int
}

func abiFor(arch string) (abi, error) {
	if arch == "" {
		arch = runtime.GOARCH
	}
	switch arch {
	case "x86_64", "amd64", "x86-64", "x86":
		return abi{name: "x86_64", charSigned: true, vaListSize: 24}, nil
	case "arm64", "aarch64":
		return abi{name: "arm64", charSigned: false, vaListSize: 32}, nil
	}
	return abi{}, fmt.Errorf("unsupported architecture %q (want x86_64 or arm64)", arch)
}

// baseType returns the layout of a canonical base type name.
func (a abi) baseType(name string) (*types.Type, bool) {
	switch name {
	case "char":
		return types.IntType(1, a.charSigned), true
	case "signed char":
		return types.IntType(1, true), true
	case "unsigned char", "_Bool":
		return types.IntType(1, false), true
	case "short":
		return types.IntType(2, true), true
	case "unsigned short":
		return types.IntType(2, false), true
	case "int":
		return types.IntType(4, true), true
	case "unsigned int":
		return types.IntType(4, false), true
	case "long", "long long":
		return types.IntType(8, true), true
	case "unsigned long", "unsigned long long":
		return types.IntType(8, false), true
	case "__int128", "unsigned __int128", "long double":
		// No 16-byte integers in gotrace: bytes with the ABI's alignment.
		t := types.ArrayOf(types.U8, 16)
		t.Align = 16
		return t, true
	case "float":
		return &types.Type{Kind: types.Int, Size: 4, Align: 4}, true
	case "double":
		return &types.Type{Kind: types.Int, Size: 8, Align: 8}, true
	case "__builtin_va_list":
		t := types.ArrayOf(types.U8, a.vaListSize)
		t.Align = 8
		return t, true
	}
	return nil, false
}

// prelude declares the typedefs kernel headers (and the C library) provide,
// so script declarations can use them without an #include.
const prelude = `
typedef unsigned char __u8; typedef signed char __s8;
typedef unsigned short __u16; typedef short __s16;
typedef unsigned int __u32; typedef int __s32;
typedef unsigned long long __u64; typedef long long __s64;
typedef __u8 u8; typedef __s8 s8; typedef __u16 u16; typedef __s16 s16;
typedef __u32 u32; typedef __s32 s32; typedef __u64 u64; typedef __s64 s64;
typedef __u8 uint8_t; typedef __s8 int8_t; typedef __u16 uint16_t; typedef __s16 int16_t;
typedef __u32 uint32_t; typedef __s32 int32_t; typedef unsigned long uint64_t; typedef long int64_t;
typedef __u8 u_int8_t; typedef __u16 u_int16_t; typedef __u32 u_int32_t; typedef unsigned long u_int64_t;
typedef __u16 __le16; typedef __u16 __be16; typedef __u32 __le32; typedef __u32 __be32;
typedef __u64 __le64; typedef __u64 __be64; typedef __u16 __sum16; typedef __u32 __wsum;
typedef unsigned long size_t; typedef long ssize_t; typedef long ptrdiff_t;
typedef unsigned long uintptr_t; typedef long intptr_t;
typedef _Bool bool;
typedef int pid_t; typedef unsigned int uid_t; typedef unsigned int gid_t;
typedef unsigned short umode_t; typedef unsigned int mode_t; typedef __u32 dev_t;
typedef long long loff_t; typedef long off_t; typedef unsigned long ino_t; typedef unsigned int nlink_t;
typedef __u64 sector_t; typedef __u64 blkcnt_t; typedef unsigned int gfp_t; typedef unsigned int fmode_t;
typedef __s64 time64_t; typedef __s64 ktime_t; typedef long time_t; typedef int clockid_t;
typedef int key_t; typedef int mqd_t; typedef unsigned short sa_family_t; typedef __u64 phys_addr_t;
typedef unsigned long pgoff_t; typedef __u32 __portpair; typedef __u64 __addrpair;
typedef unsigned char u_char; typedef unsigned short u_short; typedef unsigned int u_int; typedef unsigned long u_long;
typedef unsigned char unchar; typedef unsigned short ushort; typedef unsigned int uint; typedef unsigned long ulong;
typedef int __kernel_pid_t; typedef unsigned int __kernel_uid32_t; typedef unsigned int __kernel_gid32_t;
typedef unsigned long __kernel_size_t; typedef long __kernel_ssize_t; typedef long __kernel_long_t;
typedef unsigned long __kernel_ulong_t; typedef long long __kernel_loff_t; typedef long __kernel_time_t;
typedef __u32 __kernel_dev_t; typedef unsigned short __kernel_sa_family_t;
`

type tagDef struct {
	rec  *cRecord
	enum *cEnum
}

// Decls is a set of parsed C declarations, laid out for one ABI on demand.
type Decls struct {
	abi          abi
	tags         map[string]*tagDef
	typedefs     map[string]*cType
	typedefAlign map[string]int
	enumerators  map[string]enumConst
	names        []string // types declared by the sources, in order

	// Space is the address space given to pointers (AddrNone: decided by
	// the probe that reads them).
	Space types.AddrSpace
	// Fallback resolves a name the C sources lack ("struct x", a typedef
	// name); the Resolver points it at BTF.
	Fallback func(name string) (*types.Type, error)
	// Kernel reports whether kernel BTF defines a struct/union name; nil
	// means no BTF. See incompleteMember.
	Kernel     func(name string) bool
	kernelMemo map[string]bool

	// Files are the files read (script first), Missing the #include
	// targets not found.
	Files   []string
	Missing []string
	pp      *preproc // its macros: object-like integer #defines are constants
	errs    []error  // errors in the script's own text
	warns   []error  // errors in included headers (declarations skipped)

	laid    map[any]*types.Type
	laying  map[any]bool
	builtin bool // parsing the prelude: its names are not "declared"
}

func newDecls(a abi) *Decls {
	d := &Decls{
		abi: a, tags: map[string]*tagDef{}, typedefs: map[string]*cType{},
		typedefAlign: map[string]int{}, enumerators: map[string]enumConst{},
		laid: map[any]*types.Type{}, laying: map[any]bool{},
	}
	d.builtin = true
	toks, _ := lexAll(prelude, "<prelude>")
	(&cparser{d: d, toks: toks}).parseAll()
	d.builtin = false
	return d
}

func lexAll(src, file string) ([]ctok, error) {
	var out []ctok
	for i, line := range strings.Split(stripComments(src), "\n") {
		toks, err := lexLine(line, file, i+1)
		if err != nil {
			return nil, err
		}
		out = append(out, toks...)
	}
	return out, nil
}

// ParseC parses C declarations (struct, union, enum, typedef; function
// prototypes and bodies are skipped) for arch ("x86_64"/"amd64" or
// "arm64"/"aarch64"; "" is the host). #include lines are searched in the
// usual system directories; see ParseCFiles for -I directories.
func ParseC(src string, arch string) (*Decls, error) {
	return ParseCFiles([]string{src}, nil, nil, arch)
}

// ParseCFiles parses the script's declaration sources (named "script"),
// then the #include'd headers, searching dirs before the system
// directories. Headers that are not found are listed in Decls.Missing
// (not an error: their types may still come from BTF). The error reports
// every problem in the script's own declarations.
func ParseCFiles(srcs []string, includes []string, dirs []string, arch string) (*Decls, error) {
	return parseCFiles(srcs, includes, dirs, arch, nil)
}

// parseCFiles is ParseCFiles with extra object-like macros predefined
// (name → replacement text), as -D options.
func parseCFiles(srcs []string, includes []string, dirs []string, arch string, defines [][2]string) (*Decls, error) {
	a, err := abiFor(arch)
	if err != nil {
		return nil, err
	}
	d := newDecls(a)
	pp := newPreproc(a, dirs)
	// bpftrace lets scripts use the kernel's attribute shorthands.
	for _, def := range []string{"__packed __attribute__((packed))"} {
		toks, _ := lexLine(def, "<built-in>", 0)
		pp.define(toks, "<built-in>", 0, false)
	}
	toks, _ := lexLine("__aligned(x) __attribute__((aligned(x)))", "<built-in>", 0)
	pp.define(toks, "<built-in>", 0, true)
	for _, def := range defines {
		toks, _ := lexLine(def[0]+" "+def[1], "<built-in>", 0)
		pp.define(toks, "<built-in>", 0, false)
	}
	var src strings.Builder
	for _, inc := range includes {
		if strings.HasPrefix(inc, "\"") || strings.HasPrefix(inc, "<") {
			fmt.Fprintf(&src, "#include %s\n", inc)
		} else {
			fmt.Fprintf(&src, "#include <%s>\n", inc)
		}
	}
	for _, s := range srcs {
		src.WriteString(s)
		// bpftrace takes `struct Foo { ... }` with no ';' before the first
		// probe: end such a declaration so the next one parses on its own.
		if t := strings.TrimSpace(s); t != "" && !strings.HasPrefix(t, "#") && !strings.HasSuffix(t, ";") {
			src.WriteString(";")
		}
		src.WriteString("\n")
	}
	pp.run(src.String(), "script")
	d.Files, d.Missing = pp.included, pp.missing
	d.pp = pp
	for _, e := range pp.errs {
		d.addErr(e, "")
	}
	(&cparser{d: d, toks: pp.out}).parseAll()
	if len(d.errs) > 0 {
		return d, errors.Join(d.errs...)
	}
	return d, nil
}

func (d *Decls) addErr(err error, file string) {
	if file == "script" || strings.HasPrefix(err.Error(), "script:") {
		d.errs = append(d.errs, err)
	} else {
		d.warns = append(d.warns, err)
	}
}

func (d *Decls) isTypedef(name string) bool {
	_, ok := d.typedefs[name]
	return ok || name == "__builtin_va_list"
}

func (d *Decls) defineTypedef(name string, t *cType) {
	d.typedefs[name] = t
	if t.kind == ckRecord && t.rec.alias == "" {
		t.rec.alias = name
	}
	if t.kind == ckEnum && t.enum.alias == "" {
		t.enum.alias = name
	}
	if !d.builtin {
		d.names = append(d.names, name)
	}
	delete(d.laid, name)
}

func (d *Decls) defineTag(tag string, def *tagDef) {
	d.tags[tag] = def
	if !d.builtin {
		d.names = append(d.names, tag)
	}
}

// Names lists the types the sources declared, sorted.
func (d *Decls) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range d.names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Warnings are the problems met in included headers (the declarations
// concerned were skipped).
func (d *Decls) Warnings() []error { return d.warns }

// NotFoundError says a name is in none of the sources tried.
type NotFoundError struct {
	Kind  string // "struct/union", "type", "enum", "function", "tracepoint"
	Name  string
	Tried []string
}

func (e *NotFoundError) Error() string {
	what := e.Kind
	switch what {
	case "struct/union":
		what = "Unknown struct/union"
	case "type":
		what = "Unknown type"
	case "enum":
		what = "Unknown enum"
	case "function":
		what = "Unknown function"
	default:
		what = "Unknown " + what
	}
	return fmt.Sprintf("%s: '%s' (not in %s)", what, e.Name, joinOr(e.Tried))
}

func joinOr(s []string) string {
	switch len(s) {
	case 0:
		return "any source"
	case 1:
		return s[0]
	case 2:
		return s[0] + " or " + s[1]
	}
	return strings.Join(s[:len(s)-1], ", ") + ", or " + s[len(s)-1]
}

func kindOfName(name string) string {
	if strings.HasPrefix(name, "struct ") || strings.HasPrefix(name, "union ") {
		return "struct/union"
	}
	if strings.HasPrefix(name, "enum ") {
		return "enum"
	}
	return "type"
}

// Lookup lays out a type by C type name: "struct x", "union x", "enum x",
// a typedef or base type name, or any type name ("struct sock *",
// "unsigned long", "char[16]"). Names the sources lack go to Fallback.
func (d *Decls) Lookup(name string) (*types.Type, error) {
	toks, err := lexAll(name, "type name")
	if err != nil {
		return nil, err
	}
	if len(toks) == 1 && toks[0].kind == tIdent && !d.isTypedef(toks[0].text) && !baseWords[toks[0].text] {
		return d.layout(&cType{kind: ckTypedef, name: toks[0].text, pos: "type name"})
	}
	p := &cparser{d: d, toks: toks}
	ct, err := p.typeName()
	if err == nil && p.i < len(toks) {
		err = fmt.Errorf("unexpected '%s'", toks[p.i].text)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid type name %q: %w", name, err)
	}
	return d.layout(ct)
}

// Enumerator returns the value and enum type of an enumerator the C
// sources declare.
func (d *Decls) Enumerator(name string) (int64, *types.Type, bool) {
	c, ok := d.enumerators[name]
	if !ok {
		return 0, nil, false
	}
	return c.value, d.enumType(c.enum), true
}

func (d *Decls) fallback(name string, pos string) (*types.Type, error) {
	if d.Fallback != nil {
		return d.Fallback(name)
	}
	return nil, &NotFoundError{Kind: kindOfName(name), Name: name, Tried: []string{"the C declarations"}}
}

// layout lays out a declared type.
func (d *Decls) layout(t *cType) (*types.Type, error) {
	return d.layoutDepth(t, 0)
}

const maxTypeDepth = 256

func (d *Decls) layoutDepth(t *cType, depth int) (*types.Type, error) {
	if depth > maxTypeDepth {
		return nil, fmt.Errorf("%s: type nested too deeply", t.pos)
	}
	switch t.kind {
	case ckBase:
		if t.name == "void" {
			return types.NoneType, nil
		}
		bt, ok := d.abi.baseType(t.name)
		if !ok {
			return nil, fmt.Errorf("%s: unsupported type '%s'", t.pos, t.name)
		}
		return bt, nil
	case ckTypedef:
		if t.name == "__builtin_va_list" {
			bt, _ := d.abi.baseType(t.name)
			return bt, nil
		}
		if r, ok := d.laid[t.name]; ok {
			return r, nil
		}
		def, ok := d.typedefs[t.name]
		if !ok {
			return d.fallback(t.name, t.pos)
		}
		if d.laying[t.name] {
			return nil, fmt.Errorf("%s: typedef '%s' refers to itself", t.pos, t.name)
		}
		d.laying[t.name] = true
		r, err := d.layoutDepth(def, depth+1)
		delete(d.laying, t.name)
		if err != nil {
			return nil, err
		}
		if al := d.typedefAlign[t.name]; al > 0 {
			c := *r
			c.Align = al
			r = &c
		}
		d.laid[t.name] = r
		return r, nil
	case ckTag:
		def, ok := d.tags[t.name]
		if !ok || (def.rec != nil && !def.rec.complete) {
			return d.fallback(t.name, t.pos)
		}
		if def.enum != nil {
			return d.enumType(def.enum), nil
		}
		return d.record(def.rec, depth)
	case ckRecord:
		return d.record(t.rec, depth)
	case ckEnum:
		return d.enumType(t.enum), nil
	case ckFunc:
		return nil, fmt.Errorf("%s: a function type has no layout", t.pos)
	case ckPtr:
		elem, err := d.pointee(t.elem, depth)
		if err != nil {
			return nil, err
		}
		return types.PointerTo(elem, d.Space), nil
	case ckArray:
		if isPlainChar(d, t.elem) && t.n >= 0 {
			return types.StringType(int(t.n)), nil
		}
		elem, err := d.layoutDepth(t.elem, depth+1)
		if err != nil {
			return nil, err
		}
		if elem.Kind == types.None {
			return nil, fmt.Errorf("%s: array of void", t.pos)
		}
		n := int(t.n)
		if n < 0 {
			n = 0 // a flexible array member
		}
		return types.ArrayOf(elem, n), nil
	}
	return nil, fmt.Errorf("%s: unknown type", t.pos)
}

// isPlainChar reports whether t is plain char (through typedefs): char
// arrays are strings, as in bpftrace.
func isPlainChar(d *Decls, t *cType) bool {
	for i := 0; i < 32 && t != nil; i++ {
		switch t.kind {
		case ckBase:
			return t.name == "char"
		case ckTypedef:
			t = d.typedefs[t.name]
		default:
			return false
		}
	}
	return false
}

// pointee gives the element type of a pointer. A named struct or union is
// a stub (Opaque, Name only, no Fields): pointers are how C types refer to
// themselves, and a stub keeps the types finite. Resolver.Type(stub.Name)
// (or Complete) gives the full record.
func (d *Decls) pointee(t *cType, depth int) (*types.Type, error) {
	for i := 0; i < 32; i++ {
		switch t.kind {
		case ckTag:
			if strings.HasPrefix(t.name, "enum ") {
				return d.layoutDepth(t, depth+1)
			}
			return Stub(t.name), nil
		case ckFunc:
			return nil, nil
		case ckBase:
			if t.name == "void" {
				return nil, nil
			}
		case ckTypedef:
			if def, ok := d.typedefs[t.name]; ok && d.typedefAlign[t.name] == 0 {
				t = def
				continue
			}
			if _, ok := d.typedefs[t.name]; !ok {
				r, err := d.fallback(t.name, t.pos)
				if err != nil {
					return nil, err
				}
				return stubFor(r), nil
			}
		case ckRecord:
			if t.rec.alias != "" {
				return Stub(t.rec.alias), nil
			}
		}
		break
	}
	return d.layoutDepth(t, depth+1)
}

// Stub returns the placeholder for a named record reached through a
// pointer: Kind Record, Name, Opaque, no Fields.
func Stub(name string) *types.Type {
	return &types.Type{Kind: types.Record, Name: name, Opaque: true}
}

// stubFor turns a complete record into its stub (other types stay).
func stubFor(t *types.Type) *types.Type {
	if t != nil && t.Kind == types.Record && t.Name != "" {
		return Stub(t.Name)
	}
	return t
}

// IsStub reports whether t is a record stub to be completed by name.
func IsStub(t *types.Type) bool {
	return t != nil && t.Kind == types.Record && t.Opaque && t.Fields == nil && t.Name != ""
}

func (d *Decls) enumType(e *cEnum) *types.Type {
	if r, ok := d.laid[e]; ok {
		return r
	}
	name := e.tag
	if name == "" {
		name = e.alias
	}
	t := &types.Type{Kind: types.Enum, Size: e.size, Signed: e.signed, Name: name,
		Enumerators: map[int64]string{}}
	for _, c := range e.values {
		if _, dup := t.Enumerators[c.value]; !dup {
			t.Enumerators[c.value] = c.name
		}
	}
	d.laid[e] = t
	return t
}

// record lays out a struct or union with the SysV/AAPCS64 rules: members
// at their alignment, bitfields packed into storage units of their
// declared type without crossing a unit boundary (unless packed), the size
// rounded up to the largest member alignment.
func (d *Decls) record(r *cRecord, depth int) (*types.Type, error) {
	if t, ok := d.laid[r]; ok {
		return t, nil
	}
	name := r.tag
	if name == "" {
		name = r.alias
	}
	if d.laying[r] {
		return nil, fmt.Errorf("%s: %s contains itself", r.pos, nameOr(name, "anonymous record"))
	}
	d.laying[r] = true
	defer delete(d.laying, r)
	t := &types.Type{Kind: types.Record, Name: name}
	bit, size, maxAlign := 0, 0, 1
	for _, m := range r.members {
		if tag := d.incompleteMember(r, m); tag != "" {
			return nil, &IncompleteError{Record: nameOr(name, "anonymous record"), Member: m.name, Tag: tag, Pos: m.pos}
		}
		ft, err := d.layoutDepth(m.typ, depth+1)
		if err != nil {
			return nil, fmt.Errorf("member %s of %s: %w", nameOr(m.name, "(anonymous)"), nameOr(name, "anonymous record"), err)
		}
		if ft.Kind == types.None {
			return nil, fmt.Errorf("%s: member '%s' has type void", m.pos, m.name)
		}
		natural := ft.Alignment()
		fa := natural
		if r.packed || m.packed {
			fa = 1
		}
		if m.align > fa {
			fa = m.align
		}
		if r.union {
			bit = 0
		}
		f := types.Field{Name: m.name, Type: ft}
		if m.bits >= 0 {
			if !ft.IsInteger() {
				return nil, fmt.Errorf("%s: bitfield '%s' has non-integer type %s", m.pos, m.name, ft)
			}
			if m.bits > ft.Size*8 {
				return nil, fmt.Errorf("%s: width of bitfield '%s' (%d bits) exceeds its type (%d bits)", m.pos, m.name, m.bits, ft.Size*8)
			}
			unit := ft.Size * 8
			if m.bits == 0 {
				// An unnamed zero-width bitfield ends the current unit.
				bit = alignUp(bit, natural*8)
				continue
			}
			if m.align > 0 {
				bit = alignUp(bit, m.align*8)
			}
			if !(r.packed || m.packed) && bit/unit != (bit+m.bits-1)/unit {
				bit = alignUp(bit, unit)
			}
			f.Offset, f.BitOff, f.BitWidth = bit/8, bit%8, m.bits
			bit += m.bits
			if m.name != "" {
				maxAlign = max(maxAlign, fa)
			}
		} else {
			bit = alignUp(bit, fa*8)
			f.Offset = bit / 8
			bit += ft.Size * 8
			maxAlign = max(maxAlign, fa)
		}
		if m.name == "" && m.bits < 0 && ft.Kind != types.Record {
			continue
		}
		if m.name != "" || m.bits < 0 {
			t.Fields = append(t.Fields, f)
		}
		size = max(size, (bit+7)/8)
	}
	if r.align > maxAlign {
		maxAlign = r.align
	}
	t.Size = alignUp(size, maxAlign)
	t.Align = maxAlign
	d.laid[r] = t
	return t, nil
}

func nameOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// Macro evaluates an object-like #define (from the script or an included
// header) as an integer constant: `#define EPERM 1`, `#define X (A << 2)`.
// bpftrace lets scripts use such macros as identifiers.
func (d *Decls) Macro(name string) (int64, bool) {
	if d.pp == nil {
		return 0, false
	}
	m := d.pp.macros[name]
	if m == nil || m.fn || len(m.body) == 0 {
		return 0, false
	}
	exp := d.pp.expand([]ctok{{kind: tIdent, text: name}})
	if len(exp) == 0 {
		return 0, false
	}
	ev := (&cparser{d: d}).evaluator(exp)
	v, err := ev.expr()
	if err != nil || ev.i < len(exp) {
		return 0, false
	}
	return v, true
}

// IncompleteError is a struct or union member, declared in the script, whose
// type is a struct/union the C sources only name: as with clang in
// bpftrace, a script's definitions never take a member's record from BTF
// (that would silently mix two definitions of the kernel's types).
type IncompleteError struct {
	Record, Member, Tag string
	Pos                 string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("definitions: error: field '%s' of %s has incomplete type '%s'", e.Member, e.Record, e.Tag)
}

// incompleteMember returns the tag of member m's record type (through
// arrays, not pointers) when m belongs to a script record that redefines a
// kernel struct (by name, in BTF) and neither the script nor its headers
// define the member's record; "" otherwise.
//
// bpftrace drops BTF for the script's definitions as soon as the BTF it
// pulls in for the program's kernel types conflicts with the user's own, so a
// redefined kernel struct must bring every record it embeds. (bpftrace's
// conflict needs the program to use the kernel type too, as through curtask
// or a cast: redefining a kernel struct is done for that.) Other script
// records take what they embed from BTF.
func (d *Decls) incompleteMember(r *cRecord, m cMember) string {
	if d.Kernel == nil || r.tag == "" || !strings.HasPrefix(m.pos, "script:") {
		return ""
	}
	t := m.typ
	for t != nil && t.kind == ckArray {
		t = t.elem
	}
	if t == nil || t.kind != ckTag || strings.HasPrefix(t.name, "enum ") {
		return ""
	}
	if def, ok := d.tags[t.name]; ok && (def.rec == nil || def.rec.complete) {
		return ""
	}
	if !d.redefinesKernel(r.tag) {
		return ""
	}
	return t.name
}

// redefinesKernel reports whether kernel BTF also defines the script's
// record tag (memoized: BTF lookups convert the whole type).
func (d *Decls) redefinesKernel(tag string) bool {
	if v, ok := d.kernelMemo[tag]; ok {
		return v
	}
	if d.kernelMemo == nil {
		d.kernelMemo = map[string]bool{}
	}
	v := d.Kernel(tag)
	d.kernelMemo[tag] = v
	return v
}

// ScriptRecords lists the named structs and unions the script itself
// defines (not included headers), in declaration order.
func (d *Decls) ScriptRecords() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range d.names {
		def, ok := d.tags[n]
		if !ok || seen[n] || def.rec == nil || !def.rec.complete || !strings.HasPrefix(def.rec.pos, "script:") {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}
