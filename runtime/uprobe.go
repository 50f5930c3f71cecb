package runtime

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gotrace/gotrace/ktypes"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/runtime/sym"
)

// uprobeProvider attaches uprobe:/uretprobe: PATH|LIB:SYMBOL[+OFF],
// PATH:ADDR and wildcards over the binary's function symbols. Many probes
// of one attach point go through one uprobe_multi link (one fd) when the
// kernel has it; the program was loaded for it (see multiUprobe).
type uprobeProvider struct{ probeSide }

func init() {
	registerPair(lang.ProbeUprobe, lang.ProbeUretprobe, func(s probeSide) provider { return uprobeProvider{s} })
}

// elfFunc is a function symbol of a binary.
type elfFunc struct {
	name string
	addr uint64 // virtual address
	size uint64
	// ifunc: an STT_GNU_IFUNC, whose address is the resolver the dynamic
	// linker runs once; a probe there would not fire on the calls.
	ifunc bool
	// global: some table binds the name STB_GLOBAL or STB_WEAK (the
	// exported name, not a local alias such as glibc's __GI_getaddrinfo).
	global bool
}

var elfCache sync.Map // path → []elfFunc

// elfFuncs lists the defined function symbols of path (symtab and dynsym),
// one per name, sorted by name.
func elfFuncs(path string) ([]elfFunc, error) {
	if v, ok := elfCache.Load(path); ok {
		return v.([]elfFunc), nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, ktypes.ELFOpenError(path, err)
	}
	defer f.Close()
	seen := map[string]elfFunc{}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			// IFUNCs are kept, marked: probing one is refused with the
			// reason (the address is the resolver's, run once).
			typ := elf.ST_TYPE(s.Info)
			if typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Value == 0 || s.Section == elf.SHN_UNDEF || s.Name == "" {
				continue
			}
			name := s.Name
			// Versioned dynamic names ("memcpy@@GLIBC_2.14") trace as the base name.
			if i := strings.IndexByte(name, '@'); i > 0 {
				name = name[:i]
			}
			bind := elf.ST_BIND(s.Info)
			global := bind == elf.STB_GLOBAL || bind == elf.STB_WEAK
			if prev, dup := seen[name]; !dup {
				seen[name] = elfFunc{name: name, addr: s.Value, size: s.Size, ifunc: typ == elf.STT_GNU_IFUNC, global: global}
			} else if global && !prev.global && prev.addr == s.Value {
				prev.global = true
				seen[name] = prev
			}
		}
	}
	syms, errSym := f.Symbols()
	add(syms)
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	if errSym != nil {
		// Stripped: a separate debug file (a -dbg package's, a
		// debuglink's) has the local functions too.
		if dbg, _ := ktypes.OpenDebug(f, path); dbg != nil {
			if syms, err := dbg.Symbols(); err == nil {
				add(syms)
			}
			dbg.Close()
		}
	}
	out := make([]elfFunc, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	elfCache.Store(path, out)
	return out, nil
}

