// Package types is gotrace's type system: the types the checker gives every
// expression, the compiler lays out in BPF memory and the runtime prints.
//
// A Type is a value: construct it with the helpers below and compare it with
// Equal. Sizes are in bytes and are the sizes the values take in BPF memory
// (map keys and values, ring-buffer records).
package types

import (
	"fmt"
	"strings"
)

// Kind classifies a Type.
type Kind uint8

const (
	Invalid Kind = iota // an error was reported; suppresses follow-on errors
	None                // no value (statements, void calls)
	Int                 // integer of Size 1, 2, 4 or 8, Signed or not
	Bool                // bpftrace's true/false (stored as 1 byte)
	String              // NUL-padded string of Size bytes (bounded)
	Buffer              // buf(): Size bytes of data plus a length byte
	Tuple               // Fields are the elements, laid out with C alignment
	Pointer             // Elem is the pointee; AddrSpace says whose memory
	Record              // struct or union (Name is "struct x"/"union x"), Fields
	Array               // Len elements of Elem
	Enum                // an enum value (Size, Name); prints as its name where known
	Stack               // kstack/ustack: Stack describes it; stored as a stack id
	Ctx                 // the probe's context pointer (args of a tracepoint etc.)

	// Values that are integers in BPF but print specially.
	Ksym       // kernel address printed as a symbol (ksym())
	Usym       // user address printed as a symbol (usym())
	Username   // uid printed as a user name
	Inet       // ntop(): family + 16 address bytes
	Timestamp  // strftime(): format string id + nsecs
	MacAddr    // macaddr(): 6 bytes
	CgroupPath // cgroup_path(): cgroup id printed as a path
	Strerror   // strerror(): errno printed as its message
	Kaddr      // kaddr()/uaddr(): an address (prints as an integer)

	// Aggregation values: only ever stored in maps.
	Count
	Sum
	Min
	Max
	Avg
	Stats
	Hist
	Lhist
	// Tseries is tseries(n, interval, num_intervals[, agg]) (bpftrace
	// 0.24): Lhist holds (interval ns, num_intervals, TseriesAgg*).
	Tseries

	// Probe is the `probe` builtin: an id of the attach point, printed as
	// its full name (e.g. "tracepoint:syscalls:sys_enter_read").
	Probe
)

