package compiler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

var _ stdlib.Gen = (*gen)(nil)

// callBuiltin runs the builtin's code generation from the stdlib table.
func (g *gen) callBuiltin(e lang.Expr, name string, args []lang.Expr) (*builtinResult, error) {
	name = stdlib.Canonical(name) // __builtin_pid is pid
	var fn stdlib.GenFunc
	if row, _, ok := stdlib.Resolve(name); ok {
		fn = row.Gen
	}
	if fn == nil {
		return nil, g.errorf(e, "%s is not supported by the compiler", name)
	}
	saved := g.res
	g.res = &builtinResult{dest: g.dest}
	g.dest = nil
	defer func() { g.res = saved }()
	defer g.restore(g.at(e))
	start := len(g.insns)
	savedAt := g.readAt
	g.readAt, g.helperErr = e, nil
	err := fn(g, &stdlib.Call{Expr: e, Name: name, Args: args, Probe: g.probe})
	g.readAt = savedAt
	if err == nil {
		err = g.helperErr
	}
	if err == nil {
		err = g.checkHelpers(e, name, g.insns[start:])
	}
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			return nil, err
		}
		var ue *stdlib.UserError
		if errors.As(err, &ue) {
			if ue.Codegen && g.c.res.Opts.Compat.CodegenErrorsUnplaced() {
				return nil, &Error{Msg: "Failed to compile: " + ue.Msg}
			}
			return nil, g.errorf(e, "%s", ue.Msg)
		}
		return nil, g.errorf(e, "%s: %v", name, err)
	}
	return g.res, nil
}

func (g *gen) builtinInt(e lang.Expr, name string, args []lang.Expr) (asm.Register, error) {
	res, err := g.callBuiltin(e, name, args)
	if err != nil {
		return 0, err
	}
	if !res.set || res.isMem || res.isStr {
		return 0, g.errorf(e, "%s does not give an integer", name)
	}
	for _, p := range pool {
		if p == res.reg {
			return p, nil
		}
	}
	r, err := g.reg(e)
	if err != nil {
		return 0, err
	}
	g.emit(asm.Mov.Reg(r, res.reg))
	return r, nil
}

func (g *gen) builtinMem(e lang.Expr, name string, args []lang.Expr) (mem, error) {
	res, err := g.callBuiltin(e, name, args)
	if err != nil {
		return mem{}, err
	}
	switch {
	case res.isMem:
		return res.m, nil
	case res.isStr:
		size := len(res.str) + 1
		if t := e.Type(); t != nil && t.Size > 0 {
			size = t.Size
		}
		m := g.allocMem(size)
		g.constString(m, res.str, size)
		return m, nil
	}
	return mem{}, g.errorf(e, "%s does not give a value here", name)
}

// The stdlib.Gen interface.

// Emit emits insns; under -kk a failed probe read among them is reported
// (helper_error) at the builtin being compiled.
func (g *gen) Emit(insns ...asm.Instruction) {
	if g.c.opts.HelperCheck < 2 || g.readAt == nil {
		g.emit(insns...)
		return
	}
	for _, ins := range insns {
		g.emit(ins)
		if ins.IsBuiltinCall() && probeReadName(asm.BuiltinFunc(ins.Constant)) != "" && g.helperErr == nil {
			g.helperErr = g.checkRead(g.readAt, asm.BuiltinFunc(ins.Constant), types.AddrNone)
		}
	}
}
func (g *gen) Label(prefix string) string     { return g.label(prefix) }
func (g *gen) AttachPoint() *lang.AttachPoint { return g.ap }
func (g *gen) LoadCtx(dst asm.Register)       { g.loadCtx(dst) }
func (g *gen) Free(r asm.Register)            { g.free(r) }
func (g *gen) Return() {
	if g.inCB > 0 && !g.dead && g.retSlot != 0 {
		// In a loop's callback: stop the loop, and the caller returns
		// (afterCallback).
		g.cbReturned = true
		g.emit(stdlib.StImm(asm.R10, int16(g.retSlot), 1, asm.DWord))
		g.copyVars(false)
		g.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
		g.dead = true
		return
	}
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	g.dead = true
}

