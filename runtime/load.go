package runtime

import (
	"errors"
	"fmt"
	"github.com/gotrace/gotrace/internal/priv"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/runtime/ringsize"
)

// Loaded is a Spec whose maps and programs exist in the kernel. Nothing is
// attached yet. Close releases everything, attached or not.
type Loaded struct {
	Spec     *compiler.Spec
	Programs map[string]*ebpf.Program // by compiler.Program.Name
	Maps     map[string]*ebpf.Map     // by compiler.MapSpec.Name

	// Unattachable are the programs a VerifyOnly load verified another way
	// because this kernel cannot load them as they are (fentry/fexit).
	Unattachable []error

	att         *attachment     // nil until Attach
	multi       map[string]bool // programs loaded for uprobe_multi links
	stopSwitch  map[string]bool // programs with the stop prologue (detach.go)
	progressEnv *Env            // the Env of Attach, for Detach's progress
	// ring is the ring buffer PrepareRing made, whose reader the session
	// takes (takeRing).
	ring *earlyRing
	// runOn is Options.RunOn, for the programs run from user space.
	runOn func(func())
}

// takeRing returns the reader PrepareRing made for the ring buffer, once,
// waiting for its pages to be mapped; nil if there is none.
func (l *Loaded) takeRing() *ringReader {
	e := l.ring
	l.ring = nil
	if e == nil {
		return nil
	}
	return e.reader()
}

// StackMaps are the maps of stacks by name, the name the printed stack
// values carry (types.StackInfo.MapName), for a symbolizer to read.
func (l *Loaded) StackMaps() map[string]*ebpf.Map {
	out := map[string]*ebpf.Map{}
	for _, m := range l.Spec.Maps {
		if m.Stacks && l.Maps[m.Name] != nil {
			out[m.Name] = l.Maps[m.Name]
		}
	}
	return out
}

// Load creates every map and program of spec. A program the verifier
// refuses gives a *VerifierError naming the script line of the refused
// instruction.
func Load(spec *compiler.Spec) (*Loaded, error) {
	return LoadWith(spec, LoadOptions{})
}

// LoadOptions change how Load treats programs this kernel cannot load.
type LoadOptions struct {
	// VerifyOnly (--dry-run): a kfunc/kretfunc program the kernel refuses
	// to load as fentry/fexit (no BPF trampolines) is verified as a
	// kprobe-type program instead, and noted in Loaded.Unattachable.
	VerifyOnly bool
	// NoFeature lists kernel features not to use although detected
	// (--no-feature): "uprobe_multi", "kprobe_multi" (then wildcards attach
	// one link per function), "kprobe_session" (gotrace uses none).
	NoFeature []string
	// RingBufPages is the event ring buffer's size in pages per CPU
	// (GOTRACE_PERF_RB_PAGES); 0: the compiler's size, at least 64 pages
	// per CPU. The total is rounded up to a power of two.
	RingBufPages int
	// StackMapEntries is each stack map's max_entries
	// (GOTRACE_STACK_MAP_ENTRIES); 0: the compiler's.
	StackMapEntries int
}

func (o LoadOptions) disabled(feature string) bool {
	for _, f := range o.NoFeature {
		if f == feature {
			return true
		}
	}
	return false
}

