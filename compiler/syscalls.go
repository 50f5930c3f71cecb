package compiler

import (
	"errors"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/stdlib"
)

// System call tracepoints through the raw sys_enter/sys_exit tracepoints.
//
// The kernel builds every `syscalls:sys_enter_NAME` event on top of the raw
// `sys_enter` tracepoint: its probe function checks a bitmap of enabled
// system calls, fills a perf record (common fields, __syscall_nr, the six
// argument registers) and only then runs the BPF program. A program attached
// to the raw tracepoint itself skips that work (measured on the benchmark's
// getpid loop: +80 ns per call for an empty raw program against +190 ns for
// an empty syscalls one), but it runs for every system call on the machine,
// so it filters on the system call number first: a balanced tree of
// compares over the numbers the clause traces.
//
// A lowered program reads each `args->f` the clause uses from where the
// tracepoint's record would have copied it: __syscall_nr (offset 8) is
// the number, argument i (16+8i) of sys_enter the register that carries
// it, ret (16) of sys_exit the raw tracepoint's second argument; the
// offsets stay the tracepoint format's, so the checker's types apply
// unchanged (sysArg). It drops 32-bit (ia32) tasks, whose numbers are
// another table's and which the kernel's syscalls events skip.
//
// Lowering is decided per raw tracepoint (canLowerSyscalls): all the
// script's syscalls clauses on it, or none — if one cannot be (it prints
// args as a whole, takes kstack, or uses `probe` under a wildcard), its
// raw tracepoint stays on perf events, so clauses on one system call keep
// running in script order — and only while it makes at most
// maxRawSyscallProgs programs there: each runs on every system call of
// the machine. Only x86-64 is lowered for now.

// maxRawSyscallProgs caps the lowered programs per raw tracepoint, and
// minRawSyscalls is how many system calls a script must trace through one
// (sys_enter or sys_exit) before they are lowered (unless
// Options.SyscallTracepoints is "raw"). Measured on this machine's getpid
// loop: a raw sys_enter program saves the traced call ~130 ns (+232
// instead of +363 ns per call) but costs every other system call of the
// machine ~50 ns more than the perf events' bitmap test (+130 against
// +79 ns; sys_exit: +167 against +51, as it must read the number from the
// registers first). That pays when most calls are traced, or when there
// are so many tracepoints that attaching and releasing them dominates
// (~40 ms of kernel release each, 13 s for sys_enter_*).
const (
	maxRawSyscallProgs = 4
	minRawSyscalls     = 32
)

// syscallAliases are syscalls events named after their SYSCALL_DEFINE where
// that differs from the syscall table's name (x86-64).
var syscallAliases = map[string]string{
	"newstat":    "stat",
	"newlstat":   "lstat",
	"newfstat":   "fstat",
	"newuname":   "uname",
	"sendfile64": "sendfile",
	"umount":     "umount2",
}

// SyscallNr returns the x86-64 number of the system call whose syscalls
// tracepoint is sys_enter_NAME or sys_exit_NAME (ev), and the raw
// tracepoint (sys_enter or sys_exit) carrying it.
func SyscallNr(ev string) (nr int, raw string, ok bool) {
	name, raw := "", ""
	switch {
	case strings.HasPrefix(ev, "sys_enter_"):
		name, raw = ev[len("sys_enter_"):], "sys_enter"
	case strings.HasPrefix(ev, "sys_exit_"):
		name, raw = ev[len("sys_exit_"):], "sys_exit"
	default:
		return 0, "", false
	}
	if a, ok := syscallAliases[name]; ok {
		name = a
	}
	nr, ok = stdlib.SysnrAMD64()[name]
	return nr, raw, ok
}

// touchesSyscalls reports whether ap may name a syscalls tracepoint.
func touchesSyscalls(ap *lang.AttachPoint) bool {
	if ap.Provider != lang.ProbeTracepoint {
		return false
	}
	if ok, err := path.Match(ap.Target, "syscalls"); err == nil && ok {
		return true
	}
	return strings.ContainsAny(ap.Target, "*?[{")
}

// clauseUse is what a clause reads that decides how it can be compiled.
type clauseUse struct {
	probe, args, wholeArgs, kstack bool
}

func useOf(p *lang.Probe) clauseUse {
	var u clauseUse
	argsN, fieldN := 0, 0
	lang.Inspect(p, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.BuiltinExpr:
			switch {
			case isProbe(n):
				u.probe = true
			case isArgs(n):
				u.args = true
				argsN++
			case n.Name == "kstack":
				u.kstack = true
			}
		case *lang.CallExpr:
			if n.Name == "kstack" {
				u.kstack = true
			}
		case *lang.FieldExpr:
			if isArgs(n.X) {
				fieldN++
			}
		}
		return true
	})
	u.wholeArgs = argsN > fieldN
	return u
}

