package stdlib

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// bpftrace 0.26's named program options: `gotrace -e '...' -- --aa=1 --bb`
// and getopt("aa", default) in the script. The value is known when the
// script is compiled, so getopt is a constant of the default's type.

// NamedParams are the program options given after "--", by name.
type NamedParams map[string]NamedParam

// NamedParam is one program option: --name (no value) or --name=value.
type NamedParam struct {
	Value    string
	HasValue bool
}

// ParseNamedParams reads the arguments given as "name" or "name=value"
// (the "--" already removed).
func ParseNamedParams(args []string) NamedParams {
	np := NamedParams{}
	for _, a := range args {
		name, val, has := strings.Cut(a, "=")
		np[name] = NamedParam{Value: val, HasValue: has}
	}
	return np
}

// GetoptKind is the type of a getopt option, from its default.
type GetoptKind uint8

const (
	GetoptBool GetoptKind = iota
	GetoptInt
	GetoptString
)

// Getopt is a program option a script declares with getopt().
type Getopt struct {
	Name, Desc string
	Kind       GetoptKind
	Default    lang.Expr // nil: false
}

// Getopts lists the options the getopt() calls of prog declare, sorted by
// name (for the "expected program options" hint).
func Getopts(prog *lang.Program) []Getopt {
	seen := map[string]Getopt{}
	lang.Inspect(prog, func(n lang.Node) bool {
		call, ok := n.(*lang.CallExpr)
		if !ok || call.Name != "getopt" || len(call.Args) == 0 {
			return true
		}
		name, ok := call.Args[0].(*lang.StrLit)
		if !ok {
			return true
		}
		g := Getopt{Name: name.Value, Kind: GetoptBool}
		if len(call.Args) > 1 {
			g.Default = call.Args[1]
			g.Kind = getoptKind(call.Args[1])
		}
		if len(call.Args) > 2 {
			if d, ok := call.Args[2].(*lang.StrLit); ok {
				g.Desc = d.Value
			}
		}
		if old, dup := seen[g.Name]; !dup || (old.Desc == "" && g.Desc != "") {
			seen[g.Name] = g
		}
		return true
	})
	out := make([]Getopt, 0, len(seen))
	for _, g := range seen {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func getoptKind(e lang.Expr) GetoptKind {
	switch e := e.(type) {
	case *lang.StrLit:
		return GetoptString
	case *lang.BoolLit:
		return GetoptBool
	case *lang.UnaryExpr:
		if _, ok := e.X.(*lang.IntLit); ok && e.Op == "-" {
			return GetoptInt
		}
	}
	return GetoptInt
}

// CheckNamedParams reports a given option no getopt() declares, and a
// request for --help, with bpftrace 0.26's hint listing the options.
func CheckNamedParams(prog *lang.Program, given NamedParams) error {
	opts := Getopts(prog)
	declared := map[string]bool{}
	for _, g := range opts {
		declared[g.Name] = true
	}
	var bad []string
	for name := range given {
		if !declared[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	var sb strings.Builder
	if len(bad) == 1 && bad[0] == "help" {
		sb.WriteString("ERROR: program options help requested")
	} else {
		for i, b := range bad {
			if i > 0 {
				sb.WriteByte('\n')
			}
			fmt.Fprintf(&sb, "ERROR: unexpected program option: --%s", b)
		}
	}
	if len(opts) == 0 {
		sb.WriteString("\nHINT: this program takes no program options")
		return &UserError{Msg: sb.String()}
	}
	sb.WriteString("\nHINT: expected program options:")
	for _, g := range opts {
		sb.WriteString("\n  --" + g.Name)
		if g.Desc != "" {
			sb.WriteString(": " + g.Desc)
		}
	}
	return &UserError{Msg: sb.String()}
}

// getoptValue is the option's value as the call's type says: an integer
// (bools 0/1) or a string.
func getoptValue(c *Call, np NamedParams, constInt func(lang.Expr) (int64, bool)) (int64, string, error) {
	name := c.Args[0].(*lang.StrLit).Value
	kind := GetoptBool
	if len(c.Args) > 1 {
		kind = getoptKind(c.Args[1])
	}
	p, given := np[name]
	switch kind {
	case GetoptString:
		if !given {
			return 0, c.Args[1].(*lang.StrLit).Value, nil
		}
		if !p.HasValue {
			return 0, "", fmt.Errorf("program option --%s needs a value (--%s=STRING)", name, name)
		}
		return 0, p.Value, nil
	case GetoptInt:
		if !given {
			v, ok := constInt(c.Args[1])
			if !ok {
				return 0, "", fmt.Errorf("getopt(): the default of --%s is not an integer literal", name)
			}
			return v, "", nil
		}
		if !p.HasValue {
			return 0, "", fmt.Errorf("program option --%s needs a value (--%s=INTEGER)", name, name)
		}
		if v, err := strconv.ParseInt(p.Value, 0, 64); err == nil {
			return v, "", nil
		}
		if v, err := strconv.ParseUint(p.Value, 0, 64); err == nil {
			return int64(v), "", nil
		}
		return 0, "", fmt.Errorf("program option --%s expects an integer, got '%s'", name, p.Value)
	}
	if !given {
		if len(c.Args) > 1 {
			v, _ := constInt(c.Args[1])
			return v, "", nil
		}
		return 0, "", nil
	}
	if !p.HasValue {
		return 1, "", nil
	}
	switch strings.ToLower(p.Value) {
	case "true", "1":
		return 1, "", nil
	case "false", "0":
		return 0, "", nil
	}
	return 0, "", fmt.Errorf("program option --%s expects true, false, 1 or 0, got '%s'", name, p.Value)
}

func getoptRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "getopt", Gen: genGetopt, Kind: Func, MinArgs: 1, MaxArgs: 3,
			Sig: `getopt(string name[, default[, string description]])`,
			Doc: "the program option --name given after -- (the default's type: bool without one, int, string or bool)",
			Check: func(c Checker, call *Call) *types.Type {
				if _, ok := call.Args[0].(*lang.StrLit); !ok {
					c.Errorf(call.Args[0], "First argument to 'getopt' must be a string literal.")
					return types.InvalidType
				}
				t := types.BoolType
				if len(call.Args) > 1 {
					switch d := call.Args[1].(type) {
					case *lang.StrLit:
						t = types.StringType(c.StrLen())
					case *lang.BoolLit:
					case *lang.IntLit:
						t = types.U64
					default:
						if u, ok := d.(*lang.UnaryExpr); ok && u.Op == "-" {
							if _, ok := u.X.(*lang.IntLit); ok {
								t = types.S64
								break
							}
						}
						c.Errorf(call.Args[1], "Second argument to 'getopt' must be a string literal, integer literal, or a boolean literal.")
						return types.InvalidType
					}
				}
				if len(call.Args) > 2 {
					if _, ok := call.Args[2].(*lang.StrLit); !ok {
						c.Errorf(call.Args[2], "Third argument to 'getopt' must be a string literal (the option's description).")
						return types.InvalidType
					}
				}
				if _, _, err := getoptValue(call, c.NamedParams(), c.ConstInt); err != nil {
					c.Errorf(call.Expr, "%v", err)
					return types.InvalidType
				}
				return t
			}},
	}
}

func genGetopt(g Gen, c *Call) error {
	// The default's value as the checker folded it (the one evaluator).
	v, s, err := getoptValue(c, g.NamedParams(), lang.ConstOf)
	if err != nil {
		return err
	}
	if t := c.Expr.Type(); t != nil && t.Kind == types.String {
		g.ConstResult(s)
		return nil
	}
	g.Emit(asm.LoadImm(asm.R0, v, asm.DWord))
	g.SetResult(asm.R0)
	return nil
}
