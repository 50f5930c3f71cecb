package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
)

// Probe is one concrete attach target, after wildcard expansion.
type Probe struct {
	AP      *lang.AttachPoint
	Program *compiler.Program
	// Name is the canonical full name ("tracepoint:syscalls:sys_enter_read").
	Name string
	// Resolved parts, by provider: tracepoint Target=category Func=event;
	// uprobe Target=absolute path Func=symbol Addr/Offset; perf events
	// Config/Period/Freq.
	Target string
	Func   string
	Addr   uint64
	Offset uint64
	// Perf events.
	PerfType   uint32
	PerfConfig uint64
	Period     uint64
	Freq       uint64
	CPUs       []int
	// Note explains where Addr came from when that is not the symbol's
	// own address (an IFUNC's resolved implementation), for attach errors.
	Note string
	// RefCtr is a USDT semaphore's file offset (uprobe ref_ctr_offset).
	RefCtr uint64
	// Multi: the program was loaded for a multi-attach link (uprobe_multi).
	Multi bool
	// Cookie is the attach cookie, for a program that reads `probe` from
	// it: the index of Name in the probe table (probenames.go).
	Cookie uint64
}

// Env is what providers know about the run.
type Env struct {
	PID int // -p or the -c child; limits uprobes
	// Command is the path of the -c command when PID is it, not yet
	// exec'd (it waits in gotrace's exec stub): its maps and root are not
	// the command's, so names resolve as without a process, and usdt
	// probes without a path are the command's.
	Command string
	// Progress, when set, receives attach/detach progress for more than
	// 100 probes if it is a terminal or Verbose is set.
	Progress io.Writer
	Verbose  bool
	// Warn receives warnings (e.g. functions skipped as unsafe); nil
	// drops them.
	Warn func(msg string)
	// Stderr, when set, receives warnings about a place in the script in
	// bpftrace's form (stdin:L:C-C: WARNING: ..., the line, the marker).
	Stderr io.Writer
	// MissingProbes is bpftrace 0.26's missing_probes setting for an
	// attach point that matches nothing: "error" (the default), "warn"
	// (skip it, saying so) or "ignore" (skip it); "legacy" keeps bpftrace
	// 0.17's error ("could not resolve symbol ...").
	MissingProbes string
	// TracerOnly (--mode test) expands only the probes the tracer runs
	// itself (BEGIN, END, test ...): nothing attaches.
	TracerOnly bool
	// Unsafe: --unsafe (a uprobe on a function of unknown size is
	// attached in bpftrace 0.26 only with it).
	Unsafe bool

	src *lang.Source // the script, for warnAt
}

// lookupPID is the process whose mappings and root resolve names: none
// for a -c command that has not exec'd yet.
func (e *Env) lookupPID() int {
	if e == nil || e.Command != "" {
		return 0
	}
	return e.PID
}

// warnAt warns about attach point ap, at its place in the script when
// that is known.
func (e *Env) warnAt(ap *lang.AttachPoint, msg string) {
	if e == nil {
		return
	}
	if e.Stderr != nil && e.src != nil && ap != nil && ap.Span().Start.IsValid() {
		d := &lang.Diagnostics{Src: e.src}
		d.Add(lang.Warning, ap.Span(), "", "%s", msg)
		fmt.Fprintln(e.Stderr, d.Error())
		return
	}
	e.warnf("%s", msg)
}

func (e *Env) warnf(format string, args ...any) {
	if e != nil && e.Warn != nil {
		e.Warn(fmt.Sprintf(format, args...))
	}
}

// provider is one probe type: it expands attach points against the live
// system and attaches programs to the expansions.
type provider interface {
	// Expand resolves ap into concrete probes, or fails naming ap and the
	// reason (unknown target, kernel lacks the probe type ...). It must not
	// attach anything.
	Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error)
	// Attach attaches prog to probes (all from one attach point). It
	// returns everything it attached, also on error, so the caller can
	// release it.
	Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error)
}

// providers are the runtime's providers, by the probe type (a row of
// lang's probe table) each serves.
var providers = map[lang.ProbeKind]provider{}

func register(kind lang.ProbeKind, p provider) {
	if _, dup := providers[kind]; dup || kind.Type().Special() {
		panic(fmt.Sprintf("runtime: provider for %s registered twice, or for a probe type the tracer runs itself", kind))
	}
	providers[kind] = p
}

