package gotrace

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/config"
	"github.com/gotrace/gotrace/runtime"
	"github.com/gotrace/gotrace/runtime/metrics"
	"github.com/gotrace/gotrace/runtime/output"
	"github.com/gotrace/gotrace/runtime/sym"
)

// RunOptions configure Run: where output goes and how tracing runs, as the
// command line gives them. The compiled script's settings (Compiled.Settings)
// supply the rest.
type RunOptions struct {
	// Output is -o's file ("": Stdout); Buffering is -B's mode.
	Output    string
	Buffering runtime.Buffering
	// Format is -f's output format ("" or "text", "json").
	Format string
	// Stdout is where output goes without -o (and the blank line before
	// the exit maps with -o); Stderr gets warnings, notices and the
	// "Attaching N probes..." line.
	Stdout, Stderr io.Writer

	Quiet      bool // -q
	Verbose    bool // -v
	NoWarnings bool // --no-warnings
	Unsafe     bool // --unsafe
	DryRun     bool // --dry-run
	PID        int  // -p
	Compat     compat.Version
	NoFeature  []string // --no-feature
	// Mode is bpftrace 0.26's --mode ("" runs the script).
	Mode string
	// RunOn, when set, runs the BEGIN, END, self, test and bench probes'
	// programs (runtime.Options.RunOn): the command runs them on the
	// process's first thread.
	RunOn func(func())

	// Command (-c) is the command to run and trace, split into words, and
	// CommandEnv its environment.
	Command    []string
	CommandEnv []string

	// MaxProbes, RingBufPages, StackMapEntries and CatBytesMax are the
	// settings of those names (0: defaults).
	MaxProbes       int
	RingBufPages    int
	StackMapEntries int
	CatBytesMax     int

	// NotifyAttached prints runtime.NotifyAttachedEnv's line once every
	// probe is attached (bpftrace's test runner).
	NotifyAttached bool
	// DummyClock: tseries() timestamps come from a map (bpftrace's
	// BPFTRACE_DUMMY_TS_MAP test hook).
	DummyClock bool
	// FlameGraph (--flamegraph) is the file stacks are written to as a
	// flame graph titled FlameTitle.
	FlameGraph, FlameTitle string
	// Metrics (--metrics) is the address the maps are served on to
	// Prometheus while the script runs.
	Metrics string
}

// Run loads, attaches and runs a compiled script until it ends, printing
// what it prints. An exit(code) with a nonzero code is a *runtime.ExitCode;
// other errors are the user's to read ("ERROR: ..." where bpftrace prints
// that).
func Run(ctx context.Context, c *Compiled, opts RunOptions) error {
	out, err := runtime.OpenOutput(opts.Output, opts.Buffering)
	if err != nil {
		return err
	}
	defer out.Close()
	format, err := output.ParseFormat(opts.Format)
	if err != nil {
		return err
	}
	settings := c.Settings
	syms := sym.New(symOptions(settings))
	// bpftrace 0.26: user stack frames show file:line and inlined calls.
	syms.SetDebugInfo(!opts.Compat.Legacy() && (settings == nil || settings.Bool("show_debug_info")))
	// config str_trunc_trailer (BPFTRACE_STR_TRUNC_TRAILER): what follows
	// a string str() cut (0.26; 0.17 has no trailer).
	trailer := ".."
	if settings != nil {
		trailer = settings.Get("str_trunc_trailer")
	}
	output.SetStrTruncTrailer(trailer)
	printer := runtime.NewTextPrinter(out, format, syms, c.Spec)
	printer.Unsafe = opts.Unsafe
	printer.NoWarnings = opts.NoWarnings
	printer.P.Compat = opts.Compat
	printer.P.DummyClock = opts.DummyClock
	printer.P.Notices = opts.Stderr
	printer.CatMax = opts.CatBytesMax
	if opts.Output != "" {
		printer.P.ExitGap = opts.Stdout // as bpftrace: not into the file
	}
	if opts.FlameGraph != "" {
		// Fail now, not after tracing, when the file cannot be written.
		f, err := os.OpenFile(opts.FlameGraph, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("ERROR: --flamegraph: %v", err)
		}
		f.Close()
		printer.P.FlameGraph = opts.FlameGraph
		printer.P.FlameTitle = opts.FlameTitle
	}
	ropts := runtime.Options{
		MaxProbes:       opts.MaxProbes,
		RingBufPages:    opts.RingBufPages,
		StackMapEntries: opts.StackMapEntries,

		Printer:        printer,
		Stdout:         out,
		Stderr:         opts.Stderr,
		Quiet:          opts.Quiet,
		Verbose:        opts.Verbose,
		PID:            opts.PID,
		DryRun:         opts.DryRun,
		Unsafe:         opts.Unsafe,
		Compat:         opts.Compat,
		NoFeature:      opts.NoFeature,
		NotifyAttached: opts.NotifyAttached,
		Mode:           opts.Mode,
		RunOn:          opts.RunOn,
		Command:        opts.Command,
		CommandEnv:     opts.CommandEnv,
		// config = { print_maps_on_exit = 0 } (or its variable).
		NoExitMaps: settings != nil && !settings.Bool("print_maps_on_exit"),
		// config = { missing_probes = "warn" } (or BPFTRACE_MISSING_PROBES).
		MissingProbes: settingOr(c, "missing_probes"),
		OnLoad: func(l *runtime.Loaded) {
			for name, m := range l.StackMaps() {
				syms.SetStackMap(name, m)
			}
			// Programs just loaded have kallsyms names (bpf_prog_...): drop an
			// index read before (kaddr, listing) so kstacks through them resolve.
			syms.RefreshKernel()
		},
	}
	if opts.Metrics != "" {
		// --metrics: serve the maps to Prometheus while the script runs.
		ms, err := metrics.Listen(opts.Metrics)
		if err != nil {
			return fmt.Errorf("ERROR: --metrics: %v", err)
		}
		defer ms.Close()
		fmt.Fprintf(opts.Stderr, "Serving metrics on %s\n", ms.URL())
		onLoad := ropts.OnLoad
		ropts.OnLoad = func(l *runtime.Loaded) {
			onLoad(l)
			if err := ms.Attach(l); err != nil {
				fmt.Fprintf(opts.Stderr, "WARNING: %v\n", err)
			}
		}
	}
	if err := runtime.Run(ctx, c.Spec, ropts); err != nil {
		out.Flush()
		return err
	}
	return nil
}

// symOptions are the symbolizer's options from the resolved settings:
// config = { cpp_demangle = 0 } or (GOTRACE|BPFTRACE)_NO_CPP_DEMANGLE=1
// print C++ names as the binary holds them.
func symOptions(s *config.Settings) sym.Options {
	return sym.Options{NoDemangle: s != nil && !s.Bool("cpp_demangle")}
}

// settingOr is a setting's value, or "" without settings.
func settingOr(c *Compiled, name string) string {
	if c.Settings == nil {
		return ""
	}
	return c.Settings.Get(name)
}
