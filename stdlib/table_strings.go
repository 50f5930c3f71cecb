package stdlib

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// UserError is an error whose message the compiler shows as is, at the
// call (bpftrace's exact wording, no "name:" prefix).
type UserError struct {
	Msg string
	// Codegen: bpftrace 0.17 finds this in its code generation and says
	// so without a place ("ERROR: Failed to compile: MSG"); gotrace places
	// it at the call otherwise.
	Codegen bool
}

func (e *UserError) Error() string { return e.Msg }

// join() limits, as bpftrace 0.17: at most 16 strings of 1024 bytes.
const (
	JoinArgs    = 16
	JoinArgSize = 1024
)

func sizeOfType(e lang.Expr) int {
	if t := e.Type(); t != nil {
		return t.Size
	}
	return 0
}

// twoAddrs evaluates two in-memory values: the first address is held in a
// callee-saved register (returned), the second left in R2.
func twoAddrs(g Gen, a, b lang.Expr) (asm.Register, error) {
	if err := g.EvalAddr(a, asm.R1); err != nil {
		return 0, err
	}
	ra, err := g.Hold(asm.R1)
	if err != nil {
		return 0, err
	}
	if err := g.EvalAddr(b, asm.R2); err != nil {
		return 0, err
	}
	return ra, nil
}

// genStrncmp compares at most n bytes, stopping after a common NUL; the
// value is 0 when equal and 1 otherwise, as bpftrace. Both strings are
// NUL-terminated within their size, so n is capped at the smaller size.
func genStrncmp(g Gen, c *Call) error {
	n, ok := intConst(c.Args[2])
	if !ok {
		return fmt.Errorf("the length must be a constant")
	}
	lim := min(int64(sizeOfType(c.Args[0])), int64(sizeOfType(c.Args[1])))
	if n > lim {
		n = lim
	}
	ra, err := twoAddrs(g, c.Args[0], c.Args[1])
	if err != nil {
		return err
	}
	ne, done := g.Label("strncmp_ne"), g.Label("strncmp_done")
	eq := g.Label("strncmp_eq")
	g.Emit(asm.Mov.Reg(asm.R1, ra))
	for i := int16(0); i < int16(n); i++ {
		g.Emit(asm.LoadMem(asm.R3, asm.R1, i, asm.Byte), asm.LoadMem(asm.R4, asm.R2, i, asm.Byte),
			asm.JNE.Reg(asm.R3, asm.R4, ne), asm.JEq.Imm(asm.R3, 0, eq))
	}
	genSelect(g, ra, eq, 0, ne, 1, done)
	return nil
}

// genStrcontains searches needle in haystack with two bounded loops (the
// verifier follows them: indexes are checked against the sizes).
func genStrcontains(g Gen, c *Call) error {
	hs, ns := sizeOfType(c.Args[0]), sizeOfType(c.Args[1])
	ra, err := twoAddrs(g, c.Args[0], c.Args[1])
	if err != nil {
		return err
	}
	outer, inner, next := g.Label("sc_outer"), g.Label("sc_inner"), g.Label("sc_next")
	found, notFound, done := g.Label("sc_found"), g.Label("sc_nf"), g.Label("sc_done")
	g.Emit(asm.Mov.Reg(asm.R1, ra), asm.Mov.Imm(asm.R3, 0))
	g.Place(outer)
	g.Emit(asm.JGE.Imm(asm.R3, int32(hs), notFound), asm.Mov.Imm(asm.R4, 0))
	g.Place(inner)
	g.Emit(asm.JGE.Imm(asm.R4, int32(ns), found),
		asm.Mov.Reg(asm.R5, asm.R2), asm.Add.Reg(asm.R5, asm.R4), asm.LoadMem(asm.R5, asm.R5, 0, asm.Byte),
		asm.JEq.Imm(asm.R5, 0, found),
		asm.Mov.Reg(asm.R0, asm.R3), asm.Add.Reg(asm.R0, asm.R4),
		asm.JGE.Imm(asm.R0, int32(hs), notFound),
		asm.Add.Reg(asm.R0, asm.R1), asm.LoadMem(asm.R0, asm.R0, 0, asm.Byte),
		asm.JNE.Reg(asm.R0, asm.R5, next),
		asm.Add.Imm(asm.R4, 1), asm.Ja.Label(inner))
	g.Place(next)
	// The haystack ended (its NUL did not match a needle byte): not found.
	g.Emit(asm.Mov.Reg(asm.R0, asm.R3), asm.Add.Reg(asm.R0, asm.R1), asm.LoadMem(asm.R0, asm.R0, 0, asm.Byte),
		asm.JEq.Imm(asm.R0, 0, notFound),
		asm.Add.Imm(asm.R3, 1), asm.Ja.Label(outer))
	genSelect(g, ra, found, 1, notFound, 0, done)
	return nil
}

