package stdlib

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/printf"
	"github.com/gotrace/gotrace/lang/types"
)

// Functions. Each Check validates argument types with bpftrace 0.17's
// message text and returns the result type.

func fixed(t *types.Type) func(Checker, *Call) *types.Type {
	return func(Checker, *Call) *types.Type { return t }
}

func isConstLike(e lang.Expr) bool {
	switch e.(type) {
	case *lang.IntLit, *lang.PositionalExpr:
		return true
	}
	return false
}

// Registers each architecture's reg() accepts (pt_regs member names as
// bpftrace spells them), in struct pt_regs order: x86-64's pt_regs and
// arm64's user_pt_regs (regs[0..30], sp, pc, pstate) are arrays of 8-byte
// members, so a register's offset is 8 times its index (RegOffset).
var Registers = map[string][]string{
	"amd64": {"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx",
		"si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss"},
	"arm64": {"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13",
		"r14", "r15", "r16", "r17", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26",
		"r27", "r28", "r29", "r30", "sp", "pc", "pstate"},
}

var archNames = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}

// Signals signal() accepts by name (built at the first use).
var Signals = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGBUS": 7,
		"SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13,
		"SIGALRM": 14, "SIGTERM": 15, "SIGSTKFLT": 16, "SIGCHLD": 17, "SIGCONT": 18, "SIGSTOP": 19,
		"SIGTSTP": 20, "SIGTTIN": 21, "SIGTTOU": 22, "SIGURG": 23, "SIGXCPU": 24, "SIGXFSZ": 25,
		"SIGVTALRM": 26, "SIGPROF": 27, "SIGWINCH": 28, "SIGIO": 29, "SIGPWR": 30, "SIGSYS": 31,
	}
})

var kprobeOnly = []lang.ProbeKind{lang.ProbeKprobe}

