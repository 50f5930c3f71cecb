package compiler

import (
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/stdlib"
)

// callsTracingOnly reports whether clause p calls a builtin whose helper
// only TRACING programs may call (its row is flagged stdlib.TracingOnly): its rawtracepoint
// programs are then loaded as tp_btf (BPF_PROG_TYPE_TRACING with
// BPF_TRACE_RAW_TP, attached through the btf_trace_NAME type) instead of
// BPF_PROG_TYPE_RAW_TRACEPOINT. Both read the tracepoint's arguments as an
// array of u64, so the code is the same.
func callsTracingOnly(p *lang.Probe) bool {
	found := false
	lang.Inspect(p, func(n lang.Node) bool {
		if c, ok := n.(*lang.CallExpr); ok {
			if row, _, known := stdlib.Resolve(c.Name); known && row.Has(stdlib.TracingOnly) {
				found = true
			}
		}
		return !found
	})
	return found
}