// LoadWith is Load with options.
func LoadWith(spec *compiler.Spec, opts LoadOptions) (*Loaded, error) {
	if spec == nil {
		return nil, errors.New("load: no program")
	}
	// Not root: one line naming what is missing, rather than the first
	// system call that fails.
	if err := priv.CheckTrace(); err != nil {
		return nil, err
	}
	raiseMemlock()
	cs, err := collectionSpec(spec, opts)
	if err != nil {
		return nil, err
	}
	timing.mark("load-prep")
	l := &Loaded{Spec: spec, Programs: map[string]*ebpf.Program{}, Maps: map[string]*ebpf.Map{}, multi: map[string]bool{}, stopSwitch: map[string]bool{}}
	for _, p := range spec.Programs {
		// Wildcard uprobes attach through one uprobe_multi link, which
		// needs the program loaded with that attach type.
		if p.Type == ebpf.Kprobe && p.AttachType == 0 && !opts.disabled("uprobe_multi") && wantsMulti(p.Attach) {
			cs.Programs[p.Name].AttachType = ebpf.AttachTraceUprobeMulti
			l.multi[p.Name] = true
		}
		if p.Type == ebpf.Kprobe && p.AttachType == 0 && !opts.disabled("kprobe_multi") && wantsKprobeMulti(p.Attach) {
			cs.Programs[p.Name].AttachType = ebpf.AttachTraceKprobeMulti
			l.multi[p.Name] = true
		}
		if needsStopSwitch(p, l.multi[p.Name]) {
			ps := cs.Programs[p.Name]
			ps.Instructions = stopPrologue(ps.Instructions)
			cs.Maps[stopMapName] = stopMapSpec()
			l.stopSwitch[p.Name] = true
		}
	}

	// Maps first, so a map error is reported as such and not as a
	// program failure.
	mapNames := make([]string, 0, len(cs.Maps))
	for n := range cs.Maps {
		mapNames = append(mapNames, n)
	}
	sort.Strings(mapNames)
	for _, n := range mapNames {
		if cs.Maps[n].Type == ebpf.RingBuf && !opts.VerifyOnly {
			if m, rd := takeEarlyRing(cs.Maps[n]); m != nil {
				l.Maps[n], l.ring = m, rd
				continue
			}
		}
		m, err := ebpf.NewMap(cs.Maps[n])
		if err != nil {
			l.Close()
			return nil, mapError(n, cs.Maps[n], err)
		}
		l.Maps[n] = m
	}
	discardEarlyRing() // none, or not this script's
	timing.mark("load-maps")
	// Load programs one at a time so a rejection names its program.
	for _, p := range spec.Programs {
		ps := cs.Programs[p.Name]
		var coll *ebpf.Collection
		err := errNoLineInfo
		if !opts.VerifyOnly {
			// Without line info first: no BTF to build and load (cilium
			// probes seven BTF features for it, ~1 ms of start-up). A
			// refusal loads again with it, so its error names the
			// script's lines.
			bare := ps.Copy()
			for i := range bare.Instructions {
				bare.Instructions[i] = bare.Instructions[i].WithSource(nil)
			}
			coll, err = ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{
				Maps:     referencedMaps(cs, bare),
				Programs: map[string]*ebpf.ProgramSpec{p.Name: bare},
			}, ebpf.CollectionOptions{MapReplacements: replacementsFor(l.Maps, bare),
				Programs: ebpf.ProgramOptions{LogDisabled: true}})
		}
		if err != nil {
			coll, err = ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{
				Maps:     referencedMaps(cs, ps),
				Programs: map[string]*ebpf.ProgramSpec{p.Name: ps},
			}, ebpf.CollectionOptions{MapReplacements: replacementsFor(l.Maps, ps)})
		}
		if err != nil {
			perr := programError(spec, p, err)
			if !errors.Is(perr, errNoTrampoline) {
				perr = helperError(spec, p, perr)
			}
			if opts.VerifyOnly && errors.Is(perr, errNoTrampoline) {
				if verr := verifyAsKprobe(cs, ps, l.Maps); verr != nil {
					l.Close()
					return nil, programError(spec, p, verr)
				}
				l.Unattachable = append(l.Unattachable, perr)
				continue
			}
			l.Close()
			return nil, perr
		}
		prog := coll.DetachProgram(p.Name)
		coll.Close() // the map replacements are clones; ours stay open
		if prog == nil {
			l.Close()
			return nil, fmt.Errorf("load program %s: not created", p.Name)
		}
		l.Programs[p.Name] = prog
	}
	return l, nil
}

// collectionSpec turns the compiler's Spec into cilium's, with maps keyed
// by the names instructions reference.
func collectionSpec(spec *compiler.Spec, opts LoadOptions) (*ebpf.CollectionSpec, error) {
	cs := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}}
	for _, m := range spec.Maps {
		if _, dup := cs.Maps[m.Name]; dup {
			return nil, fmt.Errorf("load: map %s defined twice", m.Name)
		}
		ms := &ebpf.MapSpec{
			Name:       kernelName(m.Name),
			Type:       m.Type,
			KeySize:    m.KeySize,
			ValueSize:  m.ValueSize,
			MaxEntries: m.MaxEntries,
			Flags:      m.Flags,
		}
		if m.Type == ebpf.RingBuf {
			ms.MaxEntries = ringBufSize(ms.MaxEntries, opts.RingBufPages)
		}
		if m.Stacks {
			ms.MaxEntries = stackMapEntries(ms.MaxEntries, opts.StackMapEntries)
		}
		if noPrealloc(spec, m) {
			ms.Flags |= unix.BPF_F_NO_PREALLOC
		}
		if m.Contents != nil {
			// Read-only data (bpf_seq_printf's formats): written, then
			// frozen before any program that reads it loads.
			// cilium freezes a map whose name is a .rodata section's.
			ms.Contents = []ebpf.MapKV{{Key: uint32(0), Value: m.Contents}}
			ms.Name = ".rodata"
			ms.Flags |= unix.BPF_F_MMAPABLE // as cilium creates .rodata maps
		}
		cs.Maps[m.Name] = ms
	}
	for _, p := range spec.Programs {
		if _, dup := cs.Programs[p.Name]; dup {
			return nil, fmt.Errorf("load: program %s defined twice", p.Name)
		}
		lic := p.License
		if lic == "" {
			lic = "GPL"
		}
		cs.Programs[p.Name] = &ebpf.ProgramSpec{
			Name:         kernelName(p.Name),
			Type:         p.Type,
			AttachType:   p.AttachType,
			AttachTo:     p.AttachTo,
			Instructions: p.Insns,
			License:      lic,
		}
	}
	return cs, nil
}