func (g *gen) StrLen() int {
	if g.c.res.StrLen > 0 {
		return g.c.res.StrLen
	}
	return 64
}

func (g *gen) EvalInt(e lang.Expr) (asm.Register, error) { return g.evalInt(e) }

func (g *gen) EvalAddr(e lang.Expr, dst asm.Register) error {
	m, err := g.evalMem(e)
	if err != nil {
		return err
	}
	g.addr(dst, m)
	return nil
}

func (g *gen) SetResult(r asm.Register) {
	g.res.set, g.res.reg = true, r
}

func (g *gen) ResultMem(dst asm.Register, size int, zero bool) {
	var m mem
	if d := g.res.dest; d != nil && d.size == size {
		m, g.res.dest = d.m, nil
	} else {
		m = g.allocMem(size)
	}
	if zero {
		g.zero(m, size)
	}
	g.addr(dst, m)
	g.res.set, g.res.isMem, g.res.m = true, true, m
}

func (g *gen) ConstResult(s string) {
	g.res.set, g.res.isStr, g.res.str = true, true, s
}

func (g *gen) MapRef(dst asm.Register, name string, spec stdlib.InternalMap) {
	m := g.c.internalMap(name, ebpf.MapType(spec.Type), spec.KeySize, spec.ValueSize, spec.MaxEntries)
	m.Stacks = m.Stacks || spec.Stacks
	g.mapPtr(dst, m)
}

func (g *gen) PtrSpace(t *types.Type) types.AddrSpace { return g.ptrSpace(t) }

// ProbeName is the full name of the attach point, for the `probe` builtin.
func (g *gen) ProbeName() string {
	ap := g.ap
	if ap.Name != "" {
		// A named probe (bpftrace 0.25): `probe` is its name.
		return ap.Name
	}
	if ap.Provider == lang.ProbeBegin || ap.Provider == lang.ProbeEnd {
		if g.c.res.Opts.Compat.ProbeBeginLower() {
			return strings.ToLower(ap.Provider.String())
		}
		return ap.Provider.String()
	}
	name := ap.Provider.String()
	for _, part := range []string{ap.Target, ap.Func} {
		if part != "" {
			name += ":" + part
		}
	}
	if ap.Offset != 0 {
		name += fmt.Sprintf("+%d", ap.Offset)
	}
	if ap.SrcFile != "" { // a statement probe: uprobe:BIN@FILE:LINE[:COL]
		name = fmt.Sprintf("%s:%s@%s:%d", ap.Provider, ap.Target, ap.SrcFile, ap.Line)
		if ap.Col != 0 {
			name += fmt.Sprintf(":%d", ap.Col)
		}
	}
	switch ap.Provider {
	case lang.ProbeProfile, lang.ProbeInterval:
		name = fmt.Sprintf("%s:%s:%d", ap.Provider, ap.Unit, ap.Freq)
	case lang.ProbeSoftware, lang.ProbeHardware:
		name = fmt.Sprintf("%s:%s:%d", ap.Provider, ap.Func, ap.Freq)
	}
	return name
}

func (g *gen) Hold(src asm.Register) (asm.Register, error) {
	r, err := g.reg(nil)
	if err != nil {
		return 0, err
	}
	g.emit(asm.Mov.Reg(r, src))
	return r, nil
}

func (g *gen) StackTemp(size int) (int16, error) {
	m, err := g.allocStack(size)
	if err != nil {
		return 0, err
	}
	return int16(m.off), nil
}

func (g *gen) Place(label string) { g.place(label) }

func (g *gen) ArgsCount() int {
	r := g.c.res.Opts.Resolver
	if r == nil {
		return -1
	}
	args, _, err := r.Func(g.ap.Func)
	if err != nil || args == nil {
		return -1
	}
	return len(args.Fields)
}

