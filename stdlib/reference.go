package stdlib

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteReference writes the builtin reference (`gotrace --help builtins`),
// generated from Table so that it never falls behind: variables, then
// functions, aggregations and map functions, each sorted by name, with
// the signature, the probes it is limited to, whether it needs --unsafe,
// and its one-line description.
func WriteReference(w io.Writer) error {
	sections := []struct {
		kind  Kind
		title string
	}{
		{Var, "VARIABLES (also callable as name(), and as __builtin_name)"},
		{Func, "FUNCTIONS"},
		{Agg, "AGGREGATIONS (assigned to a map: @m = count())"},
		{MapFunc, "MAP FUNCTIONS"},
	}
	for i, sec := range sections {
		var rows []*Builtin
		for _, b := range table() {
			if b.Kind == sec.kind {
				rows = append(rows, b)
			}
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(w, sec.title+":"); err != nil {
			return err
		}
		for _, b := range rows {
			var notes []string
			if b.Unsafe {
				notes = append(notes, "needs --unsafe")
			}
			if len(b.Probes) > 0 {
				var names []string
				for _, k := range b.Probes {
					names = append(names, k.String())
				}
				notes = append(notes, "probes: "+strings.Join(names, ", "))
			}
			line := "    " + b.Sig
			if len(notes) > 0 {
				line += "  [" + strings.Join(notes, "; ") + "]"
			}
			if _, err := fmt.Fprintf(w, "%s\n        %s\n", line, b.Doc); err != nil {
				return err
			}
		}
	}
	return nil
}
