package stdlib

import (
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang/types"
)

// Networking builtins whose helpers only BTF-typed tracing programs may
// call (bpftrace 0.26): socket_cookie. On rawtracepoint probes the
// compiler then loads the clause as tp_btf (TRACING, BPF_TRACE_RAW_TP)
// rather than a raw tracepoint: see TracingOnly.

// TracingOnly names the builtins whose helpers need a TRACING program
// (fentry/fexit or tp_btf): a rawtracepoint clause calling one is loaded
// as tp_btf.
var TracingOnly = map[string]bool{"socket_cookie": true}

// tracingProbes are the providers whose programs can be TRACING ones.
var tracingProbes = []string{"rawtracepoint", "kfunc", "kretfunc"}

var _ = rows(
	&Builtin{Name: "socket_cookie", Kind: Func, Sig: "uint64 socket_cookie(struct sock *sk)", MinArgs: 1, MaxArgs: 1, Since: "0.26",
		Probes:  tracingProbes,
		Helpers: []string{"bpf_get_socket_cookie"},
		Doc:     "the socket's cookie (a unique id of the socket, as SO_COOKIE gives it); 0 for a NULL socket",
		Check: func(c Checker, call *Call) *types.Type {
			if !onlyProbes(c, call, tracingProbes, func(p string) string {
				return "socket_cookie can not be used with \"" + p + "\" probes"
			}) {
				return types.InvalidType
			}
			t := call.Args[0].Type()
			if invalid(t) {
				return types.InvalidType
			}
			if t.Kind != types.Pointer || t.Elem == nil || t.Elem.Kind != types.Record || t.Elem.Name != "struct sock" {
				c.Errorf(call.Expr, "socket_cookie() only supports 'struct sock *' as the argument (%s provided)", t.String())
				return types.InvalidType
			}
			return types.U64
		}},
)

func init() {
	Gens["socket_cookie"] = genSocketCookie
}

// genSocketCookie: bpf_get_socket_cookie(sk); the tracing variant of the
// helper takes the BTF-typed pointer and returns 0 for NULL.
func genSocketCookie(g Gen, c *Call) error {
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	g.Emit(asm.Mov.Reg(asm.R1, r), asm.FnGetSocketCookie.Call())
	g.Free(r)
	g.SetResult(asm.R0)
	return nil
}
