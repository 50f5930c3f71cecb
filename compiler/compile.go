package compiler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// Options configure code generation.
type Options struct {
	// License is the programs' license (config license; "" is "GPL").
	License string
	// MapKeysMax is the maximum number of entries of a keyed user map
	// (GOTRACE_MAP_KEYS_MAX); 0 means bpftrace's default, 4096.
	MapKeysMax uint32
	// RingBufSize is the ring buffer's size in bytes (a power of two,
	// multiple of the page size); 0 means 1 MiB.
	RingBufSize uint32
	// OnRingBuf, when set, is called once, as the program first needs the
	// event ring buffer: the command starts making it then, on another
	// CPU, while the rest of the script compiles (runtime.PrepareRing).
	OnRingBuf func()
	// HelperCheck is -k (1: warn when map updates and deletes fail) or
	// -kk (2: map lookups of absent keys too), as bpftrace; 0 adds no
	// code.
	HelperCheck int
	// HaveHelper reports whether programs of type pt may call helper fn
	// (nil) or not (an error wrapping ebpf.ErrNotSupported); other errors
	// mean "unknown" and are ignored. A builtin whose code calls a missing
	// helper fails with the builtin, the helper and the kernel version that
	// added it. Nil probes the running kernel (features.HaveProgramHelper).
	HaveHelper func(pt ebpf.ProgramType, fn asm.BuiltinFunc) error
	// HaveKfunc reports whether programs of type pt may call the kfunc
	// with vmlinux BTF ID id (nil), not (an error wrapping
	// ebpf.ErrNotSupported), or that it is unknown (another error). Nil
	// probes the running kernel with a tiny program (kfunc.go).
	HaveKfunc func(pt ebpf.ProgramType, name string, id uint32) error
	// MaxProbes caps the kfunc/kretfunc programs a wildcard expands to
	// (0: GOTRACE_MAX_PROBES / BPFTRACE_MAX_PROBES, else 512).
	MaxProbes int
	// SyscallTracepoints chooses how syscalls tracepoints are compiled
	// (GOTRACE_SYSCALL_TRACEPOINTS; syscalls.go): "perf" keeps them on the
	// kernel's perf tracepoint events, "raw" makes programs on the raw
	// sys_enter/sys_exit tracepoints wherever the clauses allow, and ""
	// ("auto") does so for scripts that trace many system calls.
	SyscallTracepoints string
	// Host describes the machine and the tracer (ncpus, the tracer's pid
	// namespace for pid/tid), read by cmd/gotrace.
	Host stdlib.Host
}

// Internal map names (ABI.md).
const (
	MapRingBuf = "ringbuf"
	MapScratch = "scratch"
	// MapStart holds the tracer's start time (CLOCK_MONOTONIC ns) at key 0,
	// written by the runtime before attaching; `elapsed` subtracts it.
	MapStart = "start"
	// MapCpid holds the -c command's pid at key 0, written by the runtime
	// once the command is started, before attaching; `cpid` reads it.
	MapCpid = stdlib.CpidMap
	// MapLostEvents counts at key 0 the records bpf_ringbuf_output could not
	// put in the full ring; the runtime prints "Lost N events".
	MapLostEvents = "lost_events"
	// MapFull counts at key 0 the user-map updates that failed because the
	// map was full (E2BIG); the runtime warns at exit.
	MapFull = "map_full"
	// MapProbeNames holds the probe table's names (Spec.Probes) by index,
	// each stdlib.ProbeNameLen bytes, NUL-padded, written by the runtime
	// before attaching: `probe` read as a string in BPF.
	MapProbeNames = "probe_names"
)

// Error is a code-generation error at a place in the script.
type Error struct {
	Span lang.Span
	Msg  string
	Hint string // printed as "HINT: ..." after the marker
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Span.Start, e.Msg) }

