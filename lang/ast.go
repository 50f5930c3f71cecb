package lang

import "github.com/gotrace/gotrace/lang/types"

// This file is gotrace's AST: what lower.go turns the parser's private
// parse tree into, what the checker annotates (the Type of every expression,
// the resolved binding of every name) and what the compiler reads.
//
// Every node carries its Span. The checker fills the fields marked
// "checker:"; the parser leaves them zero.

// Node is any AST node.
type Node interface {
	Span() Span
}

// Loc is embedded in every node: the node's span. Construct nodes with
// Loc: Loc(span).
type Loc Span

// Span returns the node's span.
func (l Loc) Span() Span { return Span(l) }

// Program is one parsed script.
type Program struct {
	Loc
	Src      *Source
	Includes []*Include
	Decls    []*CDecl      // top-level C declarations, in source order
	Probes   []*Probe      // the probe clauses, in source order
	Config   []*ConfigItem // `config = { ... }` (bpftrace 0.20), in source order
	MapDecls []*MapDecl    // `let @m = hash(n);` (bpftrace 0.24)
	Imports  []*Import     // `import "file";` (bpftrace 0.25)

	configSpan Span // the first `config = { ... }` block, for import's error
}

// ConfigItem is one `key = value` of a config block.
type ConfigItem struct {
	Loc
	Key   string
	Value string // as written; a string's quotes removed
	IsStr bool
}

// MapDecl declares a map's kind and size: `let @m = lruhash(100);`.
type MapDecl struct {
	Loc
	Map  string // "@m"
	Kind string // hash, lruhash, percpuhash, percpulruhash
	Size uint64
}

// Import is `import "file";`.
type Import struct {
	Loc
	Path string
}

// Include is an `#include <x.h>` or `#include "x.h"` line.
type Include struct {
	Loc
	Path   string
	System bool // <...>
}

// CDecl is one top-level C declaration (struct, union, enum, typedef),
// kept as text for ktypes's C parser.
type CDecl struct {
	Loc
	Kind string // "struct", "union", "enum", "typedef"
	Name string // "task_struct", "myint" ...; empty for anonymous
	Text string // the whole declaration including its trailing ';'
}

// Probe is one clause: attach points, an optional predicate and a body.
type Probe struct {
	Loc
	Attach []*AttachPoint
	Pred   Expr // nil without a predicate
	Body   *Block

	// checker: the scratch variables of the clause, in first-use order.
	Vars []*VarInfo
}

// AttachPoint is one probe specification, e.g. `tracepoint:syscalls:sys_enter_*`.
//
// Provider is the probe type (its row in ProbeTypes; String is the
// canonical name), whatever alias the script used (t, k, kr, u, ur, U, f,
// fr, p, i, s, h, w, rt, fentry, fexit, begin ...).
type AttachPoint struct {
	Loc
	Raw string // as written, without the name
	// Name is the probe's name, `name=` before the provider (bpftrace
	// 0.25): what `probe` reads instead of the attach point's own name.
	Name     string
	Provider ProbeKind
	// The remaining parts as written, after the provider:
	//   tracepoint:CAT:NAME         Target=CAT  Func=NAME
	//   rawtracepoint:[MOD:]NAME    Target=MOD  Func=NAME
	//   kprobe:[MOD:]FUNC[+OFF]     Target=MOD  Func=FUNC  Offset=OFF
	//   kfunc:[MOD:]FUNC            Target=MOD  Func=FUNC
	//   uprobe:PATH:FUNC[+OFF]      Target=PATH Func=FUNC  Offset=OFF
	//   uprobe:PATH:ADDR            Target=PATH Address=ADDR
	//   uprobe:PATH:LANG:FUNC       Target=PATH Lang=LANG Func=FUNC
	//   uprobe:PATH@FILE:LINE[:COL] Target=PATH SrcFile=FILE Line=LINE Col=COL
	//   usdt:PATH:[NS:]NAME         Target=PATH NS=NS Func=NAME
	//   profile:UNIT:N / interval:UNIT:N   Unit=UNIT Freq=N (profile:N: Unit="hz")
	//   software:EVENT[:COUNT] / hardware:EVENT[:COUNT]  Func=EVENT Freq=COUNT
	//   watchpoint:ADDR:LEN:MODE    Address=ADDR Len=LEN Mode=MODE
	//   iter:NAME[:PIN]             Func=NAME Target=PIN
	Target  string
	Func    string
	NS      string
	Lang    string
	Offset  int64
	Address uint64
	HasAddr bool
	Unit    string
	Freq    uint64
	Len     uint64
	Mode    string
	// SrcFile, Line and Col name a source statement (uprobe statement
	// probes), found in the binary's DWARF line table.
	SrcFile   string
	Line, Col int
	// Wildcard is set when any part holds * or ? (or a {a,b} set), so the
	// runtime expands it against the live system.
	Wildcard bool
}

