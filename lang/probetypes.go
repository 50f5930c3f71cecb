package lang

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ProbeKind is a probe type: the provider part of an attach point, after
// its alias (k, t, fentry, begin ...) is resolved. Its row in ProbeTypes
// says everything the checker, the compiler and the runtime treat alike
// for it; the runtime registers its provider against it.
type ProbeKind uint8

// The probe types, in ProbeTypes order. ProbeNone is an attach point not
// parsed yet (its text holds positional parameters).
const (
	ProbeNone ProbeKind = iota
	ProbeBegin
	ProbeEnd
	ProbeTracepoint
	ProbeRawTracepoint
	ProbeKprobe
	ProbeKretprobe
	ProbeUprobe
	ProbeUretprobe
	ProbeUSDT
	ProbeKfunc
	ProbeKretfunc
	ProbeProfile
	ProbeInterval
	ProbeSoftware
	ProbeHardware
	ProbeWatchpoint
	ProbeAsyncWatchpoint
	ProbeIter
	ProbeBench
	ProbeTest
	ProbeSelf
	numProbeKinds
)

// String is the kind's canonical name (bpftrace 0.17's spelling, what
// `probe` prints): "kprobe", "kfunc", "BEGIN".
func (k ProbeKind) String() string {
	if k == ProbeNone || k >= numProbeKinds {
		return ""
	}
	return probeTypes[k].Name
}

// Type is the kind's row.
func (k ProbeKind) Type() *ProbeType {
	if k >= numProbeKinds {
		return &probeTypes[ProbeNone]
	}
	return &probeTypes[k]
}

// ProgType is the BPF program type a probe type compiles to (the compiler
// maps it to the kernel's constant).
type ProgType uint8

const (
	ProgNone          ProgType = iota
	ProgRawTracepoint          // BPF_PROG_TYPE_RAW_TRACEPOINT
	ProgTracepoint             // BPF_PROG_TYPE_TRACEPOINT
	ProgKprobe                 // BPF_PROG_TYPE_KPROBE (kprobes, uprobes, USDT)
	ProgTracing                // BPF_PROG_TYPE_TRACING (fentry, fexit, iterators)
	ProgPerfEvent              // BPF_PROG_TYPE_PERF_EVENT
)

// AttachKind is the expected attach type of a BPF_PROG_TYPE_TRACING program.
type AttachKind uint8

const (
	AttachNone   AttachKind = iota
	AttachFEntry            // BPF_TRACE_FENTRY
	AttachFExit             // BPF_TRACE_FEXIT
	AttachIter              // BPF_TRACE_ITER
)

// Context is what a program's context pointer points to.
type Context uint8

const (
	CtxNone       Context = iota // nothing meaningful (run by the tracer with BPF_PROG_TEST_RUN)
	CtxPtRegs                    // struct pt_regs
	CtxTracepoint                // the tracepoint's record (its format file)
	CtxU64Array                  // an array of u64 arguments (raw tracepoints, fentry/fexit, iterators)
	CtxPerfEvent                 // struct bpf_perf_event_data
)

// ArgsFrom is where `args` gets its type, or ArgsNone where it is refused.
type ArgsFrom uint8

const (
	ArgsNone          ArgsFrom = iota
	ArgsFormat                 // the tracepoint's format file
	ArgsRawTracepoint          // the raw tracepoint's BTF prototype
	ArgsBTF                    // the function's BTF prototype
	ArgsDWARF                  // the function's DWARF parameters
)

// ArgNFrom is where arg0..argN are read, or ArgNNone where they are refused.
type ArgNFrom uint8

const (
	ArgNNone  ArgNFrom = iota
	ArgNRegs           // the argument registers of pt_regs
	ArgNArray          // the context's u64 array
	ArgNUSDT           // the probe's USDT argument specifications
)

// RetvalFrom is where `retval` is read, or RetvalNone where it is refused.
type RetvalFrom uint8

const (
	RetvalNone  RetvalFrom = iota
	RetvalRegs             // the return register of pt_regs
	RetvalArray            // the context's u64 array after the arguments (fexit)
)

