// Package layout resolves the types a script touches, once, from three
// sources: the kernel's BTF, tracepoint format files and C declarations
// (in the script or #include'd headers). Each source is loaded lazily: a
// script that never names a kernel struct never loads vmlinux BTF.
package ktypes

import "github.com/gotrace/gotrace/lang/types"

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
}
