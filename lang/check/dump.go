package check

import (
	"fmt"
	"strings"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/stdlib"
)

// Dump renders a checked program for `gotrace -d` and golden tests: the
// typed AST, each clause's scratch variables and the unified maps.
func Dump(res *Result) string {
	if res == nil || res.Prog == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(lang.Dump(res.Prog))
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	if len(res.Maps) > 0 {
		b.WriteString("maps:\n")
		for _, m := range res.Maps {
			key := "none"
			if len(m.KeyParts) > 0 {
				parts := make([]string, len(m.KeyParts))
				for i, k := range m.KeyParts {
					parts[i] = stdlib.TypeName(k)
				}
				key = "[" + strings.Join(parts, ", ") + "]"
			}
			val := stdlib.TypeName(m.Value)
			if m.Value != nil && m.Value.Kind.String() == "lhist" {
				val += fmt.Sprintf("(%d,%d,%d)", m.Value.Lhist[0], m.Value.Lhist[1], m.Value.Lhist[2])
			}
			fmt.Fprintf(&b, "  %s key=%s value=%s\n", m.Name, key, val)
		}
	}
	return b.String()
}