// FuncFrom is how `func` is found, or FuncNone where it is refused.
type FuncFrom uint8

const (
	FuncNone   FuncFrom = iota
	FuncIP              // the kernel instruction pointer of pt_regs
	FuncHelper          // bpf_get_func_ip
	FuncUser            // the user instruction pointer, symbolized in the process
)

// Trigger is what runs a probe type's programs.
type Trigger uint8

const (
	TriggerAttach Trigger = iota // a kernel hook: a runtime provider attaches it
	TriggerBegin                 // the tracer, once before anything attaches
	TriggerEnd                   // the tracer, once at exit
	TriggerSignal                // the tracer, when it receives the signal
	TriggerBench                 // the tracer, repeatedly, with --mode bench
	TriggerTest                  // the tracer, once per test, with --mode test
)

// ProbeType is one probe type's row: bpftrace's probe_types.h and ply's
// provider table in one place.
type ProbeType struct {
	Kind ProbeKind
	// Name is the canonical spelling (ProbeKind.String); Aliases are the
	// other spellings the parser accepts (abbreviations, bpftrace 0.24's
	// begin/end, fentry/fexit). Spellings are case-insensitive when no
	// spelling matches exactly (bpftrace 0.24), as `U` and `u` differ.
	Name    string
	Aliases []string
	// Probetype is bpftrace 0.26's name for it (`probetype`, listings):
	// "special" for BEGIN/END/self, "fentry"/"fexit" for kfunc/kretfunc.
	Probetype string
	// parse fills the attach point's fields from the parts after the
	// provider (see AttachPoint).
	parse func(p *apParser) error

	Prog    ProgType
	Attach  AttachKind
	Abbrev  string // in program names: c0_kp, c1_tp
	Context Context
	// UserMem: pointers of no known address space read user memory.
	UserMem bool
	// Where `args`, arg0..argN, `retval` and `func` come from; None
	// where they are refused (the builtin rows' Probes list the same
	// kinds: stdlib's TestRowsAgreeWithProbeTable).
	Args   ArgsFrom
	ArgN   ArgNFrom
	Retval RetvalFrom
	Func   FuncFrom

	Trigger Trigger
	// ReverseAttach: the kernel hook runs the handler attached last
	// first, so bpftrace 0.17 attaches in reverse script order.
	ReverseAttach bool
	// StopSwitch: probes that detach slowly (handed to the reaper) get
	// the stop prologue, so they go quiet at once: always, or only for
	// wildcard attach points (StopWildcard).
	StopSwitch, StopWildcard bool
	// Cookie: wildcard attach points read `probe` from the attach cookie
	// (the provider attaches with cookies).
	Cookie bool
	// Listed: `-l -e PROG` looks the attach point up in the live
	// system's listing (the others are printed as written).
	Listed bool
	// ListedByWildcard: `-l` with a wildcard provider (or none: "-l",
	// "-l 'vfs_*'", "-l '*:vfs_*'") lists the type, as bpftrace 0.17
	// expands `-l` over its kernel probe types; the others (return
	// probes, user probes, timers) are listed when named.
	ListedByWildcard bool
	// Refused, when set, is why gotrace refuses the type: the checker
	// reports it at the attach point, and the runtime has no provider.
	Refused string
}

// Special reports whether the tracer runs the type's programs itself
// (BEGIN, END, self, bench, test): they are never attached.
func (t *ProbeType) Special() bool { return t.Trigger != TriggerAttach }

