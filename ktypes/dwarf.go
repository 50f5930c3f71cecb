package ktypes

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gotrace/gotrace/lang/types"
)

// Param is one parameter of a user function, from the binary's DWARF.
type Param struct {
	Name  string
	CType string      // as bpftrace -lv prints it: "int*", "struct Foo*"
	Type  *types.Type // laid out (named records through pointers are stubs)
}

// dwarfFile is one binary's debug information, read once.
type dwarfFile struct {
	path  string
	datas []*dwarf.Data // the binary's units; with split DWARF, one per .dwo unit
	err   error

	once  sync.Once
	mu    sync.Mutex       // serialises convert (laid is a memo)
	funcs map[string]dwRef // subprogram name → entry (first definition)
	tags  map[string]dwRef // "struct Foo"/"union U"/"enum E"/typedef name → type entry
	laid  map[*dwarf.StructType]*types.Type
}

// dwRef is an entry of one of a file's DWARF data.
type dwRef struct {
	d   *dwarf.Data
	off dwarf.Offset
}

// dwarfCache holds the binaries a resolver has opened.
type dwarfCache struct {
	dirs  []string // Options.DebugDirs
	mu    sync.Mutex
	files map[string]*dwarfFile
}

func (c *dwarfCache) get(path string) (*dwarfFile, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.files[path]; ok {
		return f, f.err
	}
	if c.files == nil {
		c.files = map[string]*dwarfFile{}
	}
	f := openDWARFIn(path, c.dirs)
	c.files[path] = f
	return f, f.err
}

// openDWARF reads path's DWARF; a binary without it is an error that
// names the binary.
func openDWARF(path string) *dwarfFile { return openDWARFIn(path, nil) }

// openDWARFIn is openDWARF that looks for a stripped binary's separate
// debug file in the standard places and dirs (--debuginfo).
func openDWARFIn(path string, dirs []string) *dwarfFile {
	f := &dwarfFile{path: path}
	ef, err := elf.Open(path)
	if err != nil {
		f.err = fmt.Errorf("no debug information for %s: %w", path, err)
		return f
	}
	defer ef.Close()
	if ef.Section(".debug_info") == nil {
		// Stripped, or its debug information installed apart: a -dbg
		// package, a .gnu_debuglink file, a debuginfod cache (sym), else
		// beside the binary or in a --debuginfo directory.
		dbg, _ := OpenDWARF(ef, path, dirs)
		if dbg == nil {
			f.err = fmt.Errorf("no debug information for %s (no .debug_info section, and no separate debug file under /usr/lib/debug, by .gnu_debuglink, in a debuginfod cache or in a --debuginfo directory)", path)
			return f
		}
		defer dbg.Close()
		ef = dbg
	}
	d, err := ef.DWARF()
	if err != nil {
		f.err = fmt.Errorf("no debug information for %s: %w", path, err)
		return f
	}
	// Split DWARF (-gsplit-dwarf): the types and functions are in the
	// .dwo files or the .dwp package the skeleton units name.
	split, err := SplitUnits(ef, path, d)
	if err != nil {
		f.err = fmt.Errorf("no debug information for %s: %w", path, err)
		return f
	}
	if split != nil {
		f.datas = split
	} else {
		f.datas = []*dwarf.Data{d}
	}
	return f
}

// index records where functions and named types are (first seen wins).
func (f *dwarfFile) index() {
	f.once.Do(func() {
		f.funcs, f.tags, f.laid = map[string]dwRef{}, map[string]dwRef{}, map[*dwarf.StructType]*types.Type{}
		for _, d := range f.datas {
			f.indexData(d)
		}
	})
}

func (f *dwarfFile) indexData(d *dwarf.Data) {
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
		prefix := ""
		switch e.Tag {
		case dwarf.TagSubprogram:
			if name != "" && !decl {
				if _, ok := f.funcs[name]; !ok {
					f.funcs[name] = dwRef{d, e.Offset}
				}
			}
		case dwarf.TagStructType:
			prefix = "struct "
		case dwarf.TagUnionType:
			prefix = "union "
		case dwarf.TagEnumerationType:
			prefix = "enum "
		case dwarf.TagTypedef:
			prefix = " "
		}
		if prefix != "" && name != "" && !decl {
			key := strings.TrimSpace(prefix + name)
			if _, ok := f.tags[key]; !ok {
				f.tags[key] = dwRef{d, e.Offset}
			}
		}
		if e.Children && e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagSubprogram {
			// Members, enumerators, parameters: nothing to index.
			r.SkipChildren()
		}
	}
}