func (u uprobeProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	if ap.Lang != "" {
		return nil, fmt.Errorf("%s: language-specific probes (%s) are not supported", u.kind.String(), ap.Lang)
	}
	var (
		paths []string
		shown []string // each path as probe names spell it
		err   error
	)
	anyFile := ap.Target == "*"
	switch {
	case anyFile:
		// uprobe:*:FUNC -p PID: every file the process maps executable,
		// read through its root; named by its path in the process.
		pid := env.lookupPID()
		if pid <= 0 {
			return nil, fmt.Errorf("%s: a uprobe on every binary ('*') needs -p PID", apName(ap))
		}
		mapped, merr := ktypes.MappedExecutables(pid)
		if merr != nil {
			return nil, fmt.Errorf("process %d: %w", pid, merr)
		}
		for _, m := range mapped {
			paths, shown = append(paths, ktypes.MappedPath(pid, m)), append(shown, m)
		}
	case hasWildcard(ap.Target) && strings.Contains(ap.Target, "/"):
		shown, err = ktypes.ShownGlob(ap.Target)
		for _, m := range shown {
			abs, aerr := filepath.Abs(m)
			if aerr != nil {
				return nil, aerr
			}
			paths = append(paths, abs)
		}
	default:
		var (
			p string
			n int
		)
		p, n, err = ktypes.ResolveBinaryAll(ap.Target, env.lookupPID())
		paths = []string{p}
		// A path prints as written (bpftrace 0.26's probe builtin), a
		// library name as the file it resolved to.
		shown = []string{p}
		if strings.Contains(ap.Target, "/") {
			shown = []string{ap.Target}
		}
		if err == nil && n > 1 {
			env.warnAt(ap, fmt.Sprintf("attaching to uprobe target file '%s' but matched %d binaries", p, n))
		}
	}
	if err != nil {
		return nil, err
	}
	var out []*Probe
	for i, path := range paths {
		name := shown[i]
		if ap.SrcFile != "" {
			// A statement probe: where the line table puts the line.
			addrs, err := sym.LineAddrs(path, ap.SrcFile, ap.Line, ap.Col)
			if err != nil {
				return nil, err
			}
			loc := fmt.Sprintf("%s:%d", ap.SrcFile, ap.Line)
			if ap.Col > 0 {
				loc += fmt.Sprintf(":%d", ap.Col)
			}
			for _, a := range addrs {
				off, err := ktypes.FileOffset(path, a)
				if err != nil {
					return nil, err
				}
				out = append(out, &Probe{Name: fmt.Sprintf("%s:%s@%s", u.kind.String(), name, loc), Target: path, Addr: off})
			}
			continue
		}
		if ap.HasAddr {
			off, err := ktypes.FileOffset(path, ap.Address)
			if err != nil {
				// bpftrace's words, without a source position.
				return nil, &bareError{fmt.Sprintf("Could not resolve address: %s:0x%x", ap.Target, ap.Address), err}
			}
			out = append(out, &Probe{Name: fmt.Sprintf("%s:%s:%d", u.kind.String(), name, ap.Address), Target: path, Addr: off})
			continue
		}
		funcs, err := elfFuncs(path)
		if err != nil {
			if anyFile {
				continue // a mapping that cannot be read: no functions there
			}
			return nil, err
		}
		if !hasWildcard(ap.Func) {
			i := sort.Search(len(funcs), func(i int) bool { return funcs[i].name >= ap.Func })
			if i == len(funcs) || funcs[i].name != ap.Func {
				if anyFile {
					continue // not in this file of the process
				}
				names := make([]string, len(funcs))
				for j, f := range funcs {
					names[j] = f.name
				}
				return nil, &noMatchError{&lang.HintError{Msg: fmt.Sprintf("could not resolve symbol: %s:%s", path, ap.Func), Hint: lang.Suggest(ap.Func, names)}}
			}
			fn := funcs[i]
			resolved := false
			if fn.ifunc {
				// The implementation this machine runs, when a process
				// shows it (an IRELATIVE slot of the library's own);
				// else, as bpftrace, the resolver itself, with a warning.
				if impl, err := resolveIFUNC(path, fn.addr, env.lookupPID()); err == nil {
					resolved = true
					fn.addr, fn.size = impl, 0
					for _, g := range funcs { // its implementation's size, when named
						if g.addr == impl && !g.ifunc {
							fn.size = g.size
						}
					}
				} else if env.Warn != nil {
					env.Warn(ifuncWarning(ap, path, fn, funcs))
				}
			}
			if fn.size == 0 && !fn.ifunc && !resolved {
				// A symbol of size 0 (_init): where its code ends is
				// unknown, and the probe could land on an instruction's
				// middle. bpftrace 0.17 refuses it as out of bounds,
				// 0.26 unless --unsafe.
				if env.MissingProbes == "legacy" {
					return nil, &bareError{fmt.Sprintf("Offset outside the function bounds ('%s' size is 0)", ap.Func), nil}
				}
				if !env.Unsafe {
					return nil, &bareError{fmt.Sprintf("Could not determine boundary for %s (symbol has size 0).", ap.Func), nil}
				}
			}
			if ap.Offset < 0 || (fn.size > 0 && uint64(ap.Offset) >= fn.size) {
				return nil, &bareError{fmt.Sprintf("Offset outside the function bounds ('%s' size is %d)", ap.Func, fn.size), nil}
			}
			full := fmt.Sprintf("%s:%s:%s", u.kind.String(), name, ap.Func)
			if ap.Offset > 0 {
				full += fmt.Sprintf("+%d", ap.Offset)
			}
			off, err := ktypes.FileOffset(path, fn.addr+uint64(ap.Offset))
			if err != nil {
				return nil, err
			}
			pr := &Probe{Name: full, Target: path, Func: ap.Func, Addr: off}
			if resolved {
				pr.Note = fmt.Sprintf("%s is an IFUNC, which the dynamic linker resolves on this machine to the code at 0x%x", ap.Func, fn.addr)
				for _, g := range funcs {
					if g.addr == fn.addr && !g.ifunc {
						pr.Note += " (" + g.name + ")"
						break
					}
				}
			}
			out = append(out, pr)
			continue
		}
		// Wildcards: one probe per address (aliases would fire twice),
		// named by the symbol wildcardFuncs picks among the aliases.
		for _, f := range wildcardFuncs(funcs, ap.Func) {
			off, err := ktypes.FileOffset(path, f.addr)
			if err != nil {
				continue // not in an executable segment: not code
			}
			out = append(out, &Probe{Name: fmt.Sprintf("%s:%s:%s", u.kind.String(), name, f.name), Target: path, Func: f.name, Addr: off})
		}
	}
	if len(out) == 0 {
		return nil, &noMatchError{fmt.Errorf("no functions match %s:%s", ap.Target, ap.Func)}
	}
	return out, nil
}