// genSelect ends a comparison whose code jumps to label a or b: the result
// in r is va at a and vb at b, both paths meeting at done.
func genSelect(g Gen, r asm.Register, a string, va int32, b string, vb int32, done string) {
	g.Place(a)
	g.Emit(asm.Mov.Imm(r, va), asm.Ja.Label(done))
	g.Place(b)
	g.Emit(asm.Mov.Imm(r, vb))
	g.Place(done)
	// A no-op to carry the done label when nothing follows it.
	g.Emit(asm.Mov.Reg(r, r))
	g.SetResult(r)
}

// genBuf reads bytes into a Buffer value: [0] = length, then the data
// (ABI.md), at most the type's size - 1 bytes.
func genBuf(g Gen, c *Call) error {
	t := c.Expr.Type()
	if t == nil || t.Size < 2 {
		return fmt.Errorf("buffer has no room")
	}
	max := t.Size - 1
	at := c.Args[0].Type()
	if at != nil && (at.Kind == types.Array || at.Kind == types.String) {
		// A value in memory: copy it. The buffer holds all the bytes asked
		// for (bpftrace: buf("ok_key", 8) has 8), zeros past the value.
		n := min(max, at.Size)
		tmp := g.TempMem(t.Size, true)
		if err := g.EvalAddr(c.Args[0], asm.R2); err != nil {
			return err
		}
		g.TempAddr(asm.R1, tmp, 0)
		g.Emit(StImm(asm.R1, 0, int64(max), asm.Byte))
		for i := int16(0); i < int16(n); i++ {
			g.Emit(asm.LoadMem(asm.R0, asm.R2, i, asm.Byte), asm.StoreMem(asm.R1, i+1, asm.R0, asm.Byte))
		}
		g.SetResultTemp(tmp)
		return nil
	}
	src, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	var n asm.Register
	size := int64(max)
	if len(c.Args) == 2 {
		if v, ok := intConst(c.Args[1]); ok {
			size = min(size, v)
		} else if n, err = g.EvalInt(c.Args[1]); err != nil {
			return err
		}
	}
	tmp := g.TempMem(t.Size, true)
	g.TempAddr(asm.R1, tmp, 0)
	if n != 0 {
		// min(n, max), as an unsigned value the verifier can bound.
		ok := g.Label("buflen")
		g.Emit(asm.Mov.Reg(asm.R2, n), asm.JLE.Imm(asm.R2, int32(max), ok), asm.Mov.Imm(asm.R2, int32(max)))
		g.Place(ok)
		g.Emit(asm.StoreMem(asm.R1, 0, asm.R2, asm.Byte))
		g.Free(n)
	} else {
		g.Emit(StImm(asm.R1, 0, size, asm.Byte), asm.Mov.Imm(asm.R2, int32(size)))
	}
	fn := asm.FnProbeReadKernel
	if g.PtrSpace(c.Args[0].Type()) == types.AddrUser {
		fn = asm.FnProbeReadUser
	}
	g.Emit(asm.Add.Imm(asm.R1, 1), asm.Mov.Reg(asm.R3, src), fn.Call())
	g.Free(src)
	g.SetResultTemp(tmp)
	return nil
}

// genNtop builds an Inet value: [0:8] family, [8:24] address bytes.
func genNtop(g Gen, c *Call) error {
	addr := c.Args[len(c.Args)-1]
	at := addr.Type()
	if at == nil {
		return fmt.Errorf("address has no type")
	}
	var fam asm.Register
	var err error
	famConst := int64(2)
	if at.Size == 16 {
		famConst = 10
	}
	if len(c.Args) == 2 {
		if v, ok := intConst(c.Args[0]); ok {
			famConst = v
		} else if fam, err = g.EvalInt(c.Args[0]); err != nil {
			return err
		}
	}
	tmp := g.TempMem(24, true)
	if at.Kind == types.Array || at.Kind == types.String {
		if err := g.EvalAddr(addr, asm.R2); err != nil {
			return err
		}
		g.TempAddr(asm.R1, tmp, 0)
		n := min(at.Size, 16)
		for i := int16(0); i < int16(n); i += 4 {
			sz := asm.Word
			if n-int(i) < 4 {
				sz = asm.Byte
			}
			g.Emit(asm.LoadMem(asm.R0, asm.R2, i, sz), asm.StoreMem(asm.R1, 8+i, asm.R0, sz))
		}
	} else {
		r, err := g.EvalInt(addr)
		if err != nil {
			return err
		}
		g.TempAddr(asm.R1, tmp, 0)
		g.Emit(asm.StoreMem(asm.R1, 8, r, asm.Word))
		g.Free(r)
	}
	if fam != 0 {
		g.Emit(asm.StoreMem(asm.R1, 0, fam, asm.DWord))
		g.Free(fam)
	} else {
		g.Emit(StImm(asm.R1, 0, famConst, asm.DWord))
	}
	g.SetResultTemp(tmp)
	return nil
}