// probeSide is what the kprobe, uprobe and kfunc providers share: each
// serves an entry and a return probe type, told apart by ret.
type probeSide struct {
	ret  bool
	kind lang.ProbeKind
}

// registerPair registers a provider for an entry probe type and its
// return twin.
func registerPair(entry, exit lang.ProbeKind, mk func(probeSide) provider) {
	register(entry, mk(probeSide{kind: entry}))
	register(exit, mk(probeSide{ret: true, kind: exit}))
}

func providerFor(ap *lang.AttachPoint) (provider, error) {
	p, ok := providers[ap.Provider]
	if !ok {
		return nil, fmt.Errorf("%s: probe type %q is not supported", apName(ap), ap.Provider)
	}
	return p, nil
}

// noMatchError is a provider's Expand finding nothing an attach point
// names (a missing function, a pattern that matches none): what
// missing_probes decides about.
type noMatchError struct{ err error }

func (e *noMatchError) Error() string { return e.err.Error() }
func (e *noMatchError) Unwrap() error { return e.err }

// apName is an attach point as the user wrote it.
func apName(ap *lang.AttachPoint) string {
	if ap.Raw != "" {
		return ap.Raw
	}
	return ap.Provider.String()
}

// ProbeError is an attach point that cannot be expanded or attached. It
// prints with the script place when the attach point has one.
type ProbeError struct {
	Src *lang.Source
	AP  *lang.AttachPoint
	Err error
}

func (e *ProbeError) Unwrap() error { return e.Err }

func (e *ProbeError) Error() string {
	var bare *bareError
	if e.AP == nil || !e.AP.Span().Start.IsValid() || e.Src == nil || errors.As(e.Err, &bare) {
		return "ERROR: " + e.Err.Error()
	}
	d := &lang.Diagnostics{Src: e.Src}
	hint := ""
	var he *lang.HintError
	if errors.As(e.Err, &he) {
		hint = he.Hint
	}
	d.Add(lang.Error, e.AP.Span(), hint, "%s", e.Err.Error())
	return d.Error()
}

// plan is the expanded set of probes of a Spec.
type plan struct {
	begin, end []*compiler.Program
	signal     []*compiler.Program // self:signal:SIGUSR1, in script order
	groups     []probeGroup
	total      int          // probes counted as bpftrace counts them (BEGIN/END included)
	bench      []benchProbe // bench:NAME probes, in script order (--mode bench)
	tests      []testProbe  // test:NAME probes, in script order (--mode test)
}

type probeGroup struct {
	prov   provider
	ap     *lang.AttachPoint
	prog   *compiler.Program
	probes []*Probe
}

// probeCount is how many probes a run-once program counts for: none for
// the parts after the first of a clause split between its statements
// (compiler/split.go), which run as part of its one probe.
func probeCount(p *compiler.Program) int {
	if p.Continues {
		return 0
	}
	return 1
}