// Block is `{ stmts }`; it opens a scope for scratch variables declared
// with `let` (bpftrace's `$x` are clause-wide otherwise).
type Block struct {
	Loc
	Stmts []Stmt
}

// Stmt is a statement.
type Stmt interface {
	Node
	stmtNode()
}

// ExprStmt is an expression used as a statement (a call, `$x++` ...).
type ExprStmt struct {
	Loc
	X Expr
}

// AssignStmt is `lhs = rhs` or `lhs OP= rhs`. Lhs is a *MapExpr, *VarExpr
// or (for C-like writes bpftrace refuses) anything else the checker rejects.
type AssignStmt struct {
	Loc
	Lhs Expr
	Op  string // "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="
	Rhs Expr
}

// VarDeclStmt is `let $x [: type] [= init];` (bpftrace 0.21+).
type VarDeclStmt struct {
	Loc
	Var  *VarExpr
	Type *TypeExpr // nil if not written
	Init Expr      // nil if not written
}

// IfStmt is `if (cond) { } [else if ... | else { }]`.
type IfStmt struct {
	Loc
	Cond Expr
	Then *Block
	Else Stmt // nil, *Block or *IfStmt
}

// UnrollStmt is `unroll(N) { }`.
type UnrollStmt struct {
	Loc
	Count Expr // a constant expression (literal or positional parameter)
	Body  *Block
	N     int // checker: the evaluated count (1..100)
}

// WhileStmt is `while (cond) { }`.
type WhileStmt struct {
	Loc
	Cond Expr
	Body *Block
	// From and To are set on the loop a range `for $i : From..To` lowers
	// to (lowerRanges): when they are not both constant, the compiler runs
	// it with bpf_loop, as bpftrace 0.26 does, since the verifier cannot
	// bound it.
	From, To Expr
}

// ForStmt is `for ($kv : @map) { }`.
type ForStmt struct {
	Loc
	Var  *VarExpr
	Map  *MapExpr // a loop over a map's entries; nil for a range
	From Expr     // a range loop `for $i : From..To` (bpftrace 0.24)
	To   Expr
	Body *Block
}

// JumpKind is the kind of a JumpStmt.
type JumpKind uint8

const (
	Break JumpKind = iota
	Continue
	Return
)

// JumpStmt is `break;`, `continue;` or `return;`.
type JumpStmt struct {
	Loc
	Kind JumpKind
	// Value is return's value, `return $a;` (bpftrace 0.26): evaluated,
	// then the probe returns (its program's result stays 0).
	Value Expr
	// ValueTok names Value's first token as bpftrace 0.17's parser does
	// ("variable"), at ValueTokSpan: 0.17 has no return value.
	ValueTok     string
	ValueTokSpan Span
}

// BlockStmt is a nested `{ }` block used as a statement.
type BlockStmt struct {
	Loc
	Body *Block
}