// preallocAbove is the size above which hash maps stay preallocated:
// twice the default 4096 keys. Without preallocation, each element is
// allocated on insert and freed on delete by the kernel's BPF allocator,
// and clear() of 60,000 keys (print(@); clear(@) in END) spent 1-11 s
// freeing them (bpftrace, preallocated: 0.8-1.0 s; preallocated here:
// 0.3-0.5 s), where creating the preallocated map costs 0.1-0.4 s at
// start. The allocator can also fail an insert (ENOMEM: the update is
// lost, and not counted as a full map)
// when a burst of new keys outruns its per-CPU cache.
const preallocAbove = 1 << 13

// noPrealloc reports whether a hash map is better created without
// preallocated elements: creating a preallocated per-CPU hash of 4096
// entries takes 4-6 ms, most of a tracer's start-up, while the kernel's
// allocator (6.1+) makes an insert of a new key cheap. Maps that programs
// run from NMI context (perf_event: profile, hardware, software) use stay
// preallocated, as the verifier may demand.
func noPrealloc(spec *compiler.Spec, m *compiler.MapSpec) bool {
	if m.Type != ebpf.Hash && m.Type != ebpf.PerCPUHash {
		return false
	}
	if m.Flags&unix.BPF_F_NO_PREALLOC != 0 {
		return true
	}
	if m.MaxEntries > preallocAbove {
		// A large map (BPFTRACE_MAX_MAP_KEYS raised) is one a script
		// means to fill: allocating each new key's element (per-CPU:
		// on every CPU) made 10⁶ inserts of new keys take 22 s of
		// system time here (about 20 µs each), against 3.6 s
		// preallocated (whose creation costs about 3 s at 10⁶ entries).
		return false
	}
	for _, p := range spec.Programs {
		if p.Type != ebpf.PerfEvent {
			continue
		}
		for _, ins := range p.Insns {
			if ins.Reference() == m.Name {
				return false
			}
		}
	}
	return true
}

// referencedMaps returns the map specs ps's instructions name.
func referencedMaps(cs *ebpf.CollectionSpec, ps *ebpf.ProgramSpec) map[string]*ebpf.MapSpec {
	out := map[string]*ebpf.MapSpec{}
	for _, ins := range ps.Instructions {
		if ref := ins.Reference(); ref != "" {
			if m, ok := cs.Maps[ref]; ok {
				out[ref] = m
			}
		}
	}
	return out
}

func replacementsFor(maps map[string]*ebpf.Map, ps *ebpf.ProgramSpec) map[string]*ebpf.Map {
	out := map[string]*ebpf.Map{}
	for _, ins := range ps.Instructions {
		if ref := ins.Reference(); ref != "" {
			if m, ok := maps[ref]; ok {
				out[ref] = m
			}
		}
	}
	return out
}

// kernelName makes a name the kernel accepts as an object name: at most
// 15 characters of [A-Za-z0-9_.].
func kernelName(s string) string {
	b := make([]byte, 0, 15)
	for i := 0; i < len(s) && len(b) < 15; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
			b = append(b, c)
		default:
			b = append(b, '_')
		}
	}
	return string(b)
}

// ringBufSize is the ring buffer's size in bytes on this machine
// (ringsize.Bytes).
func ringBufSize(compiled uint32, pagesPerCPU int) uint32 {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		ncpu = 1
	}
	return ringsize.Bytes(ncpu, os.Getpagesize(), compiled, pagesPerCPU)
}