// Expand resolves every attach point of the loaded programs. maxProbes
// (<= 0: the default) is checked here, before anything is attached.
func (l *Loaded) Expand(env *Env, maxProbes int) (*plan, error) {
	if env == nil {
		env = &Env{}
	}
	env.src = l.Spec.Source
	pl := &plan{}
	rawGroup := map[string]int{} // lowered syscalls program → its group
	// The attach points of each clause, to tell a missing tracepoint alone
	// in its clause (an error) from one beside others (a warning).
	clauseAPs := map[int]map[*lang.AttachPoint]bool{}
	for _, p := range l.Spec.Programs {
		if clauseAPs[p.Clause] == nil {
			clauseAPs[p.Clause] = map[*lang.AttachPoint]bool{}
		}
		for _, ap := range p.Attach {
			clauseAPs[p.Clause][ap] = true
		}
	}
	for _, p := range l.Spec.Programs {
		for _, ap := range p.Attach {
			switch ap.Provider.Type().Trigger {
			case lang.TriggerBegin:
				pl.begin = append(pl.begin, p)
				pl.total += probeCount(p)
				continue
			case lang.TriggerEnd:
				pl.end = append(pl.end, p)
				pl.total += probeCount(p)
				continue
			case lang.TriggerSignal:
				pl.signal = append(pl.signal, p)
				pl.total += probeCount(p)
				continue
			case lang.TriggerBench:
				pl.bench = append(pl.bench, benchProbe{name: ap.Func, prog: p})
				pl.total++
				continue
			case lang.TriggerTest:
				pl.tests = append(pl.tests, testProbe{name: ap.Func, prog: p})
				pl.total++
				continue
			}
			if env.TracerOnly {
				continue
			}
			prov, err := providerFor(ap)
			if err != nil {
				return nil, &ProbeError{Src: l.Spec.Source, AP: ap, Err: err}
			}
			if p.RawSyscall != "" {
				prov = rawSyscallProvider{}
			}
			probes, err := prov.Expand(ap, env)
			if err != nil && env.MissingProbes == "legacy" && droppedByBpftrace017(ap, p, err) {
				continue
			}
			var mt *missingTracepoint
			if errors.As(err, &mt) && len(clauseAPs[p.Clause]) > 1 {
				env.warnAt(ap, mt.Msg)
				if env.MissingProbes == "legacy" {
					// bpftrace 0.17 counts it in "Attaching N probes..."
					// (then fails to open it, which it only prints).
					pl.total++
				}
				continue
			}
			var nm *noMatchError
			if errors.As(err, &nm) && env.MissingProbes != "legacy" {
				// bpftrace 0.26's words, per missing_probes.
				what := strings.TrimPrefix(apName(ap), ap.Raw[:strings.IndexByte(ap.Raw+":", ':')+1])
				msg := fmt.Sprintf("No matches for %s %s.", ap.Provider, what)
				switch env.MissingProbes {
				case "ignore":
					continue
				case "warn":
					env.warnAt(ap, msg+" Skipping.")
					continue
				}
				var he *lang.HintError
				hint := ""
				if errors.As(err, &he) {
					hint = he.Hint
				}
				err = &lang.HintError{Msg: msg, Hint: hint}
			}
			if err != nil {
				return nil, &ProbeError{Src: l.Spec.Source, AP: ap, Err: err}
			}
			if p.AttachTo != "" {
				// A BTF-attached program serves one function: keep that one.
				kept := probes[:0]
				for _, pr := range probes {
					if pr.Func == p.AttachTo {
						kept = append(kept, pr)
					}
				}
				if len(kept) == 0 {
					return nil, &ProbeError{Src: l.Spec.Source, AP: ap, Err: fmt.Errorf("%s does not match the program's target %s", apName(ap), p.AttachTo)}
				}
				probes = kept
			}
			for _, pr := range probes {
				pr.AP, pr.Program, pr.Multi = ap, p, l.multi[p.Name]
			}
			if ap.Provider == lang.ProbeUSDT && env.MissingProbes != "legacy" {
				// bpftrace 0.26 counts a USDT probe with several
				// locations once ("Attached 3 probes" for 6 locations);
				// 0.17 counts each location.
				names := map[string]bool{}
				for _, pr := range probes {
					names[pr.Name] = true
				}
				pl.total += len(names)
			} else {
				pl.total += len(probes)
			}
			if p.RawSyscall != "" {
				// One link serves all of the program's tracepoints: one group.
				if i, ok := rawGroup[p.Name]; ok {
					pl.groups[i].probes = append(pl.groups[i].probes, probes...)
					continue
				}
				rawGroup[p.Name] = len(pl.groups)
			}
			pl.groups = append(pl.groups, probeGroup{prov: prov, ap: ap, prog: p, probes: probes})
		}
	}
	l.nameProbes(pl)
	if err := l.writeProbeNames(); err != nil {
		return nil, err
	}
	limit := maxProbesLimit(maxProbes)
	if pl.total > limit {
		return nil, fmt.Errorf("ERROR: Can't attach to %d probes because it exceeds the current limit of %d probes.\n"+
			"You can increase the limit through the GOTRACE_MAX_PROBES (or BPFTRACE_MAX_PROBES) environment variable, but BE CAREFUL since a high number of probes attached can cause your system to crash.",
			pl.total, limit)
	}
	if err := checkFDLimit(pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// fdMargin are descriptors kept free for what opens after the check: the
// ring buffer's epoll, output files, a -c child's pipes, the reaper.
const fdMargin = 32

// fdsNeeded estimates the descriptors attaching the plan keeps open: one
// link per multi-link group (per binary for uprobe_multi) or raw syscall
// program, else per probe a perf event and its link (kfunc and raw
// tracepoints: the link alone), perf events once per CPU.
func fdsNeeded(pl *plan) int {
	n := 0
	for _, g := range pl.groups {
		if len(g.probes) == 0 {
			continue
		}
		if g.probes[0].Program.RawSyscall != "" {
			n++
			continue
		}
		if g.probes[0].Multi {
			targets := map[string]bool{}
			for _, p := range g.probes {
				targets[p.Target] = true
			}
			n += len(targets)
			continue
		}
		for _, p := range g.probes {
			switch g.ap.Provider {
			case lang.ProbeKfunc, lang.ProbeKretfunc, lang.ProbeRawTracepoint: // a link alone
				n++
			default:
				n += 2 * max(1, len(p.CPUs))
			}
		}
	}
	return n
}

// checkFDLimit fails, before anything is attached, when the plan's
// descriptors would not fit in RLIMIT_NOFILE, instead of running out of
// descriptors half-way. (The Go runtime has raised the soft limit to the
// hard one at start-up already.)
func checkFDLimit(pl *plan) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read RLIMIT_NOFILE: %w", err)
	}
	need := fdsNeeded(pl)
	if lim.Cur == unix.RLIM_INFINITY || uint64(need+fdMargin) <= lim.Cur/2 {
		// Room for the plan in half the limit: the descriptors open now
		// are not counted (reading /proc/self/fd was 0.1 ms of every
		// start-up). A tracer that inherited more than the other half
		// fails at the attach, with the kernel's "too many open files".
		return nil
	}
	open := 0
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = len(ents)
	}
	if lim.Cur == unix.RLIM_INFINITY || uint64(open+need+fdMargin) <= lim.Cur {
		return nil
	}
	return fmt.Errorf("ERROR: Can't attach to %d probes: they need %d file descriptors and %d are open already, more than the open files limit of %d (RLIMIT_NOFILE, hard limit %d).\n"+
		"Raise the limit with ulimit -n, or trace fewer probes.",
		pl.total, need, open, lim.Cur, lim.Max)
}

