// Package compiler turns a checked program into BPF: one program per probe
// clause (per attach type), maps referenced by name, and a table of event
// formats for everything userspace must print. Its output is deterministic
// and touches no kernel: maps are resolved by name when the runtime loads.
package compiler

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// Spec is the compiler's output.
type Spec struct {
	Programs []*Program
	Maps     []*MapSpec
	// Events are the formats of ring-buffer records, indexed by ID: each
	// record starts with a little-endian uint64 event ID.
	Events []*Event
	// Source is the script, for mapping instructions back to lines.
	Source *lang.Source
	// Probes are the full attach-point names by probe id: the value of
	// the `probe` builtin (types.Probe) indexes this list.
	Probes []string
}

// Program is the BPF code of one clause for one kind of attach point.
type Program struct {
	Name   string // a BPF-safe name, unique in the Spec
	Clause int    // index of the clause in the script
	Attach []*lang.AttachPoint
	Type   ebpf.ProgramType
	// AttachType, for program types that need it (tracing fentry/fexit ...).
	AttachType ebpf.AttachType
	// AttachTo is the kernel function or type for BTF-attached programs.
	AttachTo string
	Insns    asm.Instructions // each carries its source position (asm.Comment/WithSource)
	License  string
	// Probe says where the code gets the `probe` builtin's value; ProbeID
	// is the Spec.Probes index of a ProbeConst program.
	Probe   ProbeSource
	ProbeID int
	// RawSyscall is "sys_enter" or "sys_exit" when the program implements
	// syscalls tracepoints (Attach) on that raw tracepoint instead
	// (syscalls.go): the runtime attaches it there once.
	RawSyscall string
	// Continues marks a run-once clause's part after the first: a body
	// too big for the verifier is split between its statements into
	// programs the runtime runs one after another, as one probe (split.go).
	Continues bool
	// Helpers are the BPF helpers the program calls, each once, with the
	// first builtin calling it: what the runtime checks against the kernel
	// when the program is refused (MissingHelper).
	Helpers []HelperUse
}

// HelperUse is a helper a builtin's code calls: Builtin names it as the
// error does ("printf", "reading @x", "for ($kv : @m)"), at Span.
type HelperUse struct {
	Fn      asm.BuiltinFunc
	Builtin string
	Span    lang.Span
}

func (p *Program) callsHelper(fn asm.BuiltinFunc) bool {
	for _, u := range p.Helpers {
		if u.Fn == fn {
			return true
		}
	}
	return false
}

// ProbeSource is where a program's `probe` value comes from (ABI.md).
type ProbeSource uint8

const (
	ProbeUnused ProbeSource = iota // the program does not read `probe`
	// ProbeConst: the constant ProbeID. The runtime may rename that
	// Spec.Probes entry to the attach point's resolved name (a library
	// name becomes its path).
	ProbeConst
	// ProbeCookie: the attach cookie (bpf_get_attach_cookie), for wildcard
	// attach points: the runtime gives each expanded probe the index of its
	// full name in the probe table, Spec.Probes extended at expand time.
	ProbeCookie
)

// MapSpec is one BPF map. Instructions refer to it by Name
// (asm.Instruction.WithReference / LoadMapPtr with a symbol).
type MapSpec struct {
	Name       string
	Type       ebpf.MapType
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	Flags      uint32
	// User is the script's map this implements, nil for internal maps
	// (ring buffer, stack traces, scratch space, ...).
	User *lang.MapInfo
	// PerCPU values are merged by the runtime when printing.
	PerCPU bool
	// Contents, when set, is the value of key 0 of a one-entry ARRAY,
	// written at creation; the map is then frozen (read-only data such
	// as bpf_seq_printf's formats, MapRodata).
	Contents []byte
	// ZeroIsAbsent: a zero value means the script's map has no entry —
	// a key-less count() kept in a one-slot per-CPU array in bpftrace
	// 0.26 mode, where a count that never fired or was cleared or
	// deleted prints nothing (the runtime drops zero entries on reading).
	ZeroIsAbsent bool `json:",omitempty"`
	// BucketIndexKey: a key-less hist()/lhist() kept in a per-CPU array
	// indexed by the u32 bucket (ZeroIsAbsent too); the runtime reads
	// each slot as the hash form's entry, key (u64 0, u64 bucket).
	BucketIndexKey bool `json:",omitempty"`
	// Stacks: the frames of kstack/ustack values by stack id (ABI.md,
	// stack_k/stack_u...): the runtime sizes it (GOTRACE_STACK_MAP_ENTRIES)
	// and the symbolizer reads stacks from it.
	Stacks bool `json:",omitempty"`
}

// EventKind says what a ring-buffer record asks userspace to do: the
// builtins' enum (stdlib), one for the code generators and the runtime.
type EventKind = stdlib.EventKind

const (
	EvPrintf      = stdlib.EvPrintf
	EvPrint       = stdlib.EvPrint
	EvClear       = stdlib.EvClear
	EvZero        = stdlib.EvZero
	EvExit        = stdlib.EvExit
	EvTime        = stdlib.EvTime
	EvCat         = stdlib.EvCat
	EvSystem      = stdlib.EvSystem
	EvJoin        = stdlib.EvJoin
	EvPrintNonMap = stdlib.EvPrintNonMap
	EvHelperError = stdlib.EvHelperError
	EvErrorf      = stdlib.EvErrorf
	EvWarnf       = stdlib.EvWarnf
)

// Event is the layout and meaning of one kind of ring-buffer record.
type Event struct {
	ID     int
	Kind   EventKind
	Format string      // printf/time/system/cat format string
	Args   *types.Type // a Tuple laying out the record's payload after the ID
	Map    string      // the map, for print/clear/zero
	Pos    lang.Span   // the call that makes it
}