// ProbeID is the index of the attach point's name in Spec.Probes.
func (g *gen) ProbeID() int {
	name := g.ProbeName()
	id := -1
	for i, n := range g.c.spec.Probes {
		if n == name {
			id = i
			break
		}
	}
	if id < 0 {
		g.c.spec.Probes = append(g.c.spec.Probes, name)
		id = len(g.c.spec.Probes) - 1
	}
	g.prog.Probe, g.prog.ProbeID = ProbeConst, id
	return id
}

// probeString is `probe` as a string in BPF: its name, looked up by its
// index (a constant, or the attach cookie) in the probe-names map.
func (g *gen) probeString(t *types.Type) (mem, error) {
	m := g.allocMem(t.Size)
	key, err := g.allocStack(8)
	if err != nil {
		return mem{}, err
	}
	if g.ProbeCookie() {
		g.loadCtx(asm.R1)
		g.emit(asm.FnGetAttachCookie.Call())
	} else {
		g.emit(asm.Mov.Imm(asm.R0, int32(g.ProbeID())))
	}
	g.emit(asm.StoreMem(asm.R10, int16(key.off), asm.R0, asm.Word))
	names := g.c.internalMap(MapProbeNames, ebpf.Array, 4, uint32(stdlib.ProbeNameLen), stdlib.ProbeNamesMax)
	g.lookup(names, key)
	missing, done := g.label("probe_nf"), g.label("probe_str")
	g.emit(asm.JEq.Imm(asm.R0, 0, missing), asm.Mov.Reg(asm.R3, asm.R0))
	g.addr(asm.R1, m)
	g.emit(asm.Mov.Imm(asm.R2, int32(t.Size)), asm.FnProbeReadKernel.Call(), asm.Ja.Label(done))
	g.place(missing)
	g.zero(m, t.Size)
	g.place(done)
	g.emit(nopJump())
	return m, nil
}

// ProbeCookie reports whether `probe` is read from the attach cookie
// (cookieProbe).
func (g *gen) ProbeCookie() bool {
	if !cookieProbe(g.ap) {
		return false
	}
	g.prog.Probe = ProbeCookie
	return true
}

func (g *gen) TempMem(size int, zero bool) stdlib.Temp {
	m := g.allocMem(size)
	if zero {
		g.zero(m, size)
	}
	g.temps = append(g.temps, m)
	return stdlib.Temp(len(g.temps) - 1)
}

func (g *gen) TempAddr(dst asm.Register, t stdlib.Temp, off int) {
	g.addr(dst, g.temps[t].plus(off))
}

func (g *gen) SetResultTemp(t stdlib.Temp) {
	g.res.set, g.res.isMem, g.res.m = true, true, g.temps[t]
}

func (g *gen) Output(t stdlib.Temp, size int) {
	rb := g.c.internalMap(MapRingBuf, ebpf.RingBuf, 0, 0, g.c.opts.RingBufSize)
	g.mapPtr(asm.R1, rb)
	g.addr(asm.R2, g.temps[t])
	g.emit(asm.Mov.Imm(asm.R3, int32(size)), asm.Mov.Imm(asm.R4, 0), asm.FnRingbufOutput.Call())
	g.countLost()
}

// countLost follows every bpf_ringbuf_output call: a failed output (r0 != 0,
// the ring is full) adds 1 to lost_events[0] through the map value's direct
// address (ABI.md), so a delivered record costs one jump.
func (g *gen) countLost() {
	lm := g.c.internalMap(MapLostEvents, ebpf.Array, 4, 8, 1)
	ok := g.label("output_ok")
	g.emit(asm.JEq.Imm(asm.R0, 0, ok),
		asm.LoadMapValue(asm.R1, 0, 0).WithReference(lm.Name),
		asm.Mov.Imm(asm.R2, 1),
		asm.StoreXAdd(asm.R1, asm.R2, asm.DWord))
	g.place(ok)
}

