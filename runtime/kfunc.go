package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
)

// kfuncProvider attaches kfunc:/kretfunc: (fentry/fexit through BPF
// trampolines). Each program is loaded for one function (AttachTo); a
// wildcard clause becomes one program per function in the compiler.
type kfuncProvider struct{ probeSide }

func init() {
	registerPair(lang.ProbeKfunc, lang.ProbeKretfunc, func(s probeSide) provider { return kfuncProvider{s} })
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
		return nil, fmt.Errorf("%s needs a function name", k.kind.String())
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
		out = append(out, &Probe{Name: k.kind.String() + ":" + n, Func: n})
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

// kfuncSupport reports why this kernel cannot run kfunc/kretfunc probes,
// or nil: it loads (does not attach) an empty fentry program on vfs_read,
// as bpftrace's feature check does. Listing uses it to leave kfunc out of
// a wildcard provider's list where kfuncs cannot be used.
var kfuncSupport = sync.OnceValue(func() error {
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:       ebpf.Tracing,
		AttachType: ebpf.AttachTraceFEntry,
		AttachTo:   "vfs_read",
		License:    "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err != nil {
		return fmt.Errorf("kfunc: %w", fentryError(err))
	}
	p.Close()
	return nil
})

// btfFunc is a BTF function of vmlinux or of a module, with its prototype.
type btfFunc struct {
	mod, name string
	proto     *btf.FuncProto
}

// kernelBTFFuncs lists the functions of vmlinux's and every module's BTF,
// sorted as bpftrace lists them ("MODULE:FUNC" order). It decodes all of
// BTF (about half a second).
var kernelBTFFuncs = sync.OnceValues(func() ([]btfFunc, error) {
	base, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, fmt.Errorf("load kernel BTF: %w", err)
	}
	var out []btfFunc
	collect := func(mod string, spec *btf.Spec) error {
		for t, err := range spec.All() {
			if err != nil {
				return fmt.Errorf("read %s BTF: %w", mod, err)
			}
			fn, ok := t.(*btf.Func)
			if !ok || fn.Name == "" {
				continue
			}
			if mod != "vmlinux" {
				// A module's split BTF iterates vmlinux's types too.
				if _, err := base.TypeID(t); err == nil {
					continue
				}
			}
			proto, ok := fn.Type.(*btf.FuncProto)
			if !ok {
				continue
			}
			out = append(out, btfFunc{mod: mod, name: fn.Name, proto: proto})
		}
		return nil
	}
	if err := collect("vmlinux", base); err != nil {
		return nil, err
	}
	ents, _ := os.ReadDir(filepath.Dir(ktypes.DefaultBTFPath))
	for _, e := range ents {
		if e.Name() == "vmlinux" || e.IsDir() {
			continue
		}
		spec, err := btf.LoadKernelModuleSpec(e.Name())
		if err != nil {
			continue // a module unloaded meanwhile, or BTF it cannot parse: listed without it
		}
		if err := collect(e.Name(), spec); err != nil {
			return nil, err
		}
	}
	sortBTFFuncs(out)
	return out, nil
})

// listKfuncs prints PROV:MODULE:FUNC for the BTF functions matching, as
// bpftrace 0.17 lists them: only traceable ones with at most 6 parameters;
// verbose adds one line per parameter ("    struct file * file") and the
// return type ("    ssize_t retval") unless it is void.
func listKfuncs(w io.Writer, prov string, match func(mod, name string) bool, verbose bool) error {
	funcs, err := matchingBTFFuncs(match)
	if err != nil {
		return err
	}
	for _, f := range funcs {
		if len(f.proto.Params) > 6 {
			continue
		}
		fmt.Fprintf(w, "%s:%s:%s\n", prov, f.mod, f.name)
		if !verbose {
			continue
		}
		for _, p := range f.proto.Params {
			fmt.Fprintf(w, "    %s %s\n", cDecl(p.Type, ""), p.Name)
		}
		if !isVoid(f.proto.Return) {
			fmt.Fprintf(w, "    %s retval\n", cDecl(f.proto.Return, ""))
		}
	}
	return nil
}

// matchingBTFFuncs are the traceable kernel functions (kernelFuncs) that
// match and have BTF, sorted by "MODULE:FUNC". Looking the candidates up
// by name decodes only their types, far faster than walking all of BTF,
// which is the fallback when the traceable functions cannot be read.
func matchingBTFFuncs(match func(mod, name string) bool) ([]btfFunc, error) {
	var out []btfFunc
	kf, kerr := kernelFuncs()
	if kerr != nil {
		all, err := kernelBTFFuncs()
		if err != nil {
			return nil, err
		}
		for _, f := range all {
			if match(f.mod, f.name) {
				out = append(out, f)
			}
		}
		return out, nil
	}
	base, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, fmt.Errorf("load kernel BTF: %w", err)
	}
	mods := map[string]*btf.Spec{}
	seen := map[[2]string]bool{}
	for _, f := range kf {
		mod := f.mod
		if mod == "" {
			mod = "vmlinux"
		}
		if seen[[2]string{mod, f.name}] || !match(mod, f.name) {
			continue
		}
		seen[[2]string{mod, f.name}] = true
		spec := base
		if mod != "vmlinux" {
			s, ok := mods[mod]
			if !ok {
				s, _ = btf.LoadKernelModuleSpec(mod) // nil: a module without BTF
				mods[mod] = s
			}
			if s == nil {
				continue
			}
			spec = s
		}
		ts, _ := spec.AnyTypesByName(f.name)
		for _, t := range ts {
			fn, ok := t.(*btf.Func)
			if !ok {
				continue
			}
			if spec != base {
				if _, err := base.TypeID(t); err == nil {
					continue // vmlinux's, seen through the module's split BTF
				}
			}
			if proto, ok := fn.Type.(*btf.FuncProto); ok {
				out = append(out, btfFunc{mod: mod, name: f.name, proto: proto})
				break
			}
		}
	}
	sortBTFFuncs(out)
	return out, nil
}

