package ktypes

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// USDT probes are SystemTap SDT notes (<sys/sdt.h>): each note in
// .note.stapsdt names a provider and a probe, the address of a nop at the
// probe site, an optional semaphore (a counter the program tests before
// computing the arguments) and the arguments as assembler operands
// ("-4@%edi", "8@-16(%rbp)"). A probe is a uprobe at the site; while
// attached the kernel increments the semaphore (uprobe ref_ctr_offset).

// USDTArgKind says where an argument's value is.
type USDTArgKind int

const (
	// USDTConst: the value is Value.
	USDTConst USDTArgKind = iota
	// USDTReg: the value is the register Reg (read Size bytes of it).
	USDTReg
	// USDTMem: the value is Size bytes of user memory at
	// Reg + Offset + Index*Scale (Reg or Index may be empty). Reg "ip"
	// (a %rip-relative operand) is relative to the probe address: Offset
	// is already target - probe PC, so address = ip at the probe + Offset.
	USDTMem
)

func (k USDTArgKind) String() string {
	switch k {
	case USDTConst:
		return "const"
	case USDTReg:
		return "reg"
	case USDTMem:
		return "mem"
	}
	return "USDTArgKind(" + strconv.Itoa(int(k)) + ")"
}

// USDTArg is one decoded argument operand (x86-64).
type USDTArg struct {
	Spec   string // as written in the note: "-4@%edi"
	Size   int    // 1, 2, 4 or 8 bytes
	Signed bool   // a negative size in the spec: sign-extend from Size
	Kind   USDTArgKind
	Value  int64 // USDTConst
	// Reg is the struct pt_regs field ("di", "ax", "r15", "ip") and
	// RegOffset its byte offset in x86-64's struct pt_regs.
	Reg       string
	RegOffset int
	Offset    int64 // USDTMem displacement
	// Index and IndexOffset: USDTMem's scaled index register, "" if none.
	Index       string
	IndexOffset int
	Scale       int
	// Symbol is the symbol a %rip-relative operand names, for messages.
	Symbol string
}

// USDTLocation is one probe site (a probe may appear at several).
type USDTLocation struct {
	PC         uint64 // link-time virtual address of the site
	FileOffset uint64 // where the uprobe goes
	Args       []USDTArg
}

// USDTProbe is one provider:name in one binary.
type USDTProbe struct {
	Path string // where the file is read and attached from
	// Shown is the file as probe names spell it: a path as the script
	// wrote it (./bin), a library by its resolved path, a file a process
	// maps (-p) by its path in that process.
	Shown     string
	Provider  string
	Name      string
	Locations []USDTLocation
	// Semaphore is the semaphore's virtual address, SemaphoreOffset its
	// file offset (the uprobe's ref_ctr_offset); 0 when the probe has none.
	Semaphore       uint64
	SemaphoreOffset uint64
}

// Args are the first site's arguments: a probe's sites almost always have
// the same number of arguments, but registers may differ per site.
func (p *USDTProbe) Args() []USDTArg {
	if len(p.Locations) == 0 {
		return nil
	}
	return p.Locations[0].Args
}

// USDTProbes lists the USDT probes of path, sorted by provider and name,
// for the checker and compiler (argN types and code come from the
// argument specs). With pid > 0 and an empty path or "*", it lists the
// probes of every file mapped into that process (the executable and its
// shared libraries, read through the process's root so that another mount
// namespace's files are found); a path with a wildcard lists the probes of
// every file it matches; any other path is resolved like a uprobe's
// (library names through ld.so.cache, or the process's own mappings with
// pid).
func USDTProbes(path string, pid int) ([]USDTProbe, error) {
	type file struct{ path, shown string }
	var files []file
	all := path == "" || path == "*"
	switch {
	case all:
		if pid <= 0 {
			return nil, errors.New("usdt: a probe without a binary needs -p PID")
		}
		mapped, err := MappedExecutables(pid)
		if err != nil {
			return nil, fmt.Errorf("read mappings of pid %d: %w", pid, err)
		}
		for _, m := range mapped {
			files = append(files, file{MappedPath(pid, m), m})
		}
	case HasWildcard(path):
		matches, err := ShownGlob(path)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			abs, err := filepath.Abs(m)
			if err != nil {
				return nil, err
			}
			files = append(files, file{abs, m})
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("binary %s: no file matches", path)
		}
	default:
		p, err := ResolveBinary(path, pid)
		if err != nil {
			return nil, err
		}
		shown := p
		if strings.Contains(path, "/") {
			shown = path
		}
		files = []file{{p, shown}}
	}
	var out []USDTProbe
	for _, f := range files {
		ps, err := readUSDT(f.path)
		if err != nil {
			if all || len(files) > 1 {
				continue // an unreadable mapping or match: no probes there
			}
			return nil, err
		}
		for _, p := range ps {
			p.Shown = f.shown
			out = append(out, p)
		}
	}
	return out, nil
}

