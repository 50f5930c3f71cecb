package stdlib

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/printf"
	"github.com/gotrace/gotrace/lang/types"
)

// Builtins bpftrace 0.25 and 0.26 added to their standard library (macros
// there, rows here): is_err, signal_name. Each names the release that added
// it (Since), so --compat 0.17 refuses it by that name.

// MaxErrno is the kernel's MAX_ERRNO: the pointers ERR_PTR(-1) ..
// ERR_PTR(-MAX_ERRNO) are the last 4095 values of the address space.
const MaxErrno = 4095

// SignalNames are strsignal(3)'s descriptions of signals 0..64, as
// bpftrace 0.26's signal_name() gives them (glibc's wording; 32 and 33 are
// the C library's own real-time signals). Any other number is "N/A".
var SignalNames = func() []string {
	s := []string{
		"Unknown signal 0", "Hangup", "Interrupt", "Quit", "Illegal instruction",
		"Trace/breakpoint trap", "Aborted", "Bus error", "Floating point exception",
		"Killed", "User defined signal 1", "Segmentation fault", "User defined signal 2",
		"Broken pipe", "Alarm clock", "Terminated", "Stack fault", "Child exited",
		"Continued", "Stopped (signal)", "Stopped", "Stopped (tty input)",
		"Stopped (tty output)", "Urgent I/O condition", "CPU time limit exceeded",
		"File size limit exceeded", "Virtual timer expired", "Profiling timer expired",
		"Window changed", "I/O possible", "Power failure", "Bad system call",
		"Unknown signal 32", "Unknown signal 33",
	}
	for i := 0; i <= 30; i++ {
		s = append(s, fmt.Sprintf("Real-time signal %d", i))
	}
	return s
}()

// UnknownSignal is signal_name() of a number outside SignalNames.
const UnknownSignal = "N/A"

// SignalName is signal_name(n).
func SignalName(n int64) string {
	if n >= 0 && n < int64(len(SignalNames)) {
		return SignalNames[n]
	}
	return UnknownSignal
}

// SignalNameSize is signal_name()'s string size: the longest description
// and its NUL.
var SignalNameSize = func() int {
	n := len(UnknownSignal)
	for _, s := range SignalNames {
		n = max(n, len(s))
	}
	return n + 1
}()

func v026Rows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "is_err", Gen: genIsErr, Kind: Func, Sig: "is_err(void *ptr)", MinArgs: 1, MaxArgs: 1, Since: "0.26",
			Doc: "true if ptr is an error pointer (the kernel's IS_ERR: one of the last MAX_ERRNO = 4095 addresses, ERR_PTR(-errno))",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
					c.Errorf(call.Expr, "is_err() expects a pointer or integer argument (%s provided)", KindOfValue(t))
					return types.InvalidType
				}
				return types.BoolType
			}},
		&Builtin{Name: "signal_name", Gen: genSignalName, Kind: Func, Sig: "signal_name(int sig)", MinArgs: 1, MaxArgs: 1, Since: "0.26",
			Doc: "description of signal sig as strsignal(3) words it (\"Interrupt\" for 2; \"N/A\" if unknown), as a string",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "signal_name() only supports integer arguments (%s provided)", KindOfValue(t))
					return types.InvalidType
				}
				return types.StringType(SignalNameSize)
			}},
	}
}

// genIsErr: (u64)ptr >= (u64)-MAX_ERRNO.
func genIsErr(g Gen, c *Call) error {
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	yes := g.Label("iserr_yes")
	done := g.Label("iserr_done")
	g.Emit(asm.Mov.Imm(asm.R0, -MaxErrno), // sign-extended: 2^64 - 4095
		asm.JGE.Reg(r, asm.R0, yes),
		asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done))
	g.Place(yes)
	g.Emit(asm.Mov.Imm(asm.R0, 1))
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R0, asm.R0))
	g.Free(r)
	g.SetResult(asm.R0)
	return nil
}

// genSignalName: a constant for a constant number, else a search of the
// table (as syscall_name) writing the description into the zeroed result;
// a number outside it gives "N/A".
func genSignalName(g Gen, c *Call) error {
	if v, ok := intConst(c.Args[0]); ok {
		g.ConstResult(SignalName(v))
		return nil
	}
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	defer g.Free(r)
	g.ResultMem(asm.R1, SignalNameSize, true)
	es := make([]sysEntry, len(SignalNames))
	for i, s := range SignalNames {
		es[i] = sysEntry{i, s}
	}
	done := g.Label("signame_done")
	unknown := g.Label("signame_unknown")
	sysNameTreeElse(g, r, es, done, unknown)
	g.Place(unknown)
	storeName(g, UnknownSignal)
	g.Place(done)
	g.Emit(asm.Mov.Reg(asm.R1, asm.R1))
	return nil
}

