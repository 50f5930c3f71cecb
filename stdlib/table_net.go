package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Networking builtins whose helpers only BTF-typed tracing programs may
// call (bpftrace 0.26): socket_cookie, skboutput. On rawtracepoint probes the
// compiler then loads the clause as tp_btf (TRACING, BPF_TRACE_RAW_TP)
// rather than a raw tracepoint: their rows are flagged TracingOnly.

// MapSkbOutput is the perf event array skboutput() writes packets to (the
// helper bpf_skb_output writes to no other kind of map).
const MapSkbOutput = "skb_output"

// SkbOutputHeaderSize is the size of the header of every skboutput record,
// four u64: the event ID (its Format is the pcap file), the time
// (bpf_ktime_get_boot_ns), the number of packet bytes copied after the
// header, and the offset into them where the written packet starts (the
// call's last argument). The kernel pads a perf record; the length says
// where the packet ends.
const SkbOutputHeaderSize = 32

// tracingProbes are the providers whose programs can be TRACING ones.
var tracingProbes = []lang.ProbeKind{lang.ProbeRawTracepoint, lang.ProbeKfunc, lang.ProbeKretfunc}

func netRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "skboutput", Gen: genSkbOutput, Kind: Func, Flags: TracingOnly, Sig: "int64 skboutput(const string path, struct sk_buff *skb, uint64 length, const uint32 offset)",
			MinArgs: 4, MaxArgs: 4, Since: "0.26", Probes: tracingProbes, Helpers: []string{"bpf_skb_output"},
			Doc: "write the first length bytes of skb's data, from offset, as one packet of the pcap file path (LINKTYPE_RAW); the helper's result (0 when written)",
			Check: func(c Checker, call *Call) *types.Type {
				if _, ok := wantStrLit(c, call, 0); !ok {
					return types.InvalidType
				}
				if t := call.Args[1].Type(); !invalid(t) && !(t.Kind == types.Pointer && t.Elem != nil && t.Elem.Kind == types.Record && t.Elem.Name == "struct sk_buff") {
					c.Errorf(call.Expr, "skboutput() only supports 'struct sk_buff *' as the second argument (%s provided)", t.String())
					return types.InvalidType
				}
				if t := call.Args[2].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "skboutput() only supports an integer length (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				if v, ok := wantIntLit(c, call, 3); !ok {
					return types.InvalidType
				} else if v < 0 {
					c.Errorf(call.Expr, "skboutput() offset must not be negative (%d given)", v)
					return types.InvalidType
				}
				return types.IntType(8, true)
			}},
		&Builtin{Name: "socket_cookie", Gen: genSocketCookie, Kind: Func, Flags: TracingOnly, Sig: "uint64 socket_cookie(struct sock *sk)", MinArgs: 1, MaxArgs: 1, Since: "0.26",
			Probes:  tracingProbes,
			Helpers: []string{"bpf_get_socket_cookie"},
			Doc:     "the socket's cookie (a unique id of the socket, as SO_COOKIE gives it); 0 for a NULL socket",
			Check: func(c Checker, call *Call) *types.Type {
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
	}
}

// genSkbOutput: the header on the stack, then bpf_skb_output(skb, map,
// len << 32 | BPF_F_CURRENT_CPU, &hdr, sizeof hdr), which appends len
// bytes of the packet to the record. Its result is the helper's.
func genSkbOutput(g Gen, c *Call) error {
	path, ok := lang.ConstStrOf(c.Args[0]) // a literal or a positional parameter, folded by the checker
	if !ok {
		return fmt.Errorf("skboutput() path must be a string literal")
	}
	off, ok := intConst(c.Args[3])
	if !ok {
		return fmt.Errorf("skboutput() offset must be an integer literal")
	}
	skb, err := g.EvalInt(c.Args[1])
	if err != nil {
		return err
	}
	defer g.Free(skb)
	n, err := g.EvalInt(c.Args[2])
	if err != nil {
		return err
	}
	defer g.Free(n)
	hdr, err := g.StackTemp(SkbOutputHeaderSize)
	if err != nil {
		return err
	}
	id := g.EventFormat(EvSkbOutput, path, nil)
	g.Emit(asm.FnKtimeGetBootNs.Call(),
		asm.StoreMem(asm.RFP, hdr+8, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R0, int32(id)),
		asm.StoreMem(asm.RFP, hdr, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, hdr+16, n, asm.DWord),
		asm.Mov.Imm(asm.R0, int32(off)),
		asm.StoreMem(asm.RFP, hdr+24, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, skb))
	g.MapRef(asm.R2, MapSkbOutput, InternalMap{Type: uint32(ebpf.PerfEventArray), KeySize: 4, ValueSize: 4})
	g.Emit(asm.Mov.Reg(asm.R3, n),
		asm.LSh.Imm(asm.R3, 32),
		asm.Mov.Imm32(asm.R4, -1), // BPF_F_CURRENT_CPU, zero-extended
		asm.Or.Reg(asm.R3, asm.R4),
		asm.Mov.Reg(asm.R4, asm.RFP),
		asm.Add.Imm(asm.R4, int32(hdr)),
		asm.Mov.Imm(asm.R5, SkbOutputHeaderSize),
		asm.FnSkbOutput.Call())
	g.SetResult(asm.R0)
	return nil
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
