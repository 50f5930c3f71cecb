// Package sym resolves what gotrace prints about the live system: kernel
// symbols (/proc/kallsyms), user symbols (ELF .symtab/.dynsym through
// /proc/PID/maps), stack traces stored in the STACK_TRACE maps, user names
// (/etc/passwd) and cgroup paths (cgroupfs). A *Symbolizer implements
// output.Symbolizer, printing as bpftrace 0.17 does.
package sym

import (
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/ianlancetaylor/demangle"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/runtime/output"
)

var _ output.Symbolizer = (*Symbolizer)(nil)

// Options configure a Symbolizer; zero values mean the live system's files.
type Options struct {
	Kallsyms string // default /proc/kallsyms
	ProcDir  string // default /proc
	Passwd   string // default /etc/passwd
	Mounts   string // default /proc/mounts (cgroup hierarchies)
	// NoDemangle prints C++/Rust symbols as they are in the ELF file
	// (the command sets it for config cpp_demangle = 0 and its variable).
	NoDemangle bool
	// MaxPIDs bounds how many process snapshots are kept (default 8192).
	MaxPIDs int
}

// Symbolizer resolves symbols, stacks, user names and cgroup paths. It is
// safe for concurrent use. Everything is read lazily and cached.
type Symbolizer struct {
	opts       Options
	procDir    string
	noDemangle bool
	maxPIDs    int

	kmu   sync.Mutex // guards ksyms, kErr, kcache
	ksyms *ktypes.Kallsyms
	kErr  error
	// kcache are the addresses PrepareKernelStacks resolved without the
	// index.
	kcache map[uint64]ktypes.KernelSym

	mu       sync.Mutex
	procs    map[int]*procSyms
	pidOrder []int
	vdsoObj  *elfObj
	// programs are the probed fixed-address executables (AddProgram).
	programs  []program
	vdsoTried bool
	demangled map[string]string

	stacks    map[string]*ebpf.Map // STACK_TRACE maps by name (SetStackMap)
	stackErrs StackErrors
	// frames are the addresses of the stacks read so far from the
	// content-keyed (hash) stack maps, by map name and id: a stack's id
	// is the hash of its frames, so what it names never changes.
	frames map[string]map[uint64][]uint64

	users  userCache
	cgroup cgroupCache

	debugInfo bool // source lines and inlined frames in user stacks (SetDebugInfo)
}

// New returns a Symbolizer; it reads nothing until asked.
func New(opts Options) *Symbolizer {
	if opts.Kallsyms == "" {
		opts.Kallsyms = "/proc/kallsyms"
	}
	if opts.ProcDir == "" {
		opts.ProcDir = "/proc"
	}
	if opts.Passwd == "" {
		opts.Passwd = "/etc/passwd"
	}
	if opts.Mounts == "" {
		opts.Mounts = "/proc/mounts"
	}
	if opts.MaxPIDs <= 0 {
		opts.MaxPIDs = 8192
	}
	return &Symbolizer{
		opts:       opts,
		procDir:    strings.TrimSuffix(opts.ProcDir, "/"),
		noDemangle: opts.NoDemangle,
		maxPIDs:    opts.MaxPIDs,
		procs:      map[int]*procSyms{},
		demangled:  map[string]string{},
	}
}

// Kernel returns the kallsyms index, reading it on first use.
func (s *Symbolizer) Kernel() (*ktypes.Kallsyms, error) {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if s.ksyms == nil && s.kErr == nil {
		s.ksyms, s.kErr = ktypes.LoadKallsyms(s.opts.Kallsyms)
	}
	return s.ksyms, s.kErr
}

// RefreshKernel drops the kallsyms index so the next lookup reads it
// again: BPF programs and modules loaded since then get their symbols
// (call it after loading programs if kaddr() read kallsyms before).
func (s *Symbolizer) RefreshKernel() {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	s.ksyms, s.kErr, s.kcache = nil, nil, nil
}

// KernelSym is ksym()'s text: the name of the kernel function holding
// addr, or the address as bpftrace prints an unknown one.
func (s *Symbolizer) KernelSym(addr uint64) string {
	if k, err := s.Kernel(); err == nil {
		if name, _, _, ok := k.Lookup(addr); ok {
			return name
		}
	}
	return output.UnknownAddr(addr)
}

// KernelFrame resolves addr for a kernel stack: Sym is "" when unknown.
func (s *Symbolizer) KernelFrame(addr uint64) output.Frame {
	f := output.Frame{Addr: addr}
	if r, ok := s.cachedKernel(addr); ok {
		f.Sym, f.Offset = r.Name, addr-r.Base
		return f
	}
	if k, err := s.Kernel(); err == nil {
		if name, off, _, ok := k.Lookup(addr); ok {
			f.Sym, f.Offset = name, off
		}
	}
	return f
}

// KernelAddr is kaddr(): the address of the kernel symbol name.
func (s *Symbolizer) KernelAddr(name string) (uint64, bool) {
	k, err := s.Kernel()
	if err != nil {
		return 0, false
	}
	return k.Addr(name)
}

// UserSym is usym()'s text: the (demangled) name of the symbol holding
// addr in process pid, or the address as bpftrace prints an unknown one.
func (s *Symbolizer) UserSym(pid int, addr uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sm, _, _ := s.userFrameLocked(pid, addr); sm != nil {
		return s.displayLocked(sm.Name)
	}
	return output.UnknownAddr(addr)
}

// UserFrame resolves addr in process pid for a user stack: Sym is "" when
// unknown, Module the mapped file's path when addr is in one.
func (s *Symbolizer) UserFrame(pid int, addr uint64) output.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userFrameOutLocked(pid, addr)
}

func (s *Symbolizer) userFrameOutLocked(pid int, addr uint64) output.Frame {
	f := output.Frame{Addr: addr}
	sm, off, mod := s.userFrameLocked(pid, addr)
	f.Module = mod
	if sm != nil {
		f.Sym, f.Offset = s.displayLocked(sm.Name), off
	}
	return f
}

// displayLocked is the name as printed: C++ (and Rust) names demangled
// unless turned off. Only mangled-looking names are tried, so a C symbol
// never turns into a type name.
func (s *Symbolizer) displayLocked(name string) string {
	if s.noDemangle || !(strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R")) {
		return name
	}
	if d, ok := s.demangled[name]; ok {
		return d
	}
	d, err := demangle.ToString(name)
	if err != nil {
		d = name
	}
	if len(s.demangled) < 1<<16 {
		s.demangled[name] = d
	}
	return d
}

// Demangle is name as gotrace prints it (see Options.NoDemangle).
func (s *Symbolizer) Demangle(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.displayLocked(name)
}
