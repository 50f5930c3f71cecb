// Command mkfixture writes the layout package's test fixtures from the
// running kernel's BTF:
//
//	mkfixture -btf ../../testdata/vmlinux-subset.btf
//	mkfixture -header ../../testdata/kernel_structs.h struct1 struct2 ...
//
// The BTF fixture holds a few real types, with pointers to types outside
// the set turned into forward declarations (task_struct is cut down to
// chosen members at their real offsets), so offline tests need no kernel.
// The header is C text for the named structs and what they embed by value,
// printed from BTF (pointers as "struct x *" or "void *"; explicit padding
// where the kernel's source had alignment attributes BTF does not record).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"
)

func main() {
	btfOut := flag.String("btf", "", "write a BTF fixture here")
	hdrOut := flag.String("header", "", "write C declarations of the named structs here")
	flag.Parse()
	spec, err := btf.LoadSpec("/sys/kernel/btf/vmlinux")
	if err != nil {
		log.Fatal(err)
	}
	if *btfOut != "" {
		if err := writeFixture(spec, *btfOut); err != nil {
			log.Fatal(err)
		}
	}
	if *hdrOut != "" {
		if err := writeHeader(spec, *hdrOut, flag.Args()); err != nil {
			log.Fatal(err)
		}
	}
}

// --- BTF fixture ---

var keepStructs = []string{"list_head", "sock_common", "qstr", "path", "callback_head", "rb_node"}
var taskMembers = []string{"__state", "flags", "prio", "pid", "tgid", "real_parent", "parent", "comm", "mm", "cred"}

type trimmer struct {
	keep map[string]btf.Type // named structs kept whole (by "struct x")
	memo map[btf.Type]btf.Type
}

func (tr *trimmer) trim(t btf.Type) btf.Type {
	if r, ok := tr.memo[t]; ok {
		return r
	}
	var r btf.Type
	switch x := t.(type) {
	case *btf.Pointer:
		p := &btf.Pointer{}
		tr.memo[t] = p
		target := x.Target
		for {
			switch y := target.(type) {
			case *btf.Const:
				target = y.Type
				continue
			case *btf.Volatile:
				target = y.Type
				continue
			}
			break
		}
		switch y := target.(type) {
		case *btf.Struct:
			if k, ok := tr.keep["struct "+y.Name]; ok {
				p.Target = k
			} else {
				p.Target = &btf.Fwd{Name: y.Name, Kind: btf.FwdStruct}
			}
		case *btf.Union:
			p.Target = &btf.Fwd{Name: y.Name, Kind: btf.FwdUnion}
		case *btf.Typedef:
			if _, ok := btf.UnderlyingType(y).(*btf.Int); ok {
				p.Target = tr.trim(y)
			} else {
				p.Target = &btf.Void{}
			}
		default:
			p.Target = tr.trim(target)
		}
		return p
	case *btf.Struct:
		s := &btf.Struct{Name: x.Name, Size: x.Size}
		tr.memo[t] = s
		for _, m := range x.Members {
			m.Type = tr.trim(m.Type)
			s.Members = append(s.Members, m)
		}
		r = s
	case *btf.Union:
		u := &btf.Union{Name: x.Name, Size: x.Size}
		tr.memo[t] = u
		for _, m := range x.Members {
			m.Type = tr.trim(m.Type)
			u.Members = append(u.Members, m)
		}
		r = u
	case *btf.Typedef:
		td := &btf.Typedef{Name: x.Name}
		tr.memo[t] = td
		td.Type = tr.trim(x.Type)
		r = td
	case *btf.Const:
		r = &btf.Const{Type: tr.trim(x.Type)}
	case *btf.Volatile:
		r = &btf.Volatile{Type: tr.trim(x.Type)}
	case *btf.Array:
		r = &btf.Array{Index: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}, Type: tr.trim(x.Type), Nelems: x.Nelems}
	case *btf.FuncProto:
		fp := &btf.FuncProto{Return: tr.trim(x.Return)}
		for _, p := range x.Params {
			fp.Params = append(fp.Params, btf.FuncParam{Name: p.Name, Type: tr.trim(p.Type)})
		}
		r = fp
	case *btf.Func:
		r = &btf.Func{Name: x.Name, Type: tr.trim(x.Type), Linkage: x.Linkage}
	default: // Int, Enum, Float, Void, Fwd: no references out
		r = t
	}
	tr.memo[t] = r
	return r
}

func one[T btf.Type](spec *btf.Spec, name string) T {
	var t T
	if err := spec.TypeByName(name, &t); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return t
}

