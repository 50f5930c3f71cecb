package compiler

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// Stack frame: [-8] saved ctx pointer, [-16] scratch region pointer, then
// scratch variables, then per-statement temporaries.
const (
	ctxSlot     = -8
	scratchSlot = -16
	frameBase   = 16
	maxStack    = 512
	// Values bigger than this live in the per-CPU scratch map, not the stack.
	stackValueMax = 32
)

// pool are the callee-saved registers holding live temporaries.
var pool = [...]asm.Register{asm.R6, asm.R7, asm.R8, asm.R9}

// srcPos is an instruction's source position: "LINE:COL: source line".
type srcPos struct {
	line, col int
	text      string
}

// String is the line info the kernel gets (one BTF string per distinct
// position) and -d prints; NUL bytes, which BTF strings cannot hold,
// print as \0.
func (s *srcPos) String() string {
	text := s.text
	if strings.IndexByte(text, 0) >= 0 {
		text = strings.ReplaceAll(text, "\x00", `\0`)
	}
	return fmt.Sprintf("%d:%d: %s", s.line, s.col, text)
}

// maxLineInfo bounds a line info's source text, in bytes.
const maxLineInfo = 256

// lineAround is the source line holding byte offset off, or, when that
// line is longer than maxLineInfo, a window of it around off marked with
// "...". It reads at most about 2*maxLineInfo bytes, so the line info of
// a script written on one long line costs its statements, not statements
// × line length, in time and memory.
func lineAround(text string, off int) string {
	off = max(0, min(off, len(text)))
	start, end := off, off
	for start > 0 && text[start-1] != '\n' && off-start <= maxLineInfo {
		start--
	}
	for end < len(text) && text[end] != '\n' && end-start <= maxLineInfo {
		end++
	}
	if end-start <= maxLineInfo {
		return text[start:end]
	}
	lineStart := start > 0 && text[start-1] == '\n' || start == 0
	if off-start > maxLineInfo/4 {
		start, lineStart = off-maxLineInfo/4, false
	}
	end = min(start+maxLineInfo, len(text))
	if i := strings.IndexByte(text[start:end], '\n'); i >= 0 {
		end = start + i
	}
	for start < off && !utf8.RuneStart(text[start]) {
		start++
	}
	for end > off && end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	cut := text[start:end]
	if !lineStart {
		cut = "..." + cut
	}
	if end < len(text) && text[end] != '\n' {
		cut += "..."
	}
	return cut
}

// SourceOf returns the source line and column an instruction came from (0, 0
// if unknown), for mapping verifier errors back to the script.
func SourceOf(ins asm.Instruction) (line, col int) {
	if s, ok := ins.Source().(*srcPos); ok {
		return s.line, s.col
	}
	return 0, 0
}

type memBase uint8

const (
	onStack   memBase = iota // R10 + off (off < 0)
	inScratch                // scratch region + off
)

// mem is where a value's bytes are.
type mem struct {
	base memBase
	off  int
}

func (m mem) plus(n int) mem { m.off += n; return m }

type loop struct{ brk, cont string }

// gen generates one program.
type gen struct {
	// readAt is the builtin whose code is being generated: under -kk its
	// failed probe reads are reported there (helper_error); helperErr is
	// the first error emitting such a report.
	readAt    lang.Node
	helperErr error

	c      *compiler
	prog   *Program
	probe  *lang.Probe
	ap     *lang.AttachPoint
	index  int // program index: the scratch map key
	insns  asm.Instructions
	span   lang.Span
	srcs   map[int]*srcPos
	used   [len(pool)]bool
	stack  int // bytes of stack used below frameBase
	maxStk int
	scr    int // bytes of scratch used
	maxScr int

	usesCtx, usesScratch bool
	vars                 map[*lang.VarInfo]mem
	varOrder             []*lang.VarExpr
	labelN               int
	pending              []string
	alias                map[string]string
	loops                []loop
	// dead is set after an exit until the next label: code there is
	// unreachable, which the verifier refuses.
	dead bool

	// Subprograms (for-loop callbacks, forloop.go), emitted after the
	// program's code.
	subprogs []asm.Instructions
	haveSub  map[string]bool
	forN     int
	// varsLow is the lowest stack offset of the scratch variables (their
	// region is [varsLow, scratchSlot)); cbSlot keeps a callback's context
	// pointer.
	varsLow, cbSlot int
	// inCB counts the loop callbacks being generated; retSlot is the
	// returned flag of callback loops (forloop.go), cbReturned whether
	// the callback being generated returns.
	inCB       int
	retSlot    int
	cbReturned bool

	// sysNrs are the system calls a lowered syscalls program filters on;
	// sysRegs and sysNr the stack slots of its saved registers' address
	// and the number, for reading args (syscalls.go).
	sysNrs         []int
	sysRegs, sysNr mem

	// The result of the builtin being generated.
	res     *builtinResult
	aggDest *lang.MapExpr
	temps   []mem // TempMem handles
	dest    *destHint
}