// genMacaddr copies 6 bytes: from a value in memory, or read through a
// pointer.
func genMacaddr(g Gen, c *Call) error {
	at := c.Args[0].Type()
	tmp := g.TempMem(8, true)
	if at != nil && (at.Kind == types.Array || at.Kind == types.String) {
		if err := g.EvalAddr(c.Args[0], asm.R2); err != nil {
			return err
		}
		g.TempAddr(asm.R1, tmp, 0)
		for i := int16(0); i < 6; i += 2 {
			g.Emit(asm.LoadMem(asm.R0, asm.R2, i, asm.Byte), asm.StoreMem(asm.R1, i, asm.R0, asm.Byte),
				asm.LoadMem(asm.R0, asm.R2, i+1, asm.Byte), asm.StoreMem(asm.R1, i+1, asm.R0, asm.Byte))
		}
		g.SetResultTemp(tmp)
		return nil
	}
	src, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	fn := asm.FnProbeReadKernel
	if g.PtrSpace(at) == types.AddrUser {
		fn = asm.FnProbeReadUser
	}
	g.TempAddr(asm.R1, tmp, 0)
	g.Emit(asm.Mov.Imm(asm.R2, 6), asm.Mov.Reg(asm.R3, src), fn.Call())
	g.Free(src)
	g.SetResultTemp(tmp)
	return nil
}

// genStrftime: a Timestamp value, [0:8] the id of an EvTime event holding
// the format (never emitted as a record), [8:16] nsecs.
func genStrftime(g Gen, c *Call) error {
	format, ok := lang.ConstStrOf(c.Args[0])
	if !ok {
		return fmt.Errorf("the format must be a string literal")
	}
	id := g.EventFormat(EvTime, format, nil)
	r, err := g.EvalInt(c.Args[1])
	if err != nil {
		return err
	}
	tmp := g.TempMem(16, false)
	g.TempAddr(asm.R1, tmp, 0)
	g.Emit(StImm(asm.R1, 0, int64(id), asm.DWord), asm.StoreMem(asm.R1, 8, r, asm.DWord))
	g.Free(r)
	g.SetResultTemp(tmp)
	return nil
}

func setConst(g Gen, v uint64) {
	g.Emit(asm.LoadImm(asm.R0, int64(v), asm.DWord))
	g.SetResult(asm.R0)
}

// pseudoBTFID is BPF_PSEUDO_BTF_ID: a 64-bit immediate load whose
// immediate is the BTF ID of a kernel variable (in vmlinux: the second
// half's immediate, the BTF object's fd, is 0); the verifier turns it into
// the variable's address, typed, or for a per-CPU variable into a per-CPU
// pointer that bpf_this_cpu_ptr/bpf_per_cpu_ptr take.
const pseudoBTFID = asm.Register(3)

