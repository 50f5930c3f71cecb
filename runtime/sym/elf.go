package sym

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"github.com/gotrace/gotrace/ktypes"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// SymType is what an ELF symbol names.
type SymType uint8

const (
	SymOther  SymType = iota // STT_NOTYPE and the rest
	SymFunc                  // STT_FUNC, STT_GNU_IFUNC
	SymObject                // STT_OBJECT (variables)
)

func (t SymType) String() string {
	switch t {
	case SymFunc:
		return "func"
	case SymObject:
		return "object"
	}
	return "other"
}

// Symbol is a defined symbol of an ELF file.
type Symbol struct {
	// Name is the symbol's name, a version suffix ("@@GLIBC_2.2.5") removed,
	// not demangled.
	Name string
	// Addr is the symbol's value: its virtual address in the file's own
	// address space (unrelocated for PIE executables and libraries).
	Addr uint64
	// Offset is the file offset Addr is loaded from — what a uprobe attaches
	// at. 0 when no PT_LOAD segment holds Addr.
	Offset uint64
	Size   uint64
	Type   SymType
	IFunc  bool // STT_GNU_IFUNC: a probe here fires on the resolver
	Global bool // STB_GLOBAL or STB_WEAK
}

// elfObj is what address resolution needs from one ELF file.
type elfObj struct {
	typ   elf.Type
	loads []elf.ProgHeader // PT_LOAD segments
	syms  []Symbol         // sorted by Addr; ties: preferred name first
}

// fileKey identifies a file's contents well enough for caching: a replaced
// or rebuilt binary gets a new inode, size or mtime.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

func keyOf(fi os.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}, true
}

// objCache holds parsed ELF files by fileKey, shared by every Symbolizer
// and by Symbols: libc is read once per run however many processes map it.
var objCache sync.Map // fileKey → *objEntry

type objEntry struct {
	once sync.Once
	obj  *elfObj
	err  error
}

// openObj returns the parsed ELF of the open file f (named name in errors).
func openObj(f *os.File, name string) (*elfObj, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", name, err)
	}
	key, ok := keyOf(fi)
	if !ok {
		return parseELF(f, name)
	}
	v, _ := objCache.LoadOrStore(key, &objEntry{})
	e := v.(*objEntry)
	e.once.Do(func() { e.obj, e.err = parseELF(f, name) })
	return e.obj, e.err
}

// parseELF reads the PT_LOAD segments and the symbols of .symtab and
// .dynsym. When the file has no .symtab, a separate debug file found by
// build ID or .gnu_debuglink (as gdb and bcc look for them) adds its own.
func parseELF(r io.ReaderAt, name string) (*elfObj, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("read ELF %s: %w", name, err)
	}
	defer f.Close()
	o := &elfObj{typ: f.Type}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p.ProgHeader)
		}
	}
	var syms []Symbol
	symtab, errSym := f.Symbols()
	syms = o.appendSyms(syms, symtab)
	if dyn, err := f.DynamicSymbols(); err == nil {
		syms = o.appendSyms(syms, dyn)
	}
	if errors.Is(errSym, elf.ErrNoSymbols) {
		if dbg, _ := ktypes.OpenDebug(f, name); dbg != nil {
			if s, err := dbg.Symbols(); err == nil {
				syms = o.appendSyms(syms, s)
			}
			dbg.Close()
		}
	}
	if errSym != nil {
		// Go binaries built with -s (go run, go test, many releases) keep
		// their function table in .gopclntab.
		syms = o.appendGoSyms(syms, f)
	}
	slices.SortStableFunc(syms, func(a, b Symbol) int {
		switch {
		case a.Addr != b.Addr:
			if a.Addr < b.Addr {
				return -1
			}
			return 1
		case a.Name == b.Name:
			return 0
		}
		return rank(a) - rank(b)
	})
	// The same symbol usually sits in both tables: keep one.
	o.syms = slices.CompactFunc(syms, func(a, b Symbol) bool { return a.Addr == b.Addr && a.Name == b.Name })
	return o, nil
}

// appendGoSyms adds the functions of a Go binary's .gopclntab.
func (o *elfObj) appendGoSyms(dst []Symbol, f *elf.File) []Symbol {
	pcln := f.Section(".gopclntab")
	text := f.Section(".text")
	if pcln == nil || text == nil {
		return dst
	}
	data, err := pcln.Data()
	if err != nil {
		return dst
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return dst
	}
	for _, fn := range tab.Funcs {
		if fn.Entry == 0 || fn.End <= fn.Entry {
			continue
		}
		sym := Symbol{Name: fn.Name, Addr: fn.Entry, Size: fn.End - fn.Entry, Type: SymFunc, Global: true}
		sym.Offset, _ = o.fileOffset(fn.Entry)
		dst = append(dst, sym)
	}
	return dst
}

