package ktypes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
	"github.com/gotrace/gotrace/lang/types"
)

// DefaultBTFPath is the running kernel's BTF.
const DefaultBTFPath = "/sys/kernel/btf/vmlinux"

// btfSource converts BTF types to gotrace types. Nothing is read until the
// first lookup; module BTF is read only when vmlinux lacks a name.
type btfSource struct {
	path    string
	modDir  string // where module BTF lives ("" when path is not the kernel's)
	charSig bool

	mu      sync.Mutex
	loaded  bool
	spec    *btf.Spec
	err     error
	modules []*btf.Spec
	modName []string // modules[i]'s module name (its file name)
	modErr  error
	modDone bool
	conv    map[btf.Type]*types.Type
	enums   map[string]enumHit // enumerator name → value and type, built on demand
}

type enumHit struct {
	value int64
	enum  *btf.Enum
}

func newBTFSource(path string, charSigned bool) *btfSource {
	b := &btfSource{path: path, charSig: charSigned, conv: map[btf.Type]*types.Type{}}
	if path == "" || path == DefaultBTFPath {
		b.path, b.modDir = DefaultBTFPath, filepath.Dir(DefaultBTFPath)
	}
	return b
}

func (b *btfSource) describe() string {
	if b.path == DefaultBTFPath {
		return "kernel BTF"
	}
	return "BTF " + b.path
}

// load reads the base BTF once. Callers hold b.mu.
func (b *btfSource) load() (*btf.Spec, error) {
	if !b.loaded {
		b.loaded = true
		b.spec, b.err = btf.LoadSpec(b.path)
		if b.err != nil {
			b.err = fmt.Errorf("loading BTF from %s: %w", b.path, b.err)
		}
	}
	return b.spec, b.err
}

// loadModules reads every module's split BTF once. Callers hold b.mu.
func (b *btfSource) loadModules(base *btf.Spec) []*btf.Spec {
	if b.modDone || b.modDir == "" {
		return b.modules
	}
	b.modDone = true
	ents, err := os.ReadDir(b.modDir)
	if err != nil {
		b.modErr = err
		return nil
	}
	for _, e := range ents {
		if e.Name() == "vmlinux" || e.IsDir() {
			continue
		}
		s, err := btf.LoadSplitSpec(filepath.Join(b.modDir, e.Name()), base)
		if err != nil {
			b.modErr = errors.Join(b.modErr, fmt.Errorf("module %s: %w", e.Name(), err))
			continue
		}
		b.modules = append(b.modules, s)
		b.modName = append(b.modName, e.Name())
	}
	return b.modules
}

// Loaded reports whether BTF has been read.
func (b *btfSource) Loaded() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.loaded
}

// find returns the BTF types named name (vmlinux first, then modules)
// accepted by want.
func (b *btfSource) find(name string, want func(btf.Type) bool) (btf.Type, error) {
	spec, err := b.load()
	if err != nil {
		return nil, err
	}
	pick := func(s *btf.Spec) btf.Type {
		ts, _ := s.AnyTypesByName(name)
		var fwd btf.Type
		for _, t := range ts {
			if want(t) {
				if _, isFwd := t.(*btf.Fwd); isFwd {
					fwd = t
					continue
				}
				return t
			}
		}
		return fwd
	}
	if t := pick(spec); t != nil {
		if _, isFwd := t.(*btf.Fwd); !isFwd {
			return t, nil
		}
	}
	for _, m := range b.loadModules(spec) {
		if t := pick(m); t != nil {
			return t, nil
		}
	}
	return nil, nil
}

// lookup resolves "struct x", "union x", "enum x" or a typedef/base name.
// A nil type and nil error mean "not in BTF".
func (b *btfSource) lookup(name string) (*types.Type, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kind, bare := "", name
	for _, k := range []string{"struct ", "union ", "enum "} {
		if strings.HasPrefix(name, k) {
			kind, bare = strings.TrimSpace(k), strings.TrimSpace(name[len(k):])
		}
	}
	t, err := b.find(bare, func(t btf.Type) bool {
		switch t := t.(type) {
		case *btf.Struct:
			return kind == "struct"
		case *btf.Union:
			return kind == "union"
		case *btf.Enum:
			return kind == "enum"
		case *btf.Fwd:
			return (kind == "struct" && t.Kind == btf.FwdStruct) || (kind == "union" && t.Kind == btf.FwdUnion)
		case *btf.Typedef, *btf.Int, *btf.Float:
			return kind == ""
		}
		return false
	})
	if err != nil || t == nil {
		return nil, err
	}
	if _, isFwd := t.(*btf.Fwd); isFwd {
		return nil, nil
	}
	return b.convert(t, "", 0)
}

