// Package gotrace is the whole flow in one place: a script's text becomes a
// checked, typed program, then a compiled Spec (BPF programs, maps by name,
// event formats — no kernel touched), which runtime.Run loads, attaches and
// prints from.
//
//	source ─ lang.Parse ─▶ AST ─ check.Check ─▶ typed program ─ compiler.Compile ─▶ Spec ─ runtime.Run
package gotrace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/config"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

// Options configure Compile.
type Options struct {
	// Mark, when set, is called as each phase ends ("parse", "check",
	// "compile"): the command's GOTRACE_TIMING=1 phase clock.
	Mark func(phase string)
	// OnRingBuf, when set, is called as compiling first needs the event
	// ring buffer (compiler.Options.OnRingBuf).
	OnRingBuf func()
	// OnProbes, when set, is called with the script's attach points once
	// it has parsed (and -P's filter applied), before it is checked and
	// compiled: the command opens their tracepoints meanwhile
	// (runtime.PrepareTracepoints; runtime.DiscardTracepoints closes
	// them if the script then fails to compile).
	OnProbes func([]*lang.AttachPoint)

	Params      []string // positional parameters $1..$N
	StrLen      int      // 0: 64
	Unsafe      bool
	IncludeDirs []string // -I
	Includes    []string // --include
	PID         int      // -p: usdt probes without a path are found in this process
	HelperCheck int      // -k (1), -kk (2)
	// ChildCommand: -c gives a command, so cpid has a value.
	ChildCommand bool
	// DumpAST keeps the parsed program's dump, before the checker types
	// it, in Compiled.AST (-d).
	DumpAST bool
	// Compat is the bpftrace release to follow where 0.17 and 0.26 differ.
	Compat compat.Version
	// Host describes the machine and the tracer (ncpus, the tracer's pid
	// namespace), read by cmd/gotrace.
	Host stdlib.Host
	// NamedParams are the program options after "--" ("name" or
	// "name=value"), which getopt() reads.
	NamedParams []string
	// ProbeFilter (--probe-filter) keeps only the probes whose name
	// matches this regular expression.
	ProbeFilter string
	// TraceableFunctions (--traceable-functions), when not nil, are the
	// kernel functions kprobes may attach to, instead of the kernel's
	// available_filter_functions.
	TraceableFunctions []string
	// DebugDirs (--debuginfo) are more directories holding the separate
	// debug information of stripped uprobe targets.
	DebugDirs []string
	// MapKeysMax is the entries of a keyed map (BPFTRACE_MAX_MAP_KEYS);
	// 0 is 4096.
	MapKeysMax uint32
	// StackMode is kstack/ustack's print mode when the script names none.
	StackMode types.StackMode
	// DummyTseriesMap is check.Options.DummyTseriesMap (the command sets it
	// from BPFTRACE_DUMMY_TS_MAP).
	DummyTseriesMap string
	// SyscallTracepoints is how syscalls:* tracepoints attach: "raw",
	// "perf" or "" (auto) (GOTRACE_SYSCALL_TRACEPOINTS).
	SyscallTracepoints string
	// MaxProbes, when positive, refuses a script with more probes before
	// anything is compiled (runtime.Options.MaxProbes checks the expanded
	// wildcards again).
	MaxProbes int
	// Env are the settings' environment variables (config.EnvNames) that
	// are set, by name; Flags are settings the command line gave, by key.
	// With the script's config block they resolve to Compiled.Settings.
	Env   map[string]string
	Flags map[string]string
}

// Compiled is everything Compile produced, for printing stages (-d) too.
type Compiled struct {
	AST     string // lang.Dump of the parsed program (Options.DumpAST)
	Prog    *lang.Program
	Checked *check.Result
	Spec    *compiler.Spec
	// Settings are the resolved config settings (package config).
	Settings *config.Settings
}