var probeTypes = [numProbeKinds]ProbeType{
	ProbeNone: {},
	ProbeBegin: {Kind: ProbeBegin, Name: "BEGIN", Aliases: []string{"begin"}, Probetype: "special",
		parse: parseNoArgs, Prog: ProgRawTracepoint, Abbrev: "begin", Trigger: TriggerBegin},
	ProbeEnd: {Kind: ProbeEnd, Name: "END", Aliases: []string{"end"}, Probetype: "special",
		parse: parseNoArgs, Prog: ProgRawTracepoint, Abbrev: "end", Trigger: TriggerEnd},
	ProbeTracepoint: {Kind: ProbeTracepoint, Name: "tracepoint", Aliases: []string{"t"}, Probetype: "tracepoint",
		parse: parseTracepoint, Prog: ProgTracepoint, Abbrev: "tp", Context: CtxTracepoint, Args: ArgsFormat,
		StopSwitch: true, Cookie: true, Listed: true, ListedByWildcard: true},
	ProbeRawTracepoint: {Kind: ProbeRawTracepoint, Name: "rawtracepoint", Aliases: []string{"rt"}, Probetype: "rawtracepoint",
		parse: parseModFunc, Prog: ProgRawTracepoint, Abbrev: "rtp", Context: CtxU64Array, Args: ArgsRawTracepoint,
		ArgN: ArgNArray, Listed: true},
	ProbeKprobe: {Kind: ProbeKprobe, Name: "kprobe", Aliases: []string{"k"}, Probetype: "kprobe",
		parse: parseKprobe, Prog: ProgKprobe, Abbrev: "kp", Context: CtxPtRegs, ArgN: ArgNRegs, Func: FuncIP,
		ReverseAttach: true, StopWildcard: true, Cookie: true, Listed: true, ListedByWildcard: true},
	ProbeKretprobe: {Kind: ProbeKretprobe, Name: "kretprobe", Aliases: []string{"kr"}, Probetype: "kretprobe",
		parse: parseKprobe, Prog: ProgKprobe, Abbrev: "krp", Context: CtxPtRegs, Retval: RetvalRegs,
		Func: FuncIP, StopWildcard: true, Cookie: true, Listed: true},
	ProbeUprobe: {Kind: ProbeUprobe, Name: "uprobe", Aliases: []string{"u"}, Probetype: "uprobe",
		parse: parseUprobe, Prog: ProgKprobe, Abbrev: "up", Context: CtxPtRegs, UserMem: true, Args: ArgsDWARF,
		ArgN: ArgNRegs, Func: FuncUser, ReverseAttach: true, StopSwitch: true, Cookie: true, Listed: true},
	ProbeUretprobe: {Kind: ProbeUretprobe, Name: "uretprobe", Aliases: []string{"ur"}, Probetype: "uretprobe",
		parse: parseUprobe, Prog: ProgKprobe, Abbrev: "urp", Context: CtxPtRegs, UserMem: true, Args: ArgsDWARF,
		Retval: RetvalRegs, Func: FuncUser, ReverseAttach: true, StopSwitch: true,
		Cookie: true, Listed: true},
	ProbeUSDT: {Kind: ProbeUSDT, Name: "usdt", Aliases: []string{"U"}, Probetype: "usdt",
		parse: parseUSDT, Prog: ProgKprobe, Abbrev: "usdt", Context: CtxPtRegs, UserMem: true, ArgN: ArgNUSDT,
		ReverseAttach: true, StopSwitch: true, Cookie: true, Listed: true},
	ProbeKfunc: {Kind: ProbeKfunc, Name: "kfunc", Aliases: []string{"f", "fentry"}, Probetype: "fentry",
		parse: parseModFunc, Prog: ProgTracing, Attach: AttachFEntry, Abbrev: "kf", Context: CtxU64Array, Args: ArgsBTF,
		Func: FuncHelper, ReverseAttach: true, Listed: true, ListedByWildcard: true},
	ProbeKretfunc: {Kind: ProbeKretfunc, Name: "kretfunc", Aliases: []string{"fr", "fexit"}, Probetype: "fexit",
		parse: parseModFunc, Prog: ProgTracing, Attach: AttachFExit, Abbrev: "krf", Context: CtxU64Array, Args: ArgsBTF,
		Retval: RetvalArray, Func: FuncHelper, Listed: true},
	ProbeProfile: {Kind: ProbeProfile, Name: "profile", Aliases: []string{"p"}, Probetype: "profile",
		parse: parseRate, Prog: ProgPerfEvent, Abbrev: "prof", Context: CtxPerfEvent, Listed: true},
	ProbeInterval: {Kind: ProbeInterval, Name: "interval", Aliases: []string{"i"}, Probetype: "interval",
		parse: parseRate, Prog: ProgPerfEvent, Abbrev: "intv", Context: CtxPerfEvent, Listed: true},
	ProbeSoftware: {Kind: ProbeSoftware, Name: "software", Aliases: []string{"s"}, Probetype: "software",
		parse: parsePerf, Prog: ProgPerfEvent, Abbrev: "sw", Context: CtxPerfEvent, ReverseAttach: true,
		Listed: true, ListedByWildcard: true},
	ProbeHardware: {Kind: ProbeHardware, Name: "hardware", Aliases: []string{"h"}, Probetype: "hardware",
		parse: parsePerf, Prog: ProgPerfEvent, Abbrev: "hw", Context: CtxPerfEvent, Listed: true, ListedByWildcard: true},
	ProbeWatchpoint: {Kind: ProbeWatchpoint, Name: "watchpoint", Aliases: []string{"w"}, Probetype: "watchpoint",
		parse: parseWatch, Prog: ProgPerfEvent, Abbrev: "wp", Context: CtxPerfEvent,
		Refused: "watchpoint probes are not supported by gotrace: it does not implement the hardware " +
			"breakpoint perf events (PERF_TYPE_BREAKPOINT on the -p/-c process) they attach to"},
	ProbeAsyncWatchpoint: {Kind: ProbeAsyncWatchpoint, Name: "asyncwatchpoint", Aliases: []string{"aw"}, Probetype: "asyncwatchpoint",
		parse: parseWatch, Prog: ProgPerfEvent, Abbrev: "awp", Context: CtxPerfEvent,
		Refused: "asyncwatchpoint probes are not supported by gotrace: it does not implement the hardware " +
			"breakpoint perf events (PERF_TYPE_BREAKPOINT on the -p/-c process) they attach to"},
	ProbeIter: {Kind: ProbeIter, Name: "iter", Aliases: []string{"it"}, Probetype: "iter",
		parse: parseIter, Prog: ProgTracing, Attach: AttachIter, Abbrev: "iter", Context: CtxU64Array, Listed: true},
	ProbeBench: {Kind: ProbeBench, Name: "bench", Probetype: "bench",
		parse: parseName, Prog: ProgRawTracepoint, Abbrev: "bench", Trigger: TriggerBench, Listed: true},
	ProbeTest: {Kind: ProbeTest, Name: "test", Probetype: "test",
		parse: parseName, Prog: ProgRawTracepoint, Abbrev: "test", Trigger: TriggerTest, Listed: true},
	ProbeSelf: {Kind: ProbeSelf, Name: "self", Probetype: "special",
		parse: parseSelf, Prog: ProgRawTracepoint, Abbrev: "self", Trigger: TriggerSignal},
}