// DefaultMaxProbes is bpftrace's max_probes.
const DefaultMaxProbes = 512

func maxProbesLimit(n int) int {
	if n > 0 {
		return n
	}
	return DefaultMaxProbes
}

// ProbeNames lists the expanded probes, for -v and tests.
func (pl *plan) ProbeNames() []string {
	var out []string
	for _, g := range pl.groups {
		for _, p := range g.probes {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// attachment is what Attach created.
type attachment struct {
	closers []io.Closer
	plan    *plan
	// lateFDs are the perf-event and BPF-link descriptors that
	// lateClosers (stop-switched attachments made by cilium) hold; the
	// reaper takes duplicates of them (detach.go).
	lateFDs []int
}

// Attach attaches every probe of the plan, all or nothing: if any fails,
// everything attached is detached again and the error (*AttachError)
// sums up which probes failed and why. After a failure the remaining
// probes are still tried (up to maxAttachFailures failures), so the
// summary is complete.
func (l *Loaded) Attach(pl *plan, env *Env) error {
	if l.att != nil {
		return errors.New("attach: already attached")
	}
	if env == nil {
		env = &Env{}
	}
	att := &attachment{plan: pl}
	pr := newProgress(env.Progress, env.Verbose, "Attaching", pl.total)
	defer pr.end()
	ae := &AttachError{Src: l.Spec.Source, Total: pl.total}
	for _, g := range attachOrder(pl.groups) {
		if len(ae.Failed) >= maxAttachFailures {
			ae.Untried += len(g.probes)
			continue
		}
		prog := l.Programs[g.prog.Name]
		if prog == nil {
			ae.add(g.ap, apName(g.ap), len(g.probes), fmt.Errorf("program %s was not loaded", g.prog.Name))
			continue
		}
		var before map[int]bool
		late := l.stopSwitch[g.prog.Name] && g.prov != provider(tracepointProvider{})
		if late {
			before = probeFDs()
		}
		cl := attachGroup(g, prog, env, pr, ae)
		if l.stopSwitch[g.prog.Name] {
			for i, c := range cl {
				if fc, ok := c.(*fdCloser); ok {
					fc.stoppable = true
				} else if late {
					cl[i] = &lateCloser{c}
				}
			}
		}
		if late {
			for fd := range probeFDs() {
				if !before[fd] {
					att.lateFDs = append(att.lateFDs, fd)
				}
			}
		}
		att.closers = append(att.closers, cl...)
	}
	DiscardTracepoints() // what no probe took
	if len(ae.Failed) > 0 {
		ae.DetachErr = att.detach()
		return ae
	}
	l.att = att
	l.progressEnv = env
	return nil
}

// maxAttachFailures: after this many failed probes the rest are not tried
// (each failure can take a while, and the summary has enough to say).
const maxAttachFailures = 20

// attachGroup attaches one group and returns everything it attached; each
// failure is added to ae. A multi-link or raw-syscall group is one kernel
// call; the others attach probe by probe, so a failure names its probe and
// the probes after it are still tried.
func attachGroup(g probeGroup, prog *ebpf.Program, env *Env, pr *progress, ae *AttachError) []io.Closer {
	if len(g.probes) == 0 {
		return nil
	}
	if g.probes[0].Multi || g.probes[0].Program.RawSyscall != "" {
		cl, err := g.prov.Attach(prog, g.probes, env)
		pr.add(len(g.probes))
		if err != nil {
			ae.add(g.ap, apName(g.ap), len(g.probes), err)
		}
		return cl
	}
	var out []io.Closer
	for i, p := range g.probes {
		if len(ae.Failed) >= maxAttachFailures {
			ae.Untried += len(g.probes) - i
			break
		}
		cl, err := g.prov.Attach(prog, g.probes[i:i+1], env)
		pr.add(1)
		out = append(out, cl...)
		if err != nil {
			ae.add(g.ap, p.Name, 1, err)
		}
	}
	return out
}

// AttachError is an attach that failed: nothing stays attached (what was
// attached before or after the failures has been detached again).
type AttachError struct {
	Src     *lang.Source
	Total   int // probes of the plan
	Failed  []AttachFailure
	Untried int // probes not tried after maxAttachFailures failures
	// DetachErr is an error while rolling back, if any.
	DetachErr error
}

// AttachFailure is one probe (or multi-link group of Probes probes) that
// did not attach.
type AttachFailure struct {
	AP     *lang.AttachPoint
	Name   string
	Probes int
	Err    error
}

func (e *AttachError) add(ap *lang.AttachPoint, name string, n int, err error) {
	e.Failed = append(e.Failed, AttachFailure{AP: ap, Name: name, Probes: n, Err: err})
}

func (e *AttachError) Unwrap() []error {
	out := make([]error, 0, len(e.Failed)+1)
	for _, f := range e.Failed {
		out = append(out, f.Err)
	}
	if e.DetachErr != nil {
		out = append(out, e.DetachErr)
	}
	return out
}

// Error is one line: "3 of 40 probes failed to attach: kprobe:a, kprobe:b
// (reason), kprobe:c (other reason); nothing was attached". Probes failing
// for the same reason are listed together (at most 3 names each, for at
// most 3 reasons). When every failure is on one attach point of the
// script, the line carries that attach point's place and source line.
func (e *AttachError) Error() string {
	failed := 0
	type reason struct {
		text  string
		names []string
		n     int
	}
	var reasons []*reason
	byText := map[string]*reason{}
	sameAP := true
	for _, f := range e.Failed {
		failed += f.Probes
		if f.AP != e.Failed[0].AP {
			sameAP = false
		}
		// Providers say "attach NAME: why": the name is listed already.
		text := strings.TrimPrefix(f.Err.Error(), "attach "+f.Name+": ")
		r := byText[text]
		if r == nil {
			r = &reason{text: text}
			byText[text] = r
			reasons = append(reasons, r)
		}
		r.n++
		name := f.Name
		if f.Probes > 1 {
			name = fmt.Sprintf("%s (%d probes)", f.Name, f.Probes)
		}
		r.names = append(r.names, name)
	}
	var parts []string
	for i, r := range reasons {
		if i == 3 {
			rest := 0
			for _, r := range reasons[3:] {
				rest += r.n
			}
			parts = append(parts, fmt.Sprintf("%d more for other reasons", rest))
			break
		}
		names := r.names
		if len(names) > 3 {
			names = append(names[:3:3], fmt.Sprintf("and %d more", len(r.names)-3))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(names, ", "), r.text))
	}
	plural := "s"
	if e.Total == 1 {
		plural = ""
	}
	msg := fmt.Sprintf("%d of %d probe%s failed to attach: %s", failed, e.Total, plural, strings.Join(parts, ", "))
	if e.Untried > 0 {
		msg += fmt.Sprintf("; %d not tried after %d failures", e.Untried, len(e.Failed))
	}
	if e.DetachErr != nil {
		msg += fmt.Sprintf("; detaching the others failed too: %v", e.DetachErr)
	} else {
		msg += "; nothing was attached"
	}
	if sameAP && e.Failed[0].AP != nil {
		pe := &ProbeError{Src: e.Src, AP: e.Failed[0].AP, Err: errors.New(msg)}
		return pe.Error()
	}
	return "ERROR: " + msg
}

// The probe table's ReverseAttach are the probe types whose kernel hooks
// run the handler attached last first (uprobe consumers and perf-event programs are
// prepended). bpftrace 0.17 attaches them in reverse script order so that
// clauses on one event run in script order; the others in script order.
// reverseAttach: whether ap's probe type runs the handler attached last
// first. A software clock event (cpu-clock, task-clock) is the exception:
// each such perf event has its own timer, so the one attached first fires
// first and they attach in script order (bpftrace's probe.software_order
// test on software:cpu:1e6).
func reverseAttach(ap *lang.AttachPoint) bool {
	if ap.Provider == lang.ProbeSoftware {
		switch ap.Func {
		case "cpu", "cpu-clock", "task-clock":
			return false
		}
	}
	return ap.Provider.Type().ReverseAttach
}

// attachOrder is the order Attach attaches groups in, as bpftrace 0.17:
// first the forward types in script order, then the reverse types in
// reverse script order.
func attachOrder(groups []probeGroup) []probeGroup {
	out := make([]probeGroup, 0, len(groups))
	for _, g := range groups {
		if !reverseAttach(g.ap) {
			out = append(out, g)
		}
	}
	for i := len(groups) - 1; i >= 0; i-- {
		if reverseAttach(groups[i].ap) {
			out = append(out, groups[i])
		}
	}
	return out
}

// Detach releases every attachment (programs and maps stay loaded).
func (l *Loaded) Detach() error {
	if l.att == nil {
		return nil
	}
	var pr *progress
	if l.progressEnv != nil {
		pr = newProgress(l.progressEnv.Progress, l.progressEnv.Verbose, "Detaching", len(l.att.closers))
	}
	err := l.att.detach(pr)
	pr.end()
	l.att = nil
	return err
}

// detach closes every link and perf event in parallel: closing a
// tracepoint link waits for two RCU grace periods (see detach.go), so a
// serial detach of hundreds of probes takes tens of seconds.
func (a *attachment) detach(pr ...*progress) error {
	cl := a.closers
	a.closers = nil
	var p *progress
	if len(pr) > 0 {
		p = pr[0]
	}
	return parallel(len(cl), func(i int) error {
		defer p.add(1)
		return cl[i].Close()
	})
}

// closerFunc adapts a function to io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// glob and hasWildcard are ktypes.Glob and ktypes.HasWildcard (bpftrace's
// wildcards), shared with the USDT note reader.
var (
	glob        = ktypes.Glob
	hasWildcard = ktypes.HasWildcard
)

// droppedByBpftrace017 reports whether bpftrace 0.17 silently drops an
// attach point whose expansion matched nothing: a kprobe, uprobe or usdt
// attach point is expanded when it has a wildcard or its program reads
// `probe`, and an expansion matching nothing leaves no probe (nor a line
// in "Attaching N probes..."); the script runs without it
// ("kprobe:zzzzz { probe; } BEGIN { exit(); }" runs BEGIN).
func droppedByBpftrace017(ap *lang.AttachPoint, p *compiler.Program, err error) bool {
	switch ap.Provider {
	case lang.ProbeKprobe, lang.ProbeKretprobe, lang.ProbeUprobe, lang.ProbeUretprobe, lang.ProbeUSDT:
	default:
		return false
	}
	if !hasWildcard(ap.Target) && !hasWildcard(ap.Func) && !hasWildcard(ap.NS) && p.Probe == compiler.ProbeUnused {
		return false
	}
	var nm *noMatchError
	var miss *noKernelFuncError
	return errors.As(err, &nm) || errors.As(err, &miss)
}