func writeFixture(spec *btf.Spec, out string) error {
	tr := &trimmer{keep: map[string]btf.Type{}, memo: map[btf.Type]btf.Type{}}
	// task_struct, cut down: the chosen members at their real offsets.
	task := one[*btf.Struct](spec, "task_struct")
	small := &btf.Struct{Name: "task_struct", Size: task.Size}
	tr.keep["struct task_struct"] = small
	var roots []btf.Type
	for _, n := range keepStructs {
		s := one[*btf.Struct](spec, n)
		c := &btf.Struct{Name: s.Name, Size: s.Size}
		tr.keep["struct "+n] = c
		defer func(s *btf.Struct) {}(s)
	}
	for _, n := range keepStructs {
		s := one[*btf.Struct](spec, n)
		c := tr.keep["struct "+n].(*btf.Struct)
		tr.memo[s] = c
		for _, m := range s.Members {
			m.Type = tr.trim(m.Type)
			c.Members = append(c.Members, m)
		}
		roots = append(roots, c)
	}
	want := map[string]bool{}
	for _, n := range taskMembers {
		want[n] = true
	}
	for _, m := range task.Members {
		if want[m.Name] {
			m.Type = tr.trim(m.Type)
			small.Members = append(small.Members, m)
		}
	}
	roots = append(roots, small)
	for _, n := range []string{"pid_t", "u32", "__u64", "umode_t"} {
		roots = append(roots, tr.trim(one[*btf.Typedef](spec, n)))
	}
	for _, n := range []string{"pid_type", "sock_type"} {
		if e, err := findEnum(spec, n); err == nil {
			roots = append(roots, e)
		}
	}
	for _, n := range []string{"vfs_read", "do_sys_openat2"} {
		roots = append(roots, tr.trim(one[*btf.Func](spec, n)))
	}
	roots = append(roots, tr.trim(one[*btf.Typedef](spec, "btf_trace_sched_switch")))
	b, err := btf.NewBuilder(roots, nil)
	if err != nil {
		return err
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", out, len(raw))
	return os.WriteFile(out, raw, 0o644)
}

func findEnum(spec *btf.Spec, name string) (*btf.Enum, error) {
	var e *btf.Enum
	err := spec.TypeByName(name, &e)
	return e, err
}

// --- C header ---

type dumper struct {
	out     strings.Builder
	emitted map[btf.Type]bool
	pad     int
}

func writeHeader(spec *btf.Spec, out string, names []string) error {
	d := &dumper{emitted: map[btf.Type]bool{}}
	d.out.WriteString("/* Generated by compiler/layout/internal/mkfixture from this machine's BTF. */\n\n")
	for _, n := range names {
		s, err := spec.AnyTypesByName(n)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		found := false
		for _, t := range s {
			if _, ok := t.(*btf.Struct); ok {
				d.define(t)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: no struct", n)
		}
	}
	return os.WriteFile(out, []byte(d.out.String()), 0o644)
}

func strip(t btf.Type) btf.Type {
	for {
		switch x := t.(type) {
		case *btf.Const:
			t = x.Type
		case *btf.Volatile:
			t = x.Type
		case *btf.Restrict:
			t = x.Type
		case *btf.TypeTag:
			t = x.Type
		default:
			return t
		}
	}
}

// decl spells a declaration of name with type t, defining what t embeds.
func (d *dumper) decl(t btf.Type, name string) string {
	switch x := strip(t).(type) {
	case *btf.Typedef:
		d.define(x)
		return x.Name + " " + name
	case *btf.Int:
		return x.Name + " " + name
	case *btf.Float:
		return x.Name + " " + name
	case *btf.Enum:
		if x.Name == "" {
			return d.enumBody(x) + " " + name
		}
		d.define(x)
		return "enum " + x.Name + " " + name
	case *btf.Struct:
		if x.Name == "" {
			return d.body("struct", x.Size, x.Members) + " " + name
		}
		d.define(x)
		return "struct " + x.Name + " " + name
	case *btf.Union:
		if x.Name == "" {
			return d.body("union", x.Size, x.Members) + " " + name
		}
		d.define(x)
		return "union " + x.Name + " " + name
	case *btf.Pointer:
		switch y := strip(x.Target).(type) {
		case *btf.Struct:
			if y.Name != "" {
				return "struct " + y.Name + " *" + name
			}
		case *btf.Union:
			if y.Name != "" {
				return "union " + y.Name + " *" + name
			}
		case *btf.Fwd:
			kw := "struct"
			if y.Kind == btf.FwdUnion {
				kw = "union"
			}
			return kw + " " + y.Name + " *" + name
		}
		return "void *" + name
	case *btf.Array:
		return d.decl(x.Type, fmt.Sprintf("%s[%d]", name, x.Nelems))
	case *btf.Void:
		return "void " + name
	}
	return "void *" + name
}

func (d *dumper) define(t btf.Type) {
	if d.emitted[t] {
		return
	}
	d.emitted[t] = true
	var text string
	switch x := t.(type) {
	case *btf.Typedef:
		text = "typedef " + d.decl(x.Type, x.Name) + ";\n\n"
	case *btf.Enum:
		text = d.enumBody(x) + ";\n\n"
	case *btf.Struct:
		text = d.body("struct "+x.Name, x.Size, x.Members) + ";\n\n"
	case *btf.Union:
		text = d.body("union "+x.Name, x.Size, x.Members) + ";\n\n"
	}
	d.out.WriteString(text)
}

func (d *dumper) enumBody(e *btf.Enum) string {
	var b strings.Builder
	b.WriteString("enum ")
	if e.Name != "" {
		b.WriteString(e.Name + " ")
	}
	b.WriteString("{")
	for i, v := range e.Values {
		if i > 0 {
			b.WriteString(",")
		}
		if e.Signed {
			fmt.Fprintf(&b, " %s = %d", v.Name, int64(v.Value))
		} else {
			fmt.Fprintf(&b, " %s = %dULL", v.Name, v.Value)
		}
	}
	b.WriteString(" }")
	if e.Size < 4 {
		// The kernel declares some enums __packed: BTF keeps only the size.
		b.WriteString(" __attribute__((packed))")
	}
	return b.String()
}

func sizeAlign(t btf.Type) (int, int) {
	size, err := btf.Sizeof(t)
	if err != nil {
		return 0, 1
	}
	switch x := strip(t).(type) {
	case *btf.Typedef:
		return sizeAlign(x.Type)
	case *btf.Array:
		_, a := sizeAlign(x.Type)
		return size, a
	case *btf.Struct:
		return size, membersAlign(x.Members)
	case *btf.Union:
		return size, membersAlign(x.Members)
	}
	return size, min(max(size, 1), 16)
}

func membersAlign(ms []btf.Member) int {
	a := 1
	for _, m := range ms {
		_, ma := sizeAlign(m.Type)
		a = max(a, ma)
	}
	return a
}

// body prints a struct or union body. Where BTF's offsets show padding the
// natural layout would not produce (alignment attributes in the kernel
// source), it adds explicit padding members.
func (d *dumper) body(head string, size uint32, ms []btf.Member) string {
	var b strings.Builder
	b.WriteString(head + " {\n")
	union := strings.HasPrefix(head, "union")
	bit, maxAlign := 0, 1
	packed := false
	var lines []string
	for _, m := range ms {
		msize, malign := sizeAlign(m.Type)
		off := int(m.Offset)
		if !union && m.BitfieldSize == 0 {
			natural := alignUp(bit, malign*8)
			if off%(malign*8) != 0 {
				packed = true
				natural = bit
			}
			if off > natural {
				d.pad++
				lines = append(lines, fmt.Sprintf("\tunsigned char __pad%d[%d];", d.pad, (off-bit)/8))
			}
		}
		if !union && m.BitfieldSize > 0 && off > bit {
			unit := msize * 8
			natural := bit
			if bit/unit != (bit+int(m.BitfieldSize)-1)/unit {
				natural = alignUp(bit, unit)
			}
			if off > natural {
				if off%8 == 0 && bit%8 == 0 {
					d.pad++
					lines = append(lines, fmt.Sprintf("\tunsigned char __pad%d[%d];", d.pad, (off-bit)/8))
				} else {
					_, tn := splitDecl(d.decl(m.Type, ""))
					lines = append(lines, fmt.Sprintf("\t%s : %d;", tn, off-bit))
				}
			}
		}
		decl := d.decl(m.Type, m.Name)
		if m.BitfieldSize > 0 {
			decl += fmt.Sprintf(" : %d", m.BitfieldSize)
			bit = off + int(m.BitfieldSize)
		} else {
			bit = off + msize*8
		}
		if union {
			bit = 0
		}
		maxAlign = max(maxAlign, malign)
		lines = append(lines, "\t"+indent(decl)+";")
	}
	end := (bit + 7) / 8
	if union {
		end = 0
	}
	if !packed && alignUp(end, maxAlign) > int(size) {
		packed = true
	}
	if !union && int(size) > alignUp(end, maxAlign) && !packed {
		d.pad++
		lines = append(lines, fmt.Sprintf("\tunsigned char __pad%d[%d];", d.pad, int(size)-end))
	}
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n}")
	if packed {
		b.WriteString(" __attribute__((packed))")
	}
	return b.String()
}

func splitDecl(s string) (string, string) { return "", strings.TrimSpace(s) }

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n\t") }

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

var _ = sort.Strings
