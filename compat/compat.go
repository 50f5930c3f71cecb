// Package compat names the bpftrace release whose behaviour gotrace follows.
//
// gotrace's syntax is the union of bpftrace 0.17's and bpftrace 0.26.1's;
// where the two releases behave differently (printed text, exit rules,
// types), gotrace behaves as bpftrace 0.26.1 by default and as bpftrace
// 0.17 with `--compat 0.17` (or GOTRACE_COMPAT=0.17, read by cmd/gotrace
// only). Every stage that differs takes a Version in its options and asks
// it one of the named questions below, so that grepping for a method
// finds every place a behaviour changes. The README keeps the table of
// these differences, each with the bpftrace version that changed it.
package compat

import "fmt"

// Version is a bpftrace release gotrace can follow. The zero value is
// today's bpftrace (0.26.1).
type Version int

const (
	V026 Version = iota // bpftrace 0.26.1 (default)
	V017                // bpftrace 0.17, as Debian 12 ships it
)

// Default is the version followed when nothing is asked for.
const Default = V026

// Parse reads a --compat value: "0.17" (also "0.17.0", "v0.17"), "0.26"
// (also "0.26.1", "latest", "") .
func Parse(s string) (Version, error) {
	switch s {
	case "", "0.26", "0.26.1", "v0.26", "v0.26.1", "latest":
		return V026, nil
	case "0.17", "0.17.0", "v0.17", "v0.17.0":
		return V017, nil
	}
	return 0, fmt.Errorf("invalid compat version '%s': expected 0.17 or 0.26", s)
}

func (v Version) String() string {
	if v == V017 {
		return "0.17"
	}
	return "0.26"
}

// Legacy reports whether gotrace follows bpftrace 0.17.
func (v Version) Legacy() bool { return v == V017 }

// AttachedAfter: bpftrace 0.26 prints "Attached N probes" on stderr once
// the probes are attached; 0.17 prints "Attaching N probes..." on stdout
// before attaching (changed in bpftrace 0.24).
func (v Version) AttachedAfter() bool { return v != V017 }

// StrTruncTrailer: str(p) of a string longer than max_strlen prints its
// max_strlen characters and ".." in bpftrace 0.26 (0.20 added the
// trailer); 0.17 prints max_strlen - 1 characters.
func (v Version) StrTruncTrailer() bool { return v != V017 }

// ProbeBeginLower: the probe builtin in BEGIN/END is "begin"/"end" in
// bpftrace 0.26 (its canonical spelling since 0.24), "BEGIN"/"END" in 0.17.
func (v Version) ProbeBeginLower() bool { return v != V017 }

// CatErrorParens: cat() of a file it cannot open reports "ERROR: failed to
// open file 'F' (No such file or directory)" in bpftrace 0.26, "...'F':
// No such file or directory" in 0.17.
func (v Version) CatErrorParens() bool { return v != V017 }

// ExitAfterBeginEnd: in bpftrace 0.26 a program whose only probes are
// BEGIN/END (and so can never fire again) exits after BEGIN; 0.17 waits
// for Ctrl-C (changed in bpftrace 0.24).
func (v Version) ExitAfterBeginEnd() bool { return v != V017 }

// HistHeaderSpace: bpftrace 0.17 prints a hist/lhist map's header as
// "@name: " (a trailing space); 0.26 as "@name:" (changed in bpftrace 0.24).
func (v Version) HistHeaderSpace() bool { return v == V017 }

// DotDerefs: in bpftrace 0.26 `p.f` on a pointer to a struct reads the
// field through the pointer, like `p->f`; 0.17 refuses it ("Try
// dereferencing it first, or using '->'").
func (v Version) DotDerefs() bool { return v != V017 }

// BoolWords: bpftrace 0.26 prints bool values (true/false literals,
// comparisons, `!`, strcontains(), has_key()) as `true`/`false`, in text
// and JSON; 0.17 prints 1/0.
func (v Version) BoolWords() bool { return v != V017 }