// ShownGlob expands a path pattern (globFiles) to the regular files it
// matches, each spelled as the pattern is ("./bin/prog*" gives
// "./bin/progA", not "bin/progA").
func ShownGlob(pattern string) ([]string, error) {
	matches, err := GlobFiles(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(pattern, "./") && !strings.HasPrefix(m, "./") {
			m = "./" + m
		}
		out = append(out, m)
	}
	return out, nil
}

var (
	usdtMu    sync.Mutex
	usdtCache = map[string][]USDTProbe{}
)

// readUSDT parses path's .note.stapsdt section.
func readUSDT(path string) ([]USDTProbe, error) {
	usdtMu.Lock()
	defer usdtMu.Unlock()
	if ps, ok := usdtCache[path]; ok {
		return ps, nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, ELFOpenError(path, err)
	}
	defer f.Close()
	notes := f.Section(".note.stapsdt")
	if notes == nil {
		usdtCache[path] = nil
		return nil, nil
	}
	data, err := notes.Data()
	if err != nil {
		return nil, fmt.Errorf("read %s .note.stapsdt: %w", path, err)
	}
	// Prelink or a linker may move .stapsdt.base after the notes were
	// written: addresses shift by the difference.
	var baseAddr uint64
	hasBase := false
	if s := f.Section(".stapsdt.base"); s != nil {
		baseAddr, hasBase = s.Addr, true
	}
	addrSize := 8
	if f.Class == elf.ELFCLASS32 {
		addrSize = 4
	}
	syms := elfSymbolAddrs(f)
	bo := f.ByteOrder
	byName := map[string]*USDTProbe{}
	var order []string
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		off := 12
		nameEnd := off + int(namesz)
		descStart := off + align4(int(namesz))
		descEnd := descStart + int(descsz)
		if nameEnd > len(data) || descEnd > len(data) {
			return nil, fmt.Errorf("%s: truncated .note.stapsdt", path)
		}
		name := string(bytes.TrimRight(data[off:nameEnd], "\x00"))
		desc := data[descStart:descEnd]
		data = data[min(len(data), descStart+align4(int(descsz))):]
		if name != "stapsdt" || typ != 3 || len(desc) < 3*addrSize {
			continue
		}
		word := func(i int) uint64 {
			if addrSize == 4 {
				return uint64(bo.Uint32(desc[i*4:]))
			}
			return bo.Uint64(desc[i*8:])
		}
		pc, base, sem := word(0), word(1), word(2)
		strs := strings.SplitN(string(desc[3*addrSize:]), "\x00", 4)
		if len(strs) < 3 {
			return nil, fmt.Errorf("%s: malformed stapsdt note", path)
		}
		provider, probe, argstr := strs[0], strs[1], strs[2]
		if hasBase && base != 0 {
			pc += baseAddr - base
			if sem != 0 {
				sem += baseAddr - base
			}
		}
		foff, err := FileOffset(path, pc)
		if err != nil {
			return nil, fmt.Errorf("usdt %s:%s in %s: %w", provider, probe, path, err)
		}
		args, err := ParseUSDTArgs(argstr)
		if err != nil {
			return nil, fmt.Errorf("usdt %s:%s in %s: %w", provider, probe, path, err)
		}
		for i := range args {
			a := &args[i]
			if a.Kind == USDTMem && a.Symbol != "" {
				addr, ok := syms[a.Symbol]
				if !ok {
					return nil, fmt.Errorf("usdt %s:%s in %s: argument %q names unknown symbol %s", provider, probe, path, a.Spec, a.Symbol)
				}
				if a.Reg == "ip" {
					a.Offset = int64(addr) + a.Offset - int64(pc)
				} else {
					a.Offset += int64(addr)
				}
			}
		}
		key := provider + ":" + probe
		p := byName[key]
		if p == nil {
			p = &USDTProbe{Path: path, Provider: provider, Name: probe}
			byName[key] = p
			order = append(order, key)
		}
		if sem != 0 {
			soff, err := dataOffset(f, sem)
			if err != nil {
				return nil, fmt.Errorf("usdt %s:%s in %s: semaphore: %w", provider, probe, path, err)
			}
			p.Semaphore, p.SemaphoreOffset = sem, soff
		}
		p.Locations = append(p.Locations, USDTLocation{PC: pc, FileOffset: foff, Args: args})
	}
	sort.Strings(order)
	out := make([]USDTProbe, 0, len(order))
	for _, k := range order {
		out = append(out, *byName[k])
	}
	usdtCache[path] = out
	return out, nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// elfSymbolAddrs maps every defined symbol name to its address.