// Compile parses, checks and compiles src. Errors from the first two stages
// are *lang.Diagnostics; the returned Compiled holds whatever stages
// finished, so -d can print them.
func Compile(src *lang.Source, opts Options) (*Compiled, error) {
	out := &Compiled{}
	mark := opts.Mark
	if mark == nil {
		mark = func(string) {}
	}
	prog, err := lang.ParseWith(src, lang.ParseOptions{Imports: !opts.Compat.Legacy()})
	mark("parse")
	if err != nil {
		return out, err
	}
	if opts.Compat.Legacy() {
		if err := refuseLater(src, prog); err != nil {
			return out, err
		}
	}
	out.Prog = prog
	if len(prog.Probes) == 0 {
		// Only blanks, comments or declarations: bpftrace's parser wants
		// a probe and says so (it used to attach 0 probes and wait).
		d := &lang.Diagnostics{Src: src}
		d.Errorf(lang.Span{Start: lang.Pos{Line: 1, Col: 1}, End: lang.Pos{Offset: 1, Line: 1, Col: 2}}, "unexpected end of file, expected {")
		return out, d
	}
	if opts.ProbeFilter != "" {
		if err := filterProbes(prog, opts.ProbeFilter); err != nil {
			return out, err
		}
	}
	if err := probeLimit(prog, opts.MaxProbes); err != nil {
		return out, err
	}
	if opts.OnProbes != nil {
		var aps []*lang.AttachPoint
		for _, p := range prog.Probes {
			aps = append(aps, p.Attach...)
		}
		opts.OnProbes(aps)
	}
	if opts.DumpAST {
		out.AST = lang.Dump(prog)
	}
	named := stdlib.ParseNamedParams(opts.NamedParams)
	if err := stdlib.CheckNamedParams(prog, named); err != nil {
		return out, err
	}
	if opts.TraceableFunctions != nil {
		if err := checkTraceable(prog, opts.TraceableFunctions); err != nil {
			return out, err
		}
	}
	var items []config.Item
	for _, ci := range prog.Config {
		ks := ci.Span()
		if ks.Start.IsValid() {
			ks.End = ks.Start
			ks.End.Col += len(ci.Key)
			ks.End.Offset += len(ci.Key)
		}
		items = append(items, config.Item{Key: ci.Key, Value: ci.Value, Span: ci.Span(), KeySpan: ks})
	}
	settings, cerrs := config.Resolve(items, opts.Env, opts.Flags)
	if len(cerrs) > 0 {
		d := &lang.Diagnostics{Src: src}
		for _, e := range cerrs {
			sp, _ := e.Span.(lang.Span)
			d.Errorf(sp, "%s", e.Msg)
		}
		return out, d
	}
	out.Settings = settings
	if lic := settings.Get("license"); !config.GPLCompatible(lic) {
		// bpftrace's helpers are GPL-only: it refuses the script up front.
		d := &lang.Diagnostics{Src: src}
		d.Errorf(lang.Span{}, "Your bpftrace program cannot load because you are using a license that is non-GPL compatible. License: %s", lic)
		return out, d
	}
	if settings.Source("max_strlen") != config.Default || opts.StrLen == 0 {
		opts.StrLen = settings.Int("max_strlen")
	}
	stackMode := opts.StackMode
	if settings.Source("stack_mode") != config.Default {
		stackMode = stdlib.StackModes[settings.Get("stack_mode")]
	}
	// The environment's value came in through settings (opts.Env) or
	// opts: a setting that is not the default wins over opts.
	mapKeys := opts.MapKeysMax
	if settings.Source("max_map_keys") != config.Default {
		mapKeys = uint32(settings.Int("max_map_keys"))
	}

	var decls []string
	for _, d := range prog.Decls {
		decls = append(decls, d.Text)
	}
	if err := missingIncludes(src, prog, opts.IncludeDirs); err != nil {
		return out, err
	}
	for _, inc := range opts.Includes {
		// --include FILE: clang's words, as bpftrace prints them.
		if !ktypes.IsKernelHeader(inc) && ktypes.FindInclude(inc, true, opts.IncludeDirs, "") == "" {
			return out, fmt.Errorf("fatal error: '%s' file not found", inc)
		}
	}
	includes := append([]string(nil), opts.Includes...)
	for _, inc := range prog.Includes {
		if inc.System {
			includes = append(includes, "<"+inc.Path+">")
		} else {
			includes = append(includes, "\""+inc.Path+"\"")
		}
	}
	var binaries []string // uprobe targets: their DWARF types resolve casts and args
	for _, p := range prog.Probes {
		for _, ap := range p.Attach {
			if (ap.Provider == lang.ProbeUprobe || ap.Provider == lang.ProbeUretprobe) && ap.Target != "" {
				binaries = append(binaries, ap.Target)
			}
		}
	}
	ktypes.SetDebugDirs(opts.DebugDirs) // statement probes and stacks find split-off DWARF there too
	resolver := ktypes.New(ktypes.Options{CDecls: decls, Includes: includes, IncludeDirs: opts.IncludeDirs, Binaries: binaries, DebugDirs: opts.DebugDirs, PID: opts.PID})

	res, err := check.Check(prog, check.Options{
		Params:   opts.Params,
		Resolver: resolver,
		StrLen:   opts.StrLen,
		Unsafe:   opts.Unsafe,
		// cpid is an error without -c (bpftrace's rule).
		NoCpid:      !opts.ChildCommand,
		NoTarget:    !opts.ChildCommand && opts.PID == 0,
		Compat:      opts.Compat,
		NamedParams: named,
		StackMode:   stackMode,

		DummyTseriesMap: opts.DummyTseriesMap,
	})
	mark("check")
	if err != nil {
		return out, err
	}
	out.Checked = res

	spec, err := compiler.Compile(res, compiler.Options{
		License:     settings.Get("license"),
		HelperCheck: opts.HelperCheck,
		MapKeysMax:  mapKeys,
		// GOTRACE_SYSCALL_TRACEPOINTS=perf keeps syscalls tracepoints on
		// the kernel's perf events (compiler/syscalls.go).
		SyscallTracepoints: syscallMode(opts.SyscallTracepoints),
		Host:               opts.Host,
		OnRingBuf:          opts.OnRingBuf,
	})
	mark("compile")
	if err != nil {
		// A compiler error has a place in the script: print it as a
		// diagnostic, with the source line and marker.
		// One without a place prints as "ERROR: msg".
		var ce *compiler.Error
		if errors.As(err, &ce) {
			d := &lang.Diagnostics{Src: src}
			d.Add(lang.Error, ce.Span, ce.Hint, "%s", ce.Msg)
			return out, d
		}
		return out, err
	}
	out.Spec = spec
	return out, nil
}

