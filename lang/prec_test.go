package lang

import (
	"fmt"
	"strings"
	"testing"
)

// sexpr renders an expression compactly to check tree shape.
func sexpr(e Expr) string {
	switch e := e.(type) {
	case *IntLit:
		return fmt.Sprint(e.Value)
	case *VarExpr:
		return e.Name
	case *MapExpr:
		if len(e.Keys) == 0 {
			return e.Name
		}
		var ks []string
		for _, k := range e.Keys {
			ks = append(ks, sexpr(k))
		}
		return e.Name + "[" + strings.Join(ks, ",") + "]"
	case *BuiltinExpr:
		return e.Name
	case *IdentExpr:
		return e.Name
	case *StrLit:
		return fmt.Sprintf("%q", e.Value)
	case *BinaryExpr:
		return "(" + sexpr(e.X) + " " + e.Op + " " + sexpr(e.Y) + ")"
	case *UnaryExpr:
		if e.Postfix {
			return "(" + sexpr(e.X) + e.Op + ")"
		}
		return "(" + e.Op + sexpr(e.X) + ")"
	case *TernaryExpr:
		return "(" + sexpr(e.Cond) + " ? " + sexpr(e.Then) + " : " + sexpr(e.Else) + ")"
	case *CastExpr:
		return "(cast " + typeExprString(e.To) + " " + sexpr(e.X) + ")"
	case *FieldExpr:
		if e.Arrow {
			return sexpr(e.X) + "->" + e.Field
		}
		return sexpr(e.X) + "." + e.Field
	case *TupleIndexExpr:
		return fmt.Sprintf("%s.%d", sexpr(e.X), e.Index)
	case *IndexExpr:
		return sexpr(e.X) + "[" + sexpr(e.Index) + "]"
	case *CallExpr:
		var as []string
		for _, a := range e.Args {
			as = append(as, sexpr(a))
		}
		return e.Name + "(" + strings.Join(as, ", ") + ")"
	case *TupleExpr:
		var as []string
		for _, a := range e.Elems {
			as = append(as, sexpr(a))
		}
		return "<" + strings.Join(as, ", ") + ">"
	case *SizeofExpr:
		if e.Of != nil {
			return "sizeof(" + typeExprString(e.Of) + ")"
		}
		return "sizeof(" + sexpr(e.X) + ")"
	case *OffsetofExpr:
		return "offsetof(" + typeExprString(e.Of) + ", " + strings.Join(e.Fields, ".") + ")"
	case *PositionalExpr:
		if e.Count {
			return "$#"
		}
		return fmt.Sprintf("$%d", e.N)
	case *BoolLit:
		return fmt.Sprint(e.Value)
	}
	return fmt.Sprintf("%T", e)
}

func parseExpr(t *testing.T, x string) Expr {
	t.Helper()
	p, err := Parse(&Source{Name: "stdin", Text: "BEGIN { $r = " + x + "; }"})
	if err != nil {
		t.Fatalf("%s: %v", x, err)
	}
	return p.Probes[0].Body.Stmts[0].(*AssignStmt).Rhs
}

func TestPrecedence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a - b - c", "((a - b) - c)"},
		{"$a - $b - $c", "(($a - $b) - $c)"},
		{"1 + 2 * 3 << 1", "((1 + (2 * 3)) << 1)"},
		{"!$a == $b", "((!$a) == $b)"},
		{"-$x * $y", "((-$x) * $y)"},
		{"1 < 2 == 3 > 4", "((1 < 2) == (3 > 4))"},
		{"1 | 2 ^ 3 & 4", "(1 | (2 ^ (3 & 4)))"},
		{"1 || 2 && 3", "(1 || (2 && 3))"},
		{"1 && 2 || 3 && 4", "((1 && 2) || (3 && 4))"},
		{"$a / $b % $c * $d", "((($a / $b) % $c) * $d)"},
		{"1 << 2 + 3", "(1 << (2 + 3))"},
		{"$a & $b == $c", "($a & ($b == $c))"},
		{"$a ? 1 : $b ? 2 : 3", "($a ? 1 : ($b ? 2 : 3))"},
		{"$a ? $b ? 1 : 2 : 3", "($a ? ($b ? 1 : 2) : 3)"},
		{"$a || $b ? 1 : 2", "(($a || $b) ? 1 : 2)"},
		{"(uint8)$x + 1", "((cast uint8 $x) + 1)"},
		{"(uint8)($x + 1)", "(cast uint8 ($x + 1))"},
		{"($x) + 1", "($x + 1)"},
		{"(x) - 1", "(x - 1)"},
		{"(struct task_struct *)curtask->pid", "(cast struct task_struct * curtask->pid)"},
		{"((struct task_struct *)curtask)->pid", "(cast struct task_struct * curtask)->pid"},
		{"(uint8[4])$a", "(cast uint8[4] $a)"},
		{"(mytype_t *)$a", "(cast mytype_t * $a)"},
		{"*$p + 1", "((*$p) + 1)"},
		{"-(-1)", "(-(-1))"},
		{"!!$x", "(!(!$x))"},
		{"~$x & 0xff", "((~$x) & 255)"},
		{"$x++ + ++$y", "(($x++) + (++$y))"},
		{"$t.0.1", "$t.0.1"},
		{"$p->a.b[2]->c", "$p->a.b[2]->c"},
		{"@m[1, \"a\"] + @", "(@m[1,\"a\"] + @)"},
		{"(1, (2, 3)).1", "<1, <2, 3>>.1"},
		{"sizeof(struct x) + sizeof($y)", "(sizeof(struct x) + sizeof($y))"},
		{"offsetof(struct x, a.b)", "offsetof(struct x, a.b)"},
		{"kstack(3) == ustack", "(kstack(3) == ustack)"},
		{"1_000 + 0x10 + 010 + 3ull + 1e3 + 'a'", "(((((1000 + 16) + 8) + 3) + 1000) + 97)"},
		{"$1 + $#", "($1 + $#)"},
		{"true && false", "(true && false)"},
		{"args->filename", "args->filename"},
		{"args.pid", "args.pid"},
		{"\"a\\tb\\x41\\101\\\"\"", "\"a\\tbAA\\\"\""},
	}
	for _, tc := range tests {
		if got := sexpr(parseExpr(t, tc.in)); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.in, got, tc.want)
		}
	}
}