func sortBTFFuncs(fs []btfFunc) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod+":"+fs[i].name < fs[j].mod+":"+fs[j].name })
}

// cDecl spells a BTF type as a C declaration of name ("" for an abstract
// one), the way libbpf's btf_dump__emit_type_decl does, which is what
// bpftrace -lv prints: "struct file *", "const char *", "char * const",
// "void (*)(struct work_struct *)". Anonymous structs, unions and enums
// print as "struct {...}" (libbpf would inline their whole definition).
func cDecl(t btf.Type, name string) string {
	// The declaration chain, outermost first, down to the named or base type.
	var chain []btf.Type
	for t != nil {
		chain = append(chain, t)
		switch v := t.(type) {
		case *btf.Pointer:
			t = v.Target
		case *btf.Const:
			t = v.Type
		case *btf.Volatile:
			t = v.Type
		case *btf.Restrict:
			t = v.Type
		case *btf.TypeTag:
			t = v.Type
		case *btf.FuncProto:
			t = v.Return
		case *btf.Array:
			t = v.Type
		default:
			t = nil
		}
	}
	var b strings.Builder
	emitDeclChain(&b, &chain, name)
	return b.String()
}

// emitDeclChain writes the chain from its base type outwards, consuming it.
func emitDeclChain(b *strings.Builder, stack *[]btf.Type, name string) {
	pop := func() btf.Type {
		t := (*stack)[len(*stack)-1]
		*stack = (*stack)[:len(*stack)-1]
		return t
	}
	// Qualifiers right above a base type print before it ("const char").
	mods := func() {
		for len(*stack) > 0 {
			switch (*stack)[len(*stack)-1].(type) {
			case *btf.Volatile:
				b.WriteString("volatile ")
			case *btf.Const:
				b.WriteString("const ")
			case *btf.Restrict:
				b.WriteString("restrict ")
			default:
				return
			}
			pop()
		}
	}
	dropMods := func() {
		for len(*stack) > 0 {
			switch (*stack)[len(*stack)-1].(type) {
			case *btf.Volatile, *btf.Const, *btf.Restrict:
				pop()
			default:
				return
			}
		}
	}
	emitName := func(lastWasPtr bool) {
		if name != "" && !lastWasPtr {
			b.WriteByte(' ')
		}
		b.WriteString(name)
	}
	lastWasPtr := true
	for len(*stack) > 0 {
		t := pop()
		switch v := t.(type) {
		case *btf.Void:
			mods()
			b.WriteString("void")
		case *btf.Int:
			mods()
			b.WriteString(v.Name)
		case *btf.Float:
			mods()
			b.WriteString(v.Name)
		case *btf.Typedef:
			mods()
			b.WriteString(v.Name)
		case *btf.Struct:
			mods()
			b.WriteString(tagged("struct", v.Name))
		case *btf.Union:
			mods()
			b.WriteString(tagged("union", v.Name))
		case *btf.Enum:
			mods()
			b.WriteString(tagged("enum", v.Name))
		case *btf.Fwd:
			mods()
			kw := "struct"
			if v.Kind == btf.FwdUnion {
				kw = "union"
			}
			b.WriteString(tagged(kw, v.Name))
		case *btf.Pointer:
			if lastWasPtr {
				b.WriteString("*")
			} else {
				b.WriteString(" *")
			}
		case *btf.Volatile:
			b.WriteString(" volatile")
		case *btf.Const:
			b.WriteString(" const")
		case *btf.Restrict:
			b.WriteString(" restrict")
		case *btf.TypeTag:
			mods()
			fmt.Fprintf(b, " __attribute__((btf_type_tag(\"%s\")))", v.Value)
		case *btf.Array:
			dropMods()
			if len(*stack) == 0 {
				emitName(lastWasPtr)
				fmt.Fprintf(b, "[%d]", v.Nelems)
				return
			}
			_, multidim := (*stack)[len(*stack)-1].(*btf.Array)
			if name != "" && !lastWasPtr {
				b.WriteByte(' ')
			}
			if !multidim {
				b.WriteByte('(')
			}
			emitDeclChain(b, stack, name)
			if !multidim {
				b.WriteByte(')')
			}
			fmt.Fprintf(b, "[%d]", v.Nelems)
			return
		case *btf.FuncProto:
			dropMods()
			if len(*stack) > 0 {
				b.WriteString(" (")
				emitDeclChain(b, stack, name)
				b.WriteString(")")
			} else {
				emitName(lastWasPtr)
			}
			b.WriteByte('(')
			ps := v.Params
			if len(ps) == 0 || len(ps) == 1 && isVoid(ps[0].Type) {
				b.WriteString("void)")
				return
			}
			for i, p := range ps {
				if i > 0 {
					b.WriteString(", ")
				}
				if i == len(ps)-1 && isVoid(p.Type) {
					b.WriteString("...")
					break
				}
				b.WriteString(cDecl(p.Type, p.Name))
			}
			b.WriteByte(')')
			return
		default:
			fmt.Fprintf(b, "<%s>", t.TypeName())
		}
		_, lastWasPtr = t.(*btf.Pointer)
	}
	emitName(lastWasPtr)
}

func isVoid(t btf.Type) bool { _, ok := t.(*btf.Void); return ok || t == nil }

// tagged is "struct NAME", or "struct {...}" for an anonymous type.
func tagged(kw, name string) string {
	if name == "" {
		return kw + " {...}"
	}
	return kw + " " + name
}
