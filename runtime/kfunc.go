package runtime

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
)

// kfuncProvider attaches kfunc:/kretfunc: (fentry/fexit through BPF
// trampolines). Each program is loaded for one function (AttachTo); a
// wildcard clause becomes one program per function in the compiler.
type kfuncProvider struct{ ret bool }

func init() {
	register("kfunc", kfuncProvider{})
	register("kretfunc", kfuncProvider{ret: true})
}

func (k kfuncProvider) kind() string {
	if k.ret {
		return "kretfunc"
	}
	return "kfunc"
}

// btfFuncNames lists the kernel's BTF functions, sorted.
var btfFuncNames = sync.OnceValues(func() ([]string, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, fmt.Errorf("load kernel BTF: %w", err)
	}
	var out []string
	for t, err := range spec.All() {
		if err != nil {
			return nil, fmt.Errorf("read kernel BTF: %w", err)
		}
		if fn, ok := t.(*btf.Func); ok && fn.Name != "" {
			out = append(out, fn.Name)
		}
	}
	sort.Strings(out)
	return out, nil
})

func (k kfuncProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	if ap.Func == "" {
		return nil, fmt.Errorf("%s needs a function name", k.kind())
	}
	names, err := btfFuncNames()
	if err != nil {
		return nil, err
	}
	var out []*Probe
	for _, n := range names {
		if !glob(ap.Func, n) {
			continue
		}
		if r := denyReason(n); r != "" {
			if !hasWildcard(ap.Func) {
				return nil, fmt.Errorf("refusing to trace %s: %s", n, r)
			}
			continue
		}
		out = append(out, &Probe{Name: k.kind() + ":" + n, Func: n})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no BTF function matches %s (kfunc needs the function in /sys/kernel/btf/vmlinux)", ap.Func)
	}
	return out, nil
}

func (k kfuncProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	for _, p := range probes {
		at := ebpf.AttachTraceFEntry
		if k.ret {
			at = ebpf.AttachTraceFExit
		}
		l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: at})
		if err != nil {
			return out, fmt.Errorf("attach %s: %w", p.Name, fentryError(err))
		}
		out = append(out, l)
	}
	return out, nil
}

// errNoTrampoline is this kernel refusing fentry/fexit programs.
var errNoTrampoline = errors.New("this kernel refuses fentry/fexit programs (BPF trampolines need CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)")

var (
	errEPERM    = unix.EPERM
	errENOTSUPP = unix.Errno(524) // the kernel-internal ENOTSUPP
)

func fentryError(err error) error {
	if errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, errEPERM) || errors.Is(err, errENOTSUPP) {
		return &trampolineError{cause: err}
	}
	return err
}

// trampolineError says only what the user needs (cilium's text would add a
// misleading MEMLOCK hint to the EPERM); the kernel's error stays reachable.
type trampolineError struct{ cause error }

func (e *trampolineError) Error() string   { return errNoTrampoline.Error() }
func (e *trampolineError) Unwrap() []error { return []error{errNoTrampoline, e.cause} }
