package runtime

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// isTypeSearch reports whether a -l pattern names kernel types ("struct
// task_struct", "union *", "enum pid_type") rather than probes.
func isTypeSearch(pattern string) bool {
	for _, k := range []string{"struct ", "union ", "enum "} {
		if strings.HasPrefix(pattern, k) {
			return true
		}
	}
	return false
}

// listTypes prints the kernel's named structs, unions or enums matching
// pattern (only '*' is a wildcard, as in bpftrace 0.17), sorted; verbose
// prints each one's C definition as bpftrace 0.17 prints it (libbpf's
// btf_dump: anonymous members inline, explicit padding, packed marks).
func listTypes(w io.Writer, pattern string, verbose bool) error {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return fmt.Errorf("listing kernel types needs the kernel's BTF: %v", err)
	}
	byName := map[string]btf.Type{}
	for t, err := range spec.All() {
		if err != nil {
			return err
		}
		var name string
		switch t := t.(type) {
		case *btf.Struct:
			name = "struct " + t.Name
		case *btf.Union:
			name = "union " + t.Name
		case *btf.Enum:
			if enumNeeds64(t) {
				continue // bpftrace 0.17 lists none of these
			}
			name = "enum " + t.Name
		default:
			continue
		}
		if t.TypeName() == "" || !starGlob(pattern, name) {
			continue
		}
		if _, dup := byName[name]; !dup {
			byName[name] = t
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !verbose {
			fmt.Fprintln(w, n)
			continue
		}
		if emptyComposite(byName[n]) {
			continue // bpftrace 0.17 prints no definition of these
		}
		var b strings.Builder
		d := &cDumper{w: &b}
		d.def(byName[n], 0)
		fmt.Fprintf(w, "%s;\n\n", b.String())
	}
	return nil
}

// starGlob matches s against p where only '*' is special.
func starGlob(p, s string) bool {
	parts := strings.Split(p, "*")
	if len(parts) == 1 {
		return p == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, last)
}

// cDumper writes BTF types as C, the way libbpf 1.1's btf_dump does
// (which bpftrace 0.17 uses for `-lv 'struct NAME'`).
type cDumper struct{ w *strings.Builder }

const ptrSize = 8

func (d *cDumper) printf(format string, args ...any) { fmt.Fprintf(d.w, format, args...) }

func pfx(lvl int) string { return strings.Repeat("\t", lvl) }

// def writes the definition of a struct, union or enum.
func (d *cDumper) def(t btf.Type, lvl int) {
	switch t := t.(type) {
	case *btf.Struct:
		d.composite(true, t.Name, t.Size, t.Members, t, lvl)
	case *btf.Union:
		d.composite(false, t.Name, t.Size, t.Members, t, lvl)
	case *btf.Enum:
		d.enum(t, lvl)
	}
}

func (d *cDumper) composite(isStruct bool, name string, size uint32, members []btf.Member, t btf.Type, lvl int) {
	align := alignOf(t)
	packed := isStruct && structPacked(size, members)
	kw := "union"
	if isStruct {
		kw = "struct"
	}
	sep := ""
	if name != "" {
		sep = " "
	}
	d.printf("%s%s%s {", kw, sep, name)
	off := 0
	prevBitfield := false
	for _, m := range members {
		mSz := int(m.BitfieldSize)
		mOff := int(m.Offset)
		mAlign := 1
		if !packed {
			mAlign = alignOf(m.Type)
		}
		inBitfield := prevBitfield && mSz != 0
		d.bitPadding(off, mOff, mAlign, inBitfield, lvl+1)
		d.printf("\n%s", pfx(lvl+1))
		d.decl(m.Type, m.Name, lvl+1)
		if mSz != 0 {
			d.printf(": %d", mSz)
			off = mOff + mSz
			prevBitfield = true
		} else {
			sz, err := btf.Sizeof(m.Type)
			if err != nil || sz < 0 {
				sz = 0
			}
			off = mOff + sz*8
			prevBitfield = false
		}
		d.printf(";")
	}
	if isStruct {
		d.bitPadding(off, int(size)*8, align, false, lvl+1)
	}
	if len(members) > 0 || size > 0 {
		d.printf("\n%s}", pfx(lvl))
	} else {
		d.printf("}")
	}
	if packed {
		d.printf(" __attribute__((packed))")
	}
}