// canLowerSyscalls decides, per raw tracepoint (sys_enter, sys_exit),
// whether the script's syscalls tracepoints compile to programs on it:
// every clause on it can be lowered, and it serves at least
// minRawSyscalls system calls (or Options.SyscallTracepoints is "raw").
func (c *compiler) canLowerSyscalls() map[string]bool {
	mode := c.opts.SyscallTracepoints
	if mode == "perf" || runtime.GOARCH != "amd64" {
		return nil
	}
	bad := map[string]bool{}
	nrs := map[string]map[int]bool{"sys_enter": {}, "sys_exit": {}}
	for _, p := range c.res.Prog.Probes {
		var u *clauseUse
		for _, ap := range p.Attach {
			if !touchesSyscalls(ap) {
				continue
			}
			if ap.Target != "syscalls" {
				return nil // a wildcard target: expanded only at run time
			}
			if u == nil {
				uu := useOf(p)
				u = &uu
			}
			names := []string{ap.Func}
			if ap.Wildcard {
				lister := c.res.Opts.Resolver
				if lister == nil {
					return nil
				}
				ms, err := lister.TracepointMatches(ap.Target, ap.Func)
				if err != nil || len(ms) == 0 {
					return nil
				}
				names = names[:0]
				for _, m := range ms {
					names = append(names, m[1])
				}
			}
			// What keeps this clause on perf events (the checker has no
			// common_* fields, which the raw path could not give).
			keep := u.wholeArgs || u.kstack || (ap.Wildcard && u.probe) // probe under a wildcard: cookies
			for _, n := range names {
				nr, raw, ok := SyscallNr(n)
				switch {
				case !ok && strings.HasPrefix(n, "sys_enter"):
					bad["sys_enter"] = true
				case !ok && strings.HasPrefix(n, "sys_exit"):
					bad["sys_exit"] = true
				case !ok:
					return nil
				case keep:
					bad[raw] = true
				default:
					nrs[raw][nr] = true
				}
			}
		}
	}
	lower := map[string]bool{}
	some := false
	for raw, set := range nrs {
		lower[raw] = !bad[raw] && len(set) > 0 && (mode == "raw" || len(set) >= minRawSyscalls)
		some = some || lower[raw]
	}
	// Probing the helpers loads a program per helper (about 1 ms of every
	// start-up): only when something would be lowered.
	if !some || !c.haveSyscallHelpers() {
		return nil
	}
	return lower
}

// haveSyscallHelpers reports whether raw tracepoint programs may call the
// helpers the shim uses (Linux 5.15: bpf_task_pt_regs).
func (c *compiler) haveSyscallHelpers() bool {
	have := c.opts.HaveHelper
	if have == nil {
		have = features.HaveProgramHelper
	}
	for _, fn := range []asm.BuiltinFunc{asm.FnGetCurrentTaskBtf, asm.FnTaskPtRegs} {
		if err := have(ebpf.RawTracepoint, fn); errors.Is(err, ebpf.ErrNotSupported) {
			return false
		}
	}
	return true
}

// expandSyscalls replaces wildcard syscalls tracepoints by their matches
// (canLowerSyscalls checked that they expand).
func (c *compiler) expandSyscalls(aps []*lang.AttachPoint) []*lang.AttachPoint {
	var out []*lang.AttachPoint
	for _, ap := range aps {
		if ap.Provider == lang.ProbeTracepoint && ap.Target == "syscalls" && ap.Wildcard {
			out = append(out, c.expandTracepoints([]*lang.AttachPoint{ap})...)
			continue
		}
		out = append(out, ap)
	}
	return out
}

// syscallDir is "sys_enter" or "sys_exit" for a concrete syscalls
// tracepoint that lowering applies to, else "".
func (c *compiler) syscallDir(ap *lang.AttachPoint) string {
	if ap.Provider != lang.ProbeTracepoint || ap.Target != "syscalls" || ap.Wildcard {
		return ""
	}
	_, raw, ok := SyscallNr(ap.Func)
	if !ok || !c.sysLower[raw] {
		return ""
	}
	return raw
}

// lowerSyscallProgram makes prog, whose attach points are syscalls
// tracepoints of one direction, a raw tracepoint program; it returns the
// system call numbers it filters on.
func (c *compiler) lowerSyscallProgram(prog *Program) []int {
	if len(prog.Attach) == 0 {
		return nil
	}
	dir := c.syscallDir(prog.Attach[0])
	if dir == "" {
		return nil
	}
	var nrs []int
	seen := map[int]bool{}
	for _, ap := range prog.Attach {
		nr, raw, ok := SyscallNr(ap.Func)
		if !ok || raw != dir || c.syscallDir(ap) != dir {
			return nil
		}
		if !seen[nr] {
			seen[nr] = true
			nrs = append(nrs, nr)
		}
	}
	sort.Ints(nrs)
	prog.Type = ebpf.RawTracepoint
	prog.RawSyscall = dir
	return nrs
}

// Saved user registers in x86-64's struct pt_regs (offsets).
const (
	ptRegsR10    = 56
	ptRegsR9     = 64
	ptRegsR8     = 72
	ptRegsDX     = 96
	ptRegsSI     = 104
	ptRegsDI     = 112
	ptRegsOrigAX = 120
	// thread_info is task_struct's first member on x86-64; its status
	// (after flags and syscall_work, since Linux 5.11) has TS_COMPAT.
	threadInfoStatus = 16
	tsCompat         = 0x2
)

