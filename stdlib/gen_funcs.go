package stdlib

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Code generation of the functions. Output-side functions (printf, print,
// time, cat, system, exit ...) become ring-buffer records; the format
// strings stay in Spec.Events.

func init() {
	Gens["printf"] = genFormatEvent(EvPrintf)
	Gens["errorf"] = genFormatEvent(EvErrorf)
	Gens["warnf"] = genFormatEvent(EvWarnf)
	Gens["system"] = genFormatEvent(EvSystem)
	Gens["cat"] = genFormatEvent(EvCat)
	Gens["time"] = func(g Gen, c *Call) error {
		format := "%H:%M:%S\n"
		if len(c.Args) == 1 {
			s, ok := litString(c.Args[0])
			if !ok {
				return fmt.Errorf("time() format must be a string literal")
			}
			format = s
		}
		_, err := g.Event(EvTime, format, "", nil)
		return err
	}
	Gens["exit"] = func(g Gen, c *Call) error {
		// The payload carries the exit code when one is given.
		if _, err := g.Event(EvExit, "", "", c.Args); err != nil {
			return err
		}
		g.Return()
		return nil
	}
	Gens["print"] = func(g Gen, c *Call) error {
		if len(c.Args) > 0 {
			if _, ok := c.Args[0].(*lang.MapExpr); ok && len(c.Args[0].(*lang.MapExpr).Keys) == 0 {
				return g.MapCall(c)
			}
		}
		_, err := g.Event(EvPrintNonMap, "", "", c.Args)
		return err
	}
	for _, name := range []string{"delete", "clear", "zero", "has_key", "len"} {
		Gens[name] = func(g Gen, c *Call) error { return g.MapCall(c) }
	}
	Gens["str"] = genStr
	Gens["ksym"] = genIdentity
	Gens["kptr"] = genIdentity
	Gens["uptr"] = genIdentity
	Gens["strerror"] = genIdentity
	Gens["syscall_name"] = genSyscallName
	Gens["cgroup_path"] = genIdentity // the id; the printer finds the path
	Gens["usym"] = func(g Gen, c *Call) error {
		// Usym: [0:8] address, [8:16] pid.
		r, err := g.EvalInt(c.Args[0])
		if err != nil {
			return err
		}
		g.Emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32))
		g.ResultMem(asm.R1, 16, false)
		g.Emit(asm.StoreMem(asm.R1, 0, r, asm.DWord), asm.StoreMem(asm.R1, 8, asm.R0, asm.DWord))
		g.Free(r)
		return nil
	}
	Gens["bswap"] = func(g Gen, c *Call) error {
		r, err := g.EvalInt(c.Args[0])
		if err != nil {
			return err
		}
		size := 8
		if t := c.Args[0].Type(); t != nil && t.Size > 0 {
			size = t.Size
		}
		if size > 1 {
			g.Emit(asm.HostTo(asm.BE, r, asm.Size(sizeCode(size))))
		}
		g.SetResult(r)
		return nil
	}
	Gens["signal"] = genSignal(asm.FnSendSignal)
	Gens["signal_thread"] = genSignal(asm.FnSendSignalThread)
	attachGens()
}

func genSignal(fn asm.BuiltinFunc) GenFunc {
	return func(g Gen, c *Call) error {
		v, ok := intConst(c.Args[0])
		if !ok {
			s, isStr := litString(c.Args[0])
			if !isStr {
				return fmt.Errorf("signal() needs a constant signal")
			}
			n, known := Signals[s]
			if !known {
				return fmt.Errorf("unknown signal %q", s)
			}
			v = int64(n)
		}
		g.Emit(asm.Mov.Imm(asm.R1, int32(v)), fn.Call())
		return nil
	}
}

func init() {
	Gens["override"] = func(g Gen, c *Call) error {
		r, err := g.EvalInt(c.Args[0])
		if err != nil {
			return err
		}
		g.LoadCtx(asm.R1)
		g.Emit(asm.Mov.Reg(asm.R2, r), asm.FnOverrideReturn.Call())
		g.Free(r)
		return nil
	}
	Gens["reg"] = func(g Gen, c *Call) error {
		name, ok := litString(c.Args[0])
		off, known := RegOffset(runtime.GOARCH, name)
		if !ok || !known {
			return fmt.Errorf("reg(): unknown register %q", name)
		}
		g.LoadCtx(asm.R1)
		g.Emit(asm.LoadMem(asm.R0, asm.R1, off, asm.DWord))
		g.SetResult(asm.R0)
		return nil
	}
	attachGens()
}