// params lists fn's formal parameters in order.
func (f *dwarfFile) params(fn string) ([]Param, error) {
	f.index()
	f.mu.Lock()
	defer f.mu.Unlock()
	ref, ok := f.funcs[fn]
	if !ok {
		return nil, fmt.Errorf("function %s not found in the debug information of %s", fn, f.path)
	}
	r := ref.d.Reader()
	r.Seek(ref.off)
	e, err := r.Next()
	if err != nil || e == nil {
		return nil, fmt.Errorf("reading the debug information of %s: %v", f.path, err)
	}
	var ps []Param
	if !e.Children {
		return ps, nil
	}
	for {
		c, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the debug information of %s: %w", f.path, err)
		}
		if c == nil || c.Tag == 0 {
			break
		}
		if c.Tag != dwarf.TagFormalParameter {
			if c.Children {
				r.SkipChildren()
			}
			continue
		}
		name, _ := c.Val(dwarf.AttrName).(string)
		toff, ok := c.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok {
			return nil, fmt.Errorf("parameter %s of %s in %s has no type", name, fn, f.path)
		}
		dt, err := ref.d.Type(toff)
		if err != nil {
			return nil, fmt.Errorf("type of parameter %s of %s in %s: %w", name, fn, f.path, err)
		}
		t, err := f.convert(dt, 0)
		if err != nil {
			return nil, fmt.Errorf("type of parameter %s of %s in %s: %w", name, fn, f.path, err)
		}
		ps = append(ps, Param{Name: name, CType: cTypeName(dt), Type: t})
	}
	return ps, nil
}

// lookup finds a named type ("struct Foo", a typedef name) in the DWARF.
func (f *dwarfFile) lookup(name string) (*types.Type, bool) {
	f.index()
	f.mu.Lock()
	defer f.mu.Unlock()
	ref, ok := f.tags[name]
	if !ok {
		return nil, false
	}
	dt, err := ref.d.Type(ref.off)
	if err != nil {
		return nil, false
	}
	t, err := f.convert(dt, 0)
	if err != nil {
		return nil, false
	}
	return t, true
}

// convert lays out a DWARF type the way the C declarations are laid out:
// plain char arrays are strings, named records behind pointers are stubs.
func (f *dwarfFile) convert(dt dwarf.Type, depth int) (*types.Type, error) {
	if depth > maxTypeDepth {
		return nil, errors.New("type nested too deeply")
	}
	switch t := dt.(type) {
	case *dwarf.QualType:
		return f.convert(t.Type, depth+1)
	case *dwarf.TypedefType:
		return f.convert(t.Type, depth+1)
	case *dwarf.BoolType:
		return types.IntType(int(t.ByteSize), false), nil
	case *dwarf.CharType:
		return types.IntType(int(t.ByteSize), true), nil
	case *dwarf.UcharType:
		return types.IntType(int(t.ByteSize), false), nil
	case *dwarf.IntType:
		return intOrBytes(int(t.ByteSize), true), nil
	case *dwarf.UintType:
		return intOrBytes(int(t.ByteSize), false), nil
	case *dwarf.FloatType, *dwarf.ComplexType:
		return types.ArrayOf(types.U8, int(dt.Size())), nil
	case *dwarf.EnumType:
		et := &types.Type{Kind: types.Enum, Size: int(t.ByteSize), Enumerators: map[int64]string{}}
		if t.EnumName != "" {
			et.Name = "enum " + t.EnumName
		}
		for _, v := range t.Val {
			if _, dup := et.Enumerators[v.Val]; !dup {
				et.Enumerators[v.Val] = v.Name
			}
			if v.Val < 0 {
				et.Signed = true
			}
		}
		return et, nil
	case *dwarf.PtrType:
		elem, err := f.pointee(t.Type, depth)
		if err != nil {
			return nil, err
		}
		return types.PointerTo(elem, types.AddrUser), nil
	case *dwarf.ArrayType:
		n := int(t.Count)
		if n < 0 {
			n = 0
		}
		if isDwarfPlainChar(t.Type) {
			return types.StringType(n), nil
		}
		elem, err := f.convert(t.Type, depth+1)
		if err != nil {
			return nil, err
		}
		return types.ArrayOf(elem, n), nil
	case *dwarf.StructType:
		if r, ok := f.laid[t]; ok {
			return r, nil
		}
		name := ""
		if t.StructName != "" {
			name = t.Kind + " " + t.StructName
		}
		if t.Incomplete {
			return &types.Type{Kind: types.Record, Name: name, Opaque: true}, nil
		}
		rec := &types.Type{Kind: types.Record, Name: name, Size: int(t.ByteSize)}
		for _, m := range t.Field {
			mt, err := f.convert(m.Type, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", name, m.Name, err)
			}
			fl := types.Field{Name: m.Name, Type: mt, Offset: int(m.ByteOffset)}
			if m.BitSize > 0 {
				// DWARF 4+ gives the bit offset from the record start;
				// keep the storage unit of the member's type.
				unit := int(mt.Size)
				if unit <= 0 {
					unit = 1
				}
				bit := int(m.DataBitOffset)
				if m.DataBitOffset == 0 && m.BitOffset != 0 {
					// DWARF 2/3: offset from the unit's most significant bit.
					bit = int(m.ByteOffset)*8 + unit*8 - int(m.BitOffset) - int(m.BitSize)
				}
				fl.Offset = bit / 8 / unit * unit
				fl.BitOff = bit - fl.Offset*8
				fl.BitWidth = int(m.BitSize)
			}
			rec.Fields = append(rec.Fields, fl)
		}
		f.laid[t] = rec
		return rec, nil
	case *dwarf.FuncType:
		return nil, errors.New("a function type has no layout")
	case *dwarf.VoidType:
		return types.NoneType, nil
	case *dwarf.UnspecifiedType:
		return types.NoneType, nil
	}
	return nil, fmt.Errorf("unsupported DWARF type %s", dt)
}