// bitPadding writes explicit padding from bit curOff to nextOff as
// btf_dump does: the widest of long/int/short/char that reaches an
// aligned offset, a ": 0" mark where the compiler would not align by
// itself, then full-width fillers and one narrow remainder.
func (d *cDumper) bitPadding(curOff, nextOff, nextAlign int, inBitfield bool, lvl int) {
	pads := []struct {
		name string
		bits int
	}{{"long", ptrSize * 8}, {"int", 32}, {"short", 16}, {"char", 8}}
	if curOff >= nextOff {
		return
	}
	roundup := func(x, y int) int { return (x + y - 1) / y * y }
	var newOff, padBits int
	var padType string
	for _, p := range pads {
		padBits, padType = p.bits, p.name
		newOff = roundup(curOff, padBits)
		if newOff <= nextOff {
			break
		}
	}
	if newOff > curOff && newOff <= nextOff {
		if inBitfield ||
			(newOff == nextOff && roundup(curOff, nextAlign*8) != newOff) ||
			(newOff != nextOff && nextOff-newOff <= newOff-curOff) {
			n := 0
			if inBitfield {
				n = newOff - curOff
			}
			d.printf("\n%s%s: %d;", pfx(lvl), padType, n)
		}
		curOff = newOff
	}
	for curOff != nextOff {
		bits := min(nextOff-curOff, padBits)
		if bits == padBits {
			d.printf("\n%s%s: %d;", pfx(lvl), padType, padBits)
			curOff += bits
			continue
		}
		for i := len(pads) - 1; i >= 0; i-- {
			padType, padBits = pads[i].name, pads[i].bits
			if padBits < bits {
				continue
			}
			d.printf("\n%s%s: %d;", pfx(lvl), padType, bits)
			curOff += bits
			break
		}
	}
}

func (d *cDumper) enum(t *btf.Enum, lvl int) {
	sep := ""
	if t.Name != "" {
		sep = " "
	}
	d.printf("enum%s%s", sep, t.Name)
	if len(t.Values) == 0 {
		return
	}
	d.printf(" {")
	// A size-8 enum is BTF_KIND_ENUM64 in today's kernels: values with
	// LL/ULL suffixes, and mode(word) when none needs the upper half.
	enum64 := t.Size == 8
	hi := false
	for _, v := range t.Values {
		switch {
		case enum64 && t.Signed:
			d.printf("\n%s%s = %dLL,", pfx(lvl+1), v.Name, int64(v.Value))
		case enum64:
			d.printf("\n%s%s = %dULL,", pfx(lvl+1), v.Name, v.Value)
		case t.Signed:
			d.printf("\n%s%s = %d,", pfx(lvl+1), v.Name, int32(v.Value))
		default:
			d.printf("\n%s%s = %d,", pfx(lvl+1), v.Name, uint32(v.Value))
		}
		if v.Value>>32 != 0 {
			hi = true
		}
	}
	d.printf("\n%s}", pfx(lvl))
	switch {
	case t.Size == 1:
		d.printf(" __attribute__((mode(byte)))")
	case enum64 && !hi:
		d.printf(" __attribute__((mode(word)))")
	}
}

// decl writes a declaration of name with type t (btf_dump_emit_type_decl):
// the chain of pointers, qualifiers, arrays and function prototypes down
// to a base type, written base first.
func (d *cDumper) decl(t btf.Type, name string, lvl int) {
	var stack []btf.Type
	for {
		stack = append(stack, t)
		next := btf.Type(nil)
		switch x := t.(type) {
		case *btf.Pointer:
			next = x.Target
		case *btf.Volatile:
			next = x.Type
		case *btf.Const:
			next = x.Type
		case *btf.Restrict:
			next = x.Type
		case *btf.TypeTag:
			next = x.Type
		case *btf.FuncProto:
			next = x.Return
		case *btf.Array:
			next = x.Type
		}
		if next == nil {
			break
		}
		t = next
	}
	d.chain(&stack, name, lvl)
}

func isMod(t btf.Type) bool {
	switch t.(type) {
	case *btf.Volatile, *btf.Const, *btf.Restrict:
		return true
	}
	return false
}

// mods writes the qualifiers on top of the stack before a base type.
func (d *cDumper) mods(stack *[]btf.Type) {
	for len(*stack) > 0 {
		switch (*stack)[len(*stack)-1].(type) {
		case *btf.Volatile:
			d.printf("volatile ")
		case *btf.Const:
			d.printf("const ")
		case *btf.Restrict:
			d.printf("restrict ")
		default:
			return
		}
		*stack = (*stack)[:len(*stack)-1]
	}
}

func (d *cDumper) dropMods(stack *[]btf.Type) {
	for len(*stack) > 0 && isMod((*stack)[len(*stack)-1]) {
		*stack = (*stack)[:len(*stack)-1]
	}
}

func (d *cDumper) name(name string, lastWasPtr bool) {
	if name != "" && !lastWasPtr {
		d.printf(" ")
	}
	d.printf("%s", name)
}

