package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Gen is the code-generation context a builtin's GenFunc receives. The
// compiler implements it (compiler/builtin.go).
//
// Register conventions: R0-R5 are scratch registers clobbered by helper
// calls; R6-R9 hold the compiler's live temporaries and survive calls;
// R10 is the frame pointer. A GenFunc may use R0-R5 freely between the
// compiler's calls; registers returned by EvalInt are callee-saved and stay
// valid until Free.
type Gen interface {
	// Emit appends instructions, tagged with the call's source position.
	Emit(insns ...asm.Instruction)
	// Label returns a fresh, unique jump label starting with prefix.
	Label(prefix string) string
	// AttachPoint is the attach point the program is compiled for (the
	// clause's first one when several share a program).
	AttachPoint() *lang.AttachPoint
	// ProbeName is the attach point's full name, as `probe` gives it.
	ProbeName() string
	// ProbeID is the id of the attach point in Spec.Probes (the value of
	// the `probe` builtin).
	ProbeID() int
	// ProbeCookie reports whether the program reads `probe` from its
	// attach cookie instead (wildcard attach points: the runtime gives
	// each expanded probe the index of its name, compiler/ABI.md).
	ProbeCookie() bool
	// StrLen is the configured maximum string length.
	StrLen() int

	// LoadCtx emits dst = the program's context pointer.
	LoadCtx(dst asm.Register)
	// EvalInt evaluates an integer (or pointer) expression into a
	// callee-saved register, extended to 64 bits as its type says.
	EvalInt(e lang.Expr) (asm.Register, error)
	// EvalAddr evaluates an expression whose value lives in memory (string,
	// tuple, record, buffer ...) and emits dst = its address. dst must be
	// one of R1-R5 and is valid until the next helper call.
	EvalAddr(e lang.Expr, dst asm.Register) error
	// Hold moves src (R0-R5) into a callee-saved register that survives
	// helper calls, until Free.
	Hold(src asm.Register) (asm.Register, error)
	// StackTemp reserves size bytes of stack for the rest of the statement
	// and returns their offset from R10.
	StackTemp(size int) (int16, error)
	// Place puts a label (from Label) on the next emitted instruction.
	Place(label string)
	// ArgsCount is the number of arguments of the kfunc/kretfunc being
	// probed (-1 if unknown); kretfunc's return value follows them.
	ArgsCount() int
	// Free releases a register returned by EvalInt or Hold.
	Free(r asm.Register)

	// SetResult says the call's integer value is in register r, already
	// extended to 64 bits as the call's type says.
	SetResult(r asm.Register)
	// ResultMem reserves memory for the call's value (of size bytes,
	// zeroed when zero is set) and emits dst = its address. dst must be one
	// of R1-R5. The call's value is that memory.
	ResultMem(dst asm.Register, size int, zero bool)
	// ConstResult says the call's value is the string s (a constant).
	ConstResult(s string)

	// Event emits a ring-buffer record of the given kind whose payload is
	// the values of args laid out as a tuple; it returns the event's ID.
	Event(kind EventKind, format string, mapName string, args []lang.Expr) (int, error)
	// Aggregate emits the update of the map the aggregation call c is
	// assigned to, as described by op.
	Aggregate(c *Call, op AggOp) error
	// MapCall emits op (delete, has_key, find, len, clear, zero, print)
	// on the map argument of c.
	MapCall(c *Call, op MapOp) error
	// Return emits the program's exit (return 0).
	Return()
	// MapRef emits dst = pointer to the internal map named name, creating
	// it from spec on first use (key/value sizes, type).
	MapRef(dst asm.Register, name string, spec InternalMap)
	// TempMem reserves size bytes (zeroed when zero is set) for the rest of
	// the statement: on the stack when small, in per-CPU scratch space
	// otherwise. TempAddr emits dst = the address of byte off in it.
	TempMem(size int, zero bool) Temp
	TempAddr(dst asm.Register, t Temp, off int)
	// SetResultTemp says the call's value is the memory t.
	SetResultTemp(t Temp)
	// Output emits a ring-buffer record: the size bytes at t, which start
	// with a u64 event ID.
	Output(t Temp, size int)
	// EventFormat registers an event format without emitting a record and
	// returns its ID (strftime's format, a record the builtin builds).
	EventFormat(kind EventKind, format string, args *types.Type) int
	// KernelSymbol resolves a kernel symbol's address at compile time.
	KernelSymbol(name string) (uint64, bool)
	// MemberAddr emits the address of a record reached through a pointer
	// (p->f, *p, p[i] and members of those) into a callee-saved register,
	// without reading it; ok is false when e is not such an expression.
	MemberAddr(e lang.Expr) (r asm.Register, ok bool, err error)
	// KernelVar resolves a global variable of the kernel to its vmlinux
	// BTF ID (for a BPF_PSEUDO_BTF_ID load) and says whether it is per-CPU.
	KernelVar(name string) (id uint32, percpu bool, err error)
	// RodataAddr emits dst = the address of s (NUL-terminated) in the
	// program's frozen read-only data map (formats bpf_seq_printf takes).
	RodataAddr(dst asm.Register, s string)
	// Kfunc returns the call of the kernel function (kfunc) name, its
	// vmlinux BTF ID resolved, or a *UserError naming builtin when the
	// kernel lacks it or does not let this probe's program type call it.
	Kfunc(builtin, name string) (asm.Instruction, error)
	// USDTSites are the sites of the usdt probe being compiled, with
	// their decoded argument specs.
	USDTSites() ([]ktypes.USDTSite, error)
	// Host describes the machine and tracer the program is compiled for
	// (the compiler's options; cmd/gotrace reads them).
	Host() Host
	// NamedParams are the program options given after "--" (getopt).
	NamedParams() NamedParams
	// Compat is the bpftrace release the program follows.
	Compat() compat.Version
	// KernelType looks up a named kernel or C type ("struct task_struct").
	KernelType(name string) (*types.Type, error)
	// PtrSpace returns the address space to read a pointer-typed
	// expression's memory from (kernel or user), deciding AddrNone by
	// the probe type.
	PtrSpace(t *types.Type) types.AddrSpace
}