// rank orders aliases at one address: the name printed is a function's
// before a variable's, a global one before a local one.
func rank(s Symbol) int {
	r := 0
	if s.Type != SymFunc {
		r += 2
	}
	if !s.Global {
		r++
	}
	return r
}

func (o *elfObj) appendSyms(dst []Symbol, syms []elf.Symbol) []Symbol {
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if s.Name == "" || s.Value == 0 || s.Section == elf.SHN_UNDEF ||
			typ == elf.STT_SECTION || typ == elf.STT_FILE || typ == elf.STT_TLS {
			continue
		}
		name := s.Name
		if i := strings.IndexByte(name, '@'); i > 0 {
			name = name[:i]
		}
		sym := Symbol{Name: name, Addr: s.Value, Size: s.Size}
		switch typ {
		case elf.STT_FUNC:
			sym.Type = SymFunc
		case elf.STT_GNU_IFUNC:
			sym.Type, sym.IFunc = SymFunc, true
		case elf.STT_OBJECT:
			sym.Type = SymObject
		}
		bind := elf.ST_BIND(s.Info)
		sym.Global = bind == elf.STB_GLOBAL || bind == elf.STB_WEAK
		sym.Offset, _ = o.fileOffset(s.Value)
		dst = append(dst, sym)
	}
	return dst
}

// fileOffset maps a virtual address of the file to its file offset.
func (o *elfObj) fileOffset(vaddr uint64) (uint64, bool) {
	for _, p := range o.loads {
		if vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// vaddrOf maps a file offset to the file's virtual address (the inverse of
// fileOffset), which is what symbol values are in.
func (o *elfObj) vaddrOf(off uint64) (uint64, bool) {
	for _, p := range o.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// lookup finds the symbol containing vaddr. Symbols may nest (a local
// label inside a function), so like bcc it walks back from the last
// symbol starting at or below vaddr until one covers it. A zero-size
// symbol covers only its own address.
func (o *elfObj) lookup(vaddr uint64) (*Symbol, bool) { return lookupSorted(o.syms, vaddr) }

// lookupSorted is elfObj.lookup over any address-sorted symbols.
func lookupSorted(syms []Symbol, vaddr uint64) (*Symbol, bool) {
	i, found := slices.BinarySearchFunc(syms, vaddr, func(s Symbol, a uint64) int {
		switch {
		case s.Addr < a:
			return -1
		case s.Addr > a:
			return 1
		}
		return 0
	})
	if found {
		return &syms[i], true
	}
	// Walk back; stop once the symbols below cannot reach vaddr: bound the
	// walk, since sizes of nested symbols never extend past their parent's.
	for j, steps := i-1, 0; j >= 0 && steps < 64; j, steps = j-1, steps+1 {
		s := &syms[j]
		if vaddr < s.Addr+s.Size {
			// Prefer the first (best-ranked) alias at that address.
			for j > 0 && syms[j-1].Addr == s.Addr && vaddr < s.Addr+syms[j-1].Size {
				j--
			}
			return &syms[j], true
		}
	}
	return nil, false
}

// Symbols lists the defined symbols of the ELF file at path, one per name
// (the first of .symtab, .dynsym, a debug file), sorted by name. It is
// the shared resolver for uprobe attach points and uaddr().
func Symbols(path string) ([]Symbol, error) {
	o, err := objAt(path)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(o.syms))
	out := make([]Symbol, 0, len(o.syms))
	for _, s := range o.syms {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Symbol) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// MatchSymbols lists the symbols of path of type typ (SymOther: any type)
// whose names match pattern, where '*' matches any run of characters (as
// bpftrace's wildcards).
func MatchSymbols(path, pattern string, typ SymType) ([]Symbol, error) {
	syms, err := Symbols(path)
	if err != nil {
		return nil, err
	}
	var out []Symbol
	for _, s := range syms {
		if (typ == SymOther || s.Type == typ) && WildcardMatch(pattern, s.Name) {
			out = append(out, s)
		}
	}
	return out, nil
}

// UserAddr is uaddr()'s lookup: the variable (STT_OBJECT symbol) name in
// the ELF file at path, as bpftrace resolves it.
func UserAddr(path, name string) (Symbol, error) {
	syms, err := Symbols(path)
	if err != nil {
		return Symbol{}, err
	}
	i, ok := slices.BinarySearchFunc(syms, name, func(s Symbol, n string) int { return strings.Compare(s.Name, n) })
	if !ok || syms[i].Type != SymObject {
		return Symbol{}, fmt.Errorf("%s: no variable named %q", path, name)
	}
	return syms[i], nil
}

func objAt(path string) (*elfObj, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read ELF: %w", err)
	}
	defer f.Close()
	return openObj(f, path)
}

// WildcardMatch reports whether s matches pattern, where '*' matches any
// run of characters and everything else matches itself.
func WildcardMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
