// Command gotrace runs bpftrace-language scripts: it compiles them straight
// to eBPF (no LLVM), attaches them and prints what they collect.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/gotrace/gotrace/ktypes"

	"github.com/gotrace/gotrace"
	"github.com/gotrace/gotrace/cmd/gotrace/internal/early"
	cfg "github.com/gotrace/gotrace/config"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/runtime"
	"github.com/gotrace/gotrace/stdlib"
)

const version = "v0.1.0"

// init keeps the main goroutine on the process's first thread, where it
// stays to run BEGIN, END and the other programs run from user space
// (onFirstThread), so that they see tid == pid as in bpftrace (whose BEGIN
// probe fires on its main thread).
func init() { goruntime.LockOSThread() }

// firstThread takes the functions onFirstThread runs on the main
// goroutine, once main serves it (serving).
var (
	firstThread = make(chan func())
	serving     atomic.Bool
)

// onFirstThread runs f on the process's first thread and returns once it
// has (gotrace.RunOptions.RunOn); when main does not serve it (run called
// by a test), on the caller's.
func onFirstThread(f func()) {
	if !serving.Load() {
		f()
		return
	}
	done := make(chan struct{})
	firstThread <- func() { defer close(done); f() }
	<-done
}

// main runs the command on another goroutine, free to move between
// threads: a goroutine locked to a thread hands the CPU over to that
// thread, a wake-up and a sleep of two threads, each time it blocks and
// resumes, and starting up blocks it often (for the parser, the ring
// buffer, the tracepoints made meanwhile); with the command on the first
// thread, printf's start-up to attached took 0.3 ms (5%) longer here
// (medians of 120). The main goroutine keeps the first thread for
// onFirstThread.
func main() {
	if hasEnv("GOTRACE_TIMING") {
		runtime.EnableTiming(os.Stderr) // one line per run phase
	}
	if !hasEnv("GOMEMLIMIT") {
		// A soft limit: tracing itself needs tens of MB and never meets
		// it; compiling a hostile multi-megabyte script collects garbage
		// harder instead of growing past 1 GiB (issue 19).
		debug.SetMemoryLimit(softMemoryLimit)
	}
	exit := make(chan int)
	serving.Store(true)
	go func() { exit <- run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr) }()
	for {
		select {
		case f := <-firstThread:
			f()
		case code := <-exit:
			atExit()
			os.Exit(code)
		}
	}
}

// atExit runs just before the process exits; a developer build
// (-tags pprof, profile.go) stops its profiles there.
var atExit = func() {}

// hasEnv reports whether the environment sets name (to anything). The
// command is the one place that reads the environment; libraries get
// options.
func hasEnv(name string) bool {
	_, ok := os.LookupEnv(name)
	return ok
}

// softMemoryLimit is the Go heap's soft limit unless GOMEMLIMIT sets one.
const softMemoryLimit = 640 << 20