func funcRows() []*Builtin {
	return []*Builtin{
		&Builtin{Name: "printf", Gen: genFormatEvent(EvPrintf), Kind: Func, Flags: LongStrArgs, Sig: "printf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "print formatted text",
			Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "printf", 1); return types.NoneType }},
		&Builtin{Name: "errorf", Gen: genFormatEvent(EvErrorf), Kind: Func, Sig: "errorf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "print formatted text on stderr as an error at the call's place",
			Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "errorf", 1); return types.NoneType }},
		&Builtin{Name: "warnf", Gen: genFormatEvent(EvWarnf), Kind: Func, Sig: "warnf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "print formatted text on stderr as a warning at the call's place (not with --no-warnings)",
			Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "warnf", 1); return types.NoneType }},
		&Builtin{Name: "debugf", Gen: genDebugf, Kind: Func, Flags: LongStrArgs, Sig: "debugf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
			Helpers: []string{"bpf_trace_printk"}, Doc: "formatted text to the kernel's trace pipe (bpf_trace_printk, at most 3 arguments)",
			Check: func(c Checker, call *Call) *types.Type {
				checkFormat(c, call, "debugf", 1)
				if f, ok := c.ConstStr(call.Args[0]); ok && len(ParseFormat(f)) > 3 {
					c.Errorf(call.Expr, "debugf: Cannot use more than 3 conversion specifiers")
					return types.NoneType
				}
				for _, a := range call.Args[1:] {
					if t := a.Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer && t.Kind != types.String {
						c.Errorf(call.Expr, "debugf: only integers, pointers and strings can be printed (%s provided)", types.KindWord(t, types.AsArg))
					}
				}
				return types.NoneType
			}},
		&Builtin{Name: "system", Gen: genFormatEvent(EvSystem), Kind: Func, Flags: LongStrArgs, Sig: "system(string fmt, ...)", MinArgs: 1, MaxArgs: -1, Unsafe: true,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "run a shell command (needs --unsafe)",
			Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "system", 1); return types.NoneType }},
		&Builtin{Name: "cat", Gen: genFormatEvent(EvCat), Kind: Func, Flags: LongStrArgs, Sig: "cat(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "print a file's contents",
			Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "cat", 1); return types.NoneType }},
		&Builtin{Name: "time", Gen: genTime, Kind: Func, Sig: "time([string fmt])", MinArgs: 0, MaxArgs: 1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "print the current time (strftime format)",
			Check: func(c Checker, call *Call) *types.Type {
				if len(call.Args) == 1 {
					wantStrLit(c, call, 0)
				}
				return types.NoneType
			}},
		&Builtin{Name: "exit", Gen: genExit, Kind: Func, Sig: "exit([int code])", MinArgs: 0, MaxArgs: 1,
			Helpers: []string{"bpf_ringbuf_output"}, Doc: "stop tracing (run END, print maps) with an optional exit code",
			Check: func(c Checker, call *Call) *types.Type {
				if len(call.Args) == 1 {
					if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
						c.Errorf(call.Expr, "exit() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					}
				}
				return types.NoneType
			}},
		&Builtin{Name: "str", Gen: genStr, Kind: Func, Flags: StrOfParam, Sig: "str(char *s[, int length])", MinArgs: 1, MaxArgs: 2,
			Helpers: []string{"bpf_probe_read_kernel_str", "bpf_probe_read_user_str"},
			Doc:     "NUL-terminated string read from memory (up to STRLEN bytes)",
			Check: func(c Checker, call *Call) *types.Type {
				a := call.Args[0]
				n := c.StrLen()
				if _, ok := a.(*lang.PositionalExpr); !ok {
					t := a.Type()
					if !invalid(t) && !isInt(t) && t.Kind != types.Pointer && t.Kind != types.Array && t.Kind != types.String {
						c.Errorf(call.Expr, "str() expects an integer or a pointer type as first argument (%s provided)", TypeName(t))
						return types.InvalidType
					}
					if t.Kind == types.String {
						c.Errorf(call.Expr, "str() expects an integer or a pointer type as first argument (%s provided)", TypeName(t))
						return types.InvalidType
					}
				}
				if len(call.Args) == 2 {
					t := call.Args[1].Type()
					if !invalid(t) && !isInt(t) {
						c.Errorf(call.Expr, "str() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
						return types.InvalidType
					}
					if v, ok := c.ConstInt(call.Args[1]); ok {
						if v < 0 {
							c.Errorf(call.Expr, "str() length must be non-negative (%d provided)", v)
							return types.InvalidType
						}
						if int(v)+1 < n {
							n = int(v) + 1
						}
					}
				}
				t := types.StringType(n)
				if _, pos := a.(*lang.PositionalExpr); len(call.Args) == 1 && !pos && c.Compat().StrTruncTrailer() {
					t.Trunc = true
				}
				return t
			}},
		&Builtin{Name: "ksym", Gen: genIdentity, Kind: Func, Sig: "ksym(void *p)", MinArgs: 1, MaxArgs: 1,
			Doc: "kernel address printed as its symbol",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
					c.Errorf(call.Expr, "ksym() expects an integer or pointer argument")
					return types.InvalidType
				}
				return &types.Type{Kind: types.Ksym, Size: 8}
			}},
		&Builtin{Name: "usym", Gen: genUsym, Kind: Func, Sig: "usym(void *p)", MinArgs: 1, MaxArgs: 1,
			Helpers: []string{"bpf_get_current_pid_tgid"},
			Doc:     "user address printed as its symbol (with the pid to resolve it)",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
					c.Errorf(call.Expr, "usym() expects an integer or pointer argument")
					return types.InvalidType
				}
				return &types.Type{Kind: types.Usym, Size: 16}
			}},
		&Builtin{Name: "reg", Gen: genReg, Kind: Func, Sig: "reg(string name)", MinArgs: 1, MaxArgs: 1,
			Doc:       "value of a CPU register at the probe (pt_regs)",
			NotProbes: []lang.ProbeKind{lang.ProbeBegin, lang.ProbeEnd, lang.ProbeSelf, lang.ProbeInterval, lang.ProbeTracepoint, lang.ProbeKfunc, lang.ProbeKretfunc},
			Check: func(c Checker, call *Call) *types.Type {
				name, ok := wantStrLit(c, call, 0)
				if !ok {
					return types.InvalidType
				}
				found := false
				for _, r := range Registers[runtime.GOARCH] {
					if r == name {
						found = true
					}
				}
				if !found {
					arch := archNames[runtime.GOARCH]
					if arch == "" {
						arch = runtime.GOARCH
					}
					c.Errorf(call.Expr, "'%s' is not a valid register on this architecture (%s)", name, arch)
					return types.InvalidType
				}
				return types.U64
			}},
		&Builtin{Name: "cgroup_path", Gen: genIdentity, Kind: Func, Sig: "cgroup_path(int id[, string filter])", MinArgs: 1, MaxArgs: 2,
			Doc: "cgroup id printed as its path",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "cgroup_path() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				// The id is the value (compiler/ABI.md: Size bytes); the filter,
				// a constant, travels in the type's Name for the printer.
				t := &types.Type{Kind: types.CgroupPath, Size: 8}
				if len(call.Args) == 2 {
					f, ok := wantStrLit(c, call, 1)
					if !ok {
						return types.InvalidType
					}
					t.Name = f
				}
				return t
			}},
		&Builtin{Name: "strerror", Gen: genIdentity, Kind: Func, Sig: "strerror(int errno)", MinArgs: 1, MaxArgs: 1,
			Doc: "errno printed as its message",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "strerror() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return &types.Type{Kind: types.Strerror, Size: 8}
			}},
		&Builtin{Name: "syscall_name", Gen: genSyscallName, Kind: Func, Sig: "syscall_name(int nr)", MinArgs: 1, MaxArgs: 1,
			Doc: "name of x86-64 system call nr (\"\" if unknown), as a string",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "syscall_name() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return types.StringType(SyscallNameSize())
			}},
		signalRow("signal", asm.FnSendSignal, "bpf_send_signal", "send a signal to the current process (needs --unsafe)"),
		&Builtin{Name: "is_err", Gen: genIsErr, Kind: Func, Sig: "is_err(void *ptr)", MinArgs: 1, MaxArgs: 1, Since: "0.26",
			Doc: "true if ptr is an error pointer (the kernel's IS_ERR: one of the last MAX_ERRNO = 4095 addresses, ERR_PTR(-errno))",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
					c.Errorf(call.Expr, "is_err() expects a pointer or integer argument (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return types.BoolType
			}},
		&Builtin{Name: "signal_name", Gen: genSignalName, Kind: Func, Sig: "signal_name(int sig)", MinArgs: 1, MaxArgs: 1, Since: "0.26",
			Doc: "description of signal sig as strsignal(3) words it (\"Interrupt\" for 2; \"N/A\" if unknown), as a string",
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "signal_name() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return types.StringType(SignalNameSize())
			}},
		signalRow("signal_thread", asm.FnSendSignalThread, "bpf_send_signal_thread", "send a signal to the current thread (needs --unsafe)"),
		&Builtin{Name: "override", Gen: genOverride, Kind: Func, Sig: "override(int rc)", MinArgs: 1, MaxArgs: 1, Unsafe: true,
			Probes: kprobeOnly, Helpers: []string{"bpf_override_return"},
			Doc:        "override the return value of the probed kernel function (needs --unsafe, error-injectable functions)",
			ProbeError: func(Checker, *Call, string) string { return "override can only be used with kprobes." },
			Check: func(c Checker, call *Call) *types.Type {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "override() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return types.NoneType
			}},
		&Builtin{Name: "kptr", Gen: genIdentity, Kind: Func, Sig: "kptr(T *p)", MinArgs: 1, MaxArgs: 1,
			Doc:   "the same pointer, read from kernel memory",
			Check: func(c Checker, call *Call) *types.Type { return withSpace(c, call, types.AddrKernel) }},
		&Builtin{Name: "uptr", Gen: genIdentity, Kind: Func, Sig: "uptr(T *p)", MinArgs: 1, MaxArgs: 1,
			Doc:   "the same pointer, read from user memory",
			Check: func(c Checker, call *Call) *types.Type { return withSpace(c, call, types.AddrUser) }},
		&Builtin{Name: "bswap", Gen: genBswap, Kind: Func, Sig: "bswap(int n)", MinArgs: 1, MaxArgs: 1,
			Doc: "n with its bytes reversed",
			Check: func(c Checker, call *Call) *types.Type {
				t := call.Args[0].Type()
				if invalid(t) {
					return types.InvalidType
				}
				if t.Kind != types.Int {
					c.Errorf(call.Expr, "bswap() only supports integer arguments (%s provided)", types.KindWord(t, types.AsArg))
					return types.InvalidType
				}
				return types.IntType(t.Size, false)
			}},
		&Builtin{Name: "sizeof", Folded: "a constant: the checker computes it (lang.SizeofExpr.Val)", Kind: Func, Sig: "sizeof(type|expr)", MinArgs: 1, MaxArgs: 1,
			Doc: "size in bytes of a type or expression (a constant)", Check: fixed(types.U64)},
		&Builtin{Name: "offsetof", Folded: "a constant: the checker computes it (lang.OffsetofExpr.Val)", Kind: Func, Sig: "offsetof(struct T, field[.field...])", MinArgs: 2, MaxArgs: -1,
			Doc: "offset in bytes of a member (a constant)", Check: fixed(types.U64)},
	}
}

