package gen

// Shrink returns a smaller script that still fails (fails reports whether
// a script shows the same failure): statements are dropped, expressions
// replaced by a same-typed operand or by a literal, for as long as one of
// these keeps the failure. At most budget candidates are tried.
func Shrink(n *Node, fails func(*Node) bool, budget int) *Node {
	for budget > 0 {
		progress := false
		for _, try := range candidates(n) {
			if budget <= 0 {
				break
			}
			budget--
			undo := try()
			if fails(n) {
				progress = true
				break
			}
			undo()
		}
		if !progress {
			break
		}
	}
	return n
}

// candidates lists in-place edits of the tree, each returning its undo.
func candidates(root *Node) []func() func() {
	var out []func() func()
	var walk func(n *Node)
	walk = func(n *Node) {
		for i, k := range n.Kids {
			if k == nil {
				continue
			}
			i, k := i, k
			if n.Kind == KBlock && k.Kind == KStmt {
				out = append(out, func() func() {
					oldKids, oldParts := n.Kids, n.Parts
					kids := append(append([]*Node{}, n.Kids[:i]...), n.Kids[i+1:]...)
					parts := append(append([]string{}, n.Parts[:i+1]...), n.Parts[i+2:]...)
					if len(kids) == 0 {
						parts = []string{"{ }"}
					}
					n.Kids, n.Parts = kids, parts
					return func() { n.Kids, n.Parts = oldKids, oldParts }
				})
			}
			if k.Kind == KExpr {
				lit := "0"
				if k.T.Str {
					lit = `""`
				}
				if len(k.Parts) != 1 || k.Parts[0] != lit {
					repl := leaf(KExpr, k.T, lit)
					if !k.T.Str && k.T != i64 {
						repl = castTo(k.T, leaf(KExpr, i64, "0"))
					}
					out = append(out, replace(n, i, repl))
				}
				for _, kk := range k.Kids {
					if kk != nil && kk.Kind == KExpr && kk.T == k.T {
						out = append(out, replace(n, i, kk))
					}
				}
			}
			walk(k)
		}
	}
	walk(root)
	return out
}

func replace(parent *Node, i int, with *Node) func() func() {
	return func() func() {
		old := parent.Kids[i]
		parent.Kids[i] = with
		return func() { parent.Kids[i] = old }
	}
}
