// Package runtime loads a compiled Spec into the kernel, attaches its
// programs through one provider per probe type, reads the ring buffer,
// and hands events and maps to a Printer. It owns every kernel object it
// creates and releases all of them on every exit path.
//
// The flow of Run, in order:
//
//	Load       create maps and programs (verifier errors name the script line)
//	Expand     resolve every attach point against the live system (wildcards)
//	limit      MAX_PROBES checked before anything is attached
//	Attach     all-or-nothing; a failure detaches what was attached
//	BEGIN      run once with BPF_PROG_TEST_RUN
//	loop       ring buffer records → Printer, until exit()/signal/child exit
//	END        run once, then every user map is printed, sorted by name
//	Close      detach in parallel, close programs and maps
package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/runtime/output"
)

// Printer is what the runtime calls to print. The output package
// (runtime/output) implements it; tests use fakes.
type Printer interface {
	// Event prints one ring-buffer record (printf, time, cat, join,
	// print(value), system ...). payload is the record after its 8-byte ID.
	Event(ev *compiler.Event, payload []byte) error
	// PrintMap prints one map for a print(@m) event (payload holds the
	// event's arguments, e.g. top and div).
	PrintMap(ev *compiler.Event, payload []byte, m *MapData) error
	// Maps prints every user map at exit, sorted by name. Per-CPU values
	// are already merged (see MapData).
	Maps(maps []*MapData) error
	// Flush writes buffered output.
	Flush() error
}

// MapData is a snapshot of one user map.
type MapData struct {
	Spec    *compiler.MapSpec
	Entries []Entry // in the kernel's iteration order; the printer sorts
}

// Entry is one key/value pair. Value is merged over CPUs for per-CPU maps
// following compiler/ABI.md (count/sum/hist/lhist summed, min/max over the
// CPUs that set them, avg/stats count and sum summed); PerCPU holds the raw
// per-CPU values (nil for shared maps, and for per-CPU maps whose merged
// Value says all the printer needs: every aggregation but tseries). It is
// the printer's entry, so printing uses the snapshot's entries as they are.
type Entry = output.Entry

// Buffering is the -B mode.
type Buffering int

const (
	BufferDefault Buffering = iota // line-buffered on a terminal, else full
	BufferLine
	BufferFull
	BufferNone
)

// Options configures Run.
type Options struct {
	Printer Printer
	// NoFeature: kernel features not to use (--no-feature; LoadOptions).
	NoFeature []string
	// Mode is bpftrace 0.26's --mode: "bench" runs the bench:NAME probes
	// after BEGIN, prints their times and exits; "" runs the script.
	Mode string
	// RunOn, when set, is how the programs run from user space (BEGIN,
	// END, self:signal and the test probes) are run: RunOn(f) calls f on
	// the thread they are to see as tid, and returns once f has. The
	// command gives its first thread (tid == pid, as in bpftrace); nil
	// runs them on the calling goroutine's thread.
	RunOn func(func())
	// Stdout receives the "Attaching N probes..." line and the notify line;
	// Stderr warnings, the verbose verifier log and loss reports.
	Stdout  io.Writer
	Stderr  io.Writer
	Quiet   bool // -q: no "Attaching N probes..." line
	Verbose bool // -v: full verifier log, per-program instruction counts, probe stats

	// PID (-p) limits uprobes to that process and stops tracing when it
	// exits. 0 means none.
	PID int
	// Command (-c) is started stopped, traced, and tracing finishes when it
	// exits. Argv[0] is resolved through $PATH.
	Command []string
	// CommandEnv is the Command's environment ("NAME=value"; the command
	// line passes its own, as bpftrace's child inherits bpftrace's).
	CommandEnv []string
	// MaxProbes caps the number of attached probes (0: DefaultMaxProbes).
	MaxProbes int
	// NotifyAttached prints NotifyAttachedEnv's name on Stderr once every
	// probe is attached, for bpftrace's test runner.
	NotifyAttached bool
	// RingBufPages and StackMapEntries size the event ring buffer and the
	// stack maps (see LoadOptions; 0: defaults).
	RingBufPages    int
	StackMapEntries int
	// DryRun loads everything into the verifier and attaches nothing.
	DryRun bool
	// Signals, when nil, are SIGINT and SIGTERM. Tests may pass a channel.
	Signals <-chan os.Signal
	// Timeout stops tracing after this long (0: none); used by tests.
	Timeout time.Duration
	// OnLoad, when set, is called once the maps and programs exist and
	// before anything is attached (e.g. to hand stack maps to symbolizers).
	OnLoad func(*Loaded)
	// Unsafe allows system() and similar.
	Unsafe bool
	// Compat is the bpftrace release whose behaviour to follow.
	Compat compat.Version
	// NoExitMaps: the maps are not printed at exit (print_maps_on_exit=0).
	NoExitMaps bool
	// MissingProbes: what an attach point that matches nothing does
	// (missing_probes: "error", the default, "warn" or "ignore").
	MissingProbes string
}

// Run loads spec, attaches every probe, prints events until the script
// exits, the context is cancelled, a signal arrives, the -c command or -p
// process exits, and then runs END and prints the maps. Every kernel object
// is released before Run returns.
func Run(ctx context.Context, spec *compiler.Spec, opts Options) error {
	s, err := newSession(spec, opts)
	if err != nil {
		return err
	}
	return s.run(ctx)
}

// ExitCode is what Run returns when the script ended with exit(code) and a
// nonzero code, after END ran and the maps printed: the tracer exits with
// that status (bpftrace 0.20 semantics).
type ExitCode struct {
	Code int
}

func (e *ExitCode) Error() string { return fmt.Sprintf("exit(%d)", e.Code) }