func sizeCode(n int) asm.Size {
	switch n {
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

// RegOffset is the offset of a register in the architecture's struct
// pt_regs (user_pt_regs on arm64), as reg() reads it: Registers lists each
// architecture's registers in pt_regs order, 8 bytes each.
func RegOffset(goarch, name string) (int16, bool) {
	for i, r := range Registers[goarch] {
		if r == name {
			return int16(8 * i), true
		}
	}
	return 0, false
}

func litString(e lang.Expr) (string, bool) {
	switch e := e.(type) {
	case *lang.StrLit:
		return e.Value, true
	case *lang.PositionalExpr:
		return e.Text, true
	case *lang.CallExpr:
		// str($N) is the parameter's text (kaddr(str($1))).
		if e.Name == "str" && len(e.Args) == 1 {
			if p, ok := e.Args[0].(*lang.PositionalExpr); ok && !p.Count {
				return p.Text, true
			}
		}
	}
	return "", false
}

func intConst(e lang.Expr) (int64, bool) {
	if v, ok := lang.ConstOf(e); ok { // folded by the checker
		return v, true
	}
	switch e := e.(type) {
	case *lang.IntLit:
		return int64(e.Value), true
	case *lang.PositionalExpr:
		return e.Int, e.IsInt
	}
	return 0, false
}

func genFormatEvent(kind EventKind) GenFunc {
	return func(g Gen, c *Call) error {
		format, ok := litString(c.Args[0])
		if !ok {
			return fmt.Errorf("%s() format must be a string literal", c.Name)
		}
		if kind == EvPrintf && g.AttachPoint().Provider == "iter" && seqClause(c.Probe) {
			return genSeqPrintf(g, c, format) // table_v026.go
		}
		_, err := g.Event(kind, format, "", c.Args[1:])
		return err
	}
}

func genIdentity(g Gen, c *Call) error {
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	g.SetResult(r)
	return nil
}

// genStrOfString is str() of a string: a literal or string positional
// parameter is a constant (its first n characters with a length n, as
// bpftrace); any other string value is copied up to its NUL.
func genStrOfString(g Gen, c *Call, size int) error {
	if s, ok := litString(c.Args[0]); ok {
		if len(c.Args) == 2 {
			n, ok := intConst(c.Args[1])
			if !ok {
				return fmt.Errorf("str() of a constant string needs a constant length")
			}
			if n >= 0 && int(n) < len(s) {
				s = s[:n]
			}
		}
		if len(s) >= size {
			s = s[:size-1]
		}
		g.ConstResult(s)
		return nil
	}
	if err := g.EvalAddr(c.Args[0], asm.R3); err != nil {
		return err
	}
	if len(c.Args) == 2 {
		n, ok := intConst(c.Args[1])
		if !ok {
			return fmt.Errorf("str() of a string value needs a constant length")
		}
		if n >= 0 && int(n)+1 < size {
			size = int(n) + 1
		}
	}
	g.ResultMem(asm.R1, c.Expr.Type().Size, true)
	g.Emit(asm.Mov.Imm(asm.R2, int32(size)), asm.FnProbeReadKernelStr.Call())
	return nil
}

// genStr reads a NUL-terminated string into zeroed memory (so the padding
// after the NUL is zero and the string can be a map key).
func genStr(g Gen, c *Call) error {
	t := c.Expr.Type()
	size := g.StrLen()
	if t != nil && t.Size > 0 {
		size = t.Size
	}
	// str($1) is the parameter's text even when it looks like a number.
	pos, isPos := c.Args[0].(*lang.PositionalExpr)
	if at := c.Args[0].Type(); (at != nil && at.Kind == types.String) || (isPos && !pos.Count) {
		return genStrOfString(g, c, size)
	}
	src, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	var n asm.Register
	if len(c.Args) == 2 {
		if _, ok := intConst(c.Args[1]); !ok {
			if n, err = g.EvalInt(c.Args[1]); err != nil {
				return err
			}
		}
	}
	fn := asm.FnProbeReadKernelStr
	if g.PtrSpace(c.Args[0].Type()) == types.AddrUser {
		fn = asm.FnProbeReadUserStr
	}
	g.ResultMem(asm.R1, size, true)
	g.Emit(asm.Mov.Imm(asm.R2, int32(size)))
	if n != 0 {
		// A run-time length: min(n + 1, size), and at least 1.
		ok, big := g.Label("len"), g.Label("lenbig")
		g.Emit(asm.Mov.Reg(asm.R2, n), asm.Add.Imm(asm.R2, 1),
			asm.JLE.Imm(asm.R2, int32(size), ok))
		g.Place(big)
		g.Emit(asm.Mov.Imm(asm.R2, int32(size)))
		g.Place(ok)
		g.Emit(asm.JNE.Imm(asm.R2, 0, big+"_nz"))
		g.Emit(asm.Mov.Imm(asm.R2, 1))
		g.Place(big + "_nz")
		g.Free(n)
	}
	if t == nil || !t.Trunc {
		g.Emit(asm.Mov.Reg(asm.R3, src), fn.Call())
		g.Free(src)
		return nil
	}
	// bpftrace 0.26's trailer: when the read filled the buffer, the
	// source's next character replaces the NUL: a NUL again when the
	// string fits exactly, else the buffer holds size characters (printed
	// with "..").
	buf, err := g.Hold(asm.R1)
	if err != nil {
		return err
	}
	done := g.Label("strfit")
	g.Emit(asm.Mov.Reg(asm.R3, src), fn.Call(), asm.JNE.Imm(asm.R0, int32(size), done),
		asm.Mov.Reg(asm.R1, buf), asm.Add.Imm(asm.R1, int32(size-1)), asm.Mov.Imm(asm.R2, 1),
		asm.Mov.Reg(asm.R3, src), asm.Add.Imm(asm.R3, int32(size-1)))
	if fn == asm.FnProbeReadUserStr {
		g.Emit(asm.FnProbeReadUser.Call())
	} else {
		g.Emit(asm.FnProbeReadKernel.Call())
	}
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.Free(buf)
	g.Free(src)
	return nil
}