// MaxRingBufBytes bounds the event ring buffer (all CPUs together).
const MaxRingBufBytes = ringsize.MaxBytes

// RingBufBytes is the ring buffer a GOTRACE_PERF_RB_PAGES value gives on
// this machine, for validating the setting.
func RingBufBytes(pagesPerCPU int) uint64 {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil || ncpu < 1 {
		ncpu = 1
	}
	return uint64(pagesPerCPU) * uint64(os.Getpagesize()) * uint64(ncpu)
}

// stackMapEntries is a stack map's max_entries, the distinct stacks of its
// kind it can hold: the compiler's (sym.DefaultStackMapEntries) unless
// GOTRACE_STACK_MAP_ENTRIES gives another count. bpftrace has no such
// setting (it reserves 131072 entries); stacks past a full map are lost
// (-E2BIG), which gotrace counts and reports at exit.
func stackMapEntries(compiled uint32, entries int) uint32 {
	if entries > 0 {
		return uint32(entries)
	}
	return compiled
}

// VerifierError is a program the kernel's verifier refused, mapped back to
// the script.
type VerifierError struct {
	Src     *lang.Source
	Program string    // compiler.Program.Name
	Span    lang.Span // the script place of the refused instruction (zero if unknown)
	Insn    int       // index of the refused instruction in Program.Insns, -1 if unknown
	Reason  string    // the verifier's complaint (its last meaningful line)
	Log     []string  // the full verifier log
	Err     error     // cilium's error
	// Loop is set when the complaint is about size, complexity or loops
	// and the refused place is in a loop: Span is then the loop's head.
	Loop bool
}

func (e *VerifierError) Unwrap() error { return e.Err }

// Error prints bpftrace's diagnostic form: the script line and a marker
// under the place, with the verifier's reason.
func (e *VerifierError) Error() string {
	d := &lang.Diagnostics{Src: e.Src}
	hint := "run with -v for the full verifier log"
	if e.Loop {
		d.Add(lang.Error, e.Span, "the verifier said: "+e.Reason+"; "+hint, "loop is too large for the BPF verifier (bound it, or use unroll/for over a map)")
		return d.Error()
	}
	d.Add(lang.Error, e.Span, hint, "the BPF verifier rejected program %s: %s", e.Program, e.Reason)
	return d.Error()
}

// FullLog is the verifier's log, for -v.
func (e *VerifierError) FullLog() string { return strings.Join(e.Log, "\n") }

// haveHelper is the kernel's answer to "may programs of type pt call fn"
// (a variable for tests).
var haveHelper = features.HaveProgramHelper

// helperError is the error for program p the kernel refused (err): when
// it calls a helper the kernel lacks for its type, the builtin that calls
// it, the helper and the kernel version that added it, at the builtin
// (the verifier says only "program of this type cannot use helper"); err
// otherwise. The compiler does not ask the kernel (one program load per
// helper, on every start-up): the question is asked only now.
func helperError(spec *compiler.Spec, p *compiler.Program, err error) error {
	herr := compiler.MissingHelper(p, haveHelper)
	var ce *compiler.Error
	if !errors.As(herr, &ce) {
		return err
	}
	d := &lang.Diagnostics{Src: spec.Source}
	d.Add(lang.Error, ce.Span, ce.Hint, "%s", ce.Msg)
	return d
}

var verifierInsnRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+): \([0-9a-f]{2}\)`) })

func programError(spec *compiler.Spec, p *compiler.Program, err error) error {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		if p.Type == ebpf.Tracing && (p.AttachType == ebpf.AttachTraceFEntry || p.AttachType == ebpf.AttachTraceFExit) {
			if fe := fentryError(err); errors.Is(fe, errNoTrampoline) {
				var ap *lang.AttachPoint
				if len(p.Attach) > 0 {
					ap = p.Attach[0]
				}
				name := p.AttachTo
				if ap != nil {
					name = apName(ap)
				}
				return &ProbeError{Src: spec.Source, AP: ap, Err: fmt.Errorf("%s: %w", name, fe)}
			}
		}
		if p.Type == ebpf.Tracing && p.AttachType == ebpf.AttachTraceRawTp {
			return tpBTFError(spec, p, err)
		}
		if errors.Is(err, unix.EFAULT) || errors.Is(err, unix.ENOSPC) {
			// The verifier's log overflowed (cilium's "hit verifier
			// bug ... LogSizeStart"): it explored too many states.
			return &tooComplexError{prog: p.Name, err: err}
		}
		return fmt.Errorf("load program %s: %w", p.Name, err)
	}
	out := &VerifierError{Src: spec.Source, Program: p.Name, Insn: -1, Log: ve.Log, Err: err}
	// The refused instruction is the last one the verifier printed.
	raw := -1
	for i := len(ve.Log) - 1; i >= 0; i-- {
		if m := verifierInsnRE().FindStringSubmatch(ve.Log[i]); m != nil {
			raw, _ = strconv.Atoi(m[1])
			break
		}
	}
	out.Reason = verifierReason(ve.Log, ve.Cause)
	if raw >= 0 {
		off := 0
		for i, ins := range p.Insns {
			if off == raw {
				out.Insn = i
				out.Span = insnSpan(spec.Source, ins)
				break
			}
			off += int(ins.Size() / asm.InstructionSize)
		}
		// Without a position on that instruction, use the nearest earlier
		// one that has one.
		for i := out.Insn; i >= 0 && !out.Span.Start.IsValid(); i-- {
			out.Span = insnSpan(spec.Source, p.Insns[i])
		}
	}
	if loopComplaint(out.Reason) {
		if sp, ok := refusedLoop(spec, p, out.Span); ok {
			out.Span, out.Loop = sp, true
		}
	}
	out.Span = widenEmpty(spec.Source, out.Span)
	return out
}

// verifierReason picks the verifier's complaint: the last log line that is
// not a statistics line.
func verifierReason(log []string, cause error) string {
	for i := len(log) - 1; i >= 0; i-- {
		l := strings.TrimSpace(log[i])
		if l == "" || strings.HasPrefix(l, "processed ") || strings.HasPrefix(l, "verification time") ||
			strings.HasPrefix(l, "stack depth") || strings.HasPrefix(l, "max_states_per_insn") {
			continue
		}
		return l
	}
	if cause != nil {
		return cause.Error()
	}
	return "refused"
}

// insnSpan recovers the script place an instruction was made for. The
// compiler records it with asm's WithSource; accepted forms: anything with
// a Span() lang.Span or Pos() lang.Pos method, a *btf.Line, or a comment
// that starts with "LINE:COL" (optionally after "NAME:").
func insnSpan(src *lang.Source, ins asm.Instruction) lang.Span {
	s := ins.Source()
	if s == nil {
		return lang.Span{}
	}
	switch v := s.(type) {
	case interface{ Span() lang.Span }:
		return v.Span()
	case interface{ Pos() lang.Pos }:
		p := v.Pos()
		return lang.Span{Start: p, End: p}
	case *btf.Line:
		return lineColSpan(src, int(v.LineNumber()), int(v.LineColumn()))
	}
	str := s.String()
	m := srcPosRE().FindStringSubmatch(str)
	if m == nil {
		return lang.Span{}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	sp := lineColSpan(src, line, col)
	if m[3] != "" {
		if ec, err := strconv.Atoi(m[3]); err == nil && ec > col {
			sp.End.Col = ec
			sp.End.Offset = sp.Start.Offset + (ec - col)
		}
	}
	return sp
}

var srcPosRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[^:\s]+:)?(\d+):(\d+)(?:-(\d+))?`) })

func lineColSpan(src *lang.Source, line, col int) lang.Span {
	if line <= 0 {
		return lang.Span{}
	}
	if col <= 0 {
		col = 1
	}
	p := lang.Pos{Line: line, Col: col}
	if src != nil {
		// Offset of the line start plus the column.
		off, l := 0, 1
		for off < len(src.Text) && l < line {
			if src.Text[off] == '\n' {
				l++
			}
			off++
		}
		p.Offset = off + col - 1
	}
	return lang.Span{Start: p, End: p}
}

// Close releases every program, map and attachment. It is safe to call
// more than once.
func (l *Loaded) Close() error {
	var errs []error
	if rd := l.takeRing(); rd != nil {
		rd.Close()
	}
	if l.att != nil {
		errs = append(errs, l.att.detach())
		l.att = nil
	}
	for n, p := range l.Programs {
		if err := p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close program %s: %w", n, err))
		}
		delete(l.Programs, n)
	}
	for n, m := range l.Maps {
		if err := m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close map %s: %w", n, err))
		}
		delete(l.Maps, n)
	}
	return errors.Join(errs...)
}