func elfSymbolAddrs(f *elf.File) map[string]uint64 {
	out := map[string]uint64{}
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := get()
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && s.Name != "" {
				if _, dup := out[s.Name]; !dup {
					out[s.Name] = s.Value
				}
			}
		}
	}
	return out
}

// dataOffset converts a virtual address in any loaded segment to its
// file offset (semaphores live in .probes/.data).
func dataOffset(f *elf.File, vaddr uint64) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address 0x%x is in no loaded segment", vaddr)
}

// x86-64 struct pt_regs field offsets, by the field's name.
var ptRegsX86 = map[string]int{
	"r15": 0, "r14": 8, "r13": 16, "r12": 24, "bp": 32, "bx": 40, "r11": 48, "r10": 56,
	"r9": 64, "r8": 72, "ax": 80, "cx": 88, "dx": 96, "si": 104, "di": 112,
	"orig_ax": 120, "ip": 128, "cs": 136, "flags": 144, "sp": 152, "ss": 160,
}

// PtRegsOffset is the byte offset of a struct pt_regs field on x86-64.
func PtRegsOffset(field string) (int, bool) {
	off, ok := ptRegsX86[field]
	return off, ok
}

// x86Reg maps an assembler register name (any width) to its pt_regs field.
func x86Reg(name string) (string, bool) {
	n := strings.TrimPrefix(name, "%")
	switch n {
	case "rax", "eax", "ax", "al", "ah":
		return "ax", true
	case "rbx", "ebx", "bx", "bl", "bh":
		return "bx", true
	case "rcx", "ecx", "cx", "cl", "ch":
		return "cx", true
	case "rdx", "edx", "dx", "dl", "dh":
		return "dx", true
	case "rsi", "esi", "si", "sil":
		return "si", true
	case "rdi", "edi", "di", "dil":
		return "di", true
	case "rbp", "ebp", "bp", "bpl":
		return "bp", true
	case "rsp", "esp", "sp", "spl":
		return "sp", true
	case "rip", "eip":
		return "ip", true
	}
	// r8..r15 with an optional d/w/b suffix.
	if strings.HasPrefix(n, "r") {
		base := strings.TrimRight(n, "dwb")
		if k, err := strconv.Atoi(base[1:]); err == nil && k >= 8 && k <= 15 {
			return base, true
		}
	}
	return "", false
}

