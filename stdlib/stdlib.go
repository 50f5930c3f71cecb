// Package stdlib is gotrace's one table of builtins: every builtin variable
// (pid, comm, kstack ...), function (printf, str, ksym ...) and aggregation
// (count, hist ...), each defined once with its signature, type rule, code
// generation and output formatting.
//
// The checker (lang/check) reads Check; the compiler reads Gen; the runtime
// reads Format. A test walks Table and fails on a row missing any of them.
package stdlib

import (
	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Kind of a builtin.
type Kind uint8

const (
	Var  Kind = iota // a builtin variable: pid, comm, arg0 ...
	Func             // a function: printf(), str() ...
	Agg              // an aggregation assigned to a map: count(), hist() ...
	// MapFunc is a function whose first argument is a map: delete, clear,
	// zero, print(@m), len, has_key.
	MapFunc
)

// Builtin is one row of the table.
type Builtin struct {
	Name string
	Kind Kind
	// Sig is the signature as help and messages show it,
	// e.g. "lhist(int64 n, int64 min, int64 max, int64 step)".
	Sig string
	// MinArgs, MaxArgs bound the argument count (-1: unbounded).
	MinArgs, MaxArgs int
	// MaxArgs017, when set, is MaxArgs under --compat 0.17 (a builtin
	// bpftrace 0.26 gave optional arguments: hist(n, k)).
	MaxArgs017 int
	// Since is the bpftrace release that added the builtin, when after
	// 0.17: --compat 0.17 refuses it, saying so.
	Since string
	// Probes lists the probe providers where the builtin is allowed (nil: all).
	Probes []string
	// Unsafe builtins need --unsafe.
	Unsafe bool
	// Modes are the bare identifiers the first argument may be instead of
	// a value (kstack(perf), pid(init), nsecs(boot)): the checker leaves
	// such an argument unevaluated, typed none.
	Modes []string
	// Helpers are the kernel BPF helpers the code generation uses, for
	// "not supported by this kernel" messages.
	Helpers []string
	// Check computes the result type (and validates the arguments, whose
	// types are already set), reporting problems through c.
	Check func(c Checker, call *Call) *types.Type
	// Gen emits the code. Set by the compiler's codegen file for this row.
	Gen GenFunc
	// Doc is one line for `gotrace -h builtins`-style help.
	Doc string
}

// Call is a use of a builtin: a CallExpr or a BuiltinExpr (then Args is nil).
type Call struct {
	Expr  lang.Expr
	Name  string
	Args  []lang.Expr
	Probe *lang.Probe
}

// Checker is what type rules may ask of the checker.
type Checker interface {
	// Errorf reports an error at n.
	Errorf(n lang.Node, format string, args ...any)
	// ErrorHint reports an error with a hint.
	ErrorHint(n lang.Node, hint, format string, args ...any)
	// Provider returns the canonical providers of the clause being checked.
	Providers() []string
	// StrLen is the configured maximum string length (GOTRACE_STRLEN).
	StrLen() int
	// StackMode is the print mode of kstack/ustack when the script names
	// none (BPFTRACE_STACK_MODE).
	StackMode() types.StackMode
	// ConstInt evaluates a constant integer expression (literals, positional
	// parameters, arithmetic on them).
	ConstInt(e lang.Expr) (int64, bool)
	// ConstStr evaluates a constant string (literal or positional parameter).
	ConstStr(e lang.Expr) (string, bool)
	// Unsafe reports whether --unsafe was given.
	Unsafe() bool
	// NamedParams are the program options given after "--" (getopt).
	NamedParams() NamedParams
	// Compat is the bpftrace release the script follows.
	Compat() compat.Version
	// NoCpid reports that no -c command is given (cpid has no value).
	NoCpid() bool
	// NoTarget reports that neither -p nor -c names a process.
	NoTarget() bool
	// LookupType resolves a named type ("struct task_struct") through the
	// script's declarations and the Resolver.
	LookupType(name string) (*types.Type, error)
	// ProbeArgs is the type of `args` in the clause being checked (a pointer
	// to the arguments record), reporting an error at n when the clause's
	// probes have none.
	ProbeArgs(n lang.Node) *types.Type
	// ProbeRetval is the type of `retval` in the clause being checked.
	ProbeRetval(n lang.Node) *types.Type
}

// Gen is the compiler's code-generation context, as builtins see it. The
// compiler defines its methods (see gen.go).
type GenFunc func(g Gen, c *Call) error

// Table holds every builtin by name.
var Table = map[string]*Builtin{}

// Register adds rows to Table; it panics on a duplicate name (a programming
// error caught by every test run).
func Register(rows ...*Builtin) {
	for _, r := range rows {
		if _, dup := Table[r.Name]; dup {
			panic("stdlib: duplicate builtin " + r.Name)
		}
		Table[r.Name] = r
	}
}

// Lookup returns the builtin named name.
func Lookup(name string) (*Builtin, bool) {
	b, ok := Table[name]
	return b, ok
}
