package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
)

// kprobeProvider attaches kprobe:/kretprobe: [MOD:]FUNC[+OFF] with
// wildcards over the traceable kernel functions. Kernels built without
// kprobes (this project's CI kernel among them) are detected before
// anything is attached, with one message naming the missing support.
type kprobeProvider struct{ probeSide }

func init() {
	registerPair(lang.ProbeKprobe, lang.ProbeKretprobe, func(s probeSide) provider { return kprobeProvider{s} })
}

// kprobeSupport reports why this kernel cannot attach kprobes, or nil.
func kprobeSupport() error {
	if _, err := os.Stat("/sys/bus/event_source/devices/kprobe/type"); err == nil {
		return nil
	}
	if dir, err := tracefsDir(); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "kprobe_events")); err == nil {
			return nil
		}
	}
	return errors.New("this kernel has no kprobe support (CONFIG_KPROBES/CONFIG_KPROBE_EVENTS not set: no 'kprobe' PMU in /sys/bus/event_source/devices and no kprobe_events in tracefs)")
}

// kernelFuncs lists traceable kernel functions: available_filter_functions
// (names with their module, "func [mod]"), else /proc/kallsyms text symbols
// without the ones that are not function entries (see untraceableSym).
var kernelFuncs = sync.OnceValues(func() ([]kfuncName, error) {
	var out []kfuncName
	if dir, err := tracefsDir(); err == nil {
		if f, err := os.Open(filepath.Join(dir, "available_filter_functions")); err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) == 0 || skippedFunc(fields[0]) {
					continue
				}
				kn := kfuncName{name: fields[0]}
				if len(fields) > 1 {
					kn.mod = strings.Trim(fields[1], "[]")
				}
				out = append(out, kn)
			}
			if sc.Err() == nil && len(out) > 0 {
				return dedupeKfuncs(out), nil
			}
			out = nil
		}
	}
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, fmt.Errorf("list kernel functions: %w", err)
	}
	defer f.Close()
	err = ktypes.KallsymsText(f, func(name, mod string) {
		// JIT-compiled BPF programs and trampolines ([bpf]), ftrace
		// and kprobe trampolines ([__builtin__ftrace], ...).
		if untraceableSym(name) || mod == "bpf" || strings.HasPrefix(mod, "__builtin__") {
			return
		}
		out = append(out, kfuncName{name: name, mod: mod})
	})
	if err != nil {
		return nil, fmt.Errorf("read /proc/kallsyms: %w", err)
	}
	return dedupeKfuncs(out), nil
})

// skippedFunc: names bpftrace never offers as kprobes even when ftrace
// lists them: partial-inlining fragments ("foo.part.0") and the
// placeholders ftrace prints for addresses it could not resolve.
func skippedFunc(name string) bool {
	return strings.Contains(name, ".part.") || strings.HasPrefix(name, "__ftrace_invalid_address__")
}

// untraceableSym reports kallsyms text symbols that are not probe-able
// function entries (only needed when available_filter_functions, the
// kernel's own list, cannot be read): the padding and CFI preambles before
// every function (__pfx_*, __cfi_*), position-independent aliases (__pi_*),
// cold and partial fragments split out by the compiler (.cold, .part.),
// static-call trampolines (__SCT__*), retpoline and return thunks, the
// system call entry code, and section boundary markers. (Symbols of JIT-ed
// BPF programs and of trampolines, listed as modules [bpf] and
// [__builtin__*], are left out by the caller.)
func untraceableSym(name string) bool {
	for _, p := range []string{"__pfx_", "__cfi_", "__pi_", "__SCT__", "__x86_indirect_", "__x86_return_", "entry_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch {
	case skippedFunc(name), strings.Contains(name, ".cold"),
		strings.HasSuffix(name, "_thunk"),
		strings.HasSuffix(name, "_text_start"), strings.HasSuffix(name, "_text_end"),
		name == "_stext", name == "_text", name == "_etext", name == "_sinittext", name == "_einittext":
		return true
	}
	return false
}