// haveKernelBTF reports whether the kernel describes itself in BTF.
func haveKernelBTF() bool {
	_, err := os.Stat("/sys/kernel/btf/vmlinux")
	return err == nil
}

// IncludeError is a script #include that is found nowhere, printed as
// bpftrace 0.17 prints clang's error: the script's C part is the file
// "definitions.h", one line below the script's numbering; the column is
// the target's opening '<' or '"'.
type IncludeError struct {
	Line, Col int
	Target    string
}

func (e *IncludeError) Error() string {
	return fmt.Sprintf("definitions.h:%d:%d: fatal error: '%s' file not found", e.Line+1, e.Col, e.Target)
}

// missingIncludes fails on the first #include that is neither found (-I
// directories, then the system ones) nor a kernel header: a kernel header
// that is not installed is left to BTF, which describes the same types
// (bpftrace 0.17 needs the headers; gotrace does not).
func missingIncludes(src *lang.Source, prog *lang.Program, dirs []string) error {
	for _, inc := range prog.Includes {
		if ktypes.IsKernelHeader(inc.Path) || ktypes.FindInclude(inc.Path, !inc.System, dirs, "") != "" {
			continue
		}
		st := inc.Span().Start
		text := src.Line(st.Line)
		col := strings.IndexAny(text, "<\"") + 1
		if col <= 0 {
			col = st.Col
		}
		return &IncludeError{Line: st.Line, Col: col, Target: inc.Path}
	}
	return nil
}