func (d *cDumper) chain(stack *[]btf.Type, fname string, lvl int) {
	lastWasPtr := true
	for len(*stack) > 0 {
		t := (*stack)[len(*stack)-1]
		*stack = (*stack)[:len(*stack)-1]
		isPtr := false
		switch x := t.(type) {
		case *btf.Void:
			d.mods(stack)
			d.printf("void")
		case *btf.Int:
			d.mods(stack)
			d.printf("%s", x.Name)
		case *btf.Float:
			d.mods(stack)
			d.printf("%s", x.Name)
		case *btf.Struct:
			d.mods(stack)
			if x.Name == "" {
				d.def(x, lvl)
			} else {
				d.printf("struct %s", x.Name)
			}
		case *btf.Union:
			d.mods(stack)
			if x.Name == "" {
				d.def(x, lvl)
			} else {
				d.printf("union %s", x.Name)
			}
		case *btf.Enum:
			d.mods(stack)
			if x.Name == "" {
				d.enum(x, lvl)
			} else {
				d.printf("enum %s", x.Name)
			}
		case *btf.Fwd:
			d.mods(stack)
			kw := "struct"
			if x.Kind == btf.FwdUnion {
				kw = "union"
			}
			d.printf("%s %s", kw, x.Name)
		case *btf.Typedef:
			d.mods(stack)
			d.printf("%s", x.Name)
		case *btf.Pointer:
			if lastWasPtr {
				d.printf("*")
			} else {
				d.printf(" *")
			}
			isPtr = true
		case *btf.Volatile:
			d.printf(" volatile")
		case *btf.Const:
			d.printf(" const")
		case *btf.Restrict:
			d.printf(" restrict")
		case *btf.TypeTag:
			d.mods(stack)
			d.printf(" __attribute__((btf_type_tag(\"%s\")))", x.Value)
		case *btf.Array:
			d.dropMods(stack)
			if len(*stack) == 0 {
				d.name(fname, lastWasPtr)
				d.printf("[%d]", x.Nelems)
				return
			}
			_, multidim := (*stack)[len(*stack)-1].(*btf.Array)
			if fname != "" && !lastWasPtr {
				d.printf(" ")
			}
			if !multidim {
				d.printf("(")
			}
			d.chain(stack, fname, lvl)
			if !multidim {
				d.printf(")")
			}
			d.printf("[%d]", x.Nelems)
			return
		case *btf.FuncProto:
			d.dropMods(stack)
			if len(*stack) > 0 {
				d.printf(" (")
				d.chain(stack, fname, lvl)
				d.printf(")")
			} else {
				d.name(fname, lastWasPtr)
			}
			d.printf("(")
			ps := x.Params
			if len(ps) == 0 || (len(ps) == 1 && isVoidParam(ps[0].Type)) {
				d.printf("void)")
				return
			}
			for i, p := range ps {
				if i > 0 {
					d.printf(", ")
				}
				if i == len(ps)-1 && isVoidParam(p.Type) {
					d.printf("...")
					break
				}
				d.decl(p.Type, p.Name, lvl)
			}
			d.printf(")")
			return
		}
		lastWasPtr = isPtr
	}
	d.name(fname, lastWasPtr)
}

func isVoidParam(t btf.Type) bool {
	if t == nil {
		return true
	}
	_, ok := t.(*btf.Void)
	return ok
}

// alignOf is btf__align_of: a scalar's size (at most a pointer's), a
// composite's largest member alignment, 1 for a packed one.
func alignOf(t btf.Type) int {
	switch x := t.(type) {
	case *btf.Int:
		return min(ptrSize, int(x.Size))
	case *btf.Enum:
		return min(ptrSize, int(x.Size))
	case *btf.Float:
		return min(ptrSize, int(x.Size))
	case *btf.Pointer:
		return ptrSize
	case *btf.Typedef:
		return alignOf(x.Type)
	case *btf.Volatile:
		return alignOf(x.Type)
	case *btf.Const:
		return alignOf(x.Type)
	case *btf.Restrict:
		return alignOf(x.Type)
	case *btf.TypeTag:
		return alignOf(x.Type)
	case *btf.Array:
		return alignOf(x.Type)
	case *btf.Struct:
		return compositeAlign(x.Size, x.Members)
	case *btf.Union:
		return compositeAlign(x.Size, x.Members)
	}
	return 0
}

func compositeAlign(size uint32, members []btf.Member) int {
	maxAlign := 1
	for _, m := range members {
		a := alignOf(m.Type)
		if a <= 0 {
			return a
		}
		maxAlign = max(maxAlign, a)
		if m.BitfieldSize == 0 && int(m.Offset)%(8*a) != 0 {
			return 1
		}
	}
	if int(size)%maxAlign != 0 {
		return 1
	}
	return maxAlign
}

// structPacked is btf_is_struct_packed: a member off its natural
// alignment, or a size that is not a multiple of the alignment.
func structPacked(size uint32, members []btf.Member) bool {
	maxAlign := 1
	for _, m := range members {
		a := alignOf(m.Type)
		if a != 0 && m.BitfieldSize == 0 && int(m.Offset)%(8*a) != 0 {
			return true
		}
		maxAlign = max(maxAlign, a)
	}
	return int(size)%maxAlign != 0
}

// enumNeeds64 reports an enum with a value that needs more than 32 bits.
func enumNeeds64(t *btf.Enum) bool {
	for _, v := range t.Values {
		if t.Signed && (int64(v.Value) < math.MinInt32 || int64(v.Value) > math.MaxInt32) ||
			!t.Signed && v.Value>>32 != 0 {
			return true
		}
	}
	return false
}

// emptyComposite: a struct or union without members, or a packed struct:
// bpftrace 0.17 prints no definition for them.
func emptyComposite(t btf.Type) bool {
	switch t := t.(type) {
	case *btf.Struct:
		return len(t.Members) == 0 || structPacked(t.Size, t.Members)
	case *btf.Union:
		return len(t.Members) == 0
	}
	return false
}
