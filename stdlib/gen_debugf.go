package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang/types"
)

func init() { Gens["debugf"] = genDebugf }

// genDebugf calls bpf_trace_printk(fmt, len, a1, a2, a3), as bpftrace
// 0.17's debugf(): the text goes to the kernel's trace pipe
// (/sys/kernel/tracing/trace_pipe), not to gotrace's output. Integers and
// pointers are passed as values, strings by address.
func genDebugf(g Gen, c *Call) error {
	format, ok := litString(c.Args[0])
	if !ok {
		return fmt.Errorf("debugf() needs a string literal format")
	}
	args := c.Args[1:]
	if len(args) > 3 {
		return fmt.Errorf("debugf: Cannot use more than 3 conversion specifiers")
	}
	var held []asm.Register
	defer func() {
		for _, r := range held {
			g.Free(r)
		}
	}()
	for _, a := range args {
		if t := a.Type(); t != nil && t.Kind == types.String {
			if err := g.EvalAddr(a, asm.R0); err != nil {
				return err
			}
			r, err := g.Hold(asm.R0)
			if err != nil {
				return err
			}
			held = append(held, r)
			continue
		}
		r, err := g.EvalInt(a)
		if err != nil {
			return err
		}
		held = append(held, r)
	}
	b := append([]byte(format), 0)
	size := (len(b) + 7) &^ 7
	tmp := g.TempMem(size, true)
	g.TempAddr(asm.R1, tmp, 0)
	for i := 0; i < len(b); i += 4 {
		var w uint32
		for j := 0; j < 4 && i+j < len(b); j++ {
			w |= uint32(b[i+j]) << (8 * j)
		}
		if w != 0 {
			g.Emit(StImm(asm.R1, int16(i), int64(int32(w)), asm.Word))
		}
	}
	g.Emit(asm.Mov.Imm(asm.R2, int32(len(b))))
	for i, r := range held {
		g.Emit(asm.Mov.Reg(asm.R3+asm.Register(i), r))
	}
	g.Emit(asm.FnTracePrintk.Call())
	return nil
}
