// Package layout resolves the types a script touches, once, from three
// sources: the kernel's BTF, tracepoint format files and C declarations
// (in the script or #include'd headers). Each source is loaded lazily: a
// script that never names a kernel struct never loads vmlinux BTF.
package ktypes

import (
	"errors"
	"fmt"

	"github.com/gotrace/gotrace/lang/types"
)

// Resolver is what the checker asks for types. Every method returns an error
// that names the thing and the source it tried when the lookup fails.
type Resolver interface {
	// Tracepoint returns the record type of tracepoint category:event's
	// arguments (the fields of its format file, common_* fields excluded),
	// named "struct _tracepoint_CATEGORY_EVENT" as bpftrace names it.
	Tracepoint(category, event string) (*types.Type, error)
	// Type looks up a named type: "struct task_struct", "union x", "enum y",
	// or a typedef/base type name ("u32", "pid_t", "char").
	Type(name string) (*types.Type, error)
	// Func returns a kernel function's arguments as a record (one field per
	// parameter, in order, for kfunc args) and its return type.
	Func(name string) (args *types.Type, ret *types.Type, err error)
	// RawTracepoint returns a BTF-typed raw tracepoint's arguments as a
	// record (from the btf_trace_NAME typedef), for `args` on rawtracepoint.
	RawTracepoint(name string) (args *types.Type, err error)
	// Enum looks up an enumerator by name (from script declarations or BTF).
	Enum(name string) (value int64, typ *types.Type, ok bool)
	// TracepointMatches lists the category/event pairs a wildcard
	// tracepoint pattern matches, in a stable order.
	TracepointMatches(category, event string) ([][2]string, error)
	// FuncMatches lists the (module, function) pairs of BTF functions a
	// kfunc/kretfunc pattern matches, in a stable order (module "" is
	// vmlinux).
	FuncMatches(module, pattern string) ([][2]string, error)
	// UprobeArgs returns a user function's arguments (from the binary's
	// DWARF) as a record.
	UprobeArgs(path, function string) (*types.Type, error)
	// CheckDecls lists the problems of the script's own C declarations,
	// found by laying out every struct and union it defines.
	CheckDecls() []*DeclError
	// KernelFunc returns the vmlinux BTF ID of a kernel function (a kfunc
	// a program calls).
	KernelFunc(name string) (uint32, error)
	// KernelVar returns the vmlinux BTF ID of a kernel global variable and
	// whether it is per-CPU.
	KernelVar(name string) (id uint32, percpu bool, err error)
	// USDTSites lists the sites, with their decoded arguments, of the usdt
	// probes usdt:PATH:PROVIDER:NAME names (path or provider may be empty
	// with a PID), for argN's code.
	USDTSites(path, provider, name string) ([]USDTSite, error)
	// KernelSymbol is the address of the first kernel symbol of that name
	// (kaddr), from kallsyms.
	KernelSymbol(name string) (uint64, bool)
}

// Unresolved is a Resolver that knows nothing: every lookup fails. Test
// resolvers embed it and answer the few lookups they know.
type Unresolved struct{}

var _ Resolver = Unresolved{}

func (Unresolved) Tracepoint(category, event string) (*types.Type, error) {
	return nil, &NotFoundError{Kind: "tracepoint", Name: category + ":" + event}
}

func (Unresolved) Type(name string) (*types.Type, error) {
	return nil, &NotFoundError{Kind: kindOfName(name), Name: name}
}

func (Unresolved) Func(name string) (*types.Type, *types.Type, error) {
	return nil, nil, &NotFoundError{Kind: "function", Name: name}
}

func (Unresolved) RawTracepoint(name string) (*types.Type, error) {
	return nil, &NotFoundError{Kind: "raw tracepoint", Name: name}
}

func (Unresolved) Enum(string) (int64, *types.Type, bool) { return 0, nil, false }

func (Unresolved) TracepointMatches(category, event string) ([][2]string, error) {
	return nil, errors.New("no tracepoint list available")
}

func (Unresolved) FuncMatches(module, pattern string) ([][2]string, error) {
	return nil, errors.New("cannot expand the wildcard: no BTF function list available")
}

func (Unresolved) UprobeArgs(path, function string) (*types.Type, error) {
	return nil, fmt.Errorf("no debug information for %s", path)
}

func (Unresolved) CheckDecls() []*DeclError { return nil }

func (Unresolved) KernelFunc(name string) (uint32, error) {
	return 0, &NotFoundError{Kind: "function", Name: name}
}

func (Unresolved) KernelVar(name string) (uint32, bool, error) {
	return 0, false, fmt.Errorf("no kernel BTF to resolve variable %q", name)
}

func (Unresolved) KernelSymbol(string) (uint64, bool) { return 0, false }

func (Unresolved) USDTSites(path, provider, name string) ([]USDTSite, error) {
	return nil, errors.New("the arguments of usdt probes are unknown here")
}
