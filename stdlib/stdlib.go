// Package stdlib is gotrace's one table of builtins: every builtin variable
// (pid, comm, kstack ...), function (printf, str, ksym ...) and aggregation
// (count, hist ...), each one row holding its signature, argument shapes
// (Flags), probe rule (Probes, NotProbes, ProbeError), type rule (Check) and
// code generation (Gen). Rows are grouped by family, one file per family
// (table_*.go), each row beside its generator; families() lists them.
//
// The checker (lang/check) enforces the row's arity, flags and probe rule
// for every row alike and then runs Check; the compiler runs Gen; values
// print by their type (the runtime's output package, table_format.go).
// Tests walk Rows() and fail on a row without a type rule, without code
// generation (or a Folded reason) or without a test script using it
// (tests/builtins TestTableCovered).
package stdlib

import (
	"slices"
	"sort"
	"sync"

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

// Flags are the argument shapes and uses of a row that the checker
// enforces for every row alike (no builtin is special-cased by name).
type Flags uint16

const (
	// Bare: a function also written without parentheses, as a variable
	// (kstack, ustack, dw_ustack).
	Bare Flags = 1 << iota
	// ElemArg: the map argument of a MapFunc may also be one element or
	// any value (print(@m[k]), print(1), delete(@m[k])); else an indexed
	// map is typed as a value and the row reports it.
	ElemArg
	// KeyArg: the second argument is a key of the map the first names,
	// unified with its key type (delete(@m, k), has_key(@m, k)).
	KeyArg
	// ProbeOnce: a refusal by Probes is reported at the first use in a
	// clause only (args, retval: the clause's type is resolved once).
	ProbeOnce
	// KeyedMap: bpftrace 0.26 refuses a map without keys as the map
	// argument (has_key).
	KeyedMap
	// OutArg: the call assigns its last argument, a variable, and the
	// checker types the call as a whole (find(@m, k, $v)).
	OutArg
	// LongStrArgs: the call's string literals are used when compiling
	// (formats, commands) and may be of any length (printf, system, cat,
	// debugf).
	LongStrArgs
	// CheckBadArgs: the row's rule runs, reporting, even when an argument
	// had an error (kstack, ustack, print: their messages name the
	// argument bpftrace refuses).
	CheckBadArgs
	// ClockArg: the checker may append its own last argument, the dummy
	// clock map of bpftrace's tests (tseries, BPFTRACE_DUMMY_TS_MAP).
	ClockArg
	// LoopWarn017: bpftrace 0.17 warns when the call is in a loop (print:
	// the map is printed asynchronously).
	LoopWarn017
	// Token: bpftrace's lexer has the name as a builtin token (a
	// "builtin" in syntax errors, a BuiltinExpr in the tree; argN and
	// sargN: every arg<digits>, sarg<digits>); other rows' names are
	// identifiers the checker resolves (lang.BuiltinToken).
	Token
	// DotDeref: the variable, a pointer to a record, has its fields read
	// with `.` as with `->` (args.f, gotrace's SPEC).
	DotDeref
	// TracingOnly: the row's helpers need a TRACING program (fentry/fexit
	// or tp_btf): a rawtracepoint clause calling it is loaded as tp_btf.
	TracingOnly
	// StrOfParam: a lone positional parameter argument is the parameter's
	// text (str($1)), whatever it looks like.
	StrOfParam
)

// Builtin is one row of the table.
type Builtin struct {
	Name string
	Kind Kind
	// Flags are the argument shapes the checker enforces (see Flags).
	Flags Flags
	// Sig is the signature as help and messages show it,
	// e.g. "lhist(int64 n, int64 min, int64 max, int64 step)".
	Sig string
	// MinArgs, MaxArgs bound the argument count (-1: unbounded).
	MinArgs, MaxArgs int
	// MaxArgs017, when set, is MaxArgs under --compat 0.17 (a builtin
	// bpftrace 0.26 gave optional arguments: hist(n, k)).
	MaxArgs017 int
	// Since is the bpftrace release that added the row ("0.26"): under
	// --compat 0.17 such a row is an unknown function, with a note naming
	// the release. ArgsSince is the release that added the arguments
	// beyond MaxArgs017 (hist(n, k), comm(pid)), named the same way.
	Since, ArgsSince string
	// Probes lists the probe providers where the builtin is allowed (nil: all).
	// The checker refuses the others (ProbeError words it) before Check
	// runs.
	Probes []lang.ProbeKind
	// NotProbes lists providers where the builtin is refused, in
	// bpftrace's words `NAME can not be used with "P" probes` unless
	// ProbeError words it.
	NotProbes []lang.ProbeKind
	// ProbeError words the refusal in a clause of provider p (nil: the
	// NotProbes words).
	ProbeError func(c Checker, call *Call, p string) string
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
	// Gen emits the code (the compiler calls it through the Gen interface).
	Gen GenFunc
	// Folded, on a row without Gen, says why it needs none: its value is
	// a constant the checker computes (sizeof, offsetof).
	Folded string
	// Doc is one line for `gotrace -h builtins`-style help.
	Doc string
}

// RefusedIn returns the first of providers (canonical names) the row may
// not be used in (its Probes and NotProbes), if any.
func (b *Builtin) RefusedIn(providers []string) (string, bool) {
	for _, p := range providers {
		k := lang.ProbeKindNamed(p)
		if b.Probes != nil && !slices.Contains(b.Probes, k) {
			return p, true
		}
		if slices.Contains(b.NotProbes, k) {
			return p, true
		}
	}
	return "", false
}

// ProbeMessage is the error for a use of the row in a clause of provider p.
func (b *Builtin) ProbeMessage(c Checker, call *Call, p string) string {
	if b.ProbeError != nil {
		return b.ProbeError(c, call, p)
	}
	return call.Name + " can not be used with \"" + p + "\" probes"
}

// Has reports whether the row has every flag of f.
func (b *Builtin) Has(f Flags) bool { return b.Flags&f == f }

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

// families are the table's rows, one function per family file (the row
// and its code generation side by side there). The table is built on first
// use, not at init: nothing registers itself by name.
func families() [][]*Builtin {
	return [][]*Builtin{
		varRows(),     // table_vars.go: pid-independent variables, args, retval
		taskRows(),    // table_task.go: pid, tid, nsecs, the task_struct readers
		stackRows(),   // table_stacks.go: kstack, ustack, dw_ustack
		funcRows(),    // table_funcs.go: output, control, symbols, kernel helpers
		stringRows(),  // table_strings.go: strings, addresses, buffers
		netRows(),     // table_net.go: socket_cookie, skboutput
		aggRows(),     // table_aggs.go: aggregations
		mapFuncRows(), // table_aggs.go: functions of a whole map
		utilRows(),    // table_util.go: strlen, has_cpid, write_user
		assertRows(),  // table_util.go: assert
		getoptRows(),  // table_getopt.go
	}
}

var (
	tableOnce sync.Once
	tableMap  map[string]*Builtin
)

// table is every row by name, built on first use.
func table() map[string]*Builtin {
	tableOnce.Do(buildTable)
	return tableMap
}

func buildTable() {
	m := map[string]*Builtin{}
	for _, fam := range families() {
		for _, r := range fam {
			if _, dup := m[r.Name]; dup {
				panic("stdlib: duplicate builtin " + r.Name)
			}
			m[r.Name] = r
		}
	}
	tableMap = m
}

// Lookup returns the builtin named name (its exact row name: "argN" for
// the numbered arguments; Resolve maps "arg3" to it).
func Lookup(name string) (*Builtin, bool) {
	b, ok := table()[name]
	return b, ok
}

// Rows returns every row, sorted by name.
func Rows() []*Builtin {
	t := table()
	out := make([]*Builtin, 0, len(t))
	for _, b := range t {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