// pointee is a pointer's element: a stub for a named record (so types
// that point to themselves stay finite), nil for void and functions.
func (f *dwarfFile) pointee(dt dwarf.Type, depth int) (*types.Type, error) {
	for i := 0; i < 32; i++ {
		switch t := dt.(type) {
		case *dwarf.QualType:
			dt = t.Type
			continue
		case *dwarf.VoidType, *dwarf.FuncType:
			return nil, nil
		case *dwarf.StructType:
			if t.StructName != "" {
				return Stub(t.Kind + " " + t.StructName), nil
			}
		}
		break
	}
	return f.convert(dt, depth+1)
}

func intOrBytes(size int, signed bool) *types.Type {
	switch size {
	case 1, 2, 4, 8:
		return types.IntType(size, signed)
	}
	return types.ArrayOf(types.U8, size)
}

func isDwarfPlainChar(dt dwarf.Type) bool {
	for i := 0; i < 32; i++ {
		switch t := dt.(type) {
		case *dwarf.QualType:
			dt = t.Type
		case *dwarf.TypedefType:
			dt = t.Type
		case *dwarf.CharType:
			return t.Name == "char"
		default:
			return false
		}
	}
	return false
}

// cTypeName spells a DWARF type as bpftrace -lv does: "int*",
// "struct Foo*", "char[16]".
func cTypeName(dt dwarf.Type) string {
	switch t := dt.(type) {
	case *dwarf.QualType:
		// "const char*" as bpftrace prints it; a qualified pointer
		// ("char* const") keeps the qualifier after the star.
		inner := cTypeName(t.Type)
		if _, ptr := t.Type.(*dwarf.PtrType); ptr {
			return inner + " " + t.Qual
		}
		return t.Qual + " " + inner
	case *dwarf.PtrType:
		if _, ok := t.Type.(*dwarf.VoidType); ok || t.Type == nil {
			return "void*"
		}
		return cTypeName(t.Type) + "*"
	case *dwarf.ArrayType:
		return cTypeName(t.Type) + "[" + strconv.FormatInt(t.Count, 10) + "]"
	case *dwarf.StructType:
		return t.Kind + " " + t.StructName
	case *dwarf.EnumType:
		return "enum " + t.EnumName
	case *dwarf.TypedefType:
		return t.Name
	case *dwarf.FuncType:
		return "void*"
	case *dwarf.VoidType:
		return "void"
	}
	return dt.Common().Name
}

// DWARFParams returns the parameters of function fn in the binary at path
// from its DWARF (for -lv and `args` on uprobes).
func DWARFParams(path, fn string) ([]Param, error) {
	f := openDWARF(path)
	if f.err != nil {
		return nil, f.err
	}
	return f.params(fn)
}

// UprobeArgs returns a user function's arguments, from the binary's DWARF,
// as a record: one field per parameter in order, field i at offset 8*i
// (the i-th argument slot, as for kfunc args), typed from DWARF. The
// binary's named types become visible to Type too (after the script's
// declarations, before BTF), as bpftrace merges them.
func (r *Sources) UprobeArgs(path, fn string) (*types.Type, error) {
	f, err := r.dwarf.get(path)
	if err != nil {
		return nil, err
	}
	ps, err := f.params(fn)
	if err != nil {
		return nil, err
	}
	rec := &types.Type{Kind: types.Record, Name: "struct " + fn + "_args", Size: 8 * len(ps)}
	for i, p := range ps {
		rec.Fields = append(rec.Fields, types.Field{Name: p.Name, Type: p.Type, Offset: 8 * i})
	}
	return rec, nil
}

// fromDWARF looks a named type up in the DWARF of the script's binaries.
func (r *Sources) fromDWARF(name string) (*types.Type, bool) {
	for _, b := range r.opts.Binaries {
		f, err := r.dwarf.get(b)
		if err != nil {
			continue
		}
		if t, ok := f.lookup(name); ok {
			return t, true
		}
	}
	return nil, false
}