// wildcardFuncs are the functions of funcs (sorted by name) that pattern
// matches, one per address, in name order. Of the names sharing an address
// (aliases: a debug file's local __GI_getaddrinfo and the exported
// getaddrinfo) the global one names the probe, as bpftrace's does; among
// equals the first by name.
func wildcardFuncs(funcs []elfFunc, pattern string) []elfFunc {
	best := map[uint64]int{} // address → index into funcs
	for i, f := range funcs {
		if f.ifunc || !glob(pattern, f.name) {
			continue
		}
		if j, ok := best[f.addr]; !ok || f.global && !funcs[j].global {
			best[f.addr] = i
		}
	}
	var out []elfFunc
	for i, f := range funcs {
		if j, ok := best[f.addr]; ok && j == i {
			out = append(out, f)
		}
	}
	return out
}

// ifuncImpls lists the implementations the symbol table names for the
// IFUNC fn (glibc's __strcmp_avx2 for strcmp, time_syscall for time): the
// dynamic linker picks one at run time, by CPU.
func ifuncImpls(fn elfFunc, funcs []elfFunc) []string {
	var cands []string
	for _, f := range funcs {
		if f.ifunc || f.name == fn.name || f.addr == fn.addr || strings.Contains(f.name, ".") {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(f.name, "_"), strings.TrimLeft(fn.name, "_")+"_") {
			cands = append(cands, f.name)
		}
	}
	return cands
}

// ifuncWarning is the one line said when a probe goes on an IFUNC's
// resolver, which runs once per process, not on each call.
func ifuncWarning(ap *lang.AttachPoint, path string, fn elfFunc, funcs []elfFunc) string {
	impls := ifuncImpls(fn, funcs)
	var which string
	switch {
	case len(impls) == 0:
		which = fmt.Sprintf("%s names none of its implementations (its debug symbols would: a -dbg package)", filepath.Base(path))
	default:
		const max = 8
		if len(impls) > max {
			impls = append(impls[:max:max], fmt.Sprintf("and %d more", len(impls)-max))
		}
		which = fmt.Sprintf("probe one of its implementations in %s instead: %s", filepath.Base(path), strings.Join(impls, ", "))
	}
	return fmt.Sprintf("%s: %s is an IFUNC: the probe is on its resolver, which runs once per process, not on each call; %s",
		apName(ap), fn.name, which)
}