type kfuncName struct{ name, mod string }

func dedupeKfuncs(in []kfuncName) []kfuncName {
	sort.Slice(in, func(i, j int) bool {
		if in[i].name != in[j].name {
			return in[i].name < in[j].name
		}
		return in[i].mod < in[j].mod
	})
	out := in[:0]
	for i, k := range in {
		if i > 0 && in[i-1] == k {
			continue
		}
		out = append(out, k)
	}
	return out
}

// denyReason says why a kernel function must not be probed, or "" (the
// list is the compiler's, which applies it when expanding kfunc wildcards).
func denyReason(fn string) string { return compiler.DenyReason(fn) }

// wantsKprobeMulti: wildcard kprobes go through one kprobe_multi link when
// the kernel has kprobes and the link type.
func wantsKprobeMulti(aps []*lang.AttachPoint) bool {
	if len(aps) == 0 {
		return false
	}
	for _, ap := range aps {
		if (ap.Provider != lang.ProbeKprobe && ap.Provider != lang.ProbeKretprobe) || !hasWildcard(ap.Func) || ap.Offset != 0 {
			return false
		}
	}
	return kprobeSupport() == nil && features.HaveBPFLinkKprobeMulti() == nil
}

func (k kprobeProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	if err := moduleLoaded(ap); err != nil {
		return nil, err
	}
	// Functions that cannot be traced safely are refused first, with
	// their reason, whatever the kernel supports.
	probes, err := expandKernelFuncs(k.kind.String(), ap, env)
	var miss *noKernelFuncError
	if err != nil && !errors.As(err, &miss) {
		return nil, err
	}
	if serr := kprobeSupport(); serr != nil {
		e := fmt.Errorf("%s: %w", apName(ap), serr)
		if miss != nil {
			// The kernel's lack is what is said; that nothing matched
			// still decides for bpftrace 0.17, which drops an expanded
			// attach point matching nothing (see Expand).
			return nil, &alsoNoMatch{e, miss}
		}
		return nil, e
	}
	return probes, err
}

// alsoNoMatch is an error said as its first part that also reports an
// expansion that matched nothing (errors.As finds either).
type alsoNoMatch struct {
	error
	miss error
}

func (e *alsoNoMatch) Unwrap() []error { return []error{e.error, e.miss} }

// moduleLoaded refuses kprobe:MODULE:FUNC for a module that is not
// loaded, in bpftrace's words (a module is loaded when /sys/module has
// it; vmlinux and patterns always pass).
func moduleLoaded(ap *lang.AttachPoint) error {
	mod := ap.Target
	if mod == "" || mod == "vmlinux" || hasWildcard(mod) {
		return nil
	}
	if _, err := os.Stat(filepath.Join("/sys/module", mod)); err == nil {
		return nil
	}
	return fmt.Errorf("specified module %s in probe %s is not loaded.", mod, apName(ap))
}

// noKernelFuncError is a pattern matching no traceable kernel function,
// with a "did you mean" for a name.
type noKernelFuncError struct{ msg, hint string }

func (e *noKernelFuncError) Error() string { return e.msg }

// Unwrap gives the diagnostic its hint (ProbeError).
func (e *noKernelFuncError) Unwrap() error { return &lang.HintError{Msg: e.msg, Hint: e.hint} }