// syscallMode is Options.SyscallTracepoints (auto, raw or perf) for
// compiler.Options.SyscallTracepoints. Programs on the raw sys_enter and
// sys_exit tracepoints read registers through BTF pointers, which needs
// the kernel's BTF: without it, perf.
func syscallMode(m string) string {
	if !haveKernelBTF() {
		return "perf"
	}
	switch m {
	case "raw", "perf":
		return m
	}
	return ""
}

// refuseLater refuses, under --compat 0.17, the constructs of prog that
// bpftrace 0.17 does not have, each with the bpftrace release that added
// it.
func refuseLater(src *lang.Source, prog *lang.Program) error {
	d := &lang.Diagnostics{Src: src}
	for _, imp := range prog.Imports {
		d.Errorf(imp.Span(), "import was added in bpftrace 0.25; --compat 0.17 follows bpftrace 0.17, which has no imports")
	}
	for _, p := range prog.Probes {
		for _, ap := range p.Attach {
			if ap.Name == "" {
				continue
			}
			sp := ap.Span()
			sp.End = sp.Start
			sp.End.Offset += len(ap.Name) + 1
			sp.End.Col += len(ap.Name) + 1
			d.Errorf(sp, "named probes (%s=) were added in bpftrace 0.25; --compat 0.17 follows bpftrace 0.17, which has no probe names", ap.Name)
		}
	}
	d.Sort()
	return d.Err()
}

// ProbeName is an attach point's full name as --probe-filter matches it:
// the canonical provider, then the parts as written (interval:ms:100).
func ProbeName(ap *lang.AttachPoint) string {
	_, rest, ok := strings.Cut(ap.Raw, ":")
	if !ok {
		return ap.Provider.String()
	}
	return ap.Provider.String() + ":" + rest
}

// filterProbes keeps the attach points whose name matches the regular
// expression expr (--probe-filter), and the clauses left with any.
func filterProbes(prog *lang.Program, expr string) error {
	re, err := regexp.Compile(expr)
	if err != nil {
		return fmt.Errorf("Invalid --probe-filter regex: %s", expr)
	}
	var probes []*lang.Probe
	for _, p := range prog.Probes {
		var aps []*lang.AttachPoint
		for _, ap := range p.Attach {
			if re.MatchString(ProbeName(ap)) {
				aps = append(aps, ap)
			}
		}
		if len(aps) > 0 {
			p.Attach = aps
			probes = append(probes, p)
		}
	}
	if len(probes) == 0 {
		return fmt.Errorf("No probes match --probe-filter '%s'", expr)
	}
	prog.Probes = probes
	return nil
}

// checkTraceable fails on a kprobe/kretprobe whose function (a wildcard
// pattern too) matches none of funcs (--traceable-functions).
func checkTraceable(prog *lang.Program, funcs []string) error {
	for _, p := range prog.Probes {
		for _, ap := range p.Attach {
			if ap.Provider != lang.ProbeKprobe && ap.Provider != lang.ProbeKretprobe || ap.Func == "" {
				continue
			}
			found := false
			for _, f := range funcs {
				if ok, _ := path.Match(ap.Func, f); ok {
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("No matches for %s %s", ap.Provider, ap.Func)
			}
		}
	}
	return nil
}

// probeLimit refuses a script whose attach points alone already exceed
// maxProbes, before anything is compiled or loaded: 10,000 interval
// clauses used to be compiled and verified first. BEGIN and END count, as
// in "Attaching N probes..."; wildcards count once here and are counted
// again, expanded, before attaching.
func probeLimit(prog *lang.Program, maxProbes int) error {
	if maxProbes <= 0 {
		return nil
	}
	n := 0
	for _, p := range prog.Probes {
		n += len(p.Attach)
	}
	if n > maxProbes {
		return fmt.Errorf("ERROR: Can't attach to %d probes because it exceeds the current limit of %d probes.\n"+
			"You can increase the limit through the GOTRACE_MAX_PROBES (or BPFTRACE_MAX_PROBES) environment variable, but BE CAREFUL since a high number of probes attached can cause your system to crash.",
			n, maxProbes)
	}
	return nil
}