func (g *gen) EventFormat(kind stdlib.EventKind, format string, args *types.Type) int {
	return g.c.addEvent(&Event{Kind: kind, Format: format, Args: args, Pos: g.span})
}

func (g *gen) KernelSymbol(name string) (uint64, bool) {
	if r := g.c.res.Opts.Resolver; r != nil {
		return r.KernelSymbol(name)
	}
	return 0, false
}

func (g *gen) MemberAddr(e lang.Expr) (asm.Register, bool, error) {
	r, _, ok, err := g.kaddr(e)
	return r, ok, err
}

func (g *gen) Host() stdlib.Host { return g.c.opts.Host }

func (g *gen) Compat() compat.Version { return g.c.res.Opts.Compat }

func (g *gen) NamedParams() stdlib.NamedParams { return g.c.res.Opts.NamedParams }

func (g *gen) KernelType(name string) (*types.Type, error) {
	r := g.c.res.Opts.Resolver
	if r == nil {
		return nil, fmt.Errorf("no kernel types to resolve %s", name)
	}
	return r.Type(name)
}

func (g *gen) KernelVar(name string) (uint32, bool, error) {
	r := g.c.res.Opts.Resolver
	if r == nil {
		return 0, false, fmt.Errorf("no kernel BTF to resolve variable %q", name)
	}
	return r.KernelVar(name)
}

// USDTSites are the sites of every usdt attach point of the program.
func (g *gen) USDTSites() ([]ktypes.USDTSite, error) {
	r := g.c.res.Opts.Resolver
	if r == nil {
		return nil, fmt.Errorf("the arguments of usdt probes are unknown here")
	}
	var all []ktypes.USDTSite
	for _, ap := range g.prog.Attach {
		sites, err := r.USDTSites(ap.Target, ap.NS, ap.Func)
		if err != nil {
			return nil, &stdlib.UserError{Msg: err.Error()}
		}
		all = append(all, sites...)
	}
	return all, nil
}

// checkHelpers records the helpers the code a builtin (or a statement)
// emitted calls, with the builtin's name and n's place, on the program
// (Program.Helpers): a kernel that lacks one for this program type
// refuses the program with only "program of this type cannot use helper",
// and the runtime then names the builtin, the helper and the kernel
// version that added it (MissingHelper). Compiling asks the kernel
// nothing (probing every helper loaded a program each, about 1 ms of every
// start-up); with Options.HaveHelper set, the check is made here instead.
func (g *gen) checkHelpers(n lang.Node, name string, insns asm.Instructions) error {
	start := len(g.prog.Helpers)
	for _, fn := range stdlib.HelperCalls(insns) {
		if !g.prog.callsHelper(fn) {
			g.prog.Helpers = append(g.prog.Helpers, HelperUse{Fn: fn, Builtin: name, Span: n.Span()})
		}
	}
	if have := g.c.opts.HaveHelper; have != nil {
		return MissingHelper(&Program{Type: g.prog.Type, Helpers: g.prog.Helpers[start:]}, have)
	}
	return nil
}

// MissingHelper is the error for the first helper of p's that have
// reports missing for p's program type (an error wrapping
// ebpf.ErrNotSupported; other errors mean "unknown"), at the builtin that
// first calls it; nil when none is.
func MissingHelper(p *Program, have func(ebpf.ProgramType, asm.BuiltinFunc) error) error {
	for _, u := range p.Helpers {
		if err := have(p.Type, u.Fn); errors.Is(err, ebpf.ErrNotSupported) {
			merr := stdlib.MissingHelperError(u.Builtin, u.Fn)
			msg := merr.Error()
			if ue := (*stdlib.UserError)(nil); errors.As(merr, &ue) {
				msg = ue.Msg
			}
			return &Error{Span: u.Span, Msg: msg}
		}
	}
	return nil
}