// bareError is an attach error bpftrace prints as a bare "ERROR: msg"
// line, with no source position (its words are part of its output).
type bareError struct {
	msg string
	err error // the cause, for errors.Is
}

func (e *bareError) Error() string { return e.msg }
func (e *bareError) Unwrap() error { return e.err }

// wantsMulti reports whether a program's attach points are best served by
// uprobe_multi links (many probes on one binary), which needs the program
// loaded with that attach type.
func wantsMulti(aps []*lang.AttachPoint) bool {
	if len(aps) == 0 {
		return false
	}
	for _, ap := range aps {
		if (ap.Provider != lang.ProbeUprobe && ap.Provider != lang.ProbeUretprobe) || !hasWildcard(ap.Func) || ap.HasAddr {
			return false
		}
	}
	return features.HaveBPFLinkUprobeMulti() == nil
}

func (u uprobeProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	byPath := map[string][]*Probe{}
	var order []string
	for _, p := range probes {
		if _, ok := byPath[p.Target]; !ok {
			order = append(order, p.Target)
		}
		byPath[p.Target] = append(byPath[p.Target], p)
	}
	multi := len(probes) > 0 && probes[0].Multi
	for _, path := range order {
		ex, err := link.OpenExecutable(path)
		if err != nil {
			return out, fmt.Errorf("open %s: %w", path, err)
		}
		ps := byPath[path]
		if multi {
			// Functions whose first instruction x86 uprobes refuse (a
			// lock or segment prefix) are known before asking the
			// kernel: finding each by bisection costs seconds.
			pre, ps := prescreenX86(path, ps)
			ls, skipped, err := u.attachMulti(ex, prog, ps, env)
			skipped = append(pre, skipped...)
			ps = byPath[path]
			for _, l := range ls {
				out = append(out, l)
			}
			if err != nil {
				return out, fmt.Errorf("attach %d %ss on %s: %w", len(ps), u.kind.String(), path, err)
			}
			if len(skipped) > 0 {
				env.warnf("skipped %d of %d functions in %s whose instructions uprobes cannot probe (e.g. %s)", len(skipped), len(ps), path, skipped[0])
			}
			continue
		}
		for _, p := range ps {
			// Addr is the file offset Expand computed (symbol + offset).
			opts := &link.UprobeOptions{PID: env.PID, Address: p.Addr, TraceFSPrefix: "gotrace", Cookie: p.Cookie}
			sym := p.Func
			var l link.Link
			if u.ret {
				l, err = ex.Uretprobe(sym, prog, opts)
			} else {
				l, err = ex.Uprobe(sym, prog, opts)
			}
			if err != nil {
				if errors.Is(err, link.ErrNoSymbol) {
					return out, fmt.Errorf("could not resolve symbol: %s:%s", path, sym)
				}
				if p.Note != "" {
					return out, fmt.Errorf("attach %s: %s; uprobes cannot probe it there: %w", p.Name, p.Note, err)
				}
				return out, fmt.Errorf("attach %s: %w", p.Name, err)
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// attachMulti attaches ps through one uprobe_multi link. The kernel
// refuses a whole link when one address holds an instruction uprobes
// cannot handle; then the refused functions are found by splitting the set
// in halves (each trial link closed at once), skipped (and reported by the
// caller), and the rest attached through one link again: a few fds
// however many functions are refused.
func (u uprobeProvider) attachMulti(ex *link.Executable, prog *ebpf.Program, ps []*Probe, env *Env) ([]link.Link, []string, error) {
	l, err := u.tryMulti(ex, prog, ps, env)
	if err == nil {
		return []link.Link{l}, nil, nil
	}
	if !refusedAddr(err) {
		return nil, nil, err
	}
	bad, err := u.refusedProbes(ex, prog, ps, env)
	if err != nil {
		return nil, nil, err
	}
	var good []*Probe
	var skipped []string
	for _, p := range ps {
		if bad[p] {
			skipped = append(skipped, p.Func)
		} else {
			good = append(good, p)
		}
	}
	if len(good) == 0 {
		return nil, skipped, nil
	}
	l, err = u.tryMulti(ex, prog, good, env)
	if err != nil {
		return nil, nil, err
	}
	return []link.Link{l}, skipped, nil
}

func (u uprobeProvider) tryMulti(ex *link.Executable, prog *ebpf.Program, ps []*Probe, env *Env) (link.Link, error) {
	addrs := make([]uint64, len(ps))
	cookies := make([]uint64, len(ps))
	for i, p := range ps {
		addrs[i], cookies[i] = p.Addr, p.Cookie
	}
	opts := &link.UprobeMultiOptions{Addresses: addrs, Cookies: cookies, PID: uint32(max(env.PID, 0))}
	if u.ret {
		return ex.UretprobeMulti(nil, prog, opts)
	}
	return ex.UprobeMulti(nil, prog, opts)
}

// refusedAddr: the kernel refused an address of the set.
func refusedAddr(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, errENOTSUPP) || errors.Is(err, unix.EINVAL)
}

// refusedProbes finds the probes of ps whose addresses the kernel refuses.
func (u uprobeProvider) refusedProbes(ex *link.Executable, prog *ebpf.Program, ps []*Probe, env *Env) (map[*Probe]bool, error) {
	l, err := u.tryMulti(ex, prog, ps, env)
	if err == nil {
		l.Close()
		return nil, nil
	}
	if !refusedAddr(err) {
		return nil, err
	}
	if len(ps) == 1 {
		return map[*Probe]bool{ps[0]: true}, nil
	}
	mid := len(ps) / 2
	b1, err := u.refusedProbes(ex, prog, ps[:mid], env)
	if err != nil {
		return nil, err
	}
	b2, err := u.refusedProbes(ex, prog, ps[mid:], env)
	if err != nil {
		return nil, err
	}
	if b1 == nil {
		return b2, nil
	}
	for p := range b2 {
		b1[p] = true
	}
	return b1, nil
}

// prescreenX86 splits off the probes of an x86-64 ELF whose first
// instruction the kernel's uprobe decoder refuses (a lock or ES/CS/SS/DS
// prefix, a VEX instruction: glibc's AVX2 string functions),
// returning their names and the rest.
func prescreenX86(path string, ps []*Probe) ([]string, []*Probe) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, ps
	}
	machine := f.Machine
	f.Close()
	if machine != elf.EM_X86_64 {
		return nil, ps
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, ps
	}
	defer fh.Close()
	var bad []string
	keep := ps[:0:0]
	var b [15]byte
	for _, p := range ps {
		n, _ := fh.ReadAt(b[:], int64(p.Addr))
		if refusedInsn(b[:n]) {
			bad = append(bad, p.Func)
			continue
		}
		keep = append(keep, p)
	}
	return bad, keep
}

// refusedInsn: x86 uprobes reject the instruction (arch/x86/kernel/uprobes.c:
// is_prefix_bad, and good_insns_64 for the first opcode byte; only the
// cases compilers put at function entries are known here, the kernel
// finds the rest).
func refusedInsn(insn []byte) bool {
	for _, c := range insn {
		switch {
		case c == 0xf0 || c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e: // lock, ES, CS, SS, DS
			return true
		case c == 0x66 || c == 0x67 || c == 0xf2 || c == 0xf3 || c == 0x64 || c == 0x65:
			continue // prefixes it accepts
		case c >= 0x40 && c <= 0x4f:
			continue // REX
		}
		return c == 0xc4 || c == 0xc5 // VEX (EVEX, 0x62, it accepts)
	}
	return false
}