type builtinResult struct {
	dest  *destHint // where ResultMem may put the value
	set   bool
	reg   asm.Register
	isMem bool
	m     mem
	isStr bool
	str   string
}

func newGen(c *compiler, prog *Program, p *lang.Probe, ap *lang.AttachPoint, index int) *gen {
	return &gen{c: c, prog: prog, probe: p, ap: ap, index: index,
		srcs: map[int]*srcPos{}, vars: map[*lang.VarInfo]mem{}, alias: map[string]string{}, haveSub: map[string]bool{}}
}

func (g *gen) errorf(n lang.Node, format string, args ...any) error {
	sp := g.span
	if n != nil {
		sp = n.Span()
	}
	return &Error{Span: sp, Msg: fmt.Sprintf(format, args...)}
}

// at sets the source position of the following instructions, returning the
// previous one for restoring.
func (g *gen) at(n lang.Node) lang.Span {
	old := g.span
	if n != nil && n.Span().Start.IsValid() {
		g.span = n.Span()
	}
	return old
}

func (g *gen) source() fmt.Stringer {
	st := g.span.Start
	if !st.IsValid() {
		return nil
	}
	if st.File != nil {
		// In an imported script: its own line (not cached by offset,
		// which the script's positions share).
		return &srcPos{line: st.Line, col: st.Col, text: lineAround(st.File.Text, st.Offset)}
	}
	if s, ok := g.srcs[st.Offset]; ok {
		return s
	}
	text := ""
	if g.c.res.Prog.Src != nil {
		text = lineAround(g.c.res.Prog.Src.Text, st.Offset)
	}
	s := &srcPos{line: st.Line, col: st.Col, text: text}
	g.srcs[st.Offset] = s
	return s
}

func (g *gen) emit(insns ...asm.Instruction) {
	if g.dead {
		return
	}
	src := g.source()
	for _, ins := range insns {
		if src != nil {
			ins = ins.WithSource(src)
		}
		if len(g.pending) > 0 {
			ins = ins.WithSymbol(g.pending[0])
			for _, l := range g.pending[1:] {
				g.alias[l] = g.pending[0]
			}
			g.pending = g.pending[:0]
		}
		g.insns = append(g.insns, ins)
	}
}

// constTruth reports a condition's value when it is constant (an integer
// literal or constant, possibly under `!`), as cond folds it.
func (g *gen) constTruth(e lang.Expr) (value, ok bool) {
	if e == nil {
		return false, false
	}
	if v, ok := g.constInt(e); ok {
		return v != 0, true
	}
	if u, isU := e.(*lang.UnaryExpr); isU && u.Op == "!" {
		v, ok := g.constTruth(u.X)
		return !v, ok
	}
	return false, false
}

func (g *gen) label(prefix string) string {
	g.labelN++
	return fmt.Sprintf("%s_%d", prefix, g.labelN)
}

// place puts label l on the next emitted instruction. Code after an exit
// stays dead unless a jump already emitted targets l.
func (g *gen) place(l string) {
	g.pending = append(g.pending, l)
	if g.dead && !g.referenced(l) {
		return
	}
	g.dead = false
}

// Registers.