const maxBTFDepth = 64

// convert turns a BTF type into a gotrace type. Named structs and unions
// reached through pointers become stubs (see Stub), so converting
// task_struct does not convert the kernel. alias names an anonymous
// record or enum reached through a typedef.
func (b *btfSource) convert(t btf.Type, alias string, depth int) (*types.Type, error) {
	if depth > maxBTFDepth {
		return nil, fmt.Errorf("BTF type %s nested too deeply", t.TypeName())
	}
	if r, ok := b.conv[t]; ok {
		return r, nil
	}
	var r *types.Type
	switch t := t.(type) {
	case *btf.Void:
		return types.NoneType, nil
	case *btf.Int:
		switch {
		case t.Encoding&btf.Bool != 0:
			r = types.IntType(int(t.Size), false)
		case t.Name == "char":
			r = types.IntType(1, b.charSig)
		case t.Size > 8:
			r = types.ArrayOf(types.U8, int(t.Size))
			r.Align = 16
		default:
			r = types.IntType(int(t.Size), t.Encoding&btf.Signed != 0)
		}
	case *btf.Float:
		r = &types.Type{Kind: types.Int, Size: int(t.Size), Align: int(min(t.Size, 16))}
	case *btf.Typedef:
		return b.convert(t.Type, t.Name, depth+1)
	case *btf.Const:
		return b.convert(t.Type, alias, depth+1)
	case *btf.Volatile:
		return b.convert(t.Type, alias, depth+1)
	case *btf.Restrict:
		return b.convert(t.Type, alias, depth+1)
	case *btf.TypeTag:
		return b.convert(t.Type, alias, depth+1)
	case *btf.Pointer:
		elem, err := b.pointee(t.Target, depth)
		if err != nil {
			return nil, err
		}
		r = types.PointerTo(elem, types.AddrKernel)
	case *btf.Array:
		if isBTFChar(t.Type) {
			r = types.StringType(int(t.Nelems))
			break
		}
		elem, err := b.convert(t.Type, "", depth+1)
		if err != nil {
			return nil, err
		}
		r = types.ArrayOf(elem, int(t.Nelems))
	case *btf.Struct:
		return b.record(t, "struct", t.Name, alias, t.Size, t.Members, depth)
	case *btf.Union:
		return b.record(t, "union", t.Name, alias, t.Size, t.Members, depth)
	case *btf.Enum:
		name := alias
		if t.Name != "" {
			name = "enum " + t.Name
		}
		r = &types.Type{Kind: types.Enum, Size: int(t.Size), Signed: t.Signed, Name: name, Enumerators: map[int64]string{}}
		for _, v := range t.Values {
			if _, dup := r.Enumerators[int64(v.Value)]; !dup {
				r.Enumerators[int64(v.Value)] = v.Name
			}
		}
	case *btf.Fwd:
		kw := "struct "
		if t.Kind == btf.FwdUnion {
			kw = "union "
		}
		r = Stub(kw + t.Name)
	case *btf.FuncProto, *btf.Func:
		return nil, fmt.Errorf("a function (%s) has no value layout", t.TypeName())
	default:
		return nil, fmt.Errorf("unsupported BTF type %T (%s)", t, t.TypeName())
	}
	b.conv[t] = r
	return r, nil
}

func isBTFChar(t btf.Type) bool {
	for i := 0; i < 16; i++ {
		switch x := t.(type) {
		case *btf.Int:
			return x.Name == "char"
		case *btf.Const:
			t = x.Type
		case *btf.Volatile:
			t = x.Type
		case *btf.Typedef:
			return false // u8 arrays stay arrays
		default:
			return false
		}
	}
	return false
}