// Host is what code generation may know of the machine and the tracer
// process, read once by cmd/gotrace and passed down (the compiler itself
// reads nothing of the system).
type Host struct {
	// NCPUs is the number of possible CPUs (the ncpus builtin); 0 unknown.
	NCPUs int
	// PidNSDev and PidNSIno identify the tracer's pid namespace
	// (stat of /proc/self/ns/pid); zero when it is the initial one, where
	// pid and tid need no translation.
	PidNSDev, PidNSIno uint64
}

// Temp is a handle on memory reserved by TempMem.
type Temp int

// EventKind mirrors compiler.EventKind (the compiler converts it), so
// builtins can ask for records without importing the compiler.
type EventKind uint8

// InternalMap describes an internal map a builtin needs.
type InternalMap struct {
	Type       uint32 // ebpf.MapType
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	// Stacks marks a map of kstack/ustack frames by stack id
	// (compiler.MapSpec.Stacks).
	Stacks bool
}

// AggOp describes how an aggregation updates its map value in place.
// MapOp is what a function of a map (a MapFunc row) does with it: the row
// says it, the compiler's map code emits it.
type MapOp uint8

const (
	MapDelete MapOp = iota // delete(@m[k]), delete(@m, k)
	MapHasKey              // has_key(@m, k)
	MapFind                // find(@m[k], $v), as the checker rewrote it
	MapLen                 // len(@m)
	MapClear               // clear(@m): an EvClear event
	MapZero                // zero(@m): an EvZero event
	MapPrint               // print(@m[, top[, div]]): an EvPrint event
)

type AggOp struct {
	// Kind is the aggregation's value kind (types.Count ...).
	Kind types.Kind
	// Arg is the aggregated value (nil for count()).
	Arg lang.Expr
	// Bucket, if set, computes the extra u64 key part (hist/lhist bucket)
	// from the argument in register arg into register dst (both callee-
	// saved; R0-R5 may be clobbered).
	Bucket func(g Gen, dst, arg asm.Register) error
	// Aux, if set, computes a second value (tseries: the timestamp) into
	// register dst (callee-saved) before the lookup; Bucket then gets it
	// instead of the argument, and UpdateAux/InitAux replace Update/Init.
	Aux                func(g Gen, dst asm.Register) error
	UpdateAux, InitAux func(g Gen, ptr, arg, aux asm.Register)
	// ValueSize is the map value's size in bytes (8, 16 or 24).
	ValueSize int
	// Update emits the in-place update of the value at ptr (a map value
	// pointer in a scratch register) with the argument in arg (if any);
	// it may clobber R0-R5 except ptr.
	Update func(g Gen, ptr, arg asm.Register)
	// Init writes the whole initial value (ValueSize bytes) into the
	// uninitialised buffer at ptr, for a key not yet in the map.
	Init func(g Gen, ptr, arg asm.Register)
}

// Event kinds: what a ring-buffer record asks userspace to do. The one
// enum: compiler.EventKind is this type.
const (
	EvPrintf      EventKind = iota
	EvPrint                 // print(@map) or print(value)
	EvClear                 // clear(@map)
	EvZero                  // zero(@map)
	EvExit                  // exit()
	EvTime                  // time()
	EvCat                   // cat()
	EvSystem                // system()
	EvJoin                  // join()
	EvPrintNonMap           // print(expr)
	// EvHelperError: a helper failed under -k/-kk; Format names the helper
	// (map_lookup_elem ...), Args is (s64 return value), Pos the call.
	EvHelperError
	// EvErrorf, EvWarnf: errorf()/warnf() (bpftrace 0.26): Format and Args
	// as printf, printed on stderr as a diagnostic at Pos.
	EvErrorf
	EvWarnf
	// EvSkbOutput: skboutput()'s file (Format is its path). Its records
	// come through the perf event array MapSkbOutput, not the ring buffer:
	// a SkbOutputHeader, then the packet's first bytes.
	EvSkbOutput
)

var eventKindNames = [...]string{
	EvPrintf: "printf", EvPrint: "print", EvClear: "clear", EvZero: "zero", EvExit: "exit",
	EvTime: "time", EvCat: "cat", EvSystem: "system", EvJoin: "join", EvPrintNonMap: "print_value", EvHelperError: "helper_error", EvErrorf: "errorf", EvWarnf: "warnf", EvSkbOutput: "skboutput",
}

// String names the kind as the compiler's dumps do.
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("event(%d)", k)
}

// StImm emits *(size *)(dst + off) = v. Unlike asm.StoreImm it allows
// 8-byte stores (the kernel sign-extends the 32-bit immediate).
func StImm(dst asm.Register, off int16, v int64, size asm.Size) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(size), Dst: dst, Offset: off, Constant: v}
}
