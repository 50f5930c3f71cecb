package ktypes

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gotrace/gotrace/lang/types"
)

// Options configures New.
type Options struct {
	CDecls      []string // the script's C declarations (struct/union/enum/typedef text)
	Includes    []string // the script's #include targets ("linux/sched.h", "<x.h>", "\"y.h\"")
	IncludeDirs []string // -I directories, searched before the system ones
	Arch        string   // "x86_64"/"amd64" or "arm64"/"aarch64"; "" is the host
	BTFPath     string   // "" is /sys/kernel/btf/vmlinux (module BTF beside it too)
	TracefsDir  string   // "" finds tracefs with TracefsDir()
	// Binaries are the script's uprobe targets: their DWARF types resolve
	// names after the C declarations, before BTF (a cast to a program's
	// struct, bpftrace's DWARF support).
	Binaries []string
	// DebugDirs (--debuginfo) are searched, after the binary's own
	// directory, its .debug and /usr/lib/debug, for the separate debug
	// information of a stripped binary (by build ID or .gnu_debuglink);
	// a relative directory is relative to the binary's.
	DebugDirs []string
	// PID (-p): usdt probes without a path are found in this process.
	PID int
}

// Sources is the Resolver over all three sources. It resolves types the
// way bpftrace does: the script's and included
// headers' C declarations first, then kernel BTF. Each source is read on
// first use: a tracepoint-only script reads one format file and no BTF.
// It is safe for concurrent use.
type Sources struct {
	opts Options

	cOnce sync.Once
	decls *Decls
	cErr  error

	btf   *btfSource
	tps   tracepointCache
	dwarf dwarfCache
	mu    sync.Mutex // serialises Decls use (its layout memo is not locked)

	kallsyms func() *Kallsyms // read once, on first KernelSymbol
}

var _ Resolver = (*Sources)(nil)

// New returns a Sources resolver; nothing is read yet.
func New(opts Options) *Sources {
	charSigned := true
	if a, err := abiFor(opts.Arch); err == nil {
		charSigned = a.charSigned
	}
	return &Sources{opts: opts, btf: newBTFSource(opts.BTFPath, charSigned), dwarf: dwarfCache{dirs: opts.DebugDirs},
		kallsyms: sync.OnceValue(func() *Kallsyms {
			k, err := LoadKallsyms("/proc/kallsyms")
			if err != nil {
				return ParseKallsyms(nil)
			}
			return k
		})}
}

// Decls parses the script's declarations and included headers (once) and
// returns them; the error lists every problem in the script's own
// declarations (headers that were not found are in Decls.Missing).
func (r *Sources) Decls() (*Decls, error) {
	r.cOnce.Do(func() {
		// bpftrace 0.17 defines BPFTRACE_HAVE_BTF for the script's C code
		// when kernel BTF is there: its tools declare kernel structs only
		// under #ifndef BPFTRACE_HAVE_BTF.
		var defs [][2]string
		if r.btf.present() {
			defs = append(defs, [2]string{"BPFTRACE_HAVE_BTF", "1"})
		}
		d, err := parseCFiles(r.opts.CDecls, r.opts.Includes, r.opts.IncludeDirs, r.opts.Arch, defs)
		if d == nil {
			// Only a bad architecture gets here; keep a usable empty scope.
			d, _ = ParseCFiles(nil, nil, nil, "")
		}
		d.Fallback = r.fromBTF
		d.Kernel = func(name string) bool {
			t, err := r.btf.lookup(name)
			return err == nil && t != nil && !t.Opaque
		}
		r.decls, r.cErr = d, err
	})
	return r.decls, r.cErr
}

// DeclError is a problem in the script's C declarations: Name is the
// struct or union concerned ("" when the text does not parse).
type DeclError struct {
	Name string
	Err  error
}

func (e *DeclError) Error() string { return e.Err.Error() }
func (e *DeclError) Unwrap() error { return e.Err }

// CheckDecls parses the script's C declarations and lays out every struct
// and union the script defines, as clang does in bpftrace, so that an error
// in a definition the probes never use is reported too. It reads BTF only
// for typedef names the declarations use but do not define.
func (r *Sources) CheckDecls() []*DeclError {
	if len(r.opts.CDecls) == 0 {
		return nil
	}
	d, err := r.Decls()
	var out []*DeclError
	if err != nil {
		for _, e := range d.errs {
			out = append(out, &DeclError{Err: e})
		}
	}
	for _, name := range d.ScriptRecords() {
		r.mu.Lock()
		_, err := d.Lookup(name)
		r.mu.Unlock()
		var ie *IncompleteError
		if errors.As(err, &ie) {
			out = append(out, &DeclError{Name: name, Err: ie})
		}
	}
	return out
}

// BTFLoaded reports whether kernel BTF has been read (for tests and -v).
func (r *Sources) BTFLoaded() bool { return r.btf.Loaded() }

// tried names the sources consulted, for error messages.
func (r *Sources) tried(withBTF bool, btfErr error) []string {
	var s []string
	if len(r.opts.CDecls) > 0 {
		s = append(s, "the script's declarations")
	}
	if len(r.opts.Includes) > 0 {
		inc := "included headers"
		if r.decls != nil && len(r.decls.Missing) > 0 {
			inc += fmt.Sprintf(" (not found: %s)", strings.Join(r.decls.Missing, ", "))
		}
		s = append(s, inc)
	}
	if withBTF {
		b := r.btf.describe()
		if btfErr != nil {
			b += fmt.Sprintf(" (unavailable: %v)", btfErr)
		}
		s = append(s, b)
	}
	return s
}