// run is main without the exit, for tests.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		// A bug must never show the user a Go stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "ERROR: internal error: %v (please report this with the script)\n", r)
			code = 1
		}
	}()
	// The environment is read here only: the libraries get it as options.
	ktypes.SetSearchPath(os.Getenv("PATH"))                        // uprobe targets named without a path
	ktypes.SetDebuginfodCaches(ktypes.DebuginfodCaches(os.Getenv)) // separate debug files by build ID
	c, err := parseArgs(args)
	if err == nil {
		err = compatFromEnv(c, os.LookupEnv)
	}
	if err == nil {
		err = checkPid(c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		var ue *usageError
		if errors.As(err, &ue) {
			io.WriteString(stderr, usage)
		}
		return 1
	}
	switch {
	case c.help && c.file == "builtins":
		// The builtin reference, generated from the stdlib table.
		if err := stdlib.WriteReference(stdout); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 1
		}
		return 0
	case c.help:
		io.WriteString(stdout, usage)
		return 0
	case c.version:
		// The second line says which bpftrace release's language and output
		// gotrace follows (tools that check "bpftrace v..." keep working).
		fmt.Fprintf(stdout, "gotrace %s\nbpftrace v0.17.0 (compatible language and output)\n", version)
		return 0
	case c.info:
		// On stderr, as bpftrace; a script given too is not run.
		if err := runtime.Info(stderr, runtime.InfoOptions{Version: version, Follows: c.compat.String()}); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 1
		}
		return 0
	case c.list && c.compat.ListsProgramProbes() && (c.program != "" || isFile(c.listPattern)):
		// -l -e PROG / -l FILE: the probes the program would attach.
		if c.program == "" {
			c.file, c.listPattern = c.listPattern, ""
		}
		return listProgram(c, stdin, stdout, stderr)
	case c.list:
		// bpftrace 0.17 lists every probe for -l -e PROG.
		if c.compat.ListsProgramProbes() && c.program == "" && looksLikeFile(c.listPattern) {
			fmt.Fprintf(stderr, "WARNING: It appears that '%s' is a filename but the file does not exist. Treating '%s' as a search pattern.\n", c.listPattern, c.listPattern)
		}
		if err := runtime.ListWith(stdout, runtime.ListOptions{Pattern: c.listPattern, Verbose: c.verbose, PID: c.pid, Compat: c.compat, DebugDirs: c.debuginfo}); err != nil {
			printError(stderr, err)
			return 1
		}
		return 0
	case c.program == "" && c.file == "":
		io.WriteString(stderr, usage)
		return 1
	}

	src, err := readScript(c, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if c.mode == "format" {
		return formatScript(c, src, stdout, stderr)
	}
	if c.mode != "" && c.mode != "bench" && c.mode != "test" {
		// bpftrace 0.26's other developer mode (compiler benchmarks): not
		// in gotrace yet.
		fmt.Fprintf(stderr, "ERROR: --mode %s is not supported by gotrace\n", c.mode)
		return 1
	}
	traceable, err := readTraceable(c.traceable)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	set, err := readSettings(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	stackMode, err := stackModeFromEnv(c)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if c.debug == 0 && !c.explain {
		runtime.PrepareKernel() // cilium's one-time probes, meanwhile
	}
	var onRing func()
	if c.debug == 0 && !c.explain && !c.dryRun {
		// The ring the first init guessed this run needs (early) is the
		// runtime's, if it is the one it would make.
		if size, fd := early.Ring(); fd != nil {
			runtime.AdoptRing(size, fd)
		}
		// The event ring buffer is made on another CPU while the rest of
		// the script compiles, once it needs one (the script's config
		// block may still ask another size: then it is made again).
		onRing = func() { runtime.PrepareRing(set.perfRBPages) }
		// Most scripts that print have their ring before parsing starts:
		// the text names a builtin that writes events (a guess; the
		// compiler's call above is the answer, and asks for the same ring).
		if stdlib.MayEmitEvents(src.Text) || helperCheckLevel(c) > 0 {
			onRing()
		}
	} else {
		early.Discard()
	}
	var onProbes func([]*lang.AttachPoint)
	if c.debug == 0 && !c.explain && !c.dryRun && c.mode == "" && set.syscallTracepoints != "raw" {
		// The tracepoints' perf events are opened on another CPU while
		// the script checks, compiles and loads: the kernel's work of
		// attaching them, most of it, is done by the time they attach.
		onProbes = runtime.PrepareTracepoints
	}
	runtime.TimingMark("args")
	var mark func(string)
	if hasEnv("GOTRACE_TIMING") {
		mark = runtime.TimingMark
	}
	compiled, err := gotrace.Compile(src, gotrace.Options{
		Mark:        mark,
		OnRingBuf:   onRing,
		OnProbes:    onProbes,
		Params:      c.params,
		StrLen:      set.strLen,
		Unsafe:      c.unsafe,
		IncludeDirs: c.includeDirs,
		Includes:    c.includes,
		PID:         c.pid,
		HelperCheck: helperCheckLevel(c),
		// cpid needs -c, as in bpftrace; -d and explain show any script.
		ChildCommand:       c.cmd != "" || c.debug > 0 || c.explain,
		DumpAST:            c.debug > 0,
		Compat:             c.compat,
		Host:               host(c.compat),
		NamedParams:        c.namedParams,
		ProbeFilter:        c.probeFilter,
		TraceableFunctions: traceable,
		DebugDirs:          c.debuginfo,
		MapKeysMax:         uint32(set.mapKeysMax),
		StackMode:          stackMode,
		// bpftrace's test hook: tseries() timestamps from a map.
		DummyTseriesMap:    os.Getenv("BPFTRACE_DUMMY_TS_MAP"),
		SyscallTracepoints: set.syscallTracepoints,
		MaxProbes:          set.maxProbes,
		Env:                settingsEnv(c),
	})
	if c.debug > 0 || c.explain {
		dump(stdout, c, compiled)
	}
	if err != nil {
		runtime.DiscardTracepoints() // opened for a script that does not run
		printError(stderr, err)
		return 1
	}
	if w := compiled.Checked.Warnings; w != nil && !c.noWarnings {
		fmt.Fprintln(stderr, w.Error()) // bpftrace's compile-time warnings
	}
	if c.debug > 0 {
		return 0
	}
	if c.explain {
		return 0
	}

	ropts := gotrace.RunOptions{
		RunOn:      onFirstThread,
		Output:     c.output,
		Buffering:  buffering(c.buffering),
		Format:     c.format,
		Stdout:     stdout,
		Stderr:     stderr,
		Quiet:      c.quiet,
		Verbose:    c.verbose,
		NoWarnings: c.noWarnings,
		Unsafe:     c.unsafe,
		DryRun:     c.dryRun,
		PID:        c.pid,
		Compat:     c.compat,
		NoFeature:  c.noFeature,
		Mode:       c.mode,

		MaxProbes:       set.maxProbes,
		RingBufPages:    set.perfRBPages,
		StackMapEntries: set.stackMapEntries,
		CatBytesMax:     set.catBytesMax,

		// bpftrace's test runner learns from this line that tracing began.
		NotifyAttached: hasEnv(runtime.NotifyAttachedEnv),
		DummyClock:     hasEnv("BPFTRACE_DUMMY_TS_MAP"),
		Metrics:        c.metrics,
	}
	if c.flamegraph != "" {
		ropts.FlameGraph, ropts.FlameTitle = c.flamegraph, "gotrace "+flameTitle(c)
	}
	if c.cmd != "" {
		argv := splitCommand(c.cmd)
		// The command inherits our environment, as bpftrace's child does.
		ropts.Command, ropts.CommandEnv = argv, os.Environ()
	}
	if err := gotrace.Run(context.Background(), compiled, ropts); err != nil {
		var ec *runtime.ExitCode
		if errors.As(err, &ec) {
			// exit(code): the status is the code's low byte, as exit(3).
			return ec.Code & 0xff
		}
		printError(stderr, err)
		return 1
	}
	return 0
}

// flameTitle names the script in the flame graph's title: the file, or
// the -e program (shortened).
func flameTitle(c *config) string {
	if c.program == "" {
		return c.file
	}
	p := strings.Join(strings.Fields(c.program), " ")
	if r := []rune(p); len(r) > 90 {
		p = string(r[:87]) + "..."
	}
	return "-e '" + p + "'"
}

// settingsEnv collects the environment variables of the config settings
// (each also spelled GOTRACE_...), for gotrace.Compile to resolve.
func settingsEnv(c *config) map[string]string {
	m := map[string]string{}
	for _, n := range cfg.EnvNames() {
		if n == "BPFTRACE_STACK_MODE" && !c.compat.StackModeFromEnv() {
			continue // bpftrace 0.17 has no such variable
		}
		if v, ok := env(strings.TrimPrefix(n, "BPFTRACE_")); ok {
			m[n] = v
		}
	}
	return m
}

// readScript returns the program text: -e, a file, or stdin for "-".
func readScript(c *config, stdin io.Reader) (*lang.Source, error) {
	if c.program != "" {
		return &lang.Source{Name: "stdin", Text: c.program}, nil
	}
	if c.file == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("failed to read the program from stdin: %w", err)
		}
		return &lang.Source{Name: "stdin", Text: string(b)}, nil
	}
	b, err := os.ReadFile(c.file)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("failed to open file '%s': %s", c.file, errnoText(pe.Err))
		}
		return nil, fmt.Errorf("failed to open file '%s': %w", c.file, err)
	}
	return &lang.Source{Name: c.file, Text: string(b)}, nil
}