func withSpace(c Checker, call *Call, sp types.AddrSpace) *types.Type {
	t := call.Args[0].Type()
	if invalid(t) {
		return types.InvalidType
	}
	if t.Kind == types.Pointer {
		cp := *t
		cp.Space = sp
		return &cp
	}
	if isInt(t) {
		cp := *t
		return &cp
	}
	c.Errorf(call.Expr, "%s() only supports pointer arguments (%s provided)", call.Name, types.KindWord(t, types.AsArg))
	return types.InvalidType
}

// strLitRule is the type rule of a builtin whose one argument is a string
// literal resolved when the script loads (kaddr, cgroupid ...).
func strLitRule(result *types.Type) func(Checker, *Call) *types.Type {
	return func(c Checker, call *Call) *types.Type {
		if _, ok := wantStrLit(c, call, 0); !ok {
			return types.InvalidType
		}
		return result
	}
}

// signalRow is signal() or signal_thread() (bpftrace 0.26: to the current
// thread).
func signalRow(name string, fn asm.BuiltinFunc, helper, doc string) *Builtin {
	return &Builtin{Name: name, Gen: genSignal(fn), Kind: Func, Sig: name + "(string|int sig)", MinArgs: 1, MaxArgs: 1, Unsafe: true,
		Helpers: []string{helper}, Doc: doc,
		NotProbes: []lang.ProbeKind{lang.ProbeBegin, lang.ProbeEnd, lang.ProbeSelf, lang.ProbeInterval},
		Check: func(c Checker, call *Call) *types.Type {
			a := call.Args[0]
			if s, ok := c.ConstStr(a); ok {
				name := s
				if !strings.HasPrefix(name, "SIG") {
					name = "SIG" + name
				}
				if _, ok := Signals()[name]; !ok {
					c.Errorf(call.Expr, "%s is not a valid signal", s)
					return types.InvalidType
				}
				return types.NoneType
			}
			if v, ok := c.ConstInt(a); ok {
				if v < 1 || v > 64 {
					c.Errorf(call.Expr, "%d is not a valid signal, allowed range: [1,64]", v)
					return types.InvalidType
				}
				return types.NoneType
			}
			if t := a.Type(); !invalid(t) && !isInt(t) {
				c.Errorf(call.Expr, "%s() only accepts a string literal or integer (%s provided)", name, types.KindWord(t, types.AsArg))
				return types.InvalidType
			}
			return types.NoneType
		}}
}