var kindNames = [...]string{
	Invalid: "invalid", None: "none", Int: "int", Bool: "bool", String: "string",
	Buffer: "buffer", Tuple: "tuple", Pointer: "pointer", Record: "record",
	Array: "array", Enum: "enum", Stack: "stack", Ctx: "ctx",
	Ksym: "ksym", Usym: "usym", Username: "username", Inet: "inet",
	Timestamp: "timestamp", MacAddr: "mac_address", CgroupPath: "cgroup_path",
	Strerror: "strerror", Kaddr: "kaddr",
	Count: "count", Sum: "sum", Min: "min", Max: "max", Avg: "avg",
	Stats: "stats", Hist: "hist", Lhist: "lhist", Tseries: "tseries", Probe: "probe",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// IsAggregation reports whether values of kind k are aggregations (count(),
// sum(), hist() ...), which live only in maps.
func (k Kind) IsAggregation() bool { return k >= Count && k <= Tseries }

// AddrSpace says which memory a pointer points into.
type AddrSpace uint8

const (
	AddrNone   AddrSpace = iota // not yet known: decided by the probe type
	AddrKernel                  // read with bpf_probe_read_kernel
	AddrUser                    // read with bpf_probe_read_user
)

// StackMode is the print mode of kstack/ustack.
type StackMode uint8

const (
	StackBpftrace StackMode = iota // one frame per line, symbol+offset, indented
	StackPerf                      // "\taddr symbol+off (module)"
	StackRaw                       // addresses only
	StackBuildID                   // ustack(build_id): "BUILDID 0xOFFSET" a frame (bpftrace 0.26)
)

// StackInfo describes a kstack/ustack value.
type StackInfo struct {
	User  bool
	Mode  StackMode
	Limit int // frames, 1..1024; bpftrace's default is 127
	// Dwarf marks a dw_ustack value: registers and a copy of the user
	// stack, unwound with the binaries' CFI when printed (DwarfStackSize).
	Dwarf bool
}

// dw_ustack values (compiler/ABI.md): [0:8] bytes of stack copied,
// [8:16] pid, [16:24] ip, [24:32] sp, [32:40] bp, then DwarfStackCopy
// bytes of user stack from sp up (the rest of sp's page and the next).
const (
	DwarfStackHeader = 40
	DwarfStackCopy   = 8192
	DwarfStackSize   = DwarfStackHeader + DwarfStackCopy
)

// DefaultStackLimit is the frames a kstack/ustack without a limit keeps
// (bpftrace's default, the kernel's default perf_event_max_stack).
const DefaultStackLimit = 127

// MapName is the stack map holding stacks of this kind. There is one
// map per (kernel/user, limit), sized to the limit, so that
// bpf_get_stack captures and the program hashes exactly Limit frames: stack_k and
// stack_u for the default limit, stack_k_N and stack_u_N for limit N
// (compiler/ABI.md). Limit 0 means the default.
func (s StackInfo) MapName() string {
	name := "stack_k"
	if s.User {
		name = "stack_u"
	}
	if s.Limit > 0 && s.Limit != DefaultStackLimit {
		name += fmt.Sprintf("_%d", s.Limit)
	}
	return name
}

// Frames is the number of frames the stack map keeps: Limit, or the
// default when Limit is 0.
func (s StackInfo) Frames() int {
	if s.Limit > 0 {
		return s.Limit
	}
	return DefaultStackLimit
}

// Field is a member of a record or an element of a tuple.
type Field struct {
	Name     string // empty for tuple elements and anonymous members
	Type     *Type
	Offset   int // bytes from the start of the record
	BitOff   int // bit offset within the storage unit at Offset (bitfields)
	BitWidth int // 0 unless a bitfield
	// DataLoc marks a tracepoint `__data_loc` field: the 4 bytes at Offset
	// hold a locator (len<<16 | offset from the record start) and the
	// field's value is a pointer (Type) to the data at that offset.
	DataLoc bool
}

// Type is one gotrace type. The zero value is Invalid.
type Type struct {
	Kind   Kind
	Size   int  // bytes
	Signed bool // Int, Enum
	Name   string
	Elem   *Type // Pointer, Array
	Len    int   // Array length
	Fields []Field
	Space  AddrSpace // Pointer (and values read through one)
	Stack  StackInfo // Stack
	Align  int       // alignment in bytes; 0 means derived from Size
	// Lhist parameters (min, max, step) once known; Hist's bits (0 = log2).
	Lhist [3]int64
	// Enumerators of an Enum, value → name, for printing.
	Enumerators map[int64]string
	// Opaque is set on a Record whose layout is unknown (forward declaration).
	Opaque bool
	// Trunc is set on the String str(p) reads in bpftrace 0.26: when the
	// string at p is longer, the buffer holds Size characters and no NUL,
	// printed with the ".." trailer.
	Trunc bool
}

// tseries() aggregation functions (Type.Lhist[2] of a Tseries).
const (
	TseriesLast = iota // no agg argument: the last value of each interval
	TseriesAvg
	TseriesMax
	TseriesMin
	TseriesSum
)

// Constructors for the common types.
var (
	InvalidType = &Type{Kind: Invalid}
	NoneType    = &Type{Kind: None}
	U8          = &Type{Kind: Int, Size: 1}
	U16         = &Type{Kind: Int, Size: 2}
	U32         = &Type{Kind: Int, Size: 4}
	U64         = &Type{Kind: Int, Size: 8}
	S8          = &Type{Kind: Int, Size: 1, Signed: true}
	S16         = &Type{Kind: Int, Size: 2, Signed: true}
	S32         = &Type{Kind: Int, Size: 4, Signed: true}
	S64         = &Type{Kind: Int, Size: 8, Signed: true}
	BoolType    = &Type{Kind: Bool, Size: 1}
)

// IntType returns the integer type of size bytes.
func IntType(size int, signed bool) *Type {
	return &Type{Kind: Int, Size: size, Signed: signed}
}

// StringType returns a string type holding up to size bytes (NUL included).
func StringType(size int) *Type { return &Type{Kind: String, Size: size} }

// PointerTo returns a pointer to elem in the given address space.
func PointerTo(elem *Type, space AddrSpace) *Type {
	return &Type{Kind: Pointer, Size: 8, Elem: elem, Space: space}
}

// ArrayOf returns an array of n elems.
func ArrayOf(elem *Type, n int) *Type {
	return &Type{Kind: Array, Size: elem.Size * n, Elem: elem, Len: n, Align: elem.Alignment()}
}

// TupleOf lays out elems as a tuple with C alignment rules.
func TupleOf(elems ...*Type) *Type {
	t := &Type{Kind: Tuple}
	off, maxAlign := 0, 1
	for _, e := range elems {
		a := e.Alignment()
		if a > maxAlign {
			maxAlign = a
		}
		off = alignUp(off, a)
		t.Fields = append(t.Fields, Field{Type: e, Offset: off})
		off += e.Size
	}
	t.Size = alignUp(off, maxAlign)
	t.Align = maxAlign
	return t
}

// Agg returns the map value type of an aggregation kind.
func Agg(k Kind, signed bool) *Type {
	return &Type{Kind: k, Size: 8, Signed: signed}
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// Alignment is the type's alignment in bytes.
func (t *Type) Alignment() int {
	if t == nil {
		return 1
	}
	if t.Align > 0 {
		return t.Align
	}
	switch t.Kind {
	case Int, Enum, Pointer, Ksym, Usym, Username, Kaddr, Strerror, CgroupPath, Stack, Ctx,
		Count, Sum, Min, Max, Avg, Stats, Hist, Lhist, Tseries, Timestamp, Probe:
		if t.Size >= 8 {
			return 8
		}
		if t.Size <= 0 {
			return 1
		}
		return t.Size
	case Array:
		return t.Elem.Alignment()
	case Tuple, Record:
		a := 1
		for _, f := range t.Fields {
			if fa := f.Type.Alignment(); fa > a {
				a = fa
			}
		}
		return a
	}
	return 1
}

// IsInteger reports whether t is an integer in BPF (Int, Bool, Enum and the
// integer-backed printing kinds).
func (t *Type) IsInteger() bool {
	switch t.Kind {
	case Int, Bool, Enum, Ksym, Usym, Username, Kaddr, Strerror, CgroupPath:
		return true
	}
	return false
}

// IsInvalid reports whether t is missing or Invalid.
func (t *Type) IsInvalid() bool { return t == nil || t.Kind == Invalid }

// Field returns the member named name of a record (searching anonymous
// members too), with its offset from the record's start.
func (t *Type) Field(name string) (Field, bool) {
	if t == nil {
		return Field{}, false
	}
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
		if f.Name == "" && f.Type != nil && f.Type.Kind == Record {
			if inner, ok := f.Type.Field(name); ok {
				inner.Offset += f.Offset
				return inner, true
			}
		}
	}
	return Field{}, false
}

// Equal reports whether a and b are the same type.
func Equal(a, b *Type) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	if a.Kind != b.Kind || a.Size != b.Size || a.Signed != b.Signed || a.Name != b.Name ||
		a.Len != b.Len || a.Stack != b.Stack || len(a.Fields) != len(b.Fields) {
		return false
	}
	if (a.Elem == nil) != (b.Elem == nil) || (a.Elem != nil && !Equal(a.Elem, b.Elem)) {
		return false
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name || a.Fields[i].Offset != b.Fields[i].Offset ||
			!Equal(a.Fields[i].Type, b.Fields[i].Type) {
			return false
		}
	}
	return true
}

