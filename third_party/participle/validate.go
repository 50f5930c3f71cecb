package participle

import (
	"fmt"
	"reflect"
	"strings"
)

// Perform some post-construction validation. This currently does:
//
// Checks for left recursion.
//
// (gotrace: validate and isLeftRecursive walk the nodes directly, in
// visit's order and with its results, rather than through visit's
// closures, a map entry per node and a panic to stop; see README.md.)
func validate(n node) error {
	return validateNode(n, map[*strct]bool{}, &leftRecursion{seen: map[node]bool{}})
}

func validateNode(n node, checked map[*strct]bool, w *leftRecursion) (err error) {
	if n, ok := n.(*strct); ok {
		if checked[n] {
			return nil
		}
		if w.isLeftRecursive(n) {
			return fmt.Errorf("left recursion detected on\n\n%s", indent(n.String()))
		}
		checked[n] = true
	}
	eachChild(n, func(child node) bool {
		err = validateNode(child, checked, w)
		return err != nil
	})
	return err
}

func isLeftRecursive(root *strct) (found bool) {
	return (&leftRecursion{seen: map[node]bool{}}).isLeftRecursive(root)
}

// isLeftRecursive walks from root's expression, with w's map emptied.
func (w *leftRecursion) isLeftRecursive(root *strct) bool {
	for n := range w.seen {
		delete(w.seen, n)
	}
	w.typ, w.found = root.typ, false
	w.walk(root.expr)
	return w.found
}

// leftRecursion walks the nodes from a struct's expression as visit
// does until it meets a sequence's second element, looking for the
// struct's type.
type leftRecursion struct {
	typ   reflect.Type
	seen  map[node]bool
	found bool
}

// walk reports whether the walk ends at n.
func (w *leftRecursion) walk(n node) bool {
	switch n := n.(type) {
	case *strct:
		if w.typ == n.typ {
			w.found = true
			return true
		}
	case *sequence:
		if !n.head {
			return true
		}
	}
	if w.seen[n] {
		return false
	}
	w.seen[n] = true
	return eachChild(n, w.walk)
}

// eachChild calls f on each child of n in visit's order until f returns
// true, and reports whether it did.
func eachChild(n node, f func(node) bool) bool {
	switch n := n.(type) {
	case *disjunction:
		for _, child := range n.nodes {
			if f(child) {
				return true
			}
		}
	case *strct:
		return f(n.expr)
	case *custom, *parseable, *reference, *literal:
	case *union:
		for _, member := range n.disjunction.nodes {
			if f(member) {
				return true
			}
		}
	case *sequence:
		if f(n.node) {
			return true
		}
		if n.next != nil {
			return f(n.next)
		}
	case *capture:
		return f(n.node)
	case *negation:
		return f(n.node)
	case *group:
		return f(n.expr)
	case *lookaheadGroup:
		return f(n.expr)
	default:
		panic(fmt.Sprintf("%T", n))
	}
	return false
}

func indent(s string) string {
	return "  " + strings.Join(strings.Split(s, "\n"), "\n  ")
}
