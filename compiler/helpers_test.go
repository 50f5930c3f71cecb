package compiler

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/lang/types"
)

// A tiny builder of typed ASTs, as the checker would annotate them, so the
// compiler is tested on its own.

type tb struct {
	src   *lang.Source
	line  int
	maps  map[string]*lang.MapInfo
	vars  map[string]*lang.VarInfo
	probe *lang.Probe
}

func newTB(lines ...string) *tb {
	return &tb{src: &lang.Source{Name: "stdin", Text: strings.Join(lines, "\n")}, line: 1,
		maps: map[string]*lang.MapInfo{}, vars: map[string]*lang.VarInfo{}}
}

// at returns a Loc on line n (1-based), spanning the whole line.
func (b *tb) at(n int) lang.Loc {
	off := 0
	for i := 1; i < n; i++ {
		off += strings.IndexByte(b.src.Text[off:], '\n') + 1
	}
	end := off + len(b.src.Line(n))
	return lang.Loc(lang.Span{Start: b.src.PosAt(off), End: b.src.PosAt(end)})
}

func (b *tb) l() lang.Loc { return b.at(b.line) }

func (b *tb) int(v int64, t *types.Type) *lang.IntLit {
	e := &lang.IntLit{Loc: b.l(), Value: uint64(v)}
	e.SetType(t)
	e.SetFolded(&lang.Const{Int: v, IsInt: true}) // as the checker folds it
	return e
}

func (b *tb) str(s string) *lang.StrLit {
	e := &lang.StrLit{Loc: b.l(), Value: s}
	e.SetType(types.StringType(len(s) + 1))
	e.SetFolded(&lang.Const{Str: s, IsStr: true}) // as the checker folds it
	return e
}

func (b *tb) builtin(name string, t *types.Type) *lang.BuiltinExpr {
	e := &lang.BuiltinExpr{Loc: b.l(), Name: name}
	e.SetType(t)
	return e
}

func (b *tb) call(name string, t *types.Type, args ...lang.Expr) *lang.CallExpr {
	e := &lang.CallExpr{Loc: b.l(), Name: name, Args: args}
	e.SetType(t)
	return e
}

func (b *tb) bin(op string, t *types.Type, x, y lang.Expr) *lang.BinaryExpr {
	e := &lang.BinaryExpr{Loc: b.l(), Op: op, X: x, Y: y}
	e.SetType(t)
	return e
}

func (b *tb) unary(op string, t *types.Type, x lang.Expr, postfix bool) *lang.UnaryExpr {
	e := &lang.UnaryExpr{Loc: b.l(), Op: op, X: x, Postfix: postfix}
	e.SetType(t)
	return e
}

func (b *tb) cast(t *types.Type, x lang.Expr) *lang.CastExpr {
	e := &lang.CastExpr{Loc: b.l(), X: x, To: &lang.TypeExpr{Resolved: t}}
	e.SetType(t)
	return e
}

func (b *tb) tern(t *types.Type, c, x, y lang.Expr) *lang.TernaryExpr {
	e := &lang.TernaryExpr{Loc: b.l(), Cond: c, Then: x, Else: y}
	e.SetType(t)
	return e
}

func (b *tb) tuple(elems ...lang.Expr) *lang.TupleExpr {
	var ts []*types.Type
	for _, e := range elems {
		ts = append(ts, e.Type())
	}
	e := &lang.TupleExpr{Loc: b.l(), Elems: elems}
	e.SetType(types.TupleOf(ts...))
	return e
}

// m declares (once) and uses map name with the given value and key types.
func (b *tb) m(name string, value *types.Type, keys ...lang.Expr) *lang.MapExpr {
	info, ok := b.maps[name]
	if !ok {
		info = &lang.MapInfo{Name: name, Value: value}
		for _, k := range keys {
			info.KeyParts = append(info.KeyParts, k.Type())
		}
		switch len(info.KeyParts) {
		case 0:
		case 1:
			info.Key = info.KeyParts[0]
		default:
			info.Key = types.TupleOf(info.KeyParts...)
		}
		b.maps[name] = info
	}
	e := &lang.MapExpr{Loc: b.l(), Name: name, Keys: keys, Info: info}
	e.SetType(info.Value)
	return e
}

func (b *tb) v(name string, t *types.Type) *lang.VarExpr {
	info, ok := b.vars[name]
	if !ok {
		info = &lang.VarInfo{Name: name, Type: t, ID: len(b.vars)}
		b.vars[name] = info
	}
	e := &lang.VarExpr{Loc: b.l(), Name: name, Info: info}
	e.SetType(info.Type)
	return e
}

func (b *tb) assign(lhs lang.Expr, op string, rhs lang.Expr) *lang.AssignStmt {
	return &lang.AssignStmt{Loc: b.l(), Lhs: lhs, Op: op, Rhs: rhs}
}

func (b *tb) expr(e lang.Expr) *lang.ExprStmt { return &lang.ExprStmt{Loc: b.l(), X: e} }

func (b *tb) block(stmts ...lang.Stmt) *lang.Block { return &lang.Block{Loc: b.l(), Stmts: stmts} }

// next moves to the next source line.
func (b *tb) next() *tb { b.line++; return b }

func attach(raw, provider, target, fn string) *lang.AttachPoint {
	return &lang.AttachPoint{Raw: raw, Provider: lang.ProbeKindNamed(provider), Target: target, Func: fn}
}

func (b *tb) clause(ap *lang.AttachPoint, pred lang.Expr, stmts ...lang.Stmt) *lang.Probe {
	p := &lang.Probe{Loc: b.at(1), Attach: []*lang.AttachPoint{ap}, Pred: pred, Body: b.block(stmts...)}
	ap.Loc = b.at(1)
	for _, v := range b.vars {
		p.Vars = append(p.Vars, v)
	}
	b.vars = map[string]*lang.VarInfo{}
	return p
}

func (b *tb) result(probes ...*lang.Probe) *check.Result {
	prog := &lang.Program{Src: b.src, Probes: probes}
	res := &check.Result{Prog: prog, StrLen: 64}
	for _, m := range b.maps {
		res.Maps = append(res.Maps, m)
	}
	return res
}

func compileT(t *testing.T, res *check.Result) *Spec {
	t.Helper()
	spec, err := Compile(res, Options{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return spec
}

// checkText parses and checks a script named "stdin". A nil
// opts.Resolver gets the live one (kernel types, tracepoint formats) when
// this machine has it.
func checkText(t *testing.T, text string, opts check.Options) *check.Result {
	t.Helper()
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: text})
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	if opts.Resolver == nil {
		if r, err := newResolver(); err == nil {
			opts.Resolver = r
		}
	}
	res, err := check.Check(prog, opts)
	if err != nil {
		t.Fatalf("check %q: %v", text, err)
	}
	return res
}