// syscallShim emits the start of a lowered program: save the context, find
// the system call number, and leave unless it is one of nrs or the task is
// in a 32-bit (ia32) system call.
//
// sys_enter's context is (struct pt_regs *regs, long id), sys_exit's
// (regs, long ret); the number of an exit is regs->orig_ax. The registers
// and the task's thread_info.status (TS_COMPAT) are read through the BTF
// pointers bpf_get_current_task_btf and bpf_task_pt_regs return: the
// verifier checks those loads against the kernel's own BTF and JITs them
// inline, where bpf_probe_read_kernel costs a call and a copy per read.
// When the clause reads args, the regs pointer and the number are kept in
// stack slots for sysArg.
func (g *gen) syscallShim(nrs []int) error {
	enter := g.prog.RawSyscall == "sys_enter"
	args := useOf(g.probe).args
	if args {
		slots, err := g.allocStack(16)
		if err != nil {
			return err
		}
		g.sysRegs, g.sysNr = slots, slots.plus(8)
	}
	skip := g.label("sys_skip")
	g.emit(asm.StoreMem(asm.R10, ctxSlot, asm.R1, asm.DWord))
	g.usesCtx = true
	// The exit for other system calls comes first: what follows the shim
	// is the clause, which the caller may split to insert code.
	hit := g.label("sys_hit")
	if enter {
		g.emit(asm.LoadMem(asm.R8, asm.R1, 8, asm.DWord))
	} else {
		// r7 = current, r6 = its saved user registers.
		g.emit(asm.FnGetCurrentTaskBtf.Call(),
			asm.Mov.Reg(asm.R7, asm.R0),
			asm.Mov.Reg(asm.R1, asm.R0),
			asm.FnTaskPtRegs.Call(),
			asm.Mov.Reg(asm.R6, asm.R0),
			asm.LoadMem(asm.R8, asm.R6, ptRegsOrigAX, asm.DWord))
	}
	g.nrTree(asm.R8, nrs, hit, skip)
	g.place(skip)
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	g.place(hit)
	if enter {
		g.emit(asm.FnGetCurrentTaskBtf.Call(), asm.Mov.Reg(asm.R7, asm.R0))
	}
	// 32-bit system calls use the ia32 table's numbers; the kernel's
	// syscalls events skip them.
	g.emit(asm.LoadMem(asm.R0, asm.R7, threadInfoStatus, asm.Word),
		asm.JSet.Imm(asm.R0, tsCompat, skip))
	if args {
		if enter {
			g.emit(asm.Mov.Reg(asm.R1, asm.R7), asm.FnTaskPtRegs.Call(),
				asm.StoreMem(asm.R10, int16(g.sysRegs.off), asm.R0, asm.DWord))
		}
		g.emit(asm.StoreMem(asm.R10, int16(g.sysNr.off), asm.R8, asm.DWord))
	}
	return nil
}

// sysArgRegs are the registers holding a system call's arguments, in order
// (x86-64: syscall_get_arguments).
var sysArgRegs = [...]int{ptRegsDI, ptRegsSI, ptRegsDX, ptRegsR10, ptRegsR8, ptRegsR9}

// sysArg emits dst = the field of a syscalls tracepoint's record at off,
// size bytes of it, in a lowered program: __syscall_nr (8) is the number,
// sys_exit's ret (16) the context's second word, sys_enter's argument i
// (16+8i) the register that carries it. The record holds every field as
// the register's whole 8 bytes, so a narrower field is its low bytes (x86
// is little-endian), as the tracepoint's own load reads them.
func (g *gen) sysArg(dst asm.Register, off int, size asm.Size) error {
	switch {
	case off == 8:
		g.emit(asm.LoadMem(dst, asm.R10, int16(g.sysNr.off), size))
	case g.prog.RawSyscall == "sys_exit" && off == 16:
		g.loadCtx(dst)
		g.emit(asm.LoadMem(dst, dst, 8, size))
	case g.prog.RawSyscall == "sys_enter" && off >= 16 && (off-16)%8 == 0 && (off-16)/8 < len(sysArgRegs):
		g.emit(asm.LoadMem(dst, asm.R10, int16(g.sysRegs.off), asm.DWord),
			asm.LoadMem(dst, dst, int16(sysArgRegs[(off-16)/8]), size))
	default:
		return fmt.Errorf("no field at offset %d of a %s record", off, g.prog.RawSyscall)
	}
	return nil
}

// nrTree emits a balanced search over the sorted numbers: a jump to hit
// when r is one of them, to miss otherwise.
func (g *gen) nrTree(r asm.Register, nrs []int, hit, miss string) {
	if len(nrs) <= 3 {
		for _, n := range nrs {
			g.emit(asm.JEq.Imm(r, int32(n), hit))
		}
		g.emit(asm.Ja.Label(miss))
		return
	}
	mid := len(nrs) / 2
	right := g.label("sys_gt")
	g.emit(asm.JGT.Imm(r, int32(nrs[mid-1]), right))
	g.nrTree(r, nrs[:mid], hit, miss)
	g.place(right)
	g.nrTree(r, nrs[mid:], hit, miss)
}
