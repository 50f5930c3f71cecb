package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/ktypes"
)

// USDT arguments: argN of a usdt probe is read where the probe's note says
// (a constant, a register, or memory addressed by registers), decided at
// compile time from the sites of the probe.

// pageMask selects an address's offset in its page: the same at link time
// and at run time (binaries are mapped page-aligned), so sites of a probe
// whose arguments sit in different places are told apart by it.
const pageMask = 0xfff

// genUSDTArg emits R0 = argument n of the usdt probe being compiled.
func genUSDTArg(g Gen, name string, n int) error {
	sites, err := g.USDTSites()
	if err != nil {
		return err
	}
	if len(sites) == 0 {
		return fmt.Errorf("%s: the usdt probe's sites are unknown", name)
	}
	// Group the sites by how they pass argument n.
	var specs []ktypes.USDTArg
	byPage := map[uint64]int{}
	for _, s := range sites {
		if n >= len(s.Args) {
			return &UserError{Msg: fmt.Sprintf("%s: the usdt probe has only %d arguments", name, len(s.Args))}
		}
		// Sites whose argument is read alike share one read: the spec's
		// text and the symbol it names do not matter.
		a := s.Args[n]
		a.Spec, a.Symbol = "", ""
		idx := -1
		for i, sp := range specs {
			if sp == a {
				idx = i
			}
		}
		if idx < 0 {
			idx = len(specs)
			specs = append(specs, a)
		}
		page := s.PC & pageMask
		if j, ok := byPage[page]; ok && j != idx {
			return &UserError{Msg: fmt.Sprintf("%s: two sites of the usdt probe at the same page offset %#x pass it differently", name, page)}
		}
		byPage[page] = idx
	}
	if len(specs) == 1 {
		return emitUSDTRead(g, specs[0])
	}
	// Dispatch on the page offset of the probe address (regs->ip).
	done := g.Label("usdt_done")
	g.LoadCtx(asm.R1)
	g.Emit(asm.LoadMem(asm.R0, asm.R1, regsIP, asm.DWord), asm.And.Imm(asm.R0, pageMask))
	hold, err := g.Hold(asm.R0)
	if err != nil {
		return err
	}
	for _, s := range sites {
		next := g.Label("usdt_next")
		g.Emit(asm.JNE.Imm(hold, int32(s.PC&pageMask), next))
		if err := emitUSDTRead(g, specs[byPage[s.PC&pageMask]]); err != nil {
			return err
		}
		g.Emit(asm.Ja.Label(done))
		g.Place(next)
	}
	g.Emit(asm.Mov.Imm(asm.R0, 0))
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.Free(hold)
	return nil
}

// emitUSDTRead emits R0 = the argument a says, extended to 64 bits.
func emitUSDTRead(g Gen, a ktypes.USDTArg) error {
	switch a.Kind {
	case ktypes.USDTConst:
		// The constant as the spec's size and signedness read it
		// (1@$-56 is an unsigned char: 200).
		v := a.Value
		if a.Size > 0 && a.Size < 8 {
			sh := uint(64 - 8*a.Size)
			if a.Signed {
				v = v << sh >> sh
			} else {
				v = int64(uint64(v) << sh >> sh)
			}
		}
		if v >= -1<<31 && v < 1<<31 {
			g.Emit(asm.Mov.Imm(asm.R0, int32(v)))
		} else {
			g.Emit(asm.LoadImm(asm.R0, v, asm.DWord))
		}
		return nil
	case ktypes.USDTReg:
		if a.Reg == "" {
			return fmt.Errorf("usdt argument in a register without a register")
		}
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, int16(a.RegOffset), asm.DWord))
		extendR0(g, a.Size, a.Signed)
		return nil
	case ktypes.USDTMem:
		tmp, err := g.StackTemp(8)
		if err != nil {
			return err
		}
		g.LoadCtx(asm.R1)
		switch {
		case a.Reg == "ip":
			// %rip-relative: Offset is from the probe's address.
			g.Emit(asm.LoadMem(asm.R3, asm.R1, regsIP, asm.DWord))
		case a.Reg != "":
			g.Emit(asm.LoadMem(asm.R3, asm.R1, int16(a.RegOffset), asm.DWord))
		default:
			g.Emit(asm.Mov.Imm(asm.R3, 0))
		}
		if a.Index != "" {
			g.Emit(asm.LoadMem(asm.R2, asm.R1, int16(a.IndexOffset), asm.DWord))
			if a.Scale > 1 {
				g.Emit(asm.Mul.Imm(asm.R2, int32(a.Scale)))
			}
			g.Emit(asm.Add.Reg(asm.R3, asm.R2))
		}
		if a.Offset != 0 {
			g.Emit(asm.LoadImm(asm.R2, a.Offset, asm.DWord), asm.Add.Reg(asm.R3, asm.R2))
		}
		size := a.Size
		if size != 1 && size != 2 && size != 4 {
			size = 8
		}
		g.Emit(StImm(asm.R10, tmp, 0, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, int32(tmp)),
			asm.Mov.Imm(asm.R2, int32(size)),
			asm.FnProbeReadUser.Call(),
			asm.LoadMem(asm.R0, asm.R10, tmp, asm.DWord))
		extendR0(g, size, a.Signed)
		return nil
	}
	return fmt.Errorf("unknown usdt argument kind %d", a.Kind)
}

// extendR0 sign- or zero-extends the low size bytes of R0.
func extendR0(g Gen, size int, signed bool) {
	if size >= 8 || size <= 0 {
		return
	}
	sh := int32(64 - 8*size)
	if signed {
		g.Emit(asm.LSh.Imm(asm.R0, sh), asm.ArSh.Imm(asm.R0, sh))
		return
	}
	if size == 4 {
		g.Emit(asm.Mov.Reg32(asm.R0, asm.R0))
		return
	}
	g.Emit(asm.And.Imm(asm.R0, int32(1<<(8*size))-1))
}