// pointee converts a pointer's target: named records become stubs.
func (b *btfSource) pointee(t btf.Type, depth int) (*types.Type, error) {
	alias := ""
	for i := 0; i < 32; i++ {
		switch x := t.(type) {
		case *btf.Void, *btf.FuncProto, *btf.Func:
			return nil, nil
		case *btf.Const:
			t = x.Type
			continue
		case *btf.Volatile:
			t = x.Type
			continue
		case *btf.Restrict:
			t = x.Type
			continue
		case *btf.TypeTag:
			t = x.Type
			continue
		case *btf.Typedef:
			alias = x.Name
			t = x.Type
			continue
		case *btf.Struct:
			if x.Name != "" {
				return Stub("struct " + x.Name), nil
			}
			if alias != "" {
				return Stub(alias), nil
			}
		case *btf.Union:
			if x.Name != "" {
				return Stub("union " + x.Name), nil
			}
			if alias != "" {
				return Stub(alias), nil
			}
		case *btf.Fwd:
			kw := "struct "
			if x.Kind == btf.FwdUnion {
				kw = "union "
			}
			return Stub(kw + x.Name), nil
		}
		break
	}
	return b.convert(t, alias, depth+1)
}

func (b *btfSource) record(key btf.Type, kw, name, alias string, size uint32, members []btf.Member, depth int) (*types.Type, error) {
	r := &types.Type{Kind: types.Record, Size: int(size)}
	switch {
	case name != "":
		r.Name = kw + " " + name
	case alias != "":
		r.Name = alias
	}
	align := 1
	packed := false
	for _, m := range members {
		ft, err := b.convert(m.Type, "", depth+1)
		if err != nil {
			return nil, fmt.Errorf("member %s of %s: %w", nameOr(m.Name, "(anonymous)"), nameOr(r.Name, "anonymous "+kw), err)
		}
		f := types.Field{Name: m.Name, Type: ft, Offset: int(m.Offset / 8)}
		fa := ft.Alignment()
		if m.BitfieldSize > 0 {
			f.BitOff, f.BitWidth = int(m.Offset%8), int(m.BitfieldSize)
		} else if int(m.Offset/8)%fa != 0 || m.Offset%8 != 0 {
			packed = true
		}
		if m.Name != "" || m.BitfieldSize == 0 {
			align = max(align, fa)
		}
		r.Fields = append(r.Fields, f)
	}
	if packed || int(size)%align != 0 {
		align = 1
	}
	r.Align = align
	if key != nil {
		b.conv[key] = r
	}
	return r, nil
}

// fn returns a kernel function's arguments (one 8-byte slot each, as the
// fentry/fexit context holds them) and return type.
func (b *btfSource) fn(name string) (*types.Type, *types.Type, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.find(name, func(t btf.Type) bool { _, ok := t.(*btf.Func); return ok })
	if err != nil || t == nil {
		return nil, nil, false, err
	}
	proto, ok := t.(*btf.Func).Type.(*btf.FuncProto)
	if !ok {
		return nil, nil, false, fmt.Errorf("BTF function %s has no prototype", name)
	}
	args, err := b.params("struct _kfunc_"+name, proto.Params)
	if err != nil {
		return nil, nil, false, fmt.Errorf("function %s: %w", name, err)
	}
	ret, err := b.convert(proto.Return, "", 0)
	if err != nil {
		return nil, nil, false, fmt.Errorf("function %s: return type: %w", name, err)
	}
	return args, ret, true, nil
}

// params lays out parameters in 8-byte slots (a struct passed by value
// takes as many slots as its size needs).
func (b *btfSource) params(name string, ps []btf.FuncParam) (*types.Type, error) {
	r := &types.Type{Kind: types.Record, Name: name, Align: 8}
	off := 0
	for i, p := range ps {
		if _, void := p.Type.(*btf.Void); void && i == len(ps)-1 {
			break // variadic marker
		}
		ft, err := b.convert(p.Type, "", 0)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", nameOr(p.Name, fmt.Sprint(i)), err)
		}
		pname := p.Name
		if pname == "" {
			pname = fmt.Sprintf("arg%d", i)
		}
		r.Fields = append(r.Fields, types.Field{Name: pname, Type: ft, Offset: off})
		off += alignUp(max(ft.Size, 1), 8)
	}
	r.Size = off
	return r, nil
}