// bpftrace has no chained assignment: `$a = $b = 1` is a syntax error.
func TestNoChainedAssign(t *testing.T) {
	if _, err := Parse(&Source{Text: "BEGIN { $a = $b = 1; }"}); err == nil {
		t.Fatal("chained assignment parsed")
	}
}

func TestStatements(t *testing.T) {
	src := `#include <linux/sched.h>
#include "foo.h"
#define X 1
struct foo { int a; struct { int b; } c; };
typedef unsigned int myint;
struct Bar { char s[8]; }
enum { A = 1, B };
kprobe:vfs_read, kr:vfs_*, uprobe:/bin/bash:readline, u:/lib/libc.so.6:malloc+16, p:99, profile:hz:99, i:s:1, t:syscalls:sys_enter_* /pid == 1 && comm != "x"/
{
  $x = 1; $x += 2; $x <<= 1; $x++; --$x;
  @m[pid, comm] = count();
  if ($x > 1) { printf("a\n"); } else if ($x < 0) { return; } else { @y = 1 }
  unroll(3) { $x = $x + 1; }
  while ($x < 10) { $x++; if ($x == 5) { break; } continue; }
  for ($kv : @m) { print($kv.0); }
  let $y: uint64 = 5;
  let $z;
  { $inner = 1; }
  ;
  exit()
}
BEGIN { } END { clear(@m) }
`
	p, err := Parse(&Source{Name: "x.bt", Text: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Includes) != 2 || !p.Includes[0].System || p.Includes[1].Path != "foo.h" {
		t.Errorf("includes: %+v", p.Includes)
	}
	if len(p.Decls) != 5 {
		t.Fatalf("decls: %d", len(p.Decls))
	}
	for i, w := range [][2]string{{"define", "X"}, {"struct", "foo"}, {"typedef", "myint"}, {"struct", "Bar"}, {"enum", ""}} {
		if p.Decls[i].Kind != w[0] || p.Decls[i].Name != w[1] {
			t.Errorf("decl %d: %s %q, want %s %q", i, p.Decls[i].Kind, p.Decls[i].Name, w[0], w[1])
		}
	}
	if !strings.HasSuffix(p.Decls[1].Text, "};") {
		t.Errorf("decl text %q", p.Decls[1].Text)
	}
	if len(p.Probes) != 3 {
		t.Fatalf("probes: %d", len(p.Probes))
	}
	a := p.Probes[0].Attach
	if len(a) != 8 {
		t.Fatalf("attach points: %d", len(a))
	}
	check := func(i int, prov, target, fn string, wild bool) {
		t.Helper()
		if a[i].Provider.String() != prov || a[i].Target != target || a[i].Func != fn || a[i].Wildcard != wild {
			t.Errorf("attach %d %s: %+v", i, a[i].Raw, *a[i])
		}
	}
	check(0, "kprobe", "", "vfs_read", false)
	check(1, "kretprobe", "", "vfs_*", true)
	check(2, "uprobe", "/bin/bash", "readline", false)
	check(3, "uprobe", "/lib/libc.so.6", "malloc", false)
	if a[3].Offset != 16 || a[4].Unit != "hz" || a[4].Freq != 99 || a[5].Freq != 99 || a[6].Unit != "s" || a[6].Freq != 1 {
		t.Errorf("offset/freq: %+v %+v %+v", *a[3], *a[4], *a[6])
	}
	check(7, "tracepoint", "syscalls", "sys_enter_*", true)
	if p.Probes[0].Pred == nil {
		t.Error("no predicate")
	}
	stmts := p.Probes[0].Body.Stmts
	kinds := []string{}
	for _, s := range stmts {
		kinds = append(kinds, fmt.Sprintf("%T", s))
	}
	want := "*lang.AssignStmt *lang.AssignStmt *lang.AssignStmt *lang.ExprStmt *lang.ExprStmt *lang.AssignStmt *lang.IfStmt *lang.UnrollStmt *lang.WhileStmt *lang.ForStmt *lang.VarDeclStmt *lang.VarDeclStmt *lang.BlockStmt *lang.ExprStmt"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("statements:\n got  %s\n want %s", got, want)
	}
	ifs := stmts[6].(*IfStmt)
	elif, ok := ifs.Else.(*IfStmt)
	if !ok {
		t.Fatalf("else-if: %T", ifs.Else)
	}
	if _, ok := elif.Else.(*Block); !ok {
		t.Errorf("final else: %T", elif.Else)
	}
	d := stmts[10].(*VarDeclStmt)
	if d.Type == nil || d.Type.Name != "uint64" || d.Init == nil {
		t.Errorf("let: %+v", d)
	}
	if out := Dump(p); !strings.Contains(out, "probe kprobe:vfs_read, kr:vfs_*") || !strings.Contains(out, "for") {
		t.Errorf("dump:\n%s", out)
	}
}