// Compile turns a checked program into BPF programs, maps and event formats.
// It touches no kernel: the result is the same on every machine.
func Compile(res *check.Result, opts Options) (*Spec, error) {
	if res == nil || res.Prog == nil {
		return nil, fmt.Errorf("compile: no program")
	}
	if opts.MapKeysMax == 0 {
		opts.MapKeysMax = 4096
	}
	if opts.RingBufSize == 0 {
		opts.RingBufSize = 1 << 20
	}
	c := &compiler{
		res:   res,
		opts:  opts,
		spec:  &Spec{Source: res.Prog.Src},
		maps:  map[string]*MapSpec{},
		names: map[string]bool{},
	}
	c.sysLower = c.canLowerSyscalls()
	all, err := c.groupAll()
	if err != nil {
		return nil, err
	}
	if c.sysLower != nil && !c.fewSyscallProgs(all) {
		c.kfuncProbes = 0
		if all, err = c.groupAll(); err != nil {
			return nil, err
		}
	}
	for i, p := range res.Prog.Probes {
		for _, grp := range all[i] {
			if err := c.compileClause(i, p, grp); err != nil {
				return nil, err
			}
		}
	}
	// Maps in a stable order: user maps by name, then internal ones by name.
	names := make([]string, 0, len(c.maps))
	for n := range c.maps {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := c.maps[names[i]], c.maps[names[j]]
		if (a.User == nil) != (b.User == nil) {
			return a.User != nil
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		c.spec.Maps = append(c.spec.Maps, c.maps[n])
	}
	if c.maxScratch > 0 {
		m := c.maps[MapScratch]
		m.ValueSize = uint32(c.maxScratch)
		m.MaxEntries = uint32(len(c.spec.Programs))
		if m.Type == ebpf.Array {
			m.MaxEntries *= uint32(c.ncpus()) // bigScratch: a slot per CPU
		}
	}
	return c.spec, nil
}

type compiler struct {
	res        *check.Result
	opts       Options
	spec       *Spec
	maps       map[string]*MapSpec
	names      map[string]bool
	maxScratch int
	// kfuncProbes counts the functions kfunc wildcards expanded to.
	kfuncProbes int
	// sysLower: the syscalls tracepoints of sys_enter or sys_exit compile
	// to programs on that raw tracepoint (syscalls.go).
	sysLower map[string]bool
	// zeroedMaps are the maps the script calls zero() on (zeroed).
	zeroedMaps map[string]bool
}

// groupAll groups every clause's attach points into programs.
func (c *compiler) groupAll() ([][][]*lang.AttachPoint, error) {
	var all [][][]*lang.AttachPoint
	for _, p := range c.res.Prog.Probes {
		groups, err := c.groupAttach(p)
		if err != nil {
			return nil, err
		}
		all = append(all, groups)
	}
	return all, nil
}

// fewSyscallProgs reports whether lowering makes at most
// maxRawSyscallProgs programs per raw tracepoint; a raw tracepoint with
// more is not lowered (and false says to group again).
func (c *compiler) fewSyscallProgs(all [][][]*lang.AttachPoint) bool {
	n := map[string]int{}
	for _, groups := range all {
		for _, g := range groups {
			if d := c.syscallDir(g[0]); d != "" {
				n[d]++
			}
		}
	}
	few := true
	for d, k := range n {
		if k > maxRawSyscallProgs {
			c.sysLower[d], few = false, false
		}
	}
	return few
}

// progKind is how a set of attach points is compiled.
type progKind struct {
	typ        ebpf.ProgramType
	attachType ebpf.AttachType
	abbrev     string
}

// progTypes and attachTypes are the kernel's constants of the probe
// table's program and attach types.
var (
	progTypes = map[lang.ProgType]ebpf.ProgramType{lang.ProgRawTracepoint: ebpf.RawTracepoint,
		lang.ProgTracepoint: ebpf.TracePoint, lang.ProgKprobe: ebpf.Kprobe, lang.ProgTracing: ebpf.Tracing,
		lang.ProgPerfEvent: ebpf.PerfEvent}
	attachTypes = map[lang.AttachKind]ebpf.AttachType{lang.AttachFEntry: ebpf.AttachTraceFEntry,
		lang.AttachFExit: ebpf.AttachTraceFExit, lang.AttachIter: ebpf.AttachTraceIter}
)

// kindOf is how ap's probe type compiles, from its row in the probe table.
// (The tracer runs BEGIN, END, bench, test and self:signal programs with
// BPF_PROG_TEST_RUN: raw tracepoint programs, never attached.)
func kindOf(ap *lang.AttachPoint) (progKind, error) {
	t := ap.Provider.Type()
	typ, ok := progTypes[t.Prog]
	if !ok {
		return progKind{}, &Error{Span: ap.Span(), Msg: fmt.Sprintf("probe type %q is not supported by the compiler", ap.Provider)}
	}
	return progKind{typ: typ, attachType: attachTypes[t.Attach], abbrev: t.Abbrev}, nil
}

// groupAttach splits a clause's attach points into programs: one per
// provider (a provider fixes the context layout), one per BTF target for
// fentry/fexit/iter (the kernel ties such a program to one function), and
// one per attach point when the clause uses `probe` (a per-program constant,
// or the attach cookie of wildcard attach points: see cookieProbe).
//
// Tracepoints of a clause that reads `args` are grouped by their record
// layout: the checker typed `args` from one of them, and each program must
// read its own fields' offsets (bpftrace generates code per probe too);
// wildcard ones are first expanded to their matches (expandTracepoints).
func (c *compiler) groupAttach(p *lang.Probe) ([][]*lang.AttachPoint, error) {
	usesProbe, usesArgs := false, false
	fields := map[string]bool{} // the args fields the clause reads
	lang.Inspect(p, func(n lang.Node) bool {
		if isProbe(n) {
			usesProbe = true
		}
		if isArgs(n) {
			usesArgs = true
		}
		if f, ok := n.(*lang.FieldExpr); ok && isArgs(f.X) {
			fields[f.Field] = true
		}
		return true
	})
	attach := p.Attach
	if usesArgs {
		attach = c.expandTracepoints(attach)
	} else if c.sysLower["sys_enter"] || c.sysLower["sys_exit"] {
		attach = c.expandSyscalls(attach)
	}
	if usesProbe {
		attach = c.expandRawTracepoints(attach)
	}
	attach, err := c.expandKfuncs(attach, usesArgs, fields)
	if err != nil {
		return nil, err
	}
	var groups [][]*lang.AttachPoint
	index := map[string]int{}
	for _, ap := range attach {
		key := ap.Provider.String()
		switch {
		case usesProbe:
			key = ap.Raw + "\x00" + fmt.Sprint(len(groups))
		case ap.Provider == lang.ProbeKfunc || ap.Provider == lang.ProbeKretfunc || ap.Provider == lang.ProbeIter:
			key += ":" + ap.Target + ":" + ap.Func
		case ap.Provider == lang.ProbeTracepoint && usesArgs:
			key += ":" + layoutKey(c.tracepointRecord(ap), fields)
		}
		if d := c.syscallDir(ap); d != "" {
			key += ":" + d // a raw sys_enter or sys_exit program
		}
		if i, ok := index[key]; ok {
			groups[i] = append(groups[i], ap)
			continue
		}
		index[key] = len(groups)
		groups = append(groups, []*lang.AttachPoint{ap})
	}
	return groups, nil
}

// expandTracepoints replaces each wildcard tracepoint of aps by its
// matches, listed by the resolver, so that groupAttach can split them by
// record layout: the fields a clause reads of `args` may sit at different
// offsets in different matches (argv is at 24 in sys_enter_execve, 32 in
// sys_enter_execveat). A pattern the resolver can't expand, or that matches
// nothing, stays a wildcard for the runtime to expand (and report).
func (c *compiler) expandTracepoints(aps []*lang.AttachPoint) []*lang.AttachPoint {
	lister := c.res.Opts.Resolver
	if lister == nil {
		return aps
	}
	var out []*lang.AttachPoint
	for _, ap := range aps {
		if ap.Provider != lang.ProbeTracepoint || !ap.Wildcard {
			out = append(out, ap)
			continue
		}
		matches, err := lister.TracepointMatches(ap.Target, ap.Func)
		if err != nil || len(matches) == 0 {
			out = append(out, ap)
			continue
		}
		for _, m := range matches {
			e := *ap
			e.Target, e.Func = m[0], m[1]
			e.Wildcard = false
			e.Raw = "tracepoint:" + m[0] + ":" + m[1]
			out = append(out, &e)
		}
	}
	return out
}

// expandRawTracepoints replaces each wildcard rawtracepoint of aps by its
// matches, so that `probe` names the raw tracepoint that fired: raw
// tracepoint links take no cookie, and a clause using `probe` has one
// program per attach point. A pattern the resolver can't expand stays.
func (c *compiler) expandRawTracepoints(aps []*lang.AttachPoint) []*lang.AttachPoint {
	lister := c.res.Opts.Resolver
	if lister == nil {
		return aps
	}
	var out []*lang.AttachPoint
	for _, ap := range aps {
		if ap.Provider != lang.ProbeRawTracepoint || !ap.Wildcard || ap.Target != "" {
			out = append(out, ap)
			continue
		}
		matches, err := lister.TracepointMatches("*", ap.Func)
		if err != nil || len(matches) == 0 {
			out = append(out, ap)
			continue
		}
		seen := map[string]bool{}
		var names []string
		for _, m := range matches {
			if !seen[m[1]] && !ktypes.NotRawTracepoint(m[0]) {
				seen[m[1]] = true
				names = append(names, m[1])
			}
		}
		sort.Strings(names)
		for _, n := range names {
			e := *ap
			e.Func, e.Wildcard = n, false
			e.Raw = "rawtracepoint:" + n
			out = append(out, &e)
		}
	}
	return out
}

// cookieProbe reports whether a program for ap reads `probe` from the
// attach cookie: ap names a set that only the live system resolves
// (wildcards; usdt without a path, found in a process's files), and its
// provider attaches with cookies. A clause using `probe` has one program
// per attach point (groupAttach), so the cookie tells its expansions apart;
// other programs keep a constant, with no cost per event.
func cookieProbe(ap *lang.AttachPoint) bool {
	if ap.Name != "" {
		// A named probe's matches all have its name.
		return false
	}
	if !ap.Provider.Type().Cookie {
		// BEGIN/END and perf events have one name each; kfunc/kretfunc and
		// rawtracepoint programs serve one function.
		return false
	}
	if ap.Provider == lang.ProbeUSDT {
		return ap.Wildcard || !strings.Contains(ap.Target, "/")
	}
	return ap.Wildcard
}

func (c *compiler) compileProgram(clause int, p *lang.Probe, aps []*lang.AttachPoint) (*Program, error) {
	k, err := kindOf(aps[0])
	if err != nil {
		return nil, err
	}
	if aps[0].Provider == lang.ProbeRawTracepoint && callsTracingOnly(p) {
		// A helper only TRACING programs may call (socket_cookie): load
		// the raw tracepoint as tp_btf, as bpftrace does with BTF (same
		// context: the u64 arguments; see tpbtf.go).
		k = progKind{typ: ebpf.Tracing, attachType: ebpf.AttachTraceRawTp, abbrev: "tpbtf"}
	}
	name := fmt.Sprintf("c%d_%s", clause, k.abbrev)
	for i := 1; c.names[name]; i++ {
		name = fmt.Sprintf("c%d_%d_%s", clause, i, k.abbrev)
	}
	c.names[name] = true
	prog := &Program{
		Name:       name,
		Clause:     clause,
		Attach:     aps,
		Type:       k.typ,
		AttachType: k.attachType,
		License:    c.license(),
	}
	if k.typ == ebpf.Tracing {
		prog.AttachTo = aps[0].Func
	}
	nrs := c.lowerSyscallProgram(prog)
	g := newGen(c, prog, p, aps[0], len(c.spec.Programs))
	g.sysNrs = nrs
	insns, err := g.generate()
	if err != nil {
		return nil, err
	}
	prog.Insns = insns
	return prog, nil
}

// userMap returns the MapSpec implementing the script's map mi.
func (c *compiler) userMap(mi *lang.MapInfo) (*MapSpec, *mapLayout, error) {
	// A key-less count() is a one-slot per-CPU array (its lookup is
	// inlined, its update needs no insert path): in 0.17 mode a zero
	// prints `@: 0`; in 0.26 mode a zero is no entry (ZeroIsAbsent), which
	// holds unless zero(@m) keeps the entry at 0 — then it is a hash.
	// A key-less hist()/lhist() is likewise a per-CPU array indexed by
	// the bucket, a zero bucket read as absent (a hit bucket counts at
	// least 1), so that it prints exactly as the hash of hit buckets.
	keepsZero := c.res.Opts.Compat.CountKeepsZero()
	hashed := c.keepsHash(mi.Name)
	lay, err := layoutOf(mi, keepsZero || !hashed, !hashed)
	if err != nil {
		return nil, nil, err
	}
	name := userMapName(mi.Name)
	if m, ok := c.maps[name]; ok {
		return m, lay, nil
	}
	m := &MapSpec{
		Name:       name,
		Type:       ebpf.Hash,
		KeySize:    uint32(lay.key.Size),
		ValueSize:  uint32(lay.value.Size),
		MaxEntries: c.opts.MapKeysMax,
		User:       mi,
	}
	if lay.agg {
		m.Type = ebpf.PerCPUHash
		m.PerCPU = true
	}
	if lay.array {
		m.Type = ebpf.PerCPUArray
		m.ZeroIsAbsent = !keepsZero
	}
	if len(lay.parts) == 0 && !lay.bucket {
		m.MaxEntries = 1
	}
	if lay.array && lay.bucket {
		m.MaxEntries = uint32(lay.buckets)
		m.ZeroIsAbsent = true
		m.BucketIndexKey = true
	}
	if d := c.mapDecl(mi.Name); d != nil && len(lay.parts) > 0 {
		// `let @m = lruhash(n);` (bpftrace 0.24-0.25): the kind and size.
		m.MaxEntries = uint32(d.Size)
		percpu := strings.HasPrefix(d.Kind, "percpu")
		if percpu && !lay.agg {
			return nil, nil, fmt.Errorf("%s is declared %s, which holds only aggregations (count(), sum() ...)", mi.Name, d.Kind)
		}
		if strings.HasSuffix(d.Kind, "lruhash") {
			m.Type = ebpf.LRUHash
			if lay.agg {
				m.Type = ebpf.LRUCPUHash
			}
		}
	}
	c.maps[name] = m
	return m, lay, nil
}

// keepsHash reports whether a key-less count()/hist() map must stay a
// hash rather than a per-CPU array: the script calls zero() on it (a
// zeroed entry prints, where an array's zero slot reads as absent) or
// len() (which counts an array's every slot). The program is walked
// once, on the first question.
func (c *compiler) keepsHash(name string) bool {
	if c.zeroedMaps == nil {
		c.zeroedMaps = map[string]bool{}
		if c.res != nil && c.res.Prog != nil {
			for _, p := range c.res.Prog.Probes {
				lang.Inspect(p, func(n lang.Node) bool {
					if call, ok := n.(*lang.CallExpr); ok && (call.Name == "zero" || call.Name == "len") && len(call.Args) > 0 {
						if m, ok := call.Args[0].(*lang.MapExpr); ok {
							c.zeroedMaps[m.Name] = true
						}
					}
					return true
				})
			}
		}
	}
	return c.zeroedMaps[name]
}

// mapDecl is the script's declaration of map name, if any.
func (c *compiler) mapDecl(name string) *lang.MapDecl {
	if c.res == nil || c.res.Prog == nil {
		return nil
	}
	for _, d := range c.res.Prog.MapDecls {
		if d.Map == name {
			return d
		}
	}
	return nil
}

// userMapName is the BPF map name of script map @name: "@x" → "m_x", "@" → "m_".
func userMapName(n string) string { return "m_" + strings.TrimPrefix(n, "@") }

// internalMap returns (creating on first use) an internal map.
// bigScratchStrLen is the largest max_strlen whose strings fit the
// per-CPU scratch map (its value is at most 32 KiB, a few strings).
const bigScratchStrLen = 4096

// bigScratch reports whether scratch is an ARRAY with a slot per program
// and CPU rather than a per-CPU array: for strings longer than
// bigScratchStrLen (bpftrace 0.26 allows them), whose scratch space the
// per-CPU limit would refuse.
func (c *compiler) bigScratch() bool { return c.res.StrLen > bigScratchStrLen }

// ncpus is the number of possible CPUs (the host's, else the kernel's).
func (c *compiler) ncpus() int {
	if n := c.opts.Host.NCPUs; n > 0 {
		return n
	}
	if n, err := ebpf.PossibleCPU(); err == nil && n > 0 {
		return n
	}
	return 1
}

func (c *compiler) internalMap(name string, typ ebpf.MapType, key, value, max uint32) *MapSpec {
	if m, ok := c.maps[name]; ok {
		return m
	}
	m := &MapSpec{Name: name, Type: typ, KeySize: key, ValueSize: value, MaxEntries: max}
	c.maps[name] = m
	if typ == ebpf.RingBuf && c.opts.OnRingBuf != nil {
		c.opts.OnRingBuf()
	}
	return m
}

// addEvent registers an event format and returns its ID.
func (c *compiler) addEvent(ev *Event) int {
	ev.ID = len(c.spec.Events)
	c.spec.Events = append(c.spec.Events, ev)
	return ev.ID
}

// mapLayout is how a user map's keys and values sit in BPF memory (ABI.md).
type mapLayout struct {
	parts     []*types.Type // key parts as stored (integers widened)
	key       *types.Type   // the whole key (Tuple of parts [+ bucket], or one part)
	offs      []int         // offset of each part in the key
	bucket    bool          // hist/lhist: a u64 bucket index follows the user key
	bucketOff int
	value     *types.Type
	agg       bool
	// array: a key-less count() is a 1-entry PERCPU_ARRAY with the u32 key 0
	// (ABI.md): its lookup always succeeds (the kernel inlines it), so
	// counting is a lookup and an add, with no insert path. A key-less
	// hist()/lhist() with array set is a PERCPU_ARRAY of buckets slots
	// keyed by the u32 bucket index (bucket set, bucketOff 0).
	array   bool
	buckets int
}

// storage is how a value of type t is stored in map keys, values and
// records: integers widened to 8 bytes, everything else as is.
func storage(t *types.Type) *types.Type {
	if t == nil {
		return types.U64
	}
	if isScalar(t) && t.Size < 8 {
		c := *t
		c.Size = 8
		c.Align = 0
		return &c
	}
	return t
}

// layoutOf lays out map mi; countArray keeps a count() map without keys
// in a one-slot per-CPU array, whose cleared value still prints (`@: 0`,
// bpftrace 0.17), where a hash loses the entry (0.26); bucketArray keeps
// a hist()/lhist() map without keys in a per-CPU array of its buckets.
func layoutOf(mi *lang.MapInfo, countArray, bucketArray bool) (*mapLayout, error) {
	if mi == nil || mi.Value == nil {
		return nil, fmt.Errorf("map has no type")
	}
	l := &mapLayout{}
	parts := mi.KeyParts
	if len(parts) == 0 && mi.Key != nil {
		parts = []*types.Type{mi.Key}
	}
	for _, p := range parts {
		l.parts = append(l.parts, storage(p))
	}
	kind := mi.Value.Kind
	l.agg = kind.IsAggregation()
	l.bucket = kind == types.Hist || kind == types.Lhist || kind == types.Tseries
	keyParts := l.parts
	if len(keyParts) == 0 {
		keyParts = []*types.Type{types.U64}
	}
	switch {
	case len(l.parts) == 0 && kind == types.Count && countArray:
		l.array = true
		l.key = types.U32
	case len(l.parts) == 0 && (kind == types.Hist || kind == types.Lhist) && bucketArray && bucketCount(mi.Value) > 0:
		l.array = true
		l.buckets = bucketCount(mi.Value)
		l.key = types.U32
		l.bucketOff = 0
	case l.bucket:
		l.key = types.TupleOf(append(append([]*types.Type{}, keyParts...), types.U64)...)
		l.bucketOff = l.key.Fields[len(l.key.Fields)-1].Offset
	case len(keyParts) == 1:
		l.key = keyParts[0]
	default:
		l.key = types.TupleOf(keyParts...)
	}
	if len(l.parts) > 0 {
		if l.key.Kind == types.Tuple && (len(l.parts) > 1 || l.bucket) {
			for i := range l.parts {
				l.offs = append(l.offs, l.key.Fields[i].Offset)
			}
		} else {
			l.offs = []int{0}
		}
	}
	switch kind {
	case types.Count, types.Sum, types.Hist, types.Lhist:
		l.value = &types.Type{Kind: kind, Size: 8, Signed: mi.Value.Signed}
	case types.Min, types.Max, types.Avg, types.Stats:
		l.value = &types.Type{Kind: kind, Size: 16, Signed: mi.Value.Signed}
	case types.Tseries:
		l.value = &types.Type{Kind: kind, Size: 24, Signed: mi.Value.Signed, Lhist: mi.Value.Lhist}
	default:
		l.value = storage(mi.Value)
	}
	if l.value.Size <= 0 {
		return nil, fmt.Errorf("map %s: value of type %s has no size", mi.Name, mi.Value)
	}
	return l, nil
}

// bucketCount is the number of bucket indexes a hist()/lhist() of type vt
// computes (stdlib's bucket functions; runtime/output's rows), 0 if its
// parameters are unknown or too many for an array.
func bucketCount(vt *types.Type) int {
	switch vt.Kind {
	case types.Hist:
		k := vt.Lhist[0]
		if k < 0 || k > 5 {
			return 0
		}
		return int(64-k)<<k + 1 // <0, then 2^k values per power of 2
	case types.Lhist:
		min, max, step := vt.Lhist[0], vt.Lhist[1], vt.Lhist[2]
		if step <= 0 || max <= min || (max-min)/step > 1<<16 {
			return 0
		}
		return int((max-min)/step) + 2 // below min, the steps, at or above max
	}
	return 0
}

// tracepointRecord is the args record of one (non-wildcard) tracepoint,
// nil when unknown (no resolver, a wildcard the runtime expands later).
func (c *compiler) tracepointRecord(ap *lang.AttachPoint) *types.Type {
	r := c.res.Opts.Resolver
	if r == nil || strings.ContainsAny(ap.Target+ap.Func, "*?[{") {
		return nil
	}
	rec, err := r.Tracepoint(ap.Target, ap.Func)
	if err != nil {
		return nil
	}
	return recordOf(rec)
}

// layoutKey identifies the layout of the used fields of a record: their
// names, offsets and sizes.
func layoutKey(rec *types.Type, used map[string]bool) string {
	if rec == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range rec.Fields {
		if !used[f.Name] {
			continue
		}
		size := 0
		if f.Type != nil {
			size = f.Type.Size
		}
		fmt.Fprintf(&b, "%s@%d/%d/%v;", f.Name, f.Offset, size, f.DataLoc)
	}
	return b.String()
}

// license is the programs' license: the config's, or "GPL".
func (c *compiler) license() string {
	if c.opts.License != "" {
		return c.opts.License
	}
	return "GPL"
}