// genPercpuKaddr is percpu_kaddr(name): bpf_this_cpu_ptr(&name), the
// variable's address on this CPU; percpu_kaddr(name, cpu) is
// bpf_per_cpu_ptr(&name, cpu), 0 for a CPU that does not exist.
func genPercpuKaddr(g Gen, c *Call) error {
	name, ok := lang.ConstStrOf(c.Args[0])
	if !ok {
		return fmt.Errorf("the variable must be a string literal")
	}
	id, percpu, err := g.KernelVar(name)
	if err != nil {
		return &UserError{Msg: fmt.Sprintf("Could not resolve variable \"%s\" from BTF: %v", name, err)}
	}
	if !percpu {
		return &UserError{Msg: fmt.Sprintf("\"%s\" is not a per-CPU variable of the kernel (not in BTF's .data..percpu); kaddr(\"%s\") gives its address", name, name)}
	}
	if _, found := g.KernelSymbol(name); !found {
		// The verifier finds the variable's address with kallsyms, which
		// lists data symbols only with CONFIG_KALLSYMS_ALL.
		return &UserError{Msg: fmt.Sprintf("percpu_kaddr: the kernel cannot resolve \"%s\": it is not in /proc/kallsyms (a kernel without CONFIG_KALLSYMS_ALL lists no data symbols there, and the verifier resolves the variable through them)", name)}
	}
	load := asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R1, Src: pseudoBTFID, Constant: int64(id)}
	if len(c.Args) == 1 {
		g.Emit(load, asm.FnThisCpuPtr.Call())
		g.SetResult(asm.R0)
		return nil
	}
	cpu, err := g.EvalInt(c.Args[1])
	if err != nil {
		return err
	}
	g.Emit(asm.Mov.Reg(asm.R2, cpu), load, asm.FnPerCpuPtr.Call())
	g.Free(cpu)
	// A CPU without the variable gives NULL: the null check makes R0 a
	// plain 0 on one path and the variable's address on the other.
	done := g.Label("percpu_done")
	g.Emit(asm.JNE.Imm(asm.R0, 0, done))
	g.Place(done)
	g.SetResult(asm.R0)
	return nil
}

// genKaddr resolves the symbol at compile time: the value is a constant.
func genKaddr(g Gen, c *Call) error {
	name, ok := lang.ConstStrOf(c.Args[0])
	if !ok {
		return fmt.Errorf("the symbol must be a string literal")
	}
	a, found := g.KernelSymbol(name)
	if !found {
		return &UserError{Msg: "Failed to resolve kernel symbol: " + name, Codegen: true}
	}
	setConst(g, a)
	return nil
}

// genUaddr resolves a symbol of the probed binary at compile time (its
// st_value, as bpftrace).
func genUaddr(g Gen, c *Call) error {
	name, ok := lang.ConstStrOf(c.Args[0])
	if !ok {
		return fmt.Errorf("the symbol must be a string literal")
	}
	ap := g.AttachPoint()
	bin := ap.Target
	a, err := ElfSymbol(bin, name)
	if err != nil {
		return &UserError{Msg: fmt.Sprintf("Could not resolve symbol: %s:%s", bin, name)}
	}
	if isDynELF(bin) && ap.Provider == lang.ProbeUprobe && !ap.Wildcard && !ap.HasAddr && ap.Func != "" {
		// A position-independent executable or a library is loaded at
		// an address of the kernel's choosing: the symbol is where the
		// probed function is (the saved instruction pointer, a uprobe's
		// address) moved by its distance from that function.
		fn, ferr := ElfSymbol(bin, ap.Func)
		ip := regIndex("ip", "pc")
		if ferr == nil && ip >= 0 {
			g.LoadCtx(asm.R1)
			g.Emit(asm.LoadMem(asm.R0, asm.R1, int16(8*ip), asm.DWord),
				asm.LoadImm(asm.R1, int64(a-fn-uint64(ap.Offset)), asm.DWord),
				asm.Add.Reg(asm.R0, asm.R1))
			g.SetResult(asm.R0)
			return nil
		}
	}
	setConst(g, a)
	return nil
}

// isDynELF reports whether path is an ELF file loaded at a relocated
// address (ET_DYN: a PIE executable or a shared library).
func isDynELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Type == elf.ET_DYN
}

// regIndex is the index in this architecture's saved registers of the
// first of names it has, or -1.
func regIndex(names ...string) int {
	for _, n := range names {
		for i, r := range Registers[goruntime.GOARCH] {
			if r == n {
				return i
			}
		}
	}
	return -1
}

// ElfSymbol returns the value of symbol name in the ELF file at path
// (static symbols first, then dynamic ones).
func ElfSymbol(path, name string) (uint64, error) {
	sym, err := elfSymbol(path, name)
	if err != nil {
		return 0, fmt.Errorf("uaddr: %w", err)
	}
	return sym.Value, nil
}

// ElfSymbolSize returns the size of symbol name in the ELF file at path,
// 0 when unknown.
func ElfSymbolSize(path, name string) uint64 {
	sym, err := elfSymbol(path, name)
	if err != nil {
		return 0
	}
	return sym.Size
}