// iterCtx is the type of ctx in an iter:NAME clause: a pointer to the
// kernel's struct bpf_iter__NAME (meta, then the object the iterator
// visits: task, task and file, task and vma ...), nil elsewhere.
func iterCtx(c Checker, call *Call) *types.Type {
	if call.Probe == nil {
		return nil
	}
	name := ""
	for _, ap := range call.Probe.Attach {
		if ap.Provider != "iter" {
			return nil
		}
		if name != "" && ap.Func != name {
			c.Errorf(call.Expr, "ctx: iter:%s and iter:%s have different contexts; use one iterator per probe", name, ap.Func)
			return types.InvalidType
		}
		name = ap.Func
	}
	if name == "" {
		return nil
	}
	t, err := c.LookupType("struct bpf_iter__" + name)
	if err != nil || t == nil || t.Kind != types.Record || len(t.Fields) == 0 {
		c.Errorf(call.Expr, "ctx: the kernel's BTF has no struct bpf_iter__%s (iterator %s unknown)", name, name)
		return types.InvalidType
	}
	return types.PointerTo(t, types.AddrKernel)
}

// UnknownComm is comm(pid) of a pid no task has.
const UnknownComm = "[Unknown]"

func checkComm(c Checker, call *Call) *types.Type {
	if len(call.Args) == 1 {
		if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
			c.Errorf(call.Expr, "comm() only supports an integer pid as the argument (%s provided)", KindOfValue(t))
			return types.InvalidType
		}
		task, err := c.LookupType("struct task_struct")
		if err != nil || task == nil || task.Kind != types.Record {
			c.Errorf(call.Expr, "comm(pid) needs the kernel's BTF for struct task_struct")
			return types.InvalidType
		}
		if _, ok := task.Field("comm"); !ok {
			c.Errorf(call.Expr, "comm(pid): struct task_struct has no member comm")
			return types.InvalidType
		}
	}
	return types.StringType(16)
}

// genCommPid is comm(pid) as bpftrace 0.25's stdlib does it: the task of
// pid (in the initial pid namespace) from the kfunc bpf_task_from_pid
// (Linux 6.1), its comm read, the reference dropped with bpf_task_release;
// "[Unknown]" when no task has that pid.
func genCommPid(g Gen, c *Call) error {
	task, err := g.KernelType("struct task_struct")
	if err != nil {
		return err
	}
	comm, ok := task.Field("comm")
	if !ok {
		return fmt.Errorf("struct task_struct has no member comm")
	}
	from, err := g.Kfunc("comm(pid)", "bpf_task_from_pid")
	if err != nil {
		return err
	}
	release, err := g.Kfunc("comm(pid)", "bpf_task_release")
	if err != nil {
		return err
	}
	pid, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	t := g.TempMem(16, true)
	g.Emit(asm.Mov.Reg32(asm.R1, pid), from)
	g.Free(pid)
	ref, err := g.Hold(asm.R0)
	if err != nil {
		return err
	}
	unknown := g.Label("comm_unknown")
	done := g.Label("comm_done")
	g.Emit(asm.JEq.Imm(ref, 0, unknown))
	g.TempAddr(asm.R1, t, 0)
	g.Emit(asm.Mov.Imm(asm.R2, 16), asm.Mov.Reg(asm.R3, ref), asm.Add.Imm(asm.R3, int32(comm.Offset)),
		asm.FnProbeReadKernel.Call(),
		asm.Mov.Reg(asm.R1, ref), release, asm.Ja.Label(done))
	g.Place(unknown)
	g.TempAddr(asm.R1, t, 0)
	storeName(g, UnknownComm)
	g.Place(done)
	g.Emit(asm.Mov.Imm(asm.R0, 0)) // carries the label; R0-R5 are dead here
	g.Free(ref)
	g.SetResultTemp(t)
	return nil
}

func findRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "find", Gen: genFind, Kind: MapFunc, Flags: OutArg, Sig: "find(@map, key, $value)", MinArgs: 3, MaxArgs: 3, Since: "0.25",
			Helpers: []string{"bpf_map_lookup_elem"},
			Doc:     "true and $value = @map[key] if key is in the map, else false ($value untouched)",
			// The checker types find() itself (lang/check/find.go).
			Check: func(Checker, *Call) *types.Type { return types.BoolType }},
	}
}

// printf in an iter probe writes to the iterator's seq file with
// bpf_seq_printf (as bpftrace), which the runtime reads to the end and
// prints; so does `cat` of a pinned iterator. The kernel formats: its
// conversions are %d %i %u %x %X %c %s with the flags 0 + - and space, a
// width and the l/ll length (bpf_bprintf_prepare), at most 12 arguments,
// each passed as a u64 (a string as its address). A clause whose printf
// calls all fit uses the seq file; any other output in the clause (a
// printf the kernel cannot format, print(), time() ...) keeps the whole
// clause on the ring buffer, so its output stays in order.

// seqMaxArgs is MAX_BPRINTF_VARARGS.
const seqMaxArgs = 12