func (g *gen) alloc() (asm.Register, bool) {
	for i, u := range g.used {
		if !u {
			g.used[i] = true
			return pool[i], true
		}
	}
	return 0, false
}

func (g *gen) free(r asm.Register) {
	for i, p := range pool {
		if p == r {
			g.used[i] = false
		}
	}
}

func (g *gen) nfree() int {
	n := 0
	for _, u := range g.used {
		if !u {
			n++
		}
	}
	return n
}

// Memory.

func align8(n int) int { return (n + 7) &^ 7 }

// allocStack reserves n bytes (8-aligned) on the stack.
func (g *gen) allocStack(n int) (mem, error) {
	n = align8(n)
	if frameBase+g.stack+n > maxStack {
		return mem{}, g.errorf(nil, "the program needs more than %d bytes of BPF stack", maxStack)
	}
	g.stack += n
	if g.stack > g.maxStk {
		g.maxStk = g.stack
	}
	return mem{base: onStack, off: -(frameBase + g.stack)}, nil
}

// allocScratch reserves n bytes (8-aligned) in the per-CPU scratch region.
func (g *gen) allocScratch(n int) mem {
	n = align8(n)
	m := mem{base: inScratch, off: g.scr}
	g.scr += n
	if g.scr > g.maxScr {
		g.maxScr = g.scr
	}
	g.usesScratch = true
	return m
}

// allocMem reserves room for a value of n bytes: small ones on the stack,
// big ones (and when the stack is full) in scratch.
func (g *gen) allocMem(n int) mem {
	if n <= stackValueMax {
		if m, err := g.allocStack(n); err == nil {
			return m
		}
	}
	return g.allocScratch(n)
}

type mark struct{ stack, scr int }

func (g *gen) markTemps() mark     { return mark{g.stack, g.scr} }
func (g *gen) releaseTemps(m mark) { g.stack, g.scr = m.stack, m.scr }

// addr emits dst = address of m.
func (g *gen) addr(dst asm.Register, m mem) {
	switch m.base {
	case onStack:
		g.emit(asm.Mov.Reg(dst, asm.R10), asm.Add.Imm(dst, int32(m.off)))
	case inScratch:
		g.usesScratch = true
		g.emit(asm.LoadMem(dst, asm.R10, scratchSlot, asm.DWord))
		if m.off != 0 {
			g.emit(asm.Add.Imm(dst, int32(m.off)))
		}
	}
}

// baseOf returns a register and offset addressing m, loading the scratch
// pointer into tmp when needed.
func (g *gen) baseOf(m mem, tmp asm.Register) (asm.Register, int16) {
	if m.base == onStack {
		return asm.R10, int16(m.off)
	}
	g.usesScratch = true
	g.emit(asm.LoadMem(tmp, asm.R10, scratchSlot, asm.DWord))
	if m.off >= scratchFar {
		// Far into a big scratch region (max_strlen > 4096): the base
		// moves, so that the accesses within the value (offsets up to its
		// size) fit an instruction's 16-bit offset.
		g.emit(asm.Add.Imm(tmp, int32(m.off)))
		return tmp, 0
	}
	return tmp, int16(m.off)
}

// scratchFar is the scratch offset from which baseOf moves the base.
const scratchFar = 1 << 12