// elfSymbol finds the first defined symbol name in the ELF file at path,
// static symbols first, then dynamic ones.
func elfSymbol(path, name string) (elf.Symbol, error) {
	f, err := elf.Open(path)
	if err != nil {
		return elf.Symbol{}, err
	}
	defer f.Close()
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := get()
		if err != nil {
			continue
		}
		for _, s := range syms {
			if s.Name == name && s.Value != 0 {
				return s, nil
			}
		}
	}
	return elf.Symbol{}, fmt.Errorf("%s has no symbol %s", path, name)
}

// genCgroupid: the cgroup id of a cgroupfs path is its kernfs node id,
// which the kernel gives as the file handle (bpftrace does the same).
func genCgroupid(g Gen, c *Call) error {
	path, ok := lang.ConstStrOf(c.Args[0])
	if !ok {
		return fmt.Errorf("the path must be a string literal")
	}
	id, err := CgroupID(path)
	if err != nil {
		return &UserError{Msg: fmt.Sprintf("cgroupid: failed to get the cgroup id of %s: %v", path, err)}
	}
	setConst(g, id)
	return nil
}

// CgroupID returns the cgroup id of a cgroupfs directory.
func CgroupID(path string) (uint64, error) {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Clean(path), 0)
	if err != nil {
		return 0, err
	}
	b := h.Bytes()
	if len(b) < 8 {
		return 0, fmt.Errorf("file handle of %d bytes", len(b))
	}
	return binary.LittleEndian.Uint64(b[:8]), nil
}

// genPath: bpf_d_path into a zeroed string (the kernel allows the helper
// only in some fentry/iter programs; the verifier says which).
func genPath(g Gen, c *Call) error {
	size := g.StrLen()
	if t := c.Expr.Type(); t != nil && t.Size > 0 {
		size = t.Size
	}
	if ok, err := genIterPath(g, c, size); ok || err != nil {
		return err // table_v026.go
	}
	var r asm.Register
	var err error
	if t := c.Args[0].Type(); t != nil && t.Kind == types.Record {
		// path(file->f_path): the member's address, as the kernel's own
		// pointer (bpf_d_path takes only pointers the verifier trusts).
		var ok bool
		if r, ok, err = g.MemberAddr(c.Args[0]); err == nil && !ok {
			err = &UserError{Msg: "path() needs a struct path reached through a pointer (args->file->f_path) or a struct path *"}
		}
	} else {
		r, err = g.EvalInt(c.Args[0])
	}
	if err != nil {
		return err
	}
	tmp := g.TempMem(size, true)
	g.TempAddr(asm.R2, tmp, 0)
	g.Emit(asm.Mov.Reg(asm.R1, r), asm.Mov.Imm(asm.R3, int32(size)), asm.FnDPath.Call())
	g.Free(r)
	g.SetResultTemp(tmp)
	return nil
}

// JoinArgsType is the payload of an EvJoin record: JoinArgs strings; an
// empty one ends the list.
func JoinArgsType() *types.Type {
	elems := make([]*types.Type, JoinArgs)
	for i := range elems {
		elems[i] = types.StringType(JoinArgSize)
	}
	return types.TupleOf(elems...)
}

// genJoin reads up to JoinArgs strings of a NULL-terminated char *[] into
// an EvJoin record; the separator is the event's Format.
func genJoin(g Gen, c *Call) error {
	sep := " "
	if len(c.Args) == 2 {
		s, ok := lang.ConstStrOf(c.Args[1])
		if !ok {
			return fmt.Errorf("the separator must be a string literal")
		}
		sep = s
	}
	args := JoinArgsType()
	id := g.EventFormat(EvJoin, sep, args)
	argv, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	readPtr, readStr := asm.FnProbeReadKernel, asm.FnProbeReadKernelStr
	if g.PtrSpace(c.Args[0].Type()) == types.AddrUser {
		readPtr, readStr = asm.FnProbeReadUser, asm.FnProbeReadUserStr
	}
	ptr, err := g.StackTemp(8)
	if err != nil {
		return err
	}
	size := 8 + args.Size
	rec := g.TempMem(size, false)
	g.TempAddr(asm.R1, rec, 0)
	g.Emit(StImm(asm.R1, 0, int64(id), asm.DWord))
	end := g.Label("join_end")
	for i := 0; i < JoinArgs; i++ {
		off := 8 + args.Fields[i].Offset
		last, next := g.Label("join_last"), g.Label("join_next")
		g.Emit(asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, int32(ptr)), asm.Mov.Imm(asm.R2, 8),
			asm.Mov.Reg(asm.R3, argv), asm.Add.Imm(asm.R3, int32(8*i)), readPtr.Call(),
			asm.JNE.Imm(asm.R0, 0, last),
			asm.LoadMem(asm.R3, asm.R10, ptr, asm.DWord), asm.JEq.Imm(asm.R3, 0, last))
		g.TempAddr(asm.R1, rec, off)
		g.Emit(asm.Mov.Imm(asm.R2, JoinArgSize), readStr.Call(), asm.Ja.Label(next))
		// Unreadable or NULL: an empty string ends the list.
		g.Place(last)
		g.TempAddr(asm.R1, rec, off)
		g.Emit(StImm(asm.R1, 0, 0, asm.Byte), asm.Ja.Label(end))
		g.Place(next)
	}
	g.Place(end)
	g.Free(argv)
	g.Output(rec, size)
	return nil
}