// seqPrintfOK reports whether the kernel can format printf(format, args).
func seqPrintfOK(format string, args []lang.Expr) bool {
	n := 0
	for i := 0; i < len(format); {
		pc, next, err := printf.NextPiece(format, i)
		if err != nil {
			return false
		}
		i = next
		if !pc.Conv {
			continue
		}
		sp := pc.Spec
		if sp.Alt || sp.Prec >= 0 || (sp.Length != "" && sp.Length != "l" && sp.Length != "ll") || n >= len(args) {
			return false
		}
		t := args[n].Type()
		n++
		if t == nil {
			return false
		}
		switch sp.Verb {
		case 's':
			if t.Kind != types.String {
				return false
			}
		case 'd', 'i', 'u', 'x', 'X', 'c':
			if !t.IsInteger() && t.Kind != types.Pointer && t.Kind != types.Bool {
				return false
			}
		default:
			return false
		}
	}
	return n == len(args) && n <= seqMaxArgs
}

// seqClause reports whether every output of clause p goes to the seq file.
func seqClause(p *lang.Probe) bool {
	if p == nil {
		return false
	}
	for _, ap := range p.Attach {
		if ap.Provider != "iter" {
			return false
		}
	}
	ok := true
	lang.Inspect(p, func(n lang.Node) bool {
		call, isCall := n.(*lang.CallExpr)
		if !isCall || !ok {
			return ok
		}
		switch call.Name {
		case "printf":
			f, isLit := litString(call.Args[0])
			ok = isLit && seqPrintfOK(f, call.Args[1:])
		case "print", "time", "cat", "system", "join", "errorf", "warnf", "debugf":
			ok = false
		}
		return ok
	})
	return ok
}

// genSeqPrintf: the arguments as u64s on the stack, then
// bpf_seq_printf(ctx->meta->seq, format, len, data, 8 * nargs).
func genSeqPrintf(g Gen, c *Call, format string) error {
	args := c.Args[1:]
	var data int16
	if len(args) > 0 {
		var err error
		if data, err = g.StackTemp(8 * len(args)); err != nil {
			return err
		}
	}
	for i, a := range args {
		slot := data + int16(8*i)
		if t := a.Type(); t != nil && t.Kind == types.String {
			if err := g.EvalAddr(a, asm.R1); err != nil {
				return err
			}
			g.Emit(asm.StoreMem(asm.R10, slot, asm.R1, asm.DWord))
			continue
		}
		r, err := g.EvalInt(a)
		if err != nil {
			return err
		}
		g.Emit(asm.StoreMem(asm.R10, slot, r, asm.DWord))
		g.Free(r)
	}
	// ctx->meta->seq: both loads keep the verifier's BTF types (the
	// seq_file pointer is a trusted member of bpf_iter_meta).
	g.LoadCtx(asm.R1)
	g.Emit(asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord), asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord))
	g.RodataAddr(asm.R2, format)
	g.Emit(asm.Mov.Imm(asm.R3, int32(len(format)+1)))
	if len(args) > 0 {
		g.Emit(asm.Mov.Reg(asm.R4, asm.R10), asm.Add.Imm(asm.R4, int32(data)), asm.Mov.Imm(asm.R5, int32(8*len(args))))
	} else {
		g.Emit(asm.Mov.Imm(asm.R4, 0), asm.Mov.Imm(asm.R5, 0))
	}
	g.Emit(asm.FnSeqPrintf.Call())
	return nil
}

// genIterPath is path(ctx->OBJ->MEMBER) in an iter probe
// (iter:task_file's path(ctx->file->f_path)): the object pointer loaded
// straight from the context, so the verifier keeps it as the kernel's
// (bpf_d_path takes no other), NULL-checked (an empty path), then the
// member's address. ok is false for any other argument.
func genIterPath(g Gen, c *Call, size int) (ok bool, err error) {
	if g.AttachPoint().Provider != "iter" {
		return false, nil
	}
	outer, isField := c.Args[0].(*lang.FieldExpr)
	if !isField || !outer.Arrow {
		return false, nil
	}
	inner, isField := outer.X.(*lang.FieldExpr)
	if !isField || !inner.Arrow {
		return false, nil
	}
	if b, isB := inner.X.(*lang.BuiltinExpr); !isB || b.Name != "ctx" {
		return false, nil
	}
	tmp := g.TempMem(size, true)
	empty := g.Label("iterpath_null")
	g.LoadCtx(asm.R1)
	g.Emit(asm.LoadMem(asm.R1, asm.R1, int16(inner.Offset), asm.DWord), asm.JEq.Imm(asm.R1, 0, empty))
	if outer.Offset != 0 {
		g.Emit(asm.Add.Imm(asm.R1, int32(outer.Offset)))
	}
	g.TempAddr(asm.R2, tmp, 0)
	g.Emit(asm.Mov.Imm(asm.R3, int32(size)), asm.FnDPath.Call())
	g.Place(empty)
	g.Emit(asm.Mov.Imm(asm.R0, 0))
	g.SetResultTemp(tmp)
	return true, nil
}

func genFind(g Gen, c *Call) error { return g.MapCall(c) }
