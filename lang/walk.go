package lang

// Inspect walks the tree rooted at n in depth-first order, calling f for
// each node before its children; if f returns false the children are
// skipped. Nil children are not visited.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	visit := func(c Node) {
		if c != nil {
			Inspect(c, f)
		}
	}
	expr := func(e Expr) {
		if e != nil {
			Inspect(e, f)
		}
	}
	block := func(b *Block) {
		if b != nil {
			Inspect(b, f)
		}
	}
	switch n := n.(type) {
	case *Program:
		for _, p := range n.Probes {
			visit(p)
		}
	case *Probe:
		for _, a := range n.Attach {
			visit(a)
		}
		expr(n.Pred)
		block(n.Body)
	case *Block:
		for _, s := range n.Stmts {
			visit(s)
		}
	case *ExprStmt:
		expr(n.X)
	case *AssignStmt:
		expr(n.Lhs)
		expr(n.Rhs)
	case *VarDeclStmt:
		expr(n.Var)
		expr(n.Init)
	case *IfStmt:
		expr(n.Cond)
		block(n.Then)
		if n.Else != nil {
			visit(n.Else)
		}
	case *UnrollStmt:
		expr(n.Count)
		block(n.Body)
	case *WhileStmt:
		expr(n.Cond)
		block(n.Body)
	case *JumpStmt:
		expr(n.Value)
	case *ForStmt:
		expr(n.Var)
		if n.Map != nil {
			expr(n.Map)
		}
		expr(n.From)
		expr(n.To)
		block(n.Body)
	case *BlockStmt:
		block(n.Body)
	case *MapExpr:
		for _, k := range n.Keys {
			expr(k)
		}
	case *CallExpr:
		for _, a := range n.Args {
			expr(a)
		}
	case *BinaryExpr:
		expr(n.X)
		expr(n.Y)
	case *UnaryExpr:
		expr(n.X)
	case *TernaryExpr:
		expr(n.Cond)
		expr(n.Then)
		expr(n.Else)
	case *FieldExpr:
		expr(n.X)
	case *TupleIndexExpr:
		expr(n.X)
	case *IndexExpr:
		expr(n.X)
		expr(n.Index)
	case *CastExpr:
		expr(n.X)
	case *TupleExpr:
		for _, e := range n.Elems {
			expr(e)
		}
	case *BlockExpr:
		for _, s := range n.Stmts {
			visit(s)
		}
		expr(n.Value)
	case *SizeofExpr:
		expr(n.X)
	case *OffsetofExpr:
		expr(n.X)
	}
}

var (
	_ Expr = (*IntLit)(nil)
	_ Expr = (*StrLit)(nil)
	_ Expr = (*BoolLit)(nil)
	_ Expr = (*PositionalExpr)(nil)
	_ Expr = (*BuiltinExpr)(nil)
	_ Expr = (*IdentExpr)(nil)
	_ Expr = (*VarExpr)(nil)
	_ Expr = (*MapExpr)(nil)
	_ Expr = (*CallExpr)(nil)
	_ Expr = (*BinaryExpr)(nil)
	_ Expr = (*UnaryExpr)(nil)
	_ Expr = (*TernaryExpr)(nil)
	_ Expr = (*FieldExpr)(nil)
	_ Expr = (*TupleIndexExpr)(nil)
	_ Expr = (*IndexExpr)(nil)
	_ Expr = (*CastExpr)(nil)
	_ Expr = (*TupleExpr)(nil)
	_ Expr = (*SizeofExpr)(nil)
	_ Expr = (*OffsetofExpr)(nil)
	_ Stmt = (*ExprStmt)(nil)
	_ Stmt = (*AssignStmt)(nil)
	_ Stmt = (*VarDeclStmt)(nil)
	_ Stmt = (*IfStmt)(nil)
	_ Stmt = (*UnrollStmt)(nil)
	_ Stmt = (*WhileStmt)(nil)
	_ Stmt = (*ForStmt)(nil)
	_ Stmt = (*JumpStmt)(nil)
	_ Stmt = (*BlockStmt)(nil)
	_ Node = (*Program)(nil)
	_ Node = (*AttachPoint)(nil)
	_ Node = (*TypeExpr)(nil)
)