// PointerHex: bpftrace 0.26 prints pointer values (print(), map values and
// keys, tuples, struct fields) in hex, 0x...; 0.17 in decimal.
func (v Version) PointerHex() bool { return v != V017 }

// EnumNames: bpftrace 0.26 prints a value of a named enum type by its
// enumerator's name (a number without one stays a number); 0.17 prints
// the number.
func (v Version) EnumNames() bool { return v != V017 }

// CompactRecordKeys: bpftrace 0.17 prints a struct in a map key without
// spaces, @s[{.m=2,.n=3}]; 0.26 as it prints values, @s[{ .m = 2, .n = 3 }].
func (v Version) CompactRecordKeys() bool { return v == V017 }

// FlatTupleKeys: bpftrace 0.26 treats a map keyed by one tuple as a map
// of several keys, printing @[(1, 2)] as @[1, 2]; 0.17 keeps the
// parentheses.
func (v Version) FlatTupleKeys() bool { return v != V017 }

// JSONValid: bpftrace 0.26 writes valid JSON for every value in -f json
// (strftime, cgroup_path, strerror and macaddr values quoted, pointers
// as numbers); 0.17 writes the text of some bare.
func (v Version) JSONValid() bool { return v != V017 }

// AggregatesAsInts: bpftrace 0.26 reads a count(), sum(), min(), max() or
// avg() map in an expression as an integer merged over the CPUs
// (`if (@c > 5)`, `@[@a] = 1`); 0.17 refuses it ("Type mismatch").
func (v Version) AggregatesAsInts() bool { return v != V017 }

// CountKeepsZero: in bpftrace 0.17 a count() map without keys that was
// cleared or deleted still prints `@: 0` at exit; 0.26 prints nothing.
func (v Version) CountKeepsZero() bool { return v == V017 }

// DeleteReturnsBool: in bpftrace 0.26 delete() returns whether an element
// was deleted (`if (delete(@m, k))`); in 0.17 it returns nothing.
func (v Version) DeleteReturnsBool() bool { return v != V017 }

// PidTid32: bpftrace 0.26's pid and tid are uint32, 0.17's uint64 (which
// decides, e.g., what a variable first assigned pid may hold later).
func (v Version) PidTid32() bool { return v != V017 }

// VarAddress: bpftrace 0.26 takes the address of a variable, `&$a`; 0.17
// refuses `&` ("The & operator is not supported").
func (v Version) VarAddress() bool { return v != V017 }

// BlockScopes: in bpftrace 0.26 a $variable belongs to the block that
// first assigns it (using it after the block is "Undefined or undeclared
// variable"); in 0.17 to the whole probe (changed in bpftrace 0.22).
func (v Version) BlockScopes() bool { return v != V017 }

// TupleEquality: bpftrace 0.26 compares tuples with == and !=; 0.17
// refuses it ("Type mismatch for '=='").
func (v Version) TupleEquality() bool { return v != V017 }

// PidInTracerNS: in bpftrace 0.26 pid and tid are the ids in the tracer's
// pid namespace (pid(init) in the initial one); in 0.17 always in the
// initial namespace (changed in bpftrace 0.22, its PR #3428).
func (v Version) PidInTracerNS() bool { return v != V017 }

// NsecsBoot: bpftrace 0.26's nsecs is CLOCK_BOOTTIME (bpf_ktime_get_boot_ns,
// nsecs(monotonic) the old clock); 0.17's is CLOCK_MONOTONIC
// (bpf_ktime_get_ns); bpftrace 0.26's documentation says "defaults to boot".
func (v Version) NsecsBoot() bool { return v != V017 }

// PidParseMessages: bpftrace 0.26 reports a bad -p as "Failed to parse pid:
// invalid integer: X" / "invalid trailing bytes: X" / "pid 'N' out of valid
// pid range [1,4194304]" (bpftrace's basic test "pid outside of valid pid
// range"); 0.17 as "pid 'X' is not a valid decimal number" and "pid 'X' out of
// valid pid range [1,4194304]".
func (v Version) PidParseMessages() bool { return v != V017 }