// fromBTF is the C declarations' fallback: a name they lack, from BTF.
func (r *Sources) fromBTF(name string) (*types.Type, error) {
	if t, ok := r.fromDWARF(name); ok {
		return t, nil
	}
	t, err := r.btf.lookup(name)
	if t != nil {
		return t, nil
	}
	return nil, &NotFoundError{Kind: kindOfName(name), Name: name, Tried: r.tried(true, err)}
}

// Type looks up a type by C name: "struct task_struct", "union x",
// "enum y", a typedef or base name ("u32", "pid_t", "unsigned long"), or a
// full type name ("struct sock *", "char[16]").
//
// Pointers to named records point to stubs (IsStub): call Type with the
// stub's Name, or Complete, to get the members.
func (r *Sources) Type(name string) (*types.Type, error) {
	d, _ := r.Decls()
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := d.Lookup(strings.TrimSpace(name))
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Tracepoint returns the record a tracepoint's context points to (see
// TracepointRecord), read from its format file once and cached.
func (r *Sources) Tracepoint(category, event string) (*types.Type, error) {
	return r.tps.get(r.opts.TracefsDir, category, event)
}

// Func returns a kernel function's arguments (a record of 8-byte slots, as
// kfunc/kretfunc see them) and return type, from BTF.
//
// A wildcard name resolves to its first match: the checker types `args` of
// a wildcard clause from it, and the compiler checks every match's layout
// of the fields read against it.
func (r *Sources) Func(name string) (*types.Type, *types.Type, error) {
	if IsFuncPattern(name) {
		ms, err := r.FuncMatches("", name)
		if err == nil && len(ms) > 0 {
			name = ms[0][1]
		}
	}
	args, ret, ok, err := r.btf.fn(name)
	if ok {
		return args, ret, nil
	}
	return nil, nil, &NotFoundError{Kind: "function", Name: name, Tried: []string{r.btf.describe() + btfErrNote(err)}}
}

// RawTracepoint returns a raw tracepoint's arguments from BTF.
func (r *Sources) RawTracepoint(name string) (*types.Type, error) {
	args, ok, err := r.btf.rawTracepoint(name)
	if ok {
		return args, nil
	}
	return nil, &NotFoundError{Kind: "raw tracepoint", Name: name,
		Tried: []string{r.btf.describe() + " (btf_trace_" + name + ")" + btfErrNote(err)}}
}

func btfErrNote(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(" (unavailable: %v)", err)
}

// Enum looks up an enumerator: the C declarations first, then BTF.
func (r *Sources) Enum(name string) (int64, *types.Type, bool) {
	d, _ := r.Decls()
	r.mu.Lock()
	v, t, ok := d.Enumerator(name)
	r.mu.Unlock()
	if ok {
		return v, t, true
	}
	if v, t, ok := r.btf.enumerator(name); ok {
		return v, t, true
	}
	// An integer #define is a constant too (bpftrace: strerror(EPERM)
	// after #include <errno.h>), typed int64.
	r.mu.Lock()
	v, ok = d.Macro(name)
	r.mu.Unlock()
	if ok {
		return v, types.S64, true
	}
	return 0, nil, false
}

// Complete returns the full record for a stub (a named record reached
// through a pointer), or t itself when it is not a stub.
func Complete(r Resolver, t *types.Type) (*types.Type, error) {
	if !IsStub(t) {
		return t, nil
	}
	full, err := r.Type(t.Name)
	if err != nil {
		return nil, err
	}
	if full.Kind == types.Record && full.Opaque && full.Fields == nil {
		return nil, fmt.Errorf("%s is an incomplete type (only declared, never defined)", t.Name)
	}
	return full, nil
}

// IsNotFound reports whether err says a name was in none of the sources.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

// TracepointMatches lists the category/event pairs a wildcard tracepoint
// pattern matches, sorted (the checker resolves a wildcard clause's args
// through them, as bpftrace checks every match).
func (r *Sources) TracepointMatches(category, event string) ([][2]string, error) {
	dir := r.opts.TracefsDir
	if dir == "" {
		d, err := TracefsDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	names, err := tracepointsIn(dir, category+":"+event)
	if err != nil {
		return nil, err
	}
	out := make([][2]string, 0, len(names))
	for _, n := range names {
		if c, e, ok := strings.Cut(n, ":"); ok {
			out = append(out, [2]string{c, e})
		}
	}
	return out, nil
}

// KernelSymbol is the address of the first /proc/kallsyms line naming
// name, whatever its type (bpftrace's kaddr); addresses hidden as zero
// are not found.
func (r *Sources) KernelSymbol(name string) (uint64, bool) { return r.kallsyms().Addr(name) }

// KernelFunc returns the vmlinux BTF ID of the kernel function name (a
// kfunc a program calls: bpf_task_from_pid).
func (r *Sources) KernelFunc(name string) (uint32, error) { return r.btf.kernelFunc(name) }

// KernelVar returns the vmlinux BTF ID of the kernel's global variable name
// and whether it is a per-CPU variable (percpu_kaddr).
func (r *Sources) KernelVar(name string) (id uint32, percpu bool, err error) {
	return r.btf.kernelVar(name)
}