// Code generation of the functions. Output-side functions (printf, print,
// time, cat, system, exit ...) become ring-buffer records; the format
// strings stay in Spec.Events.

// genMapCall is a function of a map (delete, clear, zero, has_key, find):
// the compiler's map code emits op.
func genMapCall(op MapOp) GenFunc {
	return func(g Gen, c *Call) error { return g.MapCall(c, op) }
}

func genSignal(fn asm.BuiltinFunc) GenFunc {
	return func(g Gen, c *Call) error {
		v, ok := intConst(c.Args[0])
		if !ok {
			s, isStr := lang.ConstStrOf(c.Args[0])
			if !isStr {
				return fmt.Errorf("signal() needs a constant signal")
			}
			n, known := Signals()[s]
			if !known {
				return fmt.Errorf("unknown signal %q", s)
			}
			v = int64(n)
		}
		g.Emit(asm.Mov.Imm(asm.R1, int32(v)), fn.Call())
		return nil
	}
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

// intConst is the value of a constant integer argument, as the checker
// folded it.
func intConst(e lang.Expr) (int64, bool) { return lang.ConstOf(e) }

func genFormatEvent(kind EventKind) GenFunc {
	return func(g Gen, c *Call) error {
		format, ok := lang.ConstStrOf(c.Args[0])
		if !ok {
			return fmt.Errorf("%s() format must be a string literal", c.Name)
		}
		if kind == EvPrintf && g.AttachPoint().Provider == lang.ProbeIter && seqClause(c.Probe) {
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
	if s, ok := lang.ConstStrOf(c.Args[0]); ok {
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

func genTime(g Gen, c *Call) error {
	format := "%H:%M:%S\n"
	if len(c.Args) == 1 {
		s, ok := lang.ConstStrOf(c.Args[0])
		if !ok {
			return fmt.Errorf("time() format must be a string literal")
		}
		format = s
	}
	_, err := g.Event(EvTime, format, "", nil)
	return err
}

func genExit(g Gen, c *Call) error {
	// The payload carries the exit code when one is given.
	if _, err := g.Event(EvExit, "", "", c.Args); err != nil {
		return err
	}
	g.Return()
	return nil
}

func genPrint(g Gen, c *Call) error {
	if len(c.Args) > 0 {
		if _, ok := c.Args[0].(*lang.MapExpr); ok && len(c.Args[0].(*lang.MapExpr).Keys) == 0 {
			return g.MapCall(c, MapPrint)
		}
	}
	_, err := g.Event(EvPrintNonMap, "", "", c.Args)
	return err
}

func genUsym(g Gen, c *Call) error {
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

func genBswap(g Gen, c *Call) error {
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

func genOverride(g Gen, c *Call) error {
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	g.LoadCtx(asm.R1)
	g.Emit(asm.Mov.Reg(asm.R2, r), asm.FnOverrideReturn.Call())
	g.Free(r)
	return nil
}

func genReg(g Gen, c *Call) error {
	name, ok := lang.ConstStrOf(c.Args[0])
	off, known := RegOffset(runtime.GOARCH, name)
	if !ok || !known {
		return fmt.Errorf("reg(): unknown register %q", name)
	}
	g.LoadCtx(asm.R1)
	g.Emit(asm.LoadMem(asm.R0, asm.R1, off, asm.DWord))
	g.SetResult(asm.R0)
	return nil
}

// genDebugf calls bpf_trace_printk(fmt, len, a1, a2, a3), as bpftrace
// 0.17's debugf(): the text goes to the kernel's trace pipe
// (/sys/kernel/tracing/trace_pipe), not to gotrace's output. Integers and
// pointers are passed as values, strings by address.
func genDebugf(g Gen, c *Call) error {
	format, ok := lang.ConstStrOf(c.Args[0])
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

// syscall_name(nr): the name of an x86-64 system call (bpftrace 0.26's
// stdlib), a string the program builds itself: a constant for a constant
// number, else a binary search over the syscall table that writes the
// name into the zeroed result. A number the table lacks gives "".

// SyscallNameSize is syscall_name()'s string size: the longest name and
// its NUL.
var SyscallNameSize = sync.OnceValue(func() int {
	n := 0
	for name := range SysnrAMD64() {
		n = max(n, len(name))
	}
	return n + 1
})

type sysEntry struct {
	nr   int
	name string
}

// sysByNr is the table in number order (one name per number).
var sysByNr = sync.OnceValue(func() []sysEntry {
	seen := map[int]string{}
	for name, nr := range SysnrAMD64() {
		if old, ok := seen[nr]; !ok || name < old {
			seen[nr] = name
		}
	}
	es := make([]sysEntry, 0, len(seen))
	for nr, name := range seen {
		es = append(es, sysEntry{nr, name})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].nr < es[j].nr })
	return es
})

// SyscallName is the name of system call nr, "" if the table lacks it.
func SyscallName(nr int64) string {
	es := sysByNr()
	i := sort.Search(len(es), func(i int) bool { return int64(es[i].nr) >= nr })
	if i < len(es) && int64(es[i].nr) == nr {
		return es[i].name
	}
	return ""
}

func genSyscallName(g Gen, c *Call) error {
	if v, ok := intConst(c.Args[0]); ok {
		g.ConstResult(SyscallName(v))
		return nil
	}
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	defer g.Free(r)
	g.ResultMem(asm.R1, SyscallNameSize(), true)
	done := g.Label("sysname_done")
	sysNameTree(g, r, sysByNr(), done)
	g.Place(done)
	// A no-op to carry the done label when nothing follows it.
	g.Emit(asm.Mov.Reg(asm.R1, asm.R1))
	return nil
}

// sysNameTree emits the search of es (in number order) for the value of r:
// halves by comparison down to a few entries, each compared for equality;
// a match stores its name at R1 and jumps to done, no match jumps to done.
// r is compared unsigned, so a negative number matches nothing.
func sysNameTree(g Gen, r asm.Register, es []sysEntry, done string) {
	sysNameTreeElse(g, r, es, done, done)
}

// sysNameTreeElse is sysNameTree jumping to miss when nothing matches.
func sysNameTreeElse(g Gen, r asm.Register, es []sysEntry, done, miss string) {
	if len(es) <= 4 {
		for _, e := range es {
			next := g.Label("sysname_next")
			g.Emit(asm.JNE.Imm(r, int32(e.nr), next))
			storeName(g, e.name)
			g.Emit(asm.Ja.Label(done))
			g.Place(next)
		}
		g.Emit(asm.Ja.Label(miss))
		return
	}
	mid := len(es) / 2
	hi := g.Label("sysname_hi")
	g.Emit(asm.JGE.Imm(r, int32(es[mid].nr), hi))
	sysNameTreeElse(g, r, es[:mid], done, miss)
	g.Place(hi)
	sysNameTreeElse(g, r, es[mid:], done, miss)
}

// storeName writes name's bytes at R1 (already zeroed) four at a time.
func storeName(g Gen, name string) {
	b := make([]byte, (len(name)+3)/4*4)
	copy(b, name)
	for off := 0; off < len(b); off += 4 {
		w := binary.LittleEndian.Uint32(b[off:])
		g.Emit(StImm(asm.R1, int16(off), int64(int32(w)), asm.Word))
	}
}

// MaxErrno is the kernel's MAX_ERRNO: the pointers ERR_PTR(-1) ..
// ERR_PTR(-MAX_ERRNO) are the last 4095 values of the address space.
const MaxErrno = 4095

// SignalNames are strsignal(3)'s descriptions of signals 0..64, as
// bpftrace 0.26's signal_name() gives them (glibc's wording; 32 and 33 are
// the C library's own real-time signals). Any other number is "N/A".
var SignalNames = sync.OnceValue(func() []string {
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
})

// UnknownSignal is signal_name() of a number outside SignalNames.
const UnknownSignal = "N/A"

// SignalName is signal_name(n).
func SignalName(n int64) string {
	if names := SignalNames(); n >= 0 && n < int64(len(names)) {
		return names[n]
	}
	return UnknownSignal
}

// SignalNameSize is signal_name()'s string size: the longest description
// and its NUL.
var SignalNameSize = sync.OnceValue(func() int {
	n := len(UnknownSignal)
	for _, s := range SignalNames() {
		n = max(n, len(s))
	}
	return n + 1
})

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
	g.ResultMem(asm.R1, SignalNameSize(), true)
	es := make([]sysEntry, len(SignalNames()))
	for i, s := range SignalNames() {
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
		if ap.Provider != lang.ProbeIter {
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
			f, isLit := lang.ConstStrOf(call.Args[0])
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
	if g.AttachPoint().Provider != lang.ProbeIter {
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
