package stdlib

// This file holds the helpers the table rows share: argument rules with
// bpftrace 0.17's messages, and name resolution for the numbered builtins
// (arg0..argN, sarg0..sargN).

import (
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// MaxArgN is the highest argN/sargN index accepted (bpftrace accepts any
// index the probe's ABI supplies; beyond the registers, uprobes read the
// stack).
const MaxArgN = 63

// Resolve returns the row for name, mapping numbered builtins (arg3,
// sarg0) to their family row ("argN", "sargN"); n is the index for those
// (-1 otherwise).
//
// bpftrace 0.26 spells every builtin variable also as __builtin_NAME (its
// standard library's macros wrap those): the prefix resolves to NAME's row.
func Resolve(name string) (b *Builtin, n int, ok bool) {
	if rest, found := strings.CutPrefix(name, BuiltinPrefix); found {
		b, n, ok := Resolve(rest)
		if !ok || b.Kind != Var {
			return nil, -1, false
		}
		return b, n, true
	}
	if b, ok := table()[name]; ok {
		return b, -1, true
	}
	for _, fam := range []string{"sarg", "arg"} {
		if rest, found := strings.CutPrefix(name, fam); found && rest != "" {
			k, err := strconv.Atoi(rest)
			if err != nil || k < 0 || k > MaxArgN || strconv.Itoa(k) != rest {
				return nil, -1, false
			}
			b, ok := table()[fam+"N"]
			return b, k, ok
		}
	}
	return nil, -1, false
}

// IsToken reports whether word is a builtin token of bpftrace's lexer:
// the name of a row flagged Token, or arg/sarg followed by digits when
// argN/sargN are (lang.BuiltinToken).
func IsToken(word string) bool {
	if b, ok := table()[word]; ok {
		return b.Has(Token)
	}
	for _, fam := range []string{"sarg", "arg"} {
		if rest, found := strings.CutPrefix(word, fam); found && rest != "" && strings.Trim(rest, "0123456789") == "" {
			b, ok := table()[fam+"N"]
			return ok && b.Has(Token)
		}
	}
	return false
}

// The parser asks the table which words are builtin tokens; linking the
// table in is what tells it (the lexer itself knows no builtin names).
func init() { lang.BuiltinToken = IsToken }

// BuiltinPrefix is bpftrace 0.26's spelling of a builtin variable that a
// user macro cannot shadow: __builtin_pid is pid.
const BuiltinPrefix = "__builtin_"

// Canonical is name without the __builtin_ prefix.
func Canonical(name string) string { return strings.TrimPrefix(name, BuiltinPrefix) }

// IsMode reports whether e is a bare identifier that row b accepts as its
// first argument's mode (see Builtin.Modes), and returns it.
func (b *Builtin) IsMode(e lang.Expr) (string, bool) {
	id, ok := e.(*lang.IdentExpr)
	if !ok {
		return "", false
	}
	for _, m := range b.Modes {
		if m == id.Name {
			return m, true
		}
	}
	return "", false
}

// Mode returns the mode the call names in its first argument, or "".
func (c *Call) Mode(b *Builtin) string {
	if len(c.Args) == 0 {
		return ""
	}
	m, _ := b.IsMode(c.Args[0])
	return m
}

// Names returns every callable or variable name in the table (families
// spelled as their first member), for "did you mean" hints.
func Names(kind ...Kind) []string {
	var out []string
	for name, b := range table() {
		if len(kind) > 0 {
			match := false
			for _, k := range kind {
				if b.Kind == k {
					match = true
				}
			}
			if !match {
				continue
			}
		}
		switch name {
		case "argN":
			name = "arg0"
		case "sargN":
			name = "sarg0"
		}
		out = append(out, name)
	}
	return out
}

// TypeName spells t as bpftrace 0.17's messages do: "int64",
// "unsigned int32", "string[16]", "struct task_struct *", "count" ...
func TypeName(t *types.Type) string { return t.Spell(true) }

// argsSpan is the place bpftrace 0.17 reports format-string problems: from
// the call's start to the end of its last argument.
func argsSpan(call *Call) lang.Node {
	return call.Expr
}

// isInt reports whether t is usable as an integer.
func isInt(t *types.Type) bool { return t != nil && t.IsInteger() }

func invalid(t *types.Type) bool { return t.IsInvalid() }

// wantStrLit requires argument i to be a string literal (or a string
// positional parameter), with bpftrace's message.
func wantStrLit(c Checker, call *Call, i int) (string, bool) {
	if i >= len(call.Args) {
		return "", false
	}
	a := call.Args[i]
	if s, ok := c.ConstStr(a); ok {
		return s, true
	}
	c.Errorf(call.Expr, "%s() expects a string literal (%s provided)", call.Name, types.KindWord(a.Type(), types.AsArg))
	return "", false
}

// wantIntLit requires argument i to be a constant integer.
func wantIntLit(c Checker, call *Call, i int) (int64, bool) {
	if i >= len(call.Args) {
		return 0, false
	}
	a := call.Args[i]
	if v, ok := c.ConstInt(a); ok {
		return v, true
	}
	c.Errorf(call.Expr, "%s() expects a integer literal (%s provided)", call.Name, types.KindWord(a.Type(), types.AsArg))
	return 0, false
}