// errnoText spells an errno as strerror(3) does ("No such file or directory").
func errnoText(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// printError prints err as the user should see it: diagnostics in
// bpftrace's form; other errors as "ERROR: ...".
func printError(w io.Writer, err error) {
	var d *lang.Diagnostics
	if errors.As(err, &d) {
		fmt.Fprintln(w, d.Error())
		return
	}
	var ie *gotrace.IncludeError
	if errors.As(err, &ie) {
		fmt.Fprintln(w, ie.Error()) // clang's form, as bpftrace prints it
		return
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "ERROR: ") || strings.Contains(msg, ": ERROR: ") || strings.HasPrefix(msg, "fatal error: ") {
		fmt.Fprintln(w, msg)
		return
	}
	fmt.Fprintf(w, "ERROR: %s\n", msg)
}

func buffering(mode string) runtime.Buffering {
	switch mode {
	case "line":
		return runtime.BufferLine
	case "full":
		return runtime.BufferFull
	case "none":
		return runtime.BufferNone
	}
	return runtime.BufferDefault
}

// dump prints the stages that finished (-d, explain).
func dump(w io.Writer, c *config, cp *gotrace.Compiled) {
	if cp == nil {
		return
	}
	// -d STAGE (bpftrace 0.26) prints only the stages named: ast the parsed
	// program, types the typed one, codegen (and codegen-opt, dis) the BPF;
	// bare -d and "all" print every stage.
	want := func(stages ...string) bool {
		if len(c.debugStages) == 0 {
			return true
		}
		for _, st := range c.debugStages {
			if st == "all" || contains(stages, st) {
				return true
			}
		}
		return false
	}
	printed := false
	if want("ast", "parse") && (cp.AST != "" || (cp.Prog != nil && cp.Checked == nil)) {
		// The parsed program before the checker typed it.
		ast := cp.AST
		if ast == "" {
			ast = lang.Dump(cp.Prog)
		}
		fmt.Fprintln(w, "AST")
		fmt.Fprint(w, ast)
		printed = true
	}
	if want("types") && cp.Checked != nil {
		if printed {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "Typed program")
		fmt.Fprint(w, check.Dump(cp.Checked))
		printed = true
	}
	if want("codegen", "codegen-opt", "dis") && cp.Spec != nil {
		if printed {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "BPF")
		fmt.Fprint(w, cp.Spec.Dump())
	}
}

// readTraceable reads --traceable-functions FILE: one kernel function a
// line, as /sys/kernel/tracing/available_filter_functions lists them
// ("name [module]"). Nil without the option.
func readTraceable(file string) ([]string, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("failed to read the traceable functions from '%s': %v", file, err)
	}
	funcs := []string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			funcs = append(funcs, f[0])
		}
	}
	return funcs, nil
}

// helperCheckLevel: bpftrace 0.17's -k warns about failed map updates and
// deletes, -kk about failed reads and lookups too; 0.26's one -k covers
// the reads and lookups (its -kk is that, too).
func helperCheckLevel(c *config) int {
	if c.helperCheck > 0 && c.compat.HelperCheckReads() {
		return 2
	}
	return c.helperCheck
}

// looksLikeFile: a -l pattern with a '.' and no ':' or '*' reads as a
// file name (bpftrace 0.26 warns when no such file exists).
func looksLikeFile(pattern string) bool {
	return strings.Contains(pattern, ".") && !strings.ContainsAny(pattern, ":*")
}

// isFile reports whether name is an existing regular file.
func isFile(name string) bool {
	if name == "" {
		return false
	}
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// listProgram prints the probes of the script (-l -e PROG, -l FILE), as
// gotrace.ListProgram lists them.
func listProgram(c *config, stdin io.Reader, stdout, stderr io.Writer) int {
	src, err := readScript(c, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if err := gotrace.ListProgram(stdout, src, runtime.ListOptions{Verbose: c.verbose, PID: c.pid, Compat: c.compat, DebugDirs: c.debuginfo}); err != nil {
		printError(stderr, err)
		return 1
	}
	return 0
}
