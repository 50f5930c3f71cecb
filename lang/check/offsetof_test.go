package check

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

// TestOffsetofBareTypeName: offsetof(T, f) takes a struct by its bare
// name (bpftrace 0.26's offsetof(qspinlock, tail)), like offsetof(struct
// T, f); a name that is neither a type nor a value stays unknown.
func TestOffsetofBareTypeName(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`BEGIN { @ = offsetof(Foo, n); }`, "4"},
		{`BEGIN { @ = offsetof(struct Foo, n); }`, "4"},
		{`BEGIN { @ = offsetof(Nope, n); }`, "stdin:1:13-26: ERROR: Unknown identifier: 'Nope'"},
	} {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: c.src})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got := ""
		if _, err := Check(prog, Options{Resolver: fakeResolver{}}); err != nil {
			got = strings.SplitN(err.Error(), "\n", 2)[0]
		} else {
			lang.Inspect(prog, func(n lang.Node) bool {
				if o, ok := n.(*lang.OffsetofExpr); ok {
					got = strconv.Itoa(o.Val)
				}
				return true
			})
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}