// UnsafeIsUnsafe: bpftrace 0.26 refuses an unsafe function without --unsafe
// as "F() is unsafe. To use you need the --unsafe flag"; 0.17 as "F() is
// an unsafe function being used in safe mode".
func (v Version) UnsafeIsUnsafe() bool { return v != V017 }

// SignalPrintsMaps: bpftrace 0.17 prints every map when it receives
// SIGUSR1 (as at exit, without the blank lines before them); 0.26 has no
// such dump (SIGUSR1 fires self:signal:SIGUSR1 probes instead; changed in
// bpftrace 0.22).
func (v Version) SignalPrintsMaps() bool { return v == V017 }

// EnumConstantsTyped: bpftrace 0.26 gives an enum constant its enum's type
// (printf's %s prints its name); 0.17 treats it as an unsigned 64-bit
// integer, so it mixes with integers in map keys and arithmetic (changed
// in bpftrace 0.22).
func (v Version) EnumConstantsTyped() bool { return v != V017 }

// StackModeFromEnv: bpftrace 0.26 takes kstack/ustack's default print
// mode from BPFTRACE_STACK_MODE (bpftrace, perf or raw); 0.17 ignores the
// variable.
func (v Version) StackModeFromEnv() bool { return v != V017 }

// ListsProgramProbes: with -l, bpftrace 0.26 lists the probes of the
// program given by -e or as a file; 0.17 ignores -e's program (listing
// every probe) and reads a file name as a search pattern.
func (v Version) ListsProgramProbes() bool { return v != V017 }

// ListsAsFentry: bpftrace 0.26 names kfunc/kretfunc probes fentry/fexit
// when it lists them (-l 'fentry:*' prints fentry:vmlinux:FUNC), lists a
// software or hardware event's alias as an entry of its own
// (software:cpu:), and lists interval:/profile: by their units
// (interval:ms:); 0.17 prints kfunc:/kretfunc:, no aliases, no units.
func (v Version) ListsAsFentry() bool { return v != V017 }

// ArgsValue: in bpftrace 0.26 a uprobe's `args` used whole (stored in a
// map, a map key, a tuple, printed) is a struct value of its parameters,
// printed { .n = 0x..., .c = 120 }; 0.17 handles it as a pointer.
func (v Version) ArgsValue() bool { return v != V017 }

// HelperCheckReads: bpftrace 0.26's -k reports failed probe reads and map
// lookups (0.17's -kk); 0.17's -k only failed map updates and deletes.
// 0.26's helper_error JSON object also has the error's text ("msg") and
// the script's file name.
func (v Version) HelperCheckReads() bool { return v != V017 }

// UnsignedKeysSigned: bpftrace 0.17 prints a 64-bit unsigned integer in a
// map key as signed (@[(uint64)-1] is @[-1], a kernel address negative);
// 0.26 prints it by its type.
func (v Version) UnsignedKeysSigned() bool { return v == V017 }

// LiteralLengthWarning: bpftrace 0.17 warns "The literal is longer than
// the variable string (size=N), condition will always be false" at `s ==
// "lit"` (either order, `==` only) when one operand is a string literal
// longer (without its NUL) than the other's string type of N bytes; 0.26's
// checker has no such warning.
func (v Version) LiteralLengthWarning() bool { return v == V017 }

// FinalPassDiagnostics: bpftrace 0.17's semantic analyser walks the script
// ten times, stops after the first walk that found errors, and warns only
// in the last walk (printing each warning as it meets it, the errors at
// the walk's end): an error it finds in the first walk (unknown function,
// undeclared variable, a map's or variable's type changing, arity ...)
// comes alone, without warnings; one it finds only in the last (operand
// types, printf formats, undefined maps, tuple indexes ...) comes after
// every warning of the script. 0.26 (not verified): every diagnostic, in
// the order of the text.
func (v Version) FinalPassDiagnostics() bool { return v == V017 }