// expandKernelFuncs resolves [MOD:]FUNC patterns against the traceable
// kernel functions. Functions that cannot be traced safely are refused
// with their reason; a wildcard matching any of them is refused as a
// whole (attaching the rest would still leave the user guessing what was
// left out, and the seed's '*spin*' froze the machine).
func expandKernelFuncs(kind string, ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	if ap.Func == "" {
		return nil, fmt.Errorf("%s needs a function name", kind)
	}
	if kind == lang.ProbeKretprobe.String() && compiler.BpftraceBannedKretprobe(ap.Func) {
		// bpftrace's own refusal, in its words, whether or not this
		// kernel has the function.
		return nil, fmt.Errorf("error: kretprobe:%s can't be used as it might lock up your system.", ap.Func)
	}
	funcs, err := kernelFuncs()
	if err != nil {
		return nil, err
	}
	var out []*Probe
	var denied []kfuncName
	seen := map[string]bool{}
	for _, f := range funcs {
		if !glob(ap.Func, f.name) || (ap.Target != "" && !glob(ap.Target, f.mod)) {
			continue
		}
		// The same static name in several modules is one probe target
		// for kprobes by name.
		if seen[f.name] {
			continue
		}
		seen[f.name] = true
		if denyReason(f.name) != "" {
			denied = append(denied, f)
			continue
		}
		name := kind + ":" + f.name
		if ap.Offset > 0 {
			name += fmt.Sprintf("+%d", ap.Offset)
		}
		out = append(out, &Probe{Name: name, Target: f.mod, Func: f.name, Offset: uint64(ap.Offset)})
	}
	if len(denied) > 0 {
		if !hasWildcard(ap.Func) {
			return nil, fmt.Errorf("refusing to trace %s: %s", denied[0].name, denyReason(denied[0].name))
		}
		return nil, deniedWildcardError(kind, ap, denied, len(denied)+len(out))
	}
	if len(out) == 0 {
		if hasWildcard(ap.Func) {
			return nil, &noKernelFuncError{msg: "no kernel functions match " + ap.Func}
		}
		names := make([]string, 0, len(funcs))
		for _, f := range funcs {
			if f.name != "" && f.name[0] == ap.Func[0] && denyReason(f.name) == "" {
				names = append(names, f.name)
			}
		}
		return nil, &noKernelFuncError{"kernel function not found or not traceable: " + ap.Func, lang.Suggest(ap.Func, names)}
	}
	return out, nil
}

// deniedWildcardError refuses a wildcard that matches functions that
// cannot be traced safely (compiler.DeniedWildcard's message).
func deniedWildcardError(kind string, ap *lang.AttachPoint, denied []kfuncName, total int) error {
	pattern := ap.Func
	if ap.Target != "" {
		pattern = ap.Target + ":" + ap.Func
	}
	names := make([]string, len(denied))
	for i, f := range denied {
		names[i] = f.name
	}
	return errors.New(compiler.DeniedWildcard(kind, pattern, names, total))
}

func (k kprobeProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	if len(probes) > 0 && probes[0].Multi {
		syms := make([]string, len(probes))
		cookies := make([]uint64, len(probes))
		for i, p := range probes {
			syms[i], cookies[i] = p.Func, p.Cookie
		}
		var (
			l   link.Link
			err error
		)
		if k.ret {
			l, err = link.KretprobeMulti(prog, link.KprobeMultiOptions{Symbols: syms, Cookies: cookies})
		} else {
			l, err = link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: syms, Cookies: cookies})
		}
		if err != nil {
			return out, fmt.Errorf("attach %d %ss: %w", len(probes), k.kind.String(), err)
		}
		return append(out, l), nil
	}
	for _, p := range probes {
		opts := &link.KprobeOptions{Offset: p.Offset, TraceFSPrefix: "gotrace", Cookie: p.Cookie}
		var (
			l   link.Link
			err error
		)
		if k.ret {
			l, err = link.Kretprobe(p.Func, prog, opts)
		} else {
			l, err = link.Kprobe(p.Func, prog, opts)
		}
		if err != nil {
			if p.Offset > 0 && !k.ret && errors.Is(err, os.ErrNotExist) {
				// The function exists (Expand found it): the kernel refused
				// the offset (EILSEQ, which cilium/ebpf reports as "not
				// found" after retrying with the arch prefix).
				return out, fmt.Errorf("attach %s: the kernel refused offset %d of %s: not at an instruction boundary (or past the function's end): %w",
					p.Name, p.Offset, p.Func, err)
			}
			return out, fmt.Errorf("attach %s: %w", p.Name, err)
		}
		out = append(out, l)
	}
	return out, nil
}