func (*ExprStmt) stmtNode()    {}
func (*AssignStmt) stmtNode()  {}
func (*VarDeclStmt) stmtNode() {}
func (*IfStmt) stmtNode()      {}
func (*UnrollStmt) stmtNode()  {}
func (*WhileStmt) stmtNode()   {}
func (*ForStmt) stmtNode()     {}
func (*JumpStmt) stmtNode()    {}
func (*BlockStmt) stmtNode()   {}

// Expr is an expression. Type returns what the checker assigned (nil before
// checking).
type Expr interface {
	Node
	exprNode()
	Type() *types.Type
	SetType(*types.Type)
}

// Typed is embedded in every expression node.
type Typed struct {
	T *types.Type // checker: the expression's type
	K *Const      // checker: the value of a constant expression (const.go)
}

func (t *Typed) Type() *types.Type     { return t.T }
func (t *Typed) SetType(x *types.Type) { t.T = x }

// IntLit is an integer literal: decimal, 0x hex, 0 octal, 0b binary, with
// `_` separators and bpftrace's size suffixes (K M G T P, and `ns us ms s m
// h d` in newer versions) already applied. Char literals 'a' are IntLits too.
type IntLit struct {
	Loc
	Typed
	Value uint64
	Text  string // as written
}

// StrLit is a string literal with escapes decoded.
type StrLit struct {
	Loc
	Typed
	Value string
}

// BoolLit is `true` or `false`.
type BoolLit struct {
	Loc
	Typed
	Value bool
}

// PositionalExpr is `$1`..`$N` (N >= 1) or `$#` (Count).
type PositionalExpr struct {
	Loc
	Typed
	N     int
	Count bool // $#
	// checker: the parameter's text ("" if not given) and whether it is an
	// integer (then Int holds it).
	Text  string
	IsInt bool
	Int   int64
	// IsUint: an integer only unsigned 64 bits hold (0xffffffffffffffff).
	IsUint bool
	// InStr: the parameter is str()'s argument (a string literal there).
	InStr bool
	// Offset: str($N + Offset) is the parameter's text from byte Offset
	// (set by the checker, which folds the addition into the parameter).
	Offset int
}

// BuiltinExpr is a builtin variable: pid tid uid gid nsecs elapsed cpu comm
// kstack ustack arg0..argN sarg0..N args retval func probe curtask rand
// cgroup username numaid jiffies ctx cpid ...
type BuiltinExpr struct {
	Loc
	Typed
	Name string
}

// IdentExpr is a bare identifier that is not a builtin: an enum constant, a
// type name used as a value (sizeof(x)), or an unknown name.
type IdentExpr struct {
	Loc
	Typed
	Name string
	// checker: an enum constant's value.
	IsEnum bool
	Value  int64
}

// VarExpr is a scratch variable `$name`.
type VarExpr struct {
	Loc
	Typed
	Name string   // including '$'
	Info *VarInfo // checker: the variable's binding
}

// VarInfo is one scratch variable of a clause (after scoping).
type VarInfo struct {
	Name string
	Type *types.Type
	ID   int // unique within the probe; the compiler's slot number
}

// MapExpr is `@name`, `@` (Name "@") or `@name[k1, k2, ...]`.
type MapExpr struct {
	Loc
	Typed
	Name string // including '@'
	Keys []Expr // nil for a map without keys
	Info *MapInfo
}

// MapInfo is the unified declaration of one map (after checking all clauses).
type MapInfo struct {
	Name  string
	Key   *types.Type // nil for a map without keys; a Tuple for several parts
	Value *types.Type
	// KeyParts are the key's parts as written (len 0, 1 or more).
	KeyParts []*types.Type
}

// CallExpr is a function call `name(args)`: builtins from the stdlib table
// and aggregations (count(), hist(x) ...).
type CallExpr struct {
	Loc
	Typed
	Name     string
	NameSpan Span
	Args     []Expr
}

// BinaryExpr is `X Op Y` with Op one of the C binary operators:
// * / % + - << >> < <= > >= == != & ^ | && ||.
type BinaryExpr struct {
	Loc
	Typed
	Op string
	X  Expr
	Y  Expr
}

