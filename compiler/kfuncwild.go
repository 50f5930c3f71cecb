package compiler

import (
	"fmt"
	"sort"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// maxProbes is the cap on attached probes (Options.MaxProbes, which the
// command sets from MAX_PROBES, else bpftrace's 512); the runtime applies
// it again when it attaches.
func (c *compiler) maxProbes() int {
	if c.opts.MaxProbes > 0 {
		return c.opts.MaxProbes
	}
	return 512
}

// expandKfuncs replaces each wildcard kfunc/kretfunc attach point by its
// BTF matches: the kernel ties an fentry/fexit program to one function, so
// each match becomes its own program (groupAttach keys them by function),
// and `probe` stays a per-program constant. A wildcard matching functions
// on the deny list is refused as a whole, as for kprobes. The count is checked against MAX_PROBES here, before a thousand
// programs are generated and verified. When the clause reads `args`, each
// match must lay out the fields read as the checker's type (from the first
// match) does.
func (c *compiler) expandKfuncs(aps []*lang.AttachPoint, usesArgs bool, fields map[string]bool) ([]*lang.AttachPoint, error) {
	var out []*lang.AttachPoint
	for _, ap := range aps {
		if (ap.Provider == lang.ProbeKfunc || ap.Provider == lang.ProbeKretfunc) && !ap.Wildcard && c.res.Opts.Resolver != nil {
			// The function must be in BTF (the kernel ties the program to
			// its BTF ID at load): say so here, where it can be named,
			// whatever the kernel's support for fentry.
			if _, _, err := c.res.Opts.Resolver.Func(ap.Func); err != nil && ktypes.IsNotFound(err) {
				return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("%s: %v", ap.Raw, err), Hint: c.suggestFunc(ap.Func)}
			}
		}
		if (ap.Provider != lang.ProbeKfunc && ap.Provider != lang.ProbeKretfunc) || !ap.Wildcard {
			out = append(out, ap)
			continue
		}
		lister := c.res.Opts.Resolver
		if lister == nil {
			return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("%s: cannot expand the wildcard: no BTF function list available", ap.Raw)}
		}
		matches, err := lister.FuncMatches(ap.Target, ap.Func)
		if err != nil {
			return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("%s: %v", ap.Raw, err)}
		}
		var denied []string
		for _, m := range matches {
			if DenyReason(m[1]) != "" {
				denied = append(denied, m[1])
			}
		}
		if len(denied) > 0 {
			pattern := ap.Func
			if ap.Target != "" {
				pattern = ap.Target + ":" + ap.Func
			}
			sort.Strings(denied)
			return nil, &Error{Span: ap.Span(), Msg: DeniedWildcard(ap.Provider.String(), pattern, denied, len(matches))}
		}
		var ref *types.Type
		refName := ""
		n := 0
		for _, m := range matches {
			e := *ap
			e.Target, e.Func, e.Wildcard = m[0], m[1], false
			e.Raw = ap.Provider.String() + ":" + m[1]
			if m[0] != "" {
				e.Raw = ap.Provider.String() + ":" + m[0] + ":" + m[1]
			}
			if usesArgs {
				args, _, err := c.res.Opts.Resolver.Func(m[1])
				if err != nil {
					return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("%s: args of %s: %v", ap.Raw, e.Raw, err)}
				}
				rec := recordOf(args)
				if ref == nil {
					ref, refName = rec, e.Raw
				} else if layoutKey(rec, fields) != layoutKey(ref, fields) {
					return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("%s: %s and %s differ in the args fields the probe reads; use separate probes", ap.Raw, refName, e.Raw)}
				}
			}
			out = append(out, &e)
			n++
		}
		if n == 0 {
			return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("%s: no BTF function matches %s (kfunc needs the function in /sys/kernel/btf/vmlinux)", ap.Raw, ap.Func)}
		}
		c.kfuncProbes += n
		if limit := c.maxProbes(); c.kfuncProbes > limit {
			return nil, &Error{Span: ap.Span(), Msg: fmt.Sprintf("Can't attach to %d probes because it exceeds the current limit of %d probes. "+
				"You can increase the limit through the GOTRACE_MAX_PROBES (or BPFTRACE_MAX_PROBES) environment variable, but BE CAREFUL since a high number of probes attached can cause your system to crash.", c.kfuncProbes, limit)}
		}
	}
	return out, nil
}

// suggestFunc is the "did you mean" of a kernel function missing from BTF:
// the closest BTF function sharing the name's first letter.
func (c *compiler) suggestFunc(name string) string {
	lister := c.res.Opts.Resolver
	if lister == nil || name == "" {
		return ""
	}
	ms, err := lister.FuncMatches("", name[:1]+"*")
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(ms))
	for _, m := range ms {
		names = append(names, m[1])
	}
	return lang.Suggest(name, names)
}
