package check

import "github.com/gotrace/gotrace/lang"

// substituteAttachParams resolves the attach points written with
// positional parameters (`BEG$1`, `uprobe:$1:func`): the parser leaves them
// unparsed (Provider ""), since only the command line gives their text.
// Each is parsed again with the parameters substituted, in place, so the
// compiler and runtime see an ordinary attach point (Raw is the
// substituted text, as bpftrace's probe names show it).
func substituteAttachParams(prog *lang.Program, params []string) []lang.Diagnostic {
	var errs []lang.Diagnostic
	for _, p := range prog.Probes {
		for _, ap := range p.Attach {
			if ap.Provider != lang.ProbeNone || !lang.HasParams(ap.Raw) {
				continue
			}
			nap, err := lang.ParseAttachPoint(lang.SubstituteParams(ap.Raw, params), ap.Span())
			if err != nil {
				errs = append(errs, lang.Diagnostic{Severity: lang.Error, Span: ap.Span(), Msg: err.Error()})
				continue
			}
			*ap = *nap
		}
	}
	return errs
}