// spellings maps every provider spelling to its kind.
var spellings = func() map[string]ProbeKind {
	m := map[string]ProbeKind{}
	for i := range probeTypes {
		t := &probeTypes[i]
		if t.Kind == ProbeNone {
			continue
		}
		m[t.Name] = t.Kind
		for _, a := range t.Aliases {
			m[a] = t.Kind
		}
	}
	return m
}()

// ProbeKinds lists the probe types, in table order.
func ProbeKinds() []ProbeKind {
	out := make([]ProbeKind, 0, numProbeKinds-1)
	for k := ProbeNone + 1; k < numProbeKinds; k++ {
		out = append(out, k)
	}
	return out
}

// LookupProbeKind resolves a provider spelling: the exact spelling first,
// then (bpftrace 0.24) case-insensitively.
func LookupProbeKind(spelling string) (ProbeKind, bool) {
	if k, ok := spellings[spelling]; ok {
		return k, true
	}
	k, ok := spellings[strings.ToLower(spelling)]
	return k, ok
}

// ProbeKindNamed is the kind of a canonical name ("kprobe", "BEGIN"),
// ProbeNone for anything else.
func ProbeKindNamed(name string) ProbeKind {
	if k, ok := spellings[name]; ok && probeTypes[k].Name == name {
		return k
	}
	return ProbeNone
}