func sizeOf(n int) asm.Size {
	switch n {
	case 1:
		return asm.Byte
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

// chunk is the biggest access size (8, 4, 2, 1) that fits n bytes and the
// alignment of every offset (the verifier insists on aligned stack access).
func chunk(n int, offs ...int) int {
	for _, c := range []int{8, 4, 2, 1} {
		if c > n {
			continue
		}
		ok := true
		for _, o := range offs {
			if ((o%c)+c)%c != 0 {
				ok = false
			}
		}
		if ok {
			return c
		}
	}
	return 1
}

// zero emits code zeroing n bytes at m.
func (g *gen) zero(m mem, n int) {
	if n <= 0 {
		return
	}
	base, off := g.baseOf(m, asm.R1)
	for done := 0; done < n; {
		c := chunk(n-done, int(off)+done)
		g.emit(stdlib.StImm(base, off+int16(done), 0, sizeOf(c)))
		done += c
	}
}

// copyMem emits code copying n bytes from src to dst.
func (g *gen) copyMem(dst, src mem, n int) {
	if n <= 0 {
		return
	}
	sb, so := g.baseOf(src, asm.R1)
	db, do := g.baseOf(dst, asm.R2)
	for done := 0; done < n; {
		c := chunk(n-done, int(so)+done, int(do)+done)
		g.emit(asm.LoadMem(asm.R0, sb, so+int16(done), sizeOf(c)),
			asm.StoreMem(db, do+int16(done), asm.R0, sizeOf(c)))
		done += c
	}
}

// storeReg stores the low size bytes of r at m.
func (g *gen) storeReg(m mem, r asm.Register, size int) {
	base, off := g.baseOf(m, asm.R1)
	g.emit(asm.StoreMem(base, off, r, sizeOf(size)))
}

// loadReg loads a value of type t from m into r, extended to 64 bits.
func (g *gen) loadReg(r asm.Register, m mem, t *types.Type) {
	base, off := g.baseOf(m, asm.R1)
	size := t.Size
	if size != 1 && size != 2 && size != 4 {
		size = 8
	}
	g.emit(asm.LoadMem(r, base, off, sizeOf(size)))
	g.extend(r, size, t.Signed && t.Kind != types.Bool)
}

// extend sign- or zero-extends the low size bytes of r to 64 bits.
func (g *gen) extend(r asm.Register, size int, signed bool) {
	if size >= 8 {
		return
	}
	sh := int32(64 - 8*size)
	if signed {
		g.emit(asm.LSh.Imm(r, sh), asm.ArSh.Imm(r, sh))
		return
	}
	switch size {
	case 4:
		g.emit(asm.Mov.Reg32(r, r))
	default:
		g.emit(asm.And.Imm(r, int32(1<<(8*size))-1))
	}
}

// normalize truncates r to type t and extends it back to 64 bits.
func (g *gen) normalize(r asm.Register, t *types.Type) {
	if t == nil || !t.IsInteger() || t.Kind == types.Bool {
		return
	}
	g.extend(r, t.Size, t.Signed)
}

// loadCtx emits dst = ctx.
func (g *gen) loadCtx(dst asm.Register) {
	g.usesCtx = true
	g.emit(asm.LoadMem(dst, asm.R10, ctxSlot, asm.DWord))
}

// generate emits the program: prologue, predicate, body, epilogue.
func (g *gen) generate() (asm.Instructions, error) {
	g.at(g.probe)
	// Scratch variables get fixed slots for the whole clause.
	var err error
	lang.Inspect(g.probe, func(n lang.Node) bool {
		if v, ok := n.(*lang.VarExpr); ok && v.Info != nil && err == nil {
			if _, done := g.vars[v.Info]; !done {
				err = g.allocVar(v)
			}
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	hasFor, loopReturns := false, false
	lang.Inspect(g.probe, func(n lang.Node) bool {
		if callbackLoop(n) {
			hasFor = true
			var body *lang.Block
			switch s := n.(type) {
			case *lang.ForStmt:
				body = s.Body
			case *lang.WhileStmt:
				body = s.Body
			}
			if body != nil && leaves(body) {
				loopReturns = true
			}
		}
		return true
	})
	if loopReturns {
		// The returned flag of callback loops, a variable the callbacks
		// copy in and out with the others.
		m, err := g.allocStack(8)
		if err != nil {
			return nil, err
		}
		g.retSlot = m.off
	}
	g.varsLow = -(frameBase + g.stack)
	if hasFor {
		m, err := g.allocStack(8)
		if err != nil {
			return nil, err
		}
		g.cbSlot = m.off
	}
	// A lowered syscalls program starts with its filter (syscalls.go),
	// which saves the context: it goes before everything else.
	var shim asm.Instructions
	if g.prog.RawSyscall != "" {
		if err := g.syscallShim(g.sysNrs); err != nil {
			return nil, err
		}
		shim, g.insns = g.insns, nil
	}
	end := g.label("end")
	if err := g.iterSkipEnd(end); err != nil {
		return nil, err
	}
	if g.probe.Pred != nil {
		g.at(g.probe.Pred)
		if err := g.cond(g.probe.Pred, end, false); err != nil {
			return nil, err
		}
	}
	// The scratch lookup goes after the predicate unless the predicate
	// itself needs scratch: filtered-out events should not pay for it.
	predLen, predScratch := len(g.insns), g.usesScratch
	// Zero the stack variables: a read before the first assignment (in a
	// branch not taken) must see 0, and the verifier rejects reads of
	// uninitialised stack.
	for _, v := range g.varOrder {
		if m := g.vars[v.Info]; m.base == onStack {
			n := 8
			if t := varType(v); !isScalar(t) {
				n = align8(t.Size) // whole words: a for loop copies them
			}
			g.zero(m, n)
		}
	}
	if g.probe.Body != nil {
		if err := g.block(g.probe.Body); err != nil {
			return nil, err
		}
	}
	g.at(g.probe)
	if !g.dead || g.referenced(end) {
		g.place(end)
		g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	}

	if v, ok := g.constTruth(g.probe.Pred); g.probe.Pred != nil && ok && !v {
		// A constant-false predicate: the body never runs, and the verifier
		// refuses its unreachable code. It was still generated so that its
		// maps and events exist (they print as bpftrace's do); only its
		// instructions go. (A constant-true predicate emits no test: cond.)
		g.insns, g.pending, g.dead, g.subprogs, shim = nil, nil, false, nil, nil
		g.usesScratch, g.usesCtx = false, false
		predLen, predScratch = 0, false
		g.at(g.probe)
		g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	}

	body := g.insns
	g.insns = nil
	g.pending = nil
	g.dead = false // the body may end in exit(); the prologue is live
	var scratch asm.Instructions
	if g.usesScratch {
		// The program's scratch slot: a PERCPU_ARRAY keyed by program, or
		// for strings beyond the per-CPU limit (max_strlen > 4096, bpftrace
		// 0.26 allows them) an ARRAY of one slot per program and CPU.
		if g.c.bigScratch() {
			m := g.c.internalMap(MapScratch, ebpf.Array, 4, 0, 0)
			g.emit(asm.FnGetSmpProcessorId.Call(),
				asm.Add.Imm(asm.R0, int32(g.index*g.c.ncpus())),
				asm.StoreMem(asm.R10, scratchSlot, asm.R0, asm.Word),
				asm.LoadMapPtr(asm.R1, 0).WithReference(m.Name))
		} else {
			m := g.c.internalMap(MapScratch, ebpf.PerCPUArray, 4, 0, 0)
			g.emit(stdlib.StImm(asm.R10, scratchSlot, int64(g.index), asm.Word),
				asm.LoadMapPtr(asm.R1, 0).WithReference(m.Name))
		}
		g.emit(asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, scratchSlot),
			asm.FnMapLookupElem.Call(),
			asm.JNE.Imm(asm.R0, 0, "scratch_ok"),
			asm.Return(),
		)
		g.place("scratch_ok")
		g.emit(asm.StoreMem(asm.R10, scratchSlot, asm.R0, asm.DWord))
		if g.maxScr > g.c.maxScratch {
			g.c.maxScratch = g.maxScr
		}
		scratch, g.insns = g.insns, nil
	}
	if g.usesCtx && g.prog.RawSyscall == "" { // the shim saved it
		g.emit(asm.StoreMem(asm.R10, ctxSlot, asm.R1, asm.DWord))
	}
	insns := append(shim, g.insns...)
	if predScratch {
		insns = append(append(insns, scratch...), body...)
	} else {
		insns = append(append(append(insns, body[:predLen]...), scratch...), body[predLen:]...)
	}
	if len(g.pending) > 0 {
		return nil, fmt.Errorf("internal error: dangling label %v", g.pending)
	}
	if len(g.subprogs) > 0 {
		// Callbacks need BTF function info for every function.
		insns[0] = btf.WithFuncMetadata(insns[0], funcInfo(g.prog.Name, 1, btf.GlobalFunc))
		for _, sub := range g.subprogs {
			sub[0] = btf.WithFuncMetadata(sub[0], funcInfo(sub[0].Symbol(), 4, btf.StaticFunc))
			insns = append(insns, sub...)
		}
	}
	// A label on the first instruction (a while loop's top at the start
	// of a clause) gives way to the program's name: jumps to it go there.
	if l := insns[0].Symbol(); l != "" && l != g.prog.Name {
		g.alias[l] = g.prog.Name
	}
	for i := range insns {
		if ref := insns[i].Reference(); ref != "" {
			a, ok := g.alias[ref]
			for n := 0; ok && n < len(g.alias); n++ { // aliases of aliases
				next, more := g.alias[a]
				if !more {
					break
				}
				a = next
			}
			if ok {
				insns[i] = insns[i].WithReference(a)
			}
		}
	}
	insns[0] = insns[0].WithSymbol(g.prog.Name)
	return eliminateDead(insns)
}

func (g *gen) allocVar(v *lang.VarExpr) error {
	t := v.Info.Type
	if t == nil {
		t = v.Type()
	}
	if t == nil || t.IsInvalid() {
		return g.errorf(v, "variable %s has no type", v.Name)
	}
	var m mem
	var err error
	if isScalar(t) {
		m, err = g.allocStack(8)
	} else {
		m = g.allocMem(t.Size)
	}
	if err != nil {
		return err
	}
	g.vars[v.Info] = m
	g.varOrder = append(g.varOrder, v)
	return nil
}

// isScalar reports whether values of t live in registers.
func isScalar(t *types.Type) bool {
	if t == nil {
		return false
	}
	if t.IsInteger() {
		return t.Size <= 8 // a Usym is 16 bytes: address and pid
	}
	return t.Kind == types.Pointer || t.Kind == types.Ctx || t.Kind == types.Probe
}

// varType is the declared type of a scratch variable.
func varType(v *lang.VarExpr) *types.Type {
	if v.Info != nil && v.Info.Type != nil {
		return v.Info.Type
	}
	return v.Type()
}

func (g *gen) restore(sp lang.Span) { g.span = sp }

// referenced reports whether some jump targets label l.
func (g *gen) referenced(l string) bool {
	for _, ins := range g.insns {
		if ins.Reference() == l {
			return true
		}
	}
	return false
}

// funcInfo is the BTF of a function taking n pointers and returning long:
// the program (its context) or a bpf_for_each_map_elem callback (map, key,
// value, context).
func funcInfo(name string, n int, linkage btf.FuncLinkage) *btf.Func {
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	proto := &btf.FuncProto{Return: long}
	for i := 0; i < n; i++ {
		proto.Params = append(proto.Params, btf.FuncParam{Name: fmt.Sprintf("a%d", i), Type: &btf.Pointer{Target: &btf.Void{}}})
	}
	return &btf.Func{Name: name, Type: proto, Linkage: linkage}
}

// iterSkipEnd: an iterator runs its program once more after the last
// object, with the object NULL (the kernel's seq_stop); that call does not
// run the clause, so iter:task's body runs once per task.
func (g *gen) iterSkipEnd(end string) error {
	if g.ap == nil || g.ap.Provider != lang.ProbeIter {
		return nil
	}
	t, err := g.KernelType("struct bpf_iter__" + g.ap.Func)
	if err != nil || t == nil || t.Kind != types.Record || len(t.Fields) < 2 {
		return nil // the checker reported an unknown iterator where it matters
	}
	// The object is the member after meta: a pointer, in the kernel's
	// BTF wrapped in an anonymous union (__bpf_md_ptr).
	obj := t.Fields[1]
	typ := obj.Type
	if typ != nil && typ.Kind == types.Record && len(typ.Fields) > 0 {
		typ = typ.Fields[0].Type
	}
	if typ == nil || typ.Kind != types.Pointer {
		return nil
	}
	g.loadCtx(asm.R1)
	g.emit(asm.LoadMem(asm.R0, asm.R1, int16(obj.Offset), asm.DWord), asm.JEq.Imm(asm.R0, 0, end))
	return nil
}