// ParseUSDTArgs decodes a note's space-separated argument specs.
func ParseUSDTArgs(s string) ([]USDTArg, error) {
	var out []USDTArg
	for _, spec := range strings.Fields(s) {
		a, err := parseUSDTArg(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func parseUSDTArg(spec string) (USDTArg, error) {
	a := USDTArg{Spec: spec, Size: 8}
	op := spec
	if i := strings.IndexByte(spec, '@'); i >= 0 {
		n, err := strconv.Atoi(spec[:i])
		if err != nil {
			return a, fmt.Errorf("bad USDT argument %q: size %q", spec, spec[:i])
		}
		if n < 0 {
			a.Signed, n = true, -n
		}
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return a, fmt.Errorf("bad USDT argument %q: size %d", spec, n)
		}
		a.Size, op = n, spec[i+1:]
	}
	bad := func(why string) (USDTArg, error) {
		return a, fmt.Errorf("bad USDT argument %q: %s", spec, why)
	}
	reg := func(name string) (string, int, bool) {
		r, ok := x86Reg(name)
		if !ok {
			return "", 0, false
		}
		return r, ptRegsX86[r], true
	}
	switch {
	case strings.HasPrefix(op, "$"):
		v, err := strconv.ParseInt(op[1:], 0, 64)
		if err != nil {
			return bad("constant " + op)
		}
		a.Kind, a.Value = USDTConst, v
		return a, nil
	case strings.HasPrefix(op, "%"):
		r, off, ok := reg(op)
		if !ok {
			return bad("unknown register " + op)
		}
		a.Kind, a.Reg, a.RegOffset = USDTReg, r, off
		return a, nil
	}
	// Memory: [disp](%base[,%index[,scale]]) or a bare symbol[+-disp].
	a.Kind = USDTMem
	disp, inner := op, ""
	if i := strings.IndexByte(op, '('); i >= 0 {
		if !strings.HasSuffix(op, ")") {
			return bad("unclosed (")
		}
		disp, inner = op[:i], op[i+1:len(op)-1]
	}
	if disp != "" {
		if v, err := strconv.ParseInt(disp, 0, 64); err == nil {
			a.Offset = v
		} else {
			// symbol, symbol+N or symbol-N
			sym, rest := disp, ""
			if j := strings.IndexAny(disp, "+-"); j > 0 {
				sym, rest = disp[:j], disp[j:]
			}
			if rest != "" {
				v, err := strconv.ParseInt(rest, 0, 64)
				if err != nil {
					return bad("displacement " + disp)
				}
				a.Offset = v
			}
			a.Symbol = sym
		}
	}
	if inner != "" {
		parts := strings.Split(inner, ",")
		if len(parts) > 3 {
			return bad("too many operand parts")
		}
		if p := strings.TrimSpace(parts[0]); p != "" {
			r, off, ok := reg(p)
			if !ok {
				return bad("unknown register " + p)
			}
			a.Reg, a.RegOffset = r, off
		}
		if len(parts) >= 2 {
			r, off, ok := reg(strings.TrimSpace(parts[1]))
			if !ok {
				return bad("unknown index register " + parts[1])
			}
			a.Index, a.IndexOffset, a.Scale = r, off, 1
			if len(parts) == 3 {
				sc, err := strconv.Atoi(strings.TrimSpace(parts[2]))
				if err != nil || (sc != 1 && sc != 2 && sc != 4 && sc != 8) {
					return bad("scale " + parts[2])
				}
				a.Scale = sc
			}
		}
	}
	if a.Reg == "" && a.Index == "" && a.Symbol == "" {
		return bad("no register or symbol")
	}
	return a, nil
}

// USDTSite is one place a usdt probe fires at: its link-time address and
// its decoded arguments.
type USDTSite struct {
	PC   uint64
	Args []USDTArg
}

// USDTSites lists the sites of the usdt probes matching path, provider and
// name (wildcards as the runtime expands them), for argN's code; with
// Options.PID a probe without a path is the process's, and
// usdt:PROVIDER:NAME is read as such when PROVIDER is no file.
func (r *Sources) USDTSites(path, provider, name string) ([]USDTSite, error) {
	pid := r.opts.PID
	probes, err := USDTProbes(path, pid)
	if err != nil && provider == "" && pid > 0 {
		// usdt:PROVIDER:NAME with -p: the target is the provider.
		path, provider = "", path
		probes, err = USDTProbes("", pid)
	}
	if err != nil {
		return nil, err
	}
	var sites []USDTSite
	for _, p := range probes {
		if provider != "" && !Glob(provider, p.Provider) || !Glob(name, p.Name) {
			continue
		}
		for _, loc := range p.Locations {
			sites = append(sites, USDTSite{PC: loc.PC, Args: loc.Args})
		}
	}
	if len(sites) == 0 {
		return nil, fmt.Errorf("no USDT probe %s:%s in %s", provider, name, path)
	}
	return sites, nil
}