// CanonicalProvider returns the canonical provider name for a spelling
// (alias or full name, exact case).
func CanonicalProvider(name string) (string, bool) {
	k, ok := spellings[name]
	if !ok {
		return "", false
	}
	return k.String(), true
}

// Providers lists the canonical provider names, in table order.
var Providers = func() []string {
	var out []string
	for _, k := range ProbeKinds() {
		out = append(out, k.String())
	}
	return out
}()

// fullSpellings are the spellings longer than two letters (no one- or
// two-letter abbreviations), sorted: the suggestions for a bad provider.
func fullSpellings() []string {
	var out []string
	for s := range spellings {
		if len(s) > 2 {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// apParser parses the parts of one attach point after its provider.
type apParser struct {
	ap   *AttachPoint
	args []string
	prov string // canonical name, for messages
}

// need checks the number of parts, and that none is empty.
func (p *apParser) need(lo, hi int) error {
	n, raw := len(p.args), p.ap.Raw
	if n < lo || n > hi {
		if lo == hi {
			return fmt.Errorf("%s probe type requires %d arguments, found %d in %s", p.prov, lo, n, raw)
		}
		return fmt.Errorf("%s probe type requires %d to %d arguments, found %d in %s", p.prov, lo, hi, n, raw)
	}
	for _, a := range p.args {
		if a == "" {
			return fmt.Errorf("empty part in attach point %s", raw)
		}
	}
	return nil
}

func parseNoArgs(p *apParser) error {
	if len(p.args) != 0 {
		return fmt.Errorf("%s takes no arguments: %s", p.prov, p.ap.Raw)
	}
	return nil
}

func parseTracepoint(p *apParser) error {
	if err := p.need(2, 2); err != nil {
		return err
	}
	p.ap.Target, p.ap.Func = p.args[0], p.args[1]
	return nil
}

// parseModFunc: [MOD:]FUNC (rawtracepoint, kfunc, kretfunc).
func parseModFunc(p *apParser) error {
	if err := p.need(1, 2); err != nil {
		return err
	}
	n := len(p.args)
	if n == 2 {
		p.ap.Target = p.args[0]
	}
	p.ap.Func = p.args[n-1]
	return nil
}

// parseKprobe: [MOD:]FUNC[+OFF].
func parseKprobe(p *apParser) error {
	if err := p.need(1, 2); err != nil {
		return err
	}
	n := len(p.args)
	if n == 2 {
		p.ap.Target = p.args[0]
	}
	return funcOffset(p.ap, p.args[n-1])
}

// parseUprobe: PATH:FUNC[+OFF], PATH:ADDR, PATH:LANG:FUNC, FUNC (with -p),
// and the source-line forms.
func parseUprobe(p *apParser) error {
	if err := p.need(1, 3); err != nil {
		return err
	}
	ap, args := p.ap, p.args
	if ok, err := sourceLine(ap, args); ok || err != nil {
		return err
	}
	switch len(args) {
	case 1:
		return funcOffset(ap, args[0])
	case 3:
		ap.Target, ap.Lang, ap.Func = args[0], args[1], args[2]
		return nil
	}
	ap.Target = args[0]
	last := args[1]
	if len(last) > 0 && last[0] >= '0' && last[0] <= '9' {
		v, err := strconv.ParseUint(last, 0, 64)
		if err != nil {
			return fmt.Errorf("invalid address %s in %s", last, ap.Raw)
		}
		ap.Address, ap.HasAddr = v, true
		return nil
	}
	return funcOffset(ap, last)
}

// parseUSDT: [PATH:[NS:]]NAME; an empty NS matches any (bpftrace 0.26).
func parseUSDT(p *apParser) error {
	args := p.args
	if len(args) == 3 && args[1] == "" && args[2] != "" {
		args[1] = "*"
		p.ap.Wildcard = true
	}
	if len(args) == 3 && args[0] == "" && args[2] != "" {
		// usdt::PROVIDER:NAME (and usdt:::NAME): no path, every file
		// the -p process maps, as bpftrace's "the target can be skipped".
		p.ap.Target, p.ap.NS, p.ap.Func = "", args[1], args[2]
		return nil
	}
	if err := p.need(1, 3); err != nil {
		return err
	}
	switch len(args) {
	case 1:
		p.ap.Func = args[0]
	case 2:
		p.ap.Target, p.ap.Func = args[0], args[1]
	case 3:
		p.ap.Target, p.ap.NS, p.ap.Func = args[0], args[1], args[2]
	}
	return nil
}

// parseRate: UNIT:N or N[UNIT] (profile, interval).
func parseRate(p *apParser) error {
	if err := p.need(1, 2); err != nil {
		return err
	}
	ap, args, prov, raw := p.ap, p.args, p.prov, p.ap.Raw
	if len(args) == 1 {
		unit, num := splitRate(args[0])
		if unit == "" {
			if ap.Provider == ProbeInterval {
				return fmt.Errorf("interval probe needs a unit (s, ms, us, hz): %s", raw)
			}
			unit = "hz"
		}
		ap.Unit = unit
		v, err := ParseInt(num)
		if err != nil {
			return fmt.Errorf("invalid rate of %s probe: %s", prov, raw)
		}
		ap.Freq = v
		return nil
	}
	ap.Unit = args[0]
	switch ap.Unit {
	case "hz", "s", "ms", "us", "ns", "m":
	default:
		return fmt.Errorf("invalid unit %q of %s probe: %s (expected hz, s, ms or us)", ap.Unit, prov, raw)
	}
	v, err := ParseInt(args[1])
	if err != nil {
		return fmt.Errorf("invalid rate of %s probe: %s", prov, raw)
	}
	ap.Freq = v
	return nil
}

// parsePerf: EVENT[:COUNT] (software, hardware).
func parsePerf(p *apParser) error {
	if err := p.need(1, 2); err != nil {
		return err
	}
	p.ap.Func = p.args[0]
	if len(p.args) == 2 {
		v, err := ParseInt(p.args[1])
		if err != nil {
			return fmt.Errorf("invalid count of %s probe: %s", p.prov, p.ap.Raw)
		}
		p.ap.Freq = v
	}
	return nil
}

// parseWatch: ADDR:LEN:MODE.
func parseWatch(p *apParser) error {
	if err := p.need(3, 3); err != nil {
		return err
	}
	ap, args := p.ap, p.args
	a, err := strconv.ParseUint(args[0], 0, 64)
	if err != nil {
		return fmt.Errorf("invalid address %s in %s", args[0], ap.Raw)
	}
	ln, err := strconv.ParseUint(args[1], 0, 64)
	if err != nil {
		return fmt.Errorf("invalid length %s in %s", args[1], ap.Raw)
	}
	ap.Address, ap.HasAddr, ap.Len, ap.Mode = a, true, ln, args[2]
	return nil
}

// parseName: NAME (bench, test).
func parseName(p *apParser) error {
	if err := p.need(1, 1); err != nil {
		return err
	}
	p.ap.Func = p.args[0]
	return nil
}

// parseSelf: self:signal:SIGUSR1, bpftrace's messages for anything else.
func parseSelf(p *apParser) error {
	args := p.args
	if len(args) != 2 {
		return fmt.Errorf("self probe type requires 2 arguments, found %d", len(args))
	}
	if args[0] != "signal" {
		return fmt.Errorf("%s is not a supported trigger", args[0])
	}
	ok := false
	for _, sig := range SelfSignals {
		ok = ok || args[1] == sig
	}
	if !ok {
		return fmt.Errorf("%s is not a supported signal", args[1])
	}
	p.ap.Target, p.ap.Func, p.ap.Wildcard = args[0], args[1], false
	return nil
}

// parseIter: NAME[:PIN].
func parseIter(p *apParser) error {
	if err := p.need(1, 2); err != nil {
		return err
	}
	p.ap.Func = p.args[0]
	if len(p.args) == 2 {
		p.ap.Target = p.args[1]
	}
	return nil
}
