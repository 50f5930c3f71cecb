package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// Dump prints the tree as an indented outline for `gotrace -d`: one node a
// line, children indented by two spaces, with each expression's type
// (" :: uint64") once the checker has set it, so the same function shows
// both the parsed and the typed program.
func Dump(p *Program) string {
	var d dumper
	if p == nil {
		return "Program <nil>\n"
	}
	d.line(0, "Program")
	for _, inc := range p.Includes {
		if inc.System {
			d.line(1, "include <%s>", inc.Path)
		} else {
			d.line(1, "include %q", inc.Path)
		}
	}
	for _, c := range p.Decls {
		d.line(1, "cdecl %s %s", c.Kind, c.Name)
	}
	for _, pr := range p.Probes {
		d.probe(1, pr)
	}
	return d.b.String()
}

type dumper struct{ b strings.Builder }

func (d *dumper) line(depth int, format string, args ...any) {
	d.b.WriteString(strings.Repeat("  ", depth))
	fmt.Fprintf(&d.b, format, args...)
	d.b.WriteByte('\n')
}

func (d *dumper) probe(depth int, p *Probe) {
	names := make([]string, len(p.Attach))
	for i, a := range p.Attach {
		names[i] = a.Raw
		if a.Name != "" {
			names[i] = a.Name + "=" + a.Raw
		}
	}
	d.line(depth, "probe %s", strings.Join(names, ", "))
	for _, a := range p.Attach {
		d.attach(depth+1, a)
	}
	if p.Pred != nil {
		d.line(depth+1, "pred")
		d.expr(depth+2, p.Pred)
	}
	for _, v := range p.Vars {
		d.line(depth+1, "var %s :: %s", v.Name, v.Type)
	}
	d.block(depth+1, p.Body)
}

func (d *dumper) attach(depth int, a *AttachPoint) {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+strconv.Quote(v))
		}
	}
	add("provider", a.Provider.String())
	add("target", a.Target)
	add("ns", a.NS)
	add("lang", a.Lang)
	add("func", a.Func)
	add("unit", a.Unit)
	add("mode", a.Mode)
	add("file", a.SrcFile)
	if a.Line != 0 {
		parts = append(parts, fmt.Sprintf("line=%d", a.Line))
	}
	if a.Col != 0 {
		parts = append(parts, fmt.Sprintf("col=%d", a.Col))
	}
	if a.Offset != 0 {
		parts = append(parts, fmt.Sprintf("offset=%d", a.Offset))
	}
	if a.HasAddr {
		parts = append(parts, fmt.Sprintf("addr=%#x", a.Address))
	}
	if a.Freq != 0 {
		parts = append(parts, fmt.Sprintf("freq=%d", a.Freq))
	}
	if a.Len != 0 {
		parts = append(parts, fmt.Sprintf("len=%d", a.Len))
	}
	if a.Wildcard {
		parts = append(parts, "wildcard")
	}
	d.line(depth, "attach %s", strings.Join(parts, " "))
}

func (d *dumper) block(depth int, b *Block) {
	if b == nil {
		return
	}
	d.line(depth, "block")
	for _, s := range b.Stmts {
		d.stmt(depth+1, s)
	}
}

func (d *dumper) stmt(depth int, s Stmt) {
	switch s := s.(type) {
	case *ExprStmt:
		d.line(depth, "expr")
		d.expr(depth+1, s.X)
	case *AssignStmt:
		d.line(depth, "assign %s", s.Op)
		d.expr(depth+1, s.Lhs)
		d.expr(depth+1, s.Rhs)
	case *VarDeclStmt:
		if s.Type != nil {
			d.line(depth, "let %s : %s", s.Var.Name, typeExprString(s.Type))
		} else {
			d.line(depth, "let %s", s.Var.Name)
		}
		if s.Init != nil {
			d.expr(depth+1, s.Init)
		}
	case *IfStmt:
		d.line(depth, "if")
		d.expr(depth+1, s.Cond)
		d.block(depth+1, s.Then)
		if s.Else != nil {
			d.line(depth, "else")
			d.stmt(depth+1, s.Else)
		}
	case *Block:
		d.block(depth, s)
	case *UnrollStmt:
		if s.N > 0 {
			d.line(depth, "unroll %d", s.N)
		} else {
			d.line(depth, "unroll")
		}
		d.expr(depth+1, s.Count)
		d.block(depth+1, s.Body)
	case *WhileStmt:
		d.line(depth, "while")
		d.expr(depth+1, s.Cond)
		d.block(depth+1, s.Body)
	case *ForStmt:
		d.line(depth, "for")
		d.expr(depth+1, s.Var)
		if s.Map != nil {
			d.expr(depth+1, s.Map)
		} else {
			d.line(depth+1, "range")
			d.expr(depth+2, s.From)
			d.expr(depth+2, s.To)
		}
		d.block(depth+1, s.Body)
	case *JumpStmt:
		d.line(depth, "%s", [...]string{"break", "continue", "return"}[s.Kind])
		if s.Value != nil {
			d.expr(depth+1, s.Value)
		}
	case *BlockStmt:
		d.block(depth, s.Body)
	case nil:
		d.line(depth, "<nil>")
	default:
		d.line(depth, "%T", s)
	}
}