var errPtonFamily = errors.New("not an IPv4 or IPv6 address")

// Pton converts an address's text to its bytes as bpftrace 0.17 does: text
// with a '.' is IPv4 (so "::ffff:1.2.3.4" is refused, as there), else
// text with a ':' is IPv6, else errPtonFamily.
func Pton(s string) ([]byte, error) {
	switch {
	case strings.Contains(s, "."):
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("invalid IPv4 address %q", s)
		}
		b := a.As4()
		return b[:], nil
	case strings.Contains(s, ":"):
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return nil, fmt.Errorf("invalid IPv6 address %q", s)
		}
		b := a.As16()
		return b[:], nil
	}
	return nil, errPtonFamily
}

// genPton stores the address's bytes, known at compile time, in scratch
// memory: the value is a uint8 array.
func genPton(g Gen, c *Call) error {
	s, ok := lang.ConstStrOf(c.Args[0])
	if !ok {
		return fmt.Errorf("pton() needs a string literal")
	}
	b, err := Pton(s)
	if err != nil {
		return err
	}
	tmp := g.TempMem(len(b), false)
	g.TempAddr(asm.R1, tmp, 0)
	for i := 0; i < len(b); i += 4 {
		v := int64(int32(uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24))
		g.Emit(StImm(asm.R1, int16(i), v, asm.Word))
	}
	g.SetResultTemp(tmp)
	return nil
}

func stringRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "strncmp", Gen: genStrncmp, Kind: Func, Sig: "strncmp(string a, string b, int n)", MinArgs: 3, MaxArgs: 3,
			Doc: "compare at most n bytes of two strings (0 when equal)",
			Check: func(c Checker, call *Call) *types.Type {
				for i := 0; i < 2; i++ {
					if t := call.Args[i].Type(); !invalid(t) && t.Kind != types.String {
						c.Errorf(call.Expr, "strncmp() only supports string arguments (%s provided)", types.KindWord(t, types.AsArg))
						return types.InvalidType
					}
				}
				v, ok := c.ConstInt(call.Args[2])
				if !ok {
					c.Errorf(call.Expr, "Builtin strncmp requires a non-negative size")
					return types.InvalidType
				}
				if v < 0 {
					c.Errorf(call.Expr, "Builtin strncmp requires a non-negative size")
					return types.InvalidType
				}
				return types.U64
			}},
		&Builtin{Name: "strcontains", Gen: genStrcontains, Kind: Func, Sig: "strcontains(string haystack, string needle)", MinArgs: 2, MaxArgs: 2,
			Doc: "whether needle occurs in haystack",
			Check: func(c Checker, call *Call) *types.Type {
				for i := 0; i < 2; i++ {
					if t := call.Args[i].Type(); !invalid(t) && t.Kind == types.Probe && !c.Compat().Legacy() {
						// The probe's name as a string (bpftrace 0.26:
						// strcontains(probe, "f")); read from the probe table.
						call.Args[i].SetType(types.StringType(ProbeNameLen))
					}
					if t := call.Args[i].Type(); !invalid(t) && t.Kind != types.String {
						c.Errorf(call.Expr, "strcontains() only supports string arguments (%s provided)", types.KindWord(t, types.AsArg))
						return types.InvalidType
					}
				}
				return types.BoolType
			}},
		&Builtin{Name: "buf", Gen: genBuf, Kind: Func, Sig: "buf(void *d[, int length])", MinArgs: 1, MaxArgs: 2,
			Helpers: []string{"bpf_probe_read_kernel", "bpf_probe_read_user"},
			Doc:     "bytes read from memory, printed as hex escapes with %r",
			Check: func(c Checker, call *Call) *types.Type {
				t := call.Args[0].Type()
				if invalid(t) {
					return types.InvalidType
				}
				// A Buffer's Size counts its length byte too (compiler/ABI.md).
				if len(call.Args) == 1 {
					switch t.Kind {
					case types.Array:
						return &types.Type{Kind: types.Buffer, Size: t.Size + 1}
					case types.String:
						return &types.Type{Kind: types.Buffer, Size: t.Size + 1}
					}
					c.Errorf(call.Expr, "buf() expects a length argument for non-array type %s", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				n := c.StrLen()
				if v, ok := c.ConstInt(call.Args[1]); ok {
					if v < 1 {
						c.Errorf(call.Expr, "buf() length must be positive (%d provided)", v)
						return types.InvalidType
					}
					if int(v) < n || t.Kind == types.String {
						n = int(v)
					}
				} else if lt := call.Args[1].Type(); !invalid(lt) && !isInt(lt) {
					c.Errorf(call.Expr, "buf() only supports integer arguments (%s provided)", types.KindWord(lt, types.AsArg))
					return types.InvalidType
				}
				return &types.Type{Kind: types.Buffer, Size: n + 1}
			}},
		&Builtin{Name: "ntop", Gen: genNtop, Kind: Func, Sig: "ntop([int af, ]int|char[4]|char[16] addr)", MinArgs: 1, MaxArgs: 2,
			Doc: "IPv4/IPv6 address as text",
			Check: func(c Checker, call *Call) *types.Type {
				a := call.Args[len(call.Args)-1]
				t := a.Type()
				if invalid(t) {
					return types.InvalidType
				}
				if !(isInt(t) || ((t.Kind == types.Array || t.Kind == types.String) && (t.Size == 4 || t.Size == 16))) {
					c.Errorf(call.Expr, "ntop() argument must be 4 or 16 bytes in size")
					return types.InvalidType
				}
				if len(call.Args) == 2 {
					if ft := call.Args[0].Type(); !invalid(ft) && !isInt(ft) {
						c.Errorf(call.Expr, "ntop() expects an integer address family (%s provided)", types.KindWord(ft, types.AsArg))
						return types.InvalidType
					}
				}
				return &types.Type{Kind: types.Inet, Size: 24}
			}},
		&Builtin{Name: "macaddr", Gen: genMacaddr, Kind: Func, Sig: "macaddr(char[6] addr)", MinArgs: 1, MaxArgs: 1,
			Doc: "MAC address as text",
			Check: func(c Checker, call *Call) *types.Type {
				t := call.Args[0].Type()
				if invalid(t) {
					return types.InvalidType
				}
				// char[6] members arrive as string[6] (bpftrace turns char arrays
				// into strings).
				ok := ((t.Kind == types.Array || t.Kind == types.String) && t.Size >= 6) || t.Kind == types.Pointer || isInt(t)
				if !ok {
					c.Errorf(call.Expr, "macaddr() only supports array or pointer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				if (t.Kind == types.Array || t.Kind == types.String) && t.Size != 6 {
					c.Errorf(call.Expr, "macaddr() argument must be 6 bytes in size")
					return types.InvalidType
				}
				return &types.Type{Kind: types.MacAddr, Size: 6}
			}},
		&Builtin{Name: "pton", Gen: genPton, Kind: Func, Sig: "pton(string addr)", MinArgs: 1, MaxArgs: 1,
			Doc: "IPv4/IPv6 address text as its bytes (uint8[4] or uint8[16], resolved when the script compiles)",
			Check: func(c Checker, call *Call) *types.Type {
				s, ok := c.ConstStr(call.Args[0])
				if !ok {
					s = "" // bpftrace 0.17 names no address here
				}
				b, err := Pton(s)
				if err != nil || !ok {
					if !ok || err == errPtonFamily {
						c.Errorf(call.Expr, "pton() expects an string argument of an IPv4/IPv6 address, got %s", s)
					} else {
						c.Errorf(call.Expr, "pton() expects a valid IPv4/IPv6 address, got %s", s)
					}
					return types.InvalidType
				}
				return types.ArrayOf(types.U8, len(b))
			}},
		&Builtin{Name: "strftime", Gen: genStrftime, Kind: Func, Sig: "strftime(string fmt, int nsecs)", MinArgs: 2, MaxArgs: 2,
			Doc: "time formatted in userspace (strftime plus %f microseconds)",
			Check: func(c Checker, call *Call) *types.Type {
				if _, ok := wantStrLit(c, call, 0); !ok {
					return types.InvalidType
				}
				if t := call.Args[1].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "strftime() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return &types.Type{Kind: types.Timestamp, Size: 16}
			}},
		&Builtin{Name: "kaddr", Gen: genKaddr, Kind: Func, Sig: "kaddr(string symbol)", MinArgs: 1, MaxArgs: 1,
			Doc:   "address of a kernel symbol (resolved when the script loads)",
			Check: strLitRule(types.U64)},
		&Builtin{Name: "uaddr", Gen: genUaddr, Kind: Func, Sig: "uaddr(string symbol)", MinArgs: 1, MaxArgs: 1,
			// bpftrace refuses these only (kfunc, rawtracepoint ... pass).
			NotProbes: []lang.ProbeKind{lang.ProbeBegin, lang.ProbeEnd, lang.ProbeSelf, lang.ProbeInterval, lang.ProbeProfile, lang.ProbeSoftware, lang.ProbeHardware, lang.ProbeTracepoint, lang.ProbeKprobe, lang.ProbeKretprobe},
			Doc:       "address of a symbol in the probed binary",
			Check: func(c Checker, call *Call) *types.Type {
				name, ok := wantStrLit(c, call, 0)
				if !ok {
					return types.InvalidType
				}
				// The pointee's width follows the symbol's size, as bpftrace:
				// 1, 2 or 4 bytes, else 8.
				elem := types.S64
				if call.Probe != nil && len(call.Probe.Attach) > 0 {
					switch ElfSymbolSize(call.Probe.Attach[0].Target, name) {
					case 1:
						elem = types.S8
					case 2:
						elem = types.S16
					case 4:
						elem = types.S32
					}
				}
				return types.PointerTo(elem, types.AddrUser)
			}},
		&Builtin{Name: "cgroupid", Gen: genCgroupid, Kind: Func, Sig: "cgroupid(string path)", MinArgs: 1, MaxArgs: 1,
			Doc:   "cgroup id of a cgroupfs path (resolved when the script loads)",
			Check: strLitRule(types.U64)},
		&Builtin{Name: "path", Gen: genPath, Kind: Func, Sig: "path(struct path *p | struct path p)", MinArgs: 1, MaxArgs: 1,
			Probes: []lang.ProbeKind{lang.ProbeKfunc, lang.ProbeKretfunc, lang.ProbeIter}, Helpers: []string{"bpf_d_path"},
			Doc: "full path of a struct path (kfunc/iter probes; bpf_d_path)",
			ProbeError: func(c Checker, _ *Call, p string) string {
				if c.Compat().Legacy() {
					return "The path function can only be used with 'kfunc', 'kretfunc', 'iter' probes"
				}
				return "path can not be used with \"" + p + "\" probes"
			},
			Check: func(c Checker, call *Call) *types.Type {
				// A struct path member (file->f_path) stands for its address,
				// as in bpftrace.
				if t := call.Args[0].Type(); !invalid(t) && t.Kind != types.Pointer && !isInt(t) && !(t.Kind == types.Record && t.Name == "struct path") {
					c.Errorf(call.Expr, "path() only supports pointer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return types.StringType(c.StrLen())
			}},
		&Builtin{Name: "join", Gen: genJoin, Kind: Func, Sig: "join(char *argv[][, string sep])", MinArgs: 1, MaxArgs: 2,
			Helpers: []string{"bpf_probe_read_kernel", "bpf_probe_read_user_str"},
			Doc:     "print a NULL-terminated array of strings joined by sep (default \" \")",
			Check: func(c Checker, call *Call) *types.Type {
				t := call.Args[0].Type()
				if !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
					c.Errorf(call.Expr, "join() expects an integer or pointer argument (%s provided)", types.KindWord(t, types.AsArg))
				}
				if len(call.Args) == 2 {
					wantStrLit(c, call, 1)
				}
				return types.NoneType
			}},
		&Builtin{Name: "percpu_kaddr", Gen: genPercpuKaddr, Kind: Func, Sig: "percpu_kaddr(string symbol[, int cpu])", MinArgs: 1, MaxArgs: 2,
			Helpers: []string{"bpf_per_cpu_ptr", "bpf_this_cpu_ptr"},
			Doc:     "address of a per-CPU kernel variable on this (or the given) CPU",
			Check: func(c Checker, call *Call) *types.Type {
				if _, ok := wantStrLit(c, call, 0); !ok {
					return types.InvalidType
				}
				if len(call.Args) == 2 {
					if t := call.Args[1].Type(); !invalid(t) && !isInt(t) {
						c.Errorf(call.Expr, "percpu_kaddr() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					}
				}
				return types.U64
			}},
	}
}
