// Package check type-checks a parsed program: it resolves every name, field,
// offset and probe context once, gives every expression its type, unifies
// map types across clauses and reports all errors of a script in one run.
package check

import (
	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// Options configure a check.
type Options struct {
	// Params are the positional parameters $1..$N as given on the command line.
	Params []string
	// Resolver supplies kernel, tracepoint and C types. Nil: any lookup fails
	// with a clear error.
	Resolver ktypes.Resolver
	// StrLen is the maximum string length (GOTRACE_STRLEN / BPFTRACE_STRLEN);
	// 0 means bpftrace's default, 64.
	StrLen int
	// Unsafe allows system(), signal(), override() ...
	Unsafe bool
	// DummyTseriesMap (bpftrace's BPFTRACE_DUMMY_TS_MAP test hook, "@name")
	// makes tseries() read its timestamps from that map instead of the
	// clock.
	DummyTseriesMap string
	// NoCpid: no -c command, so `cpid` is an error ("cpid cannot be used
	// without child command").
	NoCpid bool
	// NoTarget: neither -p nor -c names a process (dw_ustack needs one).
	NoTarget bool
	// Compat is the bpftrace release whose semantics to follow (types,
	// scoping) where 0.17 and 0.26 differ.
	Compat compat.Version
	// NamedParams are the program options given after "--", which
	// getopt() reads (bpftrace 0.26).
	NamedParams stdlib.NamedParams
	// StackMode is how kstack/ustack print when the script names no mode
	// (BPFTRACE_STACK_MODE, bpftrace 0.26); the zero value is bpftrace's.
	StackMode types.StackMode
}

// Result is a checked, typed program. The AST in Prog is annotated in place:
// every Expr has its Type, every VarExpr its VarInfo, every MapExpr its
// MapInfo, constants are evaluated (UnrollStmt.N, SizeofExpr.Val, ...).
type Result struct {
	Prog *lang.Program
	// Maps are the script's maps with their unified key and value types,
	// sorted by name.
	Maps []*lang.MapInfo
	// StrLen is the effective maximum string length.
	StrLen int
	// Warnings are the checker's warnings (bpftrace's, with its text and
	// place), in source order; nil when there are none. When the check
	// fails they are among the returned error's diagnostics instead.
	Warnings *lang.Diagnostics
	Opts     Options
}