func typeExprString(t *TypeExpr) string {
	s := t.Name
	if t.Ptr > 0 {
		s += " " + strings.Repeat("*", t.Ptr)
	}
	if t.ArrayLen > 0 {
		s += fmt.Sprintf("[%d]", t.ArrayLen)
	} else if t.ArrayLen == 0 {
		s += "[]"
	}
	return s
}

func (d *dumper) expr(depth int, e Expr) {
	if e == nil {
		d.line(depth, "<nil>")
		return
	}
	ty := ""
	if t := e.Type(); t != nil {
		ty = " :: " + t.String()
	}
	switch e := e.(type) {
	case *IntLit:
		d.line(depth, "int %d%s", e.Value, ty)
	case *StrLit:
		d.line(depth, "string %s%s", strconv.Quote(e.Value), ty)
	case *BoolLit:
		d.line(depth, "bool %t%s", e.Value, ty)
	case *PositionalExpr:
		if e.Count {
			d.line(depth, "param $#%s", ty)
		} else {
			d.line(depth, "param $%d%s", e.N, ty)
		}
	case *BuiltinExpr:
		d.line(depth, "builtin %s%s", e.Name, ty)
	case *IdentExpr:
		d.line(depth, "ident %s%s", e.Name, ty)
	case *VarExpr:
		d.line(depth, "var %s%s", e.Name, ty)
	case *MapExpr:
		d.line(depth, "map %s%s", e.Name, ty)
		for _, k := range e.Keys {
			d.expr(depth+1, k)
		}
	case *CallExpr:
		d.line(depth, "call %s%s", e.Name, ty)
		for _, a := range e.Args {
			d.expr(depth+1, a)
		}
	case *BinaryExpr:
		d.line(depth, "%s%s", e.Op, ty)
		d.expr(depth+1, e.X)
		d.expr(depth+1, e.Y)
	case *UnaryExpr:
		if e.Postfix {
			d.line(depth, "post%s%s", e.Op, ty)
		} else {
			d.line(depth, "unary %s%s", e.Op, ty)
		}
		d.expr(depth+1, e.X)
	case *TernaryExpr:
		d.line(depth, "?:%s", ty)
		d.expr(depth+1, e.Cond)
		d.expr(depth+1, e.Then)
		d.expr(depth+1, e.Else)
	case *FieldExpr:
		op := "."
		if e.Arrow {
			op = "->"
		}
		d.line(depth, "%s%s%s", op, e.Field, ty)
		d.expr(depth+1, e.X)
	case *TupleIndexExpr:
		d.line(depth, ".%d%s", e.Index, ty)
		d.expr(depth+1, e.X)
	case *IndexExpr:
		d.line(depth, "[]%s", ty)
		d.expr(depth+1, e.X)
		d.expr(depth+1, e.Index)
	case *CastExpr:
		d.line(depth, "cast (%s)%s", typeExprString(e.To), ty)
		d.expr(depth+1, e.X)
	case *TupleExpr:
		d.line(depth, "tuple%s", ty)
		for _, x := range e.Elems {
			d.expr(depth+1, x)
		}
	case *SizeofExpr:
		if e.Of != nil {
			d.line(depth, "sizeof (%s)%s", typeExprString(e.Of), ty)
		} else {
			d.line(depth, "sizeof%s", ty)
			d.expr(depth+1, e.X)
		}
	case *OffsetofExpr:
		f := strings.Join(e.Fields, ".")
		if e.Of != nil {
			d.line(depth, "offsetof (%s, %s)%s", typeExprString(e.Of), f, ty)
		} else {
			d.line(depth, "offsetof (%s)%s", f, ty)
			d.expr(depth+1, e.X)
		}
	default:
		d.line(depth, "%T%s", e, ty)
	}
}