// minRingBufBytes is the smallest default ring buffer (ringsize.MinBytes).
const minRingBufBytes = ringsize.MinBytes

// errNoLineInfo: the program was not yet loaded without line info.
var errNoLineInfo = errors.New("not loaded without line info")

// verifyAsKprobe loads ps's instructions as a kprobe-type program (and
// closes it): on a kernel that refuses fentry/fexit, this is how a
// kfunc/kretfunc program still goes through the verifier. Its context reads
// (the argument slots) are in bounds of pt_regs; its helpers are the
// tracing ones both program types allow, except those only TRACING programs
// may call (tracingOnlyHelpers: bpf_d_path for path(), bpf_skb_output,
// bpf_get_socket_cookie): their calls become r0 = 0 here, so the rest of
// the program is verified but not the helper's own argument check (a
// BTF-typed pointer the verifier trusts).
var tracingOnlyHelpers = map[asm.BuiltinFunc]bool{asm.FnDPath: true, asm.FnSkbOutput: true, asm.FnGetSocketCookie: true}

func verifyAsKprobe(cs *ebpf.CollectionSpec, ps *ebpf.ProgramSpec, maps map[string]*ebpf.Map) error {
	kp := ps.Copy()
	for i, ins := range kp.Instructions {
		if ins.IsBuiltinCall() && tracingOnlyHelpers[asm.BuiltinFunc(ins.Constant)] {
			kp.Instructions[i] = asm.Mov.Imm(asm.R0, 0).WithMetadata(ins.Metadata)
		}
	}
	kp.Type = ebpf.Kprobe
	kp.AttachType = 0
	kp.AttachTo = ""
	kp.AttachTarget = nil
	coll, err := ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{
		Maps:     referencedMaps(cs, kp),
		Programs: map[string]*ebpf.ProgramSpec{kp.Name: kp},
	}, ebpf.CollectionOptions{MapReplacements: replacementsFor(maps, kp)})
	if err != nil {
		return err
	}
	coll.Close()
	return nil
}

// maxPerCPUValue is the kernel's limit on a per-CPU map's value
// (PCPU_MIN_UNIT_SIZE).
const maxPerCPUValue = 32 << 10

// mapError explains a map the kernel refused to create. E2BIG on the
// scratch map means the script's strings and printf arguments need more
// per-CPU space than the kernel gives one map value.
func mapError(name string, ms *ebpf.MapSpec, err error) error {
	if errors.Is(err, unix.E2BIG) {
		if name == compiler.MapScratch {
			return fmt.Errorf("ERROR: the script needs %d bytes of scratch space per CPU (string literals, printf and str() arguments, GOTRACE_STRLEN), more than the kernel's limit of %d bytes for a per-CPU map value: use shorter literals, fewer printf arguments or a smaller GOTRACE_STRLEN", ms.ValueSize, maxPerCPUValue)
		}
		return fmt.Errorf("ERROR: the kernel refused map %s (key %d bytes, value %d bytes, %d entries): too large", name, ms.KeySize, ms.ValueSize, ms.MaxEntries)
	}
	return fmt.Errorf("create map %s: %w", name, err)
}

// tooComplexError is a program the verifier refused with a log too large
// to read back: it explored too many states.
type tooComplexError struct {
	prog string
	err  error
}

func (e *tooComplexError) Error() string {
	return fmt.Sprintf("ERROR: the BPF verifier refused program %s, which is too large or too complex to verify (its log overflowed): most likely a loop whose bound it cannot see, like while ($i < nsecs), or too many statements in one probe; bound loops by a constant, use unroll, or split the probe", e.prog)
}

func (e *tooComplexError) Unwrap() error { return e.err }

// raiseMemlock lifts RLIMIT_MEMLOCK, as bpftrace does: kernels before 5.11
// charge BPF memory to it. One system call, where cilium/ebpf's rlimit
// package probes the kernel with a map at package initialisation (5 ms of
// every start-up, issue 20). Failure is not an error: kernels from 5.11
// charge the memory cgroup instead, and where the limit matters the map
// creation that meets it says so.
func raiseMemlock() {
	inf := &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if unix.Setrlimit(unix.RLIMIT_MEMLOCK, inf) != nil {
		var cur unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &cur) == nil && cur.Cur < cur.Max {
			cur.Cur = cur.Max // the most an unprivileged process may take
			unix.Setrlimit(unix.RLIMIT_MEMLOCK, &cur)
		}
	}
}