// rawTracepoint types a raw tracepoint's arguments from its
// btf_trace_NAME typedef (a pointer to a prototype whose first parameter
// is the tracepoint's void *data).
func (b *btfSource) rawTracepoint(name string) (*types.Type, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.find("btf_trace_"+name, func(t btf.Type) bool { _, ok := t.(*btf.Typedef); return ok })
	if err != nil || t == nil {
		return nil, false, err
	}
	ptr, ok := btf.UnderlyingType(t.(*btf.Typedef).Type).(*btf.Pointer)
	if !ok {
		return nil, false, fmt.Errorf("btf_trace_%s is not a function pointer", name)
	}
	proto, ok := btf.UnderlyingType(ptr.Target).(*btf.FuncProto)
	if !ok || len(proto.Params) == 0 {
		return nil, false, fmt.Errorf("btf_trace_%s is not a tracepoint prototype", name)
	}
	// The typedef's parameters have no names; the kernel's __bpf_trace_NAME
	// stub takes the same ones with the tracepoint's names (regs, id ...),
	// as args names them. Without it they are arg0, arg1 ...
	if fn, err := b.find("__bpf_trace_"+name, func(t btf.Type) bool { _, ok := t.(*btf.Func); return ok }); err == nil && fn != nil {
		if fp, ok := fn.(*btf.Func).Type.(*btf.FuncProto); ok && len(fp.Params) == len(proto.Params) {
			proto = fp
		}
	}
	r, err := b.params("struct _rawtracepoint_"+name, proto.Params[1:])
	if err != nil {
		return nil, false, fmt.Errorf("raw tracepoint %s: %w", name, err)
	}
	return r, true, nil
}

// enumerator finds an enumerator by name in any BTF enum. The index is
// built the first time (it reads every type once).
func (b *btfSource) enumerator(name string) (int64, *types.Type, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	spec, err := b.load()
	if err != nil {
		return 0, nil, false
	}
	if b.enums == nil {
		b.enums = map[string]enumHit{}
		add := func(s *btf.Spec) {
			for t, err := range s.All() {
				if err != nil {
					return
				}
				if e, ok := t.(*btf.Enum); ok {
					for _, v := range e.Values {
						if _, dup := b.enums[v.Name]; !dup {
							b.enums[v.Name] = enumHit{int64(v.Value), e}
						}
					}
				}
			}
		}
		add(spec)
		for _, m := range b.loadModules(spec) {
			add(m)
		}
	}
	h, ok := b.enums[name]
	if !ok {
		return 0, nil, false
	}
	t, err := b.convert(h.enum, "", 0)
	if err != nil {
		return 0, nil, false
	}
	return h.value, t, true
}

// MemberNames lists a record's member names, those of anonymous members
// included (they are reachable directly), sorted: what "did you mean"
// suggestions choose from.
func MemberNames(t *types.Type) []string {
	var out []string
	var walk func(t *types.Type, depth int)
	walk = func(t *types.Type, depth int) {
		if t == nil || depth > 32 {
			return
		}
		for _, f := range t.Fields {
			if f.Name == "" {
				walk(f.Type, depth+1)
				continue
			}
			out = append(out, f.Name)
		}
	}
	walk(t, 0)
	sort.Strings(out)
	return out
}

// present reports whether the BTF file exists and is not empty, without
// reading it (enough to tell scripts BTF is there, as bpftrace does).
func (b *btfSource) present() bool {
	fi, err := os.Stat(b.path)
	return err == nil && fi.Size() > 0
}

// kernelVar returns the BTF ID of vmlinux's global variable name and
// whether it is per-CPU (in the .data..percpu section). Module variables
// are not looked up: a BTF ID of theirs would need the module's BTF file
// descriptor in the instruction.
func (b *btfSource) kernelVar(name string) (id uint32, percpu bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	spec, err := b.load()
	if err != nil {
		return 0, false, err
	}
	var v *btf.Var
	if err := spec.TypeByName(name, &v); err != nil {
		return 0, false, fmt.Errorf("no variable %q in the kernel's BTF (%s)", name, b.path)
	}
	tid, err := spec.TypeID(v)
	if err != nil {
		return 0, false, err
	}
	var ds *btf.Datasec
	if err := spec.TypeByName(".data..percpu", &ds); err == nil {
		for _, vs := range ds.Vars {
			if vs.Type == v {
				percpu = true
				break
			}
		}
	}
	return uint32(tid), percpu, nil
}

// kernelFunc returns the vmlinux BTF ID of the kernel function (kfunc)
// name, for a BPF_PSEUDO_KFUNC_CALL.
func (b *btfSource) kernelFunc(name string) (uint32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	spec, err := b.load()
	if err != nil {
		return 0, err
	}
	var fn *btf.Func
	if err := spec.TypeByName(name, &fn); err != nil {
		return 0, fmt.Errorf("no function %q in the kernel's BTF (%s)", name, b.path)
	}
	id, err := spec.TypeID(fn)
	return uint32(id), err
}
