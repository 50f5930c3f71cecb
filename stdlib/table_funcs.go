package stdlib

import (
	"runtime"
	"strings"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Functions. Each Check validates argument types with bpftrace 0.17's
// message text and returns the result type.

func fixed(t *types.Type) func(Checker, *Call) *types.Type {
	return func(Checker, *Call) *types.Type { return t }
}

// StackModes are the modes kstack/ustack accept as their first argument.
var StackModes = map[string]types.StackMode{
	"bpftrace": types.StackBpftrace, "perf": types.StackPerf, "raw": types.StackRaw,
	"build_id": types.StackBuildID, // ustack only
}

func stackRow(name string, user bool) *Builtin {
	return &Builtin{Name: name, Kind: Func, Sig: name + "([mode][, int limit])", MinArgs: 0, MaxArgs: 2,
		Modes:   stackModes(user),
		Helpers: []string{"bpf_get_stackid"},
		Doc:     "stack trace as a value; mode bpftrace|perf|raw, limit 1..1024 frames",
		Check: func(c Checker, call *Call) *types.Type {
			mode, limit := c.StackMode(), 127
			args := call.Args
			if len(args) > 0 {
				if id, ok := args[0].(*lang.IdentExpr); ok {
					if m, ok := StackModes[id.Name]; ok {
						if m == types.StackBuildID && !user {
							c.Errorf(call.Expr, "'build_id' stack mode can only be used for ustack")
							return types.InvalidType
						}
						mode = m
						args = args[1:]
					}
				}
			}
			if len(args) > 0 {
				if invalid(args[0].Type()) && !isConstLike(args[0]) {
					c.Errorf(call.Expr, "%s() expects a integer literal (none provided)", name)
					return types.InvalidType
				}
				v, ok := c.ConstInt(args[0])
				if !ok {
					c.Errorf(call.Expr, "%s() expects a integer literal (%s provided)", name, KindOfValue(args[0].Type()))
					return types.InvalidType
				}
				if v > 1024 {
					c.Errorf(call.Expr, "%s([int limit]): limit shouldn't exceed 1024, %d given", name, v)
					return types.InvalidType
				}
				if v < 1 {
					c.Errorf(call.Expr, "%s([int limit]): limit should be at least 1, %d given", name, v)
					return types.InvalidType
				}
				limit = int(v)
			}
			return StackType(user, mode, limit)
		}}
}

// stackModes are the modes kstack (bpftrace, perf, raw) or ustack (and
// build_id: the frames as build ID and file offset) take.
func stackModes(bool) []string { return []string{"bpftrace", "perf", "raw", "build_id"} }

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

// Signals signal() accepts by name.
var Signals = map[string]int{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGBUS": 7,
	"SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13,
	"SIGALRM": 14, "SIGTERM": 15, "SIGSTKFLT": 16, "SIGCHLD": 17, "SIGCONT": 18, "SIGSTOP": 19,
	"SIGTSTP": 20, "SIGTTIN": 21, "SIGTTOU": 22, "SIGURG": 23, "SIGXCPU": 24, "SIGXFSZ": 25,
	"SIGVTALRM": 26, "SIGPROF": 27, "SIGWINCH": 28, "SIGIO": 29, "SIGPWR": 30, "SIGSYS": 31,
}

var kprobeOnly = []string{"kprobe"}

var _ = rows(
	stackRow("kstack", false),
	stackRow("ustack", true),
	&Builtin{Name: "printf", Kind: Func, Sig: "printf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "print formatted text",
		Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "printf", 1); return types.NoneType }},
	&Builtin{Name: "errorf", Kind: Func, Sig: "errorf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "print formatted text on stderr as an error at the call's place",
		Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "errorf", 1); return types.NoneType }},
	&Builtin{Name: "warnf", Kind: Func, Sig: "warnf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "print formatted text on stderr as a warning at the call's place (not with --no-warnings)",
		Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "warnf", 1); return types.NoneType }},
	&Builtin{Name: "debugf", Kind: Func, Sig: "debugf(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
		Helpers: []string{"bpf_trace_printk"}, Doc: "formatted text to the kernel's trace pipe (bpf_trace_printk, at most 3 arguments)",
		Check: func(c Checker, call *Call) *types.Type {
			checkFormat(c, call, "debugf", 1)
			if f, ok := c.ConstStr(call.Args[0]); ok && len(ParseFormat(f)) > 3 {
				c.Errorf(call.Expr, "debugf: Cannot use more than 3 conversion specifiers")
				return types.NoneType
			}
			for _, a := range call.Args[1:] {
				if t := a.Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer && t.Kind != types.String {
					c.Errorf(call.Expr, "debugf: only integers, pointers and strings can be printed (%s provided)", KindOfValue(t))
				}
			}
			return types.NoneType
		}},
	&Builtin{Name: "system", Kind: Func, Sig: "system(string fmt, ...)", MinArgs: 1, MaxArgs: -1, Unsafe: true,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "run a shell command (needs --unsafe)",
		Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "system", 1); return types.NoneType }},
	&Builtin{Name: "cat", Kind: Func, Sig: "cat(string fmt, ...)", MinArgs: 1, MaxArgs: -1,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "print a file's contents",
		Check: func(c Checker, call *Call) *types.Type { checkFormat(c, call, "cat", 1); return types.NoneType }},
	&Builtin{Name: "time", Kind: Func, Sig: "time([string fmt])", MinArgs: 0, MaxArgs: 1,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "print the current time (strftime format)",
		Check: func(c Checker, call *Call) *types.Type {
			if len(call.Args) == 1 {
				wantStrLit(c, call, 0)
			}
			return types.NoneType
		}},
	&Builtin{Name: "exit", Kind: Func, Sig: "exit([int code])", MinArgs: 0, MaxArgs: 1,
		Helpers: []string{"bpf_ringbuf_output"}, Doc: "stop tracing (run END, print maps) with an optional exit code",
		Check: func(c Checker, call *Call) *types.Type {
			if len(call.Args) == 1 {
				if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "exit() only supports integer arguments (%s provided)", KindOfValue(t))
				}
			}
			return types.NoneType
		}},
	&Builtin{Name: "str", Kind: Func, Sig: "str(char *s[, int length])", MinArgs: 1, MaxArgs: 2,
		Helpers: []string{"bpf_probe_read_kernel_str", "bpf_probe_read_user_str"},
		Doc:     "NUL-terminated string read from memory (up to STRLEN bytes)",
		Check: func(c Checker, call *Call) *types.Type {
			a := call.Args[0]
			n := c.StrLen()
			if _, ok := a.(*lang.PositionalExpr); !ok {
				t := a.Type()
				if !invalid(t) && !isInt(t) && t.Kind != types.Pointer && t.Kind != types.Array && t.Kind != types.String {
					c.Errorf(call.Expr, "str() expects an integer or a pointer type as first argument (%s provided)", tn(t))
					return types.InvalidType
				}
				if t.Kind == types.String {
					c.Errorf(call.Expr, "str() expects an integer or a pointer type as first argument (%s provided)", tn(t))
					return types.InvalidType
				}
			}
			if len(call.Args) == 2 {
				t := call.Args[1].Type()
				if !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "str() only supports integer arguments (%s provided)", KindOfValue(t))
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
	&Builtin{Name: "buf", Kind: Func, Sig: "buf(void *d[, int length])", MinArgs: 1, MaxArgs: 2,
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
				c.Errorf(call.Expr, "buf() expects a length argument for non-array type %s", KindOfValue(t))
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
				c.Errorf(call.Expr, "buf() only supports integer arguments (%s provided)", KindOfValue(lt))
				return types.InvalidType
			}
			return &types.Type{Kind: types.Buffer, Size: n + 1}
		}},
	&Builtin{Name: "join", Kind: Func, Sig: "join(char *argv[][, string sep])", MinArgs: 1, MaxArgs: 2,
		Helpers: []string{"bpf_probe_read_kernel", "bpf_probe_read_user_str"},
		Doc:     "print a NULL-terminated array of strings joined by sep (default \" \")",
		Check: func(c Checker, call *Call) *types.Type {
			t := call.Args[0].Type()
			if !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
				c.Errorf(call.Expr, "join() expects an integer or pointer argument (%s provided)", KindOfValue(t))
			}
			if len(call.Args) == 2 {
				wantStrLit(c, call, 1)
			}
			return types.NoneType
		}},
	&Builtin{Name: "ksym", Kind: Func, Sig: "ksym(void *p)", MinArgs: 1, MaxArgs: 1,
		Doc: "kernel address printed as its symbol",
		Check: func(c Checker, call *Call) *types.Type {
			if t := call.Args[0].Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
				c.Errorf(call.Expr, "ksym() expects an integer or pointer argument")
				return types.InvalidType
			}
			return &types.Type{Kind: types.Ksym, Size: 8}
		}},
	&Builtin{Name: "usym", Kind: Func, Sig: "usym(void *p)", MinArgs: 1, MaxArgs: 1,
		Helpers: []string{"bpf_get_current_pid_tgid"},
		Doc:     "user address printed as its symbol (with the pid to resolve it)",
		Check: func(c Checker, call *Call) *types.Type {
			if t := call.Args[0].Type(); !invalid(t) && !isInt(t) && t.Kind != types.Pointer {
				c.Errorf(call.Expr, "usym() expects an integer or pointer argument")
				return types.InvalidType
			}
			return &types.Type{Kind: types.Usym, Size: 16}
		}},
	&Builtin{Name: "kaddr", Kind: Func, Sig: "kaddr(string symbol)", MinArgs: 1, MaxArgs: 1,
		Doc:   "address of a kernel symbol (resolved when the script loads)",
		Check: strLitRule(types.U64)},
	&Builtin{Name: "uaddr", Kind: Func, Sig: "uaddr(string symbol)", MinArgs: 1, MaxArgs: 1,
		Probes: []string{"uprobe", "uretprobe", "usdt"},
		Doc:    "address of a symbol in the probed binary",
		Check: func(c Checker, call *Call) *types.Type {
			if !notIn(c, call, "BEGIN", "END", "self", "interval", "profile", "software", "hardware", "tracepoint", "kprobe", "kretprobe") {
				return types.InvalidType
			}
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
	&Builtin{Name: "percpu_kaddr", Kind: Func, Sig: "percpu_kaddr(string symbol[, int cpu])", MinArgs: 1, MaxArgs: 2,
		Helpers: []string{"bpf_per_cpu_ptr", "bpf_this_cpu_ptr"},
		Doc:     "address of a per-CPU kernel variable on this (or the given) CPU",
		Check: func(c Checker, call *Call) *types.Type {
			if _, ok := wantStrLit(c, call, 0); !ok {
				return types.InvalidType
			}
			if len(call.Args) == 2 {
				if t := call.Args[1].Type(); !invalid(t) && !isInt(t) {
					c.Errorf(call.Expr, "percpu_kaddr() only supports integer arguments (%s provided)", KindOfValue(t))
				}
			}
			return types.U64
		}},
	&Builtin{Name: "reg", Kind: Func, Sig: "reg(string name)", MinArgs: 1, MaxArgs: 1,
		Doc: "value of a CPU register at the probe (pt_regs)",
		Check: func(c Checker, call *Call) *types.Type {
			if !notIn(c, call, "BEGIN", "END", "self", "interval", "tracepoint", "kfunc", "kretfunc") {
				return types.InvalidType
			}
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
	&Builtin{Name: "ntop", Kind: Func, Sig: "ntop([int af, ]int|char[4]|char[16] addr)", MinArgs: 1, MaxArgs: 2,
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
					c.Errorf(call.Expr, "ntop() expects an integer address family (%s provided)", KindOfValue(ft))
					return types.InvalidType
				}
			}
			return &types.Type{Kind: types.Inet, Size: 24}
		}},
	&Builtin{Name: "pton", Kind: Func, Sig: "pton(string addr)", MinArgs: 1, MaxArgs: 1,
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
	&Builtin{Name: "macaddr", Kind: Func, Sig: "macaddr(char[6] addr)", MinArgs: 1, MaxArgs: 1,
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
				c.Errorf(call.Expr, "macaddr() only supports array or pointer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			if (t.Kind == types.Array || t.Kind == types.String) && t.Size != 6 {
				c.Errorf(call.Expr, "macaddr() argument must be 6 bytes in size")
				return types.InvalidType
			}
			return &types.Type{Kind: types.MacAddr, Size: 6}
		}},
	&Builtin{Name: "cgroupid", Kind: Func, Sig: "cgroupid(string path)", MinArgs: 1, MaxArgs: 1,
		Doc:   "cgroup id of a cgroupfs path (resolved when the script loads)",
		Check: strLitRule(types.U64)},
	&Builtin{Name: "cgroup_path", Kind: Func, Sig: "cgroup_path(int id[, string filter])", MinArgs: 1, MaxArgs: 2,
		Doc: "cgroup id printed as its path",
		Check: func(c Checker, call *Call) *types.Type {
			if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
				c.Errorf(call.Expr, "cgroup_path() only supports integer arguments (%s provided)", KindOfValue(t))
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
	&Builtin{Name: "strftime", Kind: Func, Sig: "strftime(string fmt, int nsecs)", MinArgs: 2, MaxArgs: 2,
		Doc: "time formatted in userspace (strftime plus %f microseconds)",
		Check: func(c Checker, call *Call) *types.Type {
			if _, ok := wantStrLit(c, call, 0); !ok {
				return types.InvalidType
			}
			if t := call.Args[1].Type(); !invalid(t) && !isInt(t) {
				c.Errorf(call.Expr, "strftime() only supports integer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			return &types.Type{Kind: types.Timestamp, Size: 16}
		}},
	&Builtin{Name: "strerror", Kind: Func, Sig: "strerror(int errno)", MinArgs: 1, MaxArgs: 1,
		Doc: "errno printed as its message",
		Check: func(c Checker, call *Call) *types.Type {
			if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
				c.Errorf(call.Expr, "strerror() only supports integer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			return &types.Type{Kind: types.Strerror, Size: 8}
		}},
	&Builtin{Name: "syscall_name", Kind: Func, Sig: "syscall_name(int nr)", MinArgs: 1, MaxArgs: 1,
		Doc: "name of x86-64 system call nr (\"\" if unknown), as a string",
		Check: func(c Checker, call *Call) *types.Type {
			if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
				c.Errorf(call.Expr, "syscall_name() only supports integer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			return types.StringType(SyscallNameSize)
		}},
	signalRow("signal", "bpf_send_signal", "send a signal to the current process (needs --unsafe)"),
	signalRow("signal_thread", "bpf_send_signal_thread", "send a signal to the current thread (needs --unsafe)"),
	&Builtin{Name: "override", Kind: Func, Sig: "override(int rc)", MinArgs: 1, MaxArgs: 1, Unsafe: true,
		Probes: kprobeOnly, Helpers: []string{"bpf_override_return"},
		Doc: "override the return value of the probed kernel function (needs --unsafe, error-injectable functions)",
		Check: func(c Checker, call *Call) *types.Type {
			for _, p := range c.Providers() {
				if p != "kprobe" {
					c.Errorf(call.Expr, "override can only be used with kprobes.")
					return types.InvalidType
				}
			}
			if t := call.Args[0].Type(); !invalid(t) && !isInt(t) {
				c.Errorf(call.Expr, "override() only supports integer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			return types.NoneType
		}},
	&Builtin{Name: "strncmp", Kind: Func, Sig: "strncmp(string a, string b, int n)", MinArgs: 3, MaxArgs: 3,
		Doc: "compare at most n bytes of two strings (0 when equal)",
		Check: func(c Checker, call *Call) *types.Type {
			for i := 0; i < 2; i++ {
				if t := call.Args[i].Type(); !invalid(t) && t.Kind != types.String {
					c.Errorf(call.Expr, "strncmp() only supports string arguments (%s provided)", KindOfValue(t))
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
	&Builtin{Name: "strcontains", Kind: Func, Sig: "strcontains(string haystack, string needle)", MinArgs: 2, MaxArgs: 2,
		Doc: "whether needle occurs in haystack",
		Check: func(c Checker, call *Call) *types.Type {
			for i := 0; i < 2; i++ {
				if t := call.Args[i].Type(); !invalid(t) && t.Kind == types.Probe && !c.Compat().Legacy() {
					// The probe's name as a string (bpftrace 0.26:
					// strcontains(probe, "f")); read from the probe table.
					call.Args[i].SetType(types.StringType(ProbeNameLen))
				}
				if t := call.Args[i].Type(); !invalid(t) && t.Kind != types.String {
					c.Errorf(call.Expr, "strcontains() only supports string arguments (%s provided)", KindOfValue(t))
					return types.InvalidType
				}
			}
			return types.BoolType
		}},
	&Builtin{Name: "path", Kind: Func, Sig: "path(struct path *p | struct path p)", MinArgs: 1, MaxArgs: 1,
		Probes: []string{"kfunc", "kretfunc", "iter"}, Helpers: []string{"bpf_d_path"},
		Doc: "full path of a struct path (kfunc/iter probes; bpf_d_path)",
		Check: func(c Checker, call *Call) *types.Type {
			if !onlyProbes(c, call, []string{"kfunc", "kretfunc", "iter"}, func(p string) string {
				if c.Compat().Legacy() {
					return "The path function can only be used with 'kfunc', 'kretfunc', 'iter' probes"
				}
				return "path can not be used with \"" + p + "\" probes"
			}) {
				return types.InvalidType
			}
			// A struct path member (file->f_path) stands for its address,
			// as in bpftrace.
			if t := call.Args[0].Type(); !invalid(t) && t.Kind != types.Pointer && !isInt(t) && !(t.Kind == types.Record && t.Name == "struct path") {
				c.Errorf(call.Expr, "path() only supports pointer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			return types.StringType(c.StrLen())
		}},
	&Builtin{Name: "kptr", Kind: Func, Sig: "kptr(T *p)", MinArgs: 1, MaxArgs: 1,
		Doc:   "the same pointer, read from kernel memory",
		Check: func(c Checker, call *Call) *types.Type { return withSpace(c, call, types.AddrKernel) }},
	&Builtin{Name: "uptr", Kind: Func, Sig: "uptr(T *p)", MinArgs: 1, MaxArgs: 1,
		Doc:   "the same pointer, read from user memory",
		Check: func(c Checker, call *Call) *types.Type { return withSpace(c, call, types.AddrUser) }},
	&Builtin{Name: "bswap", Kind: Func, Sig: "bswap(int n)", MinArgs: 1, MaxArgs: 1,
		Doc: "n with its bytes reversed",
		Check: func(c Checker, call *Call) *types.Type {
			t := call.Args[0].Type()
			if invalid(t) {
				return types.InvalidType
			}
			if t.Kind != types.Int {
				c.Errorf(call.Expr, "bswap() only supports integer arguments (%s provided)", KindOfValue(t))
				return types.InvalidType
			}
			return types.IntType(t.Size, false)
		}},
	&Builtin{Name: "sizeof", Kind: Func, Sig: "sizeof(type|expr)", MinArgs: 1, MaxArgs: 1,
		Doc: "size in bytes of a type or expression (a constant)", Check: fixed(types.U64)},
	&Builtin{Name: "offsetof", Kind: Func, Sig: "offsetof(struct T, field[.field...])", MinArgs: 2, MaxArgs: -1,
		Doc: "offset in bytes of a member (a constant)", Check: fixed(types.U64)},
)

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
	c.Errorf(call.Expr, "%s() only supports pointer arguments (%s provided)", call.Name, KindOfValue(t))
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
func signalRow(name, helper, doc string) *Builtin {
	return &Builtin{Name: name, Kind: Func, Sig: name + "(string|int sig)", MinArgs: 1, MaxArgs: 1, Unsafe: true,
		Helpers: []string{helper}, Doc: doc,
		Check: func(c Checker, call *Call) *types.Type {
			if !notIn(c, call, "BEGIN", "END", "self", "interval") {
				return types.InvalidType
			}
			a := call.Args[0]
			if s, ok := c.ConstStr(a); ok {
				name := s
				if !strings.HasPrefix(name, "SIG") {
					name = "SIG" + name
				}
				if _, ok := Signals[name]; !ok {
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
				c.Errorf(call.Expr, "%s() only accepts a string literal or integer (%s provided)", name, KindOfValue(t))
				return types.InvalidType
			}
			return types.NoneType
		}}
}