func TestSpans(t *testing.T) {
	src := "BEGIN {\n  @m[1] = $a + foo(2, \"s\");\n  if ($a) { $b->c = 1 }\n}"
	p, err := Parse(&Source{Text: src})
	if err != nil {
		t.Fatal(err)
	}
	text := func(n Node) string {
		sp := n.Span()
		return src[sp.Start.Offset:sp.End.Offset]
	}
	as := p.Probes[0].Body.Stmts[0].(*AssignStmt)
	checks := []struct {
		n    Node
		want string
	}{
		{p.Probes[0], src},
		{p.Probes[0].Attach[0], "BEGIN"},
		{p.Probes[0].Body, src[6:]},
		{as, "@m[1] = $a + foo(2, \"s\")"},
		{as.Lhs, "@m[1]"},
		{as.Lhs.(*MapExpr).Keys[0], "1"},
		{as.Rhs, "$a + foo(2, \"s\")"},
		{as.Rhs.(*BinaryExpr).Y, "foo(2, \"s\")"},
		{as.Rhs.(*BinaryExpr).Y.(*CallExpr).Args[1], "\"s\""},
	}
	ifs := p.Probes[0].Body.Stmts[1].(*IfStmt)
	checks = append(checks, struct {
		n    Node
		want string
	}{ifs, "if ($a) { $b->c = 1 }"}, struct {
		n    Node
		want string
	}{ifs.Then.Stmts[0].(*AssignStmt).Lhs, "$b->c"})
	for _, c := range checks {
		if got := text(c.n); got != c.want {
			t.Errorf("%T: span text %q, want %q", c.n, got, c.want)
		}
	}
	// Every node has a valid span inside the source, and line/col agree
	// with the offset.
	Inspect(p, func(n Node) bool {
		sp := n.Span()
		if !sp.Start.IsValid() || sp.End.Offset < sp.Start.Offset || sp.End.Offset > len(src) {
			t.Errorf("%T: bad span %+v", n, sp)
		}
		if (&Source{Text: src}).PosAt(sp.Start.Offset) != sp.Start {
			t.Errorf("%T: start %+v disagrees with its offset", n, sp.Start)
		}
		return true
	})
	call := as.Rhs.(*BinaryExpr).Y.(*CallExpr)
	if call.NameSpan.Start.Line != 2 || call.NameSpan.Start.Col != 16 || call.NameSpan.End.Col != 19 {
		t.Errorf("call name span %+v", call.NameSpan)
	}
}

func TestNestingCap(t *testing.T) {
	for _, src := range []string{
		"BEGIN { $x = " + strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150) + "; }",
		"BEGIN { $x = " + strings.Repeat("- ", 150) + "1; }",
		"BEGIN " + strings.Repeat("{ ", 150) + strings.Repeat("} ", 150),
		"BEGIN { $x = " + strings.Repeat("1 ? ", 150) + "1" + strings.Repeat(" : 1", 150) + "; }",
		"BEGIN { $x = 1" + strings.Repeat(" + 1", 1200) + "; }",
	} {
		_, err := Parse(&Source{Text: src})
		if err == nil || !strings.Contains(err.Error(), "nesting too deep") {
			t.Errorf("%.40s...: err = %v", src, err)
		}
	}
	// Within the cap it parses.
	if _, err := Parse(&Source{Text: "BEGIN { $x = " + strings.Repeat("(", 90) + "1" + strings.Repeat(")", 90) + "; }"}); err != nil {
		t.Error(err)
	}
}