// String spells t as bpftrace 0.26's messages and dumps do: "uint64",
// "int32", "string[64]", "struct task_struct *", "(int64,string[16])",
// "count_t", "hist_t" ...
func (t *Type) String() string { return t.Spell(false) }

// Spell is the one spelling of a type in messages: bpftrace 0.26's (String),
// or with legacy bpftrace 0.17's, where they differ: "unsigned int64",
// "none" for an untyped value, "count" for an aggregation, a buffer's size
// with its length byte.
func (t *Type) Spell(legacy bool) string {
	if t == nil {
		return "none"
	}
	switch t.Kind {
	case Invalid, None:
		if legacy {
			return "none"
		}
	case Int:
		if t.Signed {
			return fmt.Sprintf("int%d", t.Size*8)
		}
		if legacy {
			return fmt.Sprintf("unsigned int%d", t.Size*8)
		}
		return fmt.Sprintf("uint%d", t.Size*8)
	case Bool:
		return "bool"
	case String:
		return fmt.Sprintf("string[%d]", t.Size)
	case Buffer:
		if legacy {
			return fmt.Sprintf("buffer[%d]", t.Size+1)
		}
		return fmt.Sprintf("buffer[%d]", t.Size)
	case Pointer:
		if t.Elem == nil || (legacy && t.Elem.Kind == None) {
			return "void *"
		}
		s := t.Elem.Spell(legacy)
		if strings.HasSuffix(s, "*") {
			return s + "*"
		}
		return s + " *"
	case Record:
		return t.Name
	case Enum:
		if t.Name != "" {
			return t.Name
		}
		return fmt.Sprintf("enum(%d)", t.Size*8)
	case Array:
		return fmt.Sprintf("%s[%d]", t.Elem.Spell(legacy), t.Len)
	case Tuple:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Type.Spell(legacy)
		}
		return "(" + strings.Join(parts, ",") + ")"
	case Stack:
		if t.Stack.User {
			return "ustack"
		}
		return "kstack"
	case Ctx:
		return "ctx"
	case Count, Sum, Min, Max, Avg, Stats, Hist, Lhist, Tseries:
		if legacy {
			return t.Kind.String()
		}
		return t.Kind.String() + "_t"
	}
	return t.Kind.String()
}
