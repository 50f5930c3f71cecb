package compiler

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/stdlib"
)

// Kernel functions (kfuncs) a builtin calls: a BPF_PSEUDO_KFUNC_CALL whose
// immediate is the function's vmlinux BTF ID (offset 0: vmlinux, no module
// BTF fd). Which program types may call a kfunc is the kernel's choice
// (each kfunc set is registered per program type), so the call is checked
// against this probe's program type the way helpers are (checkHelpers).

// KfuncSince is the Linux release that added each kfunc a builtin calls.
var KfuncSince = map[string]string{
	"bpf_task_from_pid": "6.1",
	"bpf_task_release":  "6.0",
}

func (g *gen) Kfunc(builtin, name string) (asm.Instruction, error) {
	r := g.c.res.Opts.Resolver
	if r == nil {
		return asm.Instruction{}, &stdlib.UserError{Msg: fmt.Sprintf("%s needs the kernel's BTF to call the kfunc %s", builtin, name)}
	}
	id, err := r.KernelFunc(name)
	if err != nil {
		return asm.Instruction{}, &stdlib.UserError{Msg: fmt.Sprintf("%s is not supported by this kernel: it needs the kfunc %s (added in Linux %s), which the kernel lacks", builtin, name, KfuncSince[name])}
	}
	have := g.c.opts.HaveKfunc
	if have == nil {
		have = probeKfunc
	}
	if err := have(g.prog.Type, name, id); errors.Is(err, ebpf.ErrNotSupported) {
		return asm.Instruction{}, &stdlib.UserError{Msg: fmt.Sprintf("%s is not supported in %s probes by this kernel: it calls the kfunc %s, which the kernel does not let %s programs call",
			builtin, g.ap.Provider, name, progTypeName(g.prog.Type))}
	}
	return kfuncCall(id), nil
}

func kfuncCall(id uint32) asm.Instruction {
	return asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoKfuncCall, Constant: int64(id)}
}

// progTypeName spells a program type as the kernel does (KPROBE).
func progTypeName(pt ebpf.ProgramType) string {
	switch pt {
	case ebpf.Kprobe:
		return "KPROBE"
	case ebpf.TracePoint:
		return "TRACEPOINT"
	case ebpf.RawTracepoint:
		return "RAW_TRACEPOINT"
	case ebpf.PerfEvent:
		return "PERF_EVENT"
	case ebpf.Tracing:
		return "TRACING"
	}
	return strings.ToUpper(pt.String())
}

var kfuncProbes sync.Map // "type/id" -> error

// probeKfunc loads `r1 = 0; call kfunc; r0 = 0; exit` as pt: the verifier
// says "calling kernel function X is not allowed" for a kfunc not
// registered for pt. The argument checks fail otherwise (EACCES/EINVAL for
// other reasons), which says the call itself is allowed. TRACING programs
// need an attach target, so they are not probed.
func probeKfunc(pt ebpf.ProgramType, name string, id uint32) error {
	if pt == ebpf.Tracing {
		return nil
	}
	key := fmt.Sprintf("%d/%d", pt, id)
	if v, ok := kfuncProbes.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: pt, License: "GPL", Instructions: asm.Instructions{
		asm.Mov.Imm(asm.R1, 0), kfuncCall(id), asm.Mov.Imm(asm.R0, 0), asm.Return(),
	}})
	var res error
	switch {
	case err == nil:
		p.Close()
	case strings.Contains(err.Error(), "is not allowed"):
		res = fmt.Errorf("kfunc %s from %s programs: %w", name, pt, ebpf.ErrNotSupported)
	default:
		res = fmt.Errorf("probing kfunc %s: %v", name, err) // unknown: the verifier decides
	}
	kfuncProbes.Store(key, res)
	return res
}

// MapRodata is the internal map of read-only data: one ARRAY entry holding
// every string RodataAddr placed, frozen at load (BPF_F_RDONLY_PROG), so
// the verifier takes its strings as constants (bpf_seq_printf's format).
const MapRodata = "rodata"

// bpfFRdonlyProg is BPF_F_RDONLY_PROG: programs may only read the map.
const bpfFRdonlyProg = 1 << 7

func (g *gen) RodataAddr(dst asm.Register, s string) {
	m := g.c.internalMap(MapRodata, ebpf.Array, 4, 0, 1)
	m.Flags |= bpfFRdonlyProg
	off := len(m.Contents)
	m.Contents = append(m.Contents, s...)
	m.Contents = append(m.Contents, 0)
	for len(m.Contents)%8 != 0 {
		m.Contents = append(m.Contents, 0)
	}
	m.ValueSize = uint32(len(m.Contents))
	g.emit(asm.LoadMapValue(dst, 0, uint32(off)).WithReference(MapRodata))
}