// UnaryExpr is a prefix `- ! ~ * & ++ --` or postfix `++ --`.
type UnaryExpr struct {
	Loc
	Typed
	Op      string
	X       Expr
	Postfix bool
}

// TernaryExpr is `Cond ? Then : Else`.
type TernaryExpr struct {
	Loc
	Typed
	Cond, Then, Else Expr
}

// FieldExpr is `X.Field` or `X->Field` (Arrow).
type FieldExpr struct {
	Loc
	Typed
	X     Expr
	Field string
	Arrow bool
	// checker: the member's offset and bitfield placement within X (or *X).
	Offset   int
	BitOff   int
	BitWidth int
}

// TupleIndexExpr is `X.N` on a tuple.
type TupleIndexExpr struct {
	Loc
	Typed
	X     Expr
	Index int
}

// IndexExpr is `X[Index]` on an array or pointer.
type IndexExpr struct {
	Loc
	Typed
	X     Expr
	Index Expr
}

// CastExpr is `(type)X`.
type CastExpr struct {
	Loc
	Typed
	To *TypeExpr
	X  Expr
}

// TupleExpr is `(a, b, ...)` with at least two elements.
// BlockExpr is a block expression `{ stmts; value }` (bpftrace 0.24) and
// what a macro call expands to. Value is nil when the block ends with a
// ';' or a compound statement. The parser hoists a block expression's
// statements in front of the statement that holds it (see hoist.go), so
// the checker and compiler never see one.
type BlockExpr struct {
	Loc
	Typed
	Stmts []Stmt
	Value Expr
}

type TupleExpr struct {
	Loc
	Typed
	Elems []Expr
	Names []string // a record's field names `(a = 1, b = 2)` (bpftrace 0.24); nil for a tuple
}

// SizeofExpr is `sizeof(type)` or `sizeof(expr)`.
type SizeofExpr struct {
	Loc
	Typed
	Of  *TypeExpr // one of Of and X is set
	X   Expr
	Val int // checker: the size
}

// OffsetofExpr is `offsetof(struct x, field[.sub...])`.
type OffsetofExpr struct {
	Loc
	Typed
	Of     *TypeExpr
	X      Expr // offsetof(expr, field) in newer bpftrace
	Fields []string
	Val    int // checker: the offset
}

// TypeExpr names a type in a cast, sizeof, offsetof or `let`:
// `uint64`, `int8`, `struct task_struct *`, `char[16]`, `string`, ...
type TypeExpr struct {
	Loc
	Name     string      // "uint64", "struct task_struct", "union x", "enum y", "char", "MyTypedef" ...
	Ptr      int         // number of '*'
	ArrayLen int         // -1 if not an array; 0 for `[]`
	Resolved *types.Type // checker
	Of       Expr        // typeof(expr) (bpftrace 0.25): the type of Of; Name is "typeof"
}

func (*IntLit) exprNode()         {}
func (*BlockExpr) exprNode()      {}
func (*StrLit) exprNode()         {}
func (*BoolLit) exprNode()        {}
func (*PositionalExpr) exprNode() {}
func (*BuiltinExpr) exprNode()    {}
func (*IdentExpr) exprNode()      {}
func (*VarExpr) exprNode()        {}
func (*MapExpr) exprNode()        {}
func (*CallExpr) exprNode()       {}
func (*BinaryExpr) exprNode()     {}
func (*UnaryExpr) exprNode()      {}
func (*TernaryExpr) exprNode()    {}
func (*FieldExpr) exprNode()      {}
func (*TupleIndexExpr) exprNode() {}
func (*IndexExpr) exprNode()      {}
func (*CastExpr) exprNode()       {}
func (*TupleExpr) exprNode()      {}
func (*SizeofExpr) exprNode()     {}
func (*OffsetofExpr) exprNode()   {}