// OperatorPlaces: bpftrace 0.17's parser places a binary or prefix
// operator's node at its operator token, a cast at its `(type)` and a
// parenthesised expression at its inside, so an operand type mismatch
// ("Type mismatch for '+'", spanning from the left operand's place to the
// right one's) or a prefix operator's error covers less than the text;
// 0.26 (not verified): the operator's whole text.
func (v Version) OperatorPlaces() bool { return v == V017 }

// SpecifierLength: bpftrace 0.17 names a printf conversion in a type error
// with its length modifier, "%ld specifier expects ..."; gotrace's 0.26
// mode names the conversion alone ("%d"), not verified against 0.26.
func (v Version) SpecifierLength() bool { return v == V017 }

// Ints017: bpftrace 0.17's integer rules, as its LLVM code generation
// gives them: `/` and `%` unsigned and `>>` logical whatever the operands'
// signs; comparisons signed only when both operands are; a widening cast
// extends by the target's sign ((uint64)(int32)-1 is 4294967295); result
// types (a shift has its left operand's sign, an integer ternary its
// first branch's, !x is unsigned of x's width, && and || signed only when
// both operands are); every integer literal an int64; its sign warnings
// (signed operands of / and %, arithmetic and comparisons of different
// signs, print() in a loop) and its refusal of string literals of STRLEN
// bytes or more. 0.26 follows C's rules here; it gives the same sign
// warnings by other rules (check/warn.go warnSigns026: only when the two
// integer types have no common type).
func (v Version) Ints017() bool { return v == V017 }

// HelperErrorLexerStart: bpftrace 0.17 places a failed read's helper_error
// (-kk) at its expression's start as its lexer counts it, the first
// character after the white space before it (lang.LexerStart: "$x=((struct
// s *)0)->f" at the '$', "= ((struct s *) 0)->f" at the outer '('); 0.26
// places it at the expression itself (the inner '(').
func (v Version) HelperErrorLexerStart() bool { return v == V017 }

// CodegenErrorsUnplaced: what bpftrace 0.17 finds only in its code
// generation (kaddr() of an unknown symbol) it reports without a place, as
// "ERROR: Failed to compile: MSG"; 0.26 (and gotrace) place it at the call.
func (v Version) CodegenErrorsUnplaced() bool { return v == V017 }

// KprobeModules: kprobe:MODULE:FUNC (and kretprobe:) is bpftrace 0.26's
// (added in 0.20, bpftrace PR #2897); bpftrace 0.17's kprobes take one part, FUNC[+OFFSET],
// and it says "kprobe probe type requires 1 argument" otherwise.
func (v Version) KprobeModules() bool { return v != V017 }

// UretprobeFuncEntry: `func` in a uretprobe is the probed function in
// bpftrace 0.26 (bpf_get_func_ip: the uprobe's address; "0" where the
// kernel does not give it); bpftrace 0.17 reads the instruction pointer,
// the return address in the caller.
func (v Version) UretprobeFuncEntry() bool { return v != V017 }

// PositionalStrings: a positional parameter that is not an integer is a
// string wherever it is used in bpftrace 0.26 (and one beyond int64 that
// fits 64 unsigned bits, 0xffffffffffffffff, is a uint64); bpftrace 0.17
// takes it only as str()'s argument and otherwise says `$1 used
// numerically but given "X". Try using str($1).`
func (v Version) PositionalStrings() bool { return v != V017 }

// JSONCompactRecords: a struct in -f json output is `{"m": 2, "n": 3}` in
// bpftrace 0.26 (its json-output tests print_non_map_struct,
// tuple_with_struct, print_non_map_nested_struct), `{ "m": 2, "n": 3 }` in
// 0.17; not verified which release changed it.
func (v Version) JSONCompactRecords() bool { return v != V017 }

// NotifyOnStdout: bpftrace's test runner line __BPFTRACE_NOTIFY_PROBES_ATTACHED
// goes to stdout in bpftrace 0.26 (its json-output tests pipe `-q -f json`
// through `tail -n +2` to drop it; bpftrace PR #3678 moved such output from
// stderr to stdout), to stderr in 0.17.
func (v Version) NotifyOnStdout() bool { return v != V017 }
