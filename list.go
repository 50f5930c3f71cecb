package gotrace

import (
	"fmt"
	"io"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/runtime"
)

// ListProgram prints the probes of a script (-l -e PROG, -l FILE): each
// attach point expanded as -l expands a pattern (with opts.Verbose, their
// arguments); probes that name no kernel or user object (BEGIN, END,
// interval, profile ...) as written. opts.Pattern is not used.
func ListProgram(w io.Writer, src *lang.Source, opts runtime.ListOptions) error {
	prog, err := lang.ParseWith(src, lang.ParseOptions{Imports: !opts.Compat.Legacy()})
	if err != nil {
		return err
	}
	for _, p := range prog.Probes {
		for _, ap := range p.Attach {
			pattern := ap.Raw
			switch t := ap.Provider.Type(); {
			case ap.Provider == lang.ProbeInterval || ap.Provider == lang.ProbeProfile:
				// bpftrace 0.26 lists a timer by its unit: interval:ms:.
				if ap.Unit != "" {
					fmt.Fprintf(w, "%s:%s:\n", ap.Provider, ap.Unit)
					continue
				}
				fmt.Fprintln(w, ap.Raw)
				continue
			case !t.Listed:
				fmt.Fprintln(w, ap.Raw)
				continue
			case t.Context == lang.CtxPerfEvent:
				// The event, not its count: software:cpu:1e6 lists software:cpu:.
				pattern = ap.Provider.String() + ":" + ap.Func
			}
			o := opts
			o.Pattern = pattern
			if err := runtime.ListWith(w, o); err != nil {
				return err
			}
		}
	}
	return nil
}
