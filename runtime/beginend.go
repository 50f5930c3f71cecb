package runtime

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
)

// BEGIN and END are RAW_TRACEPOINT programs that are never attached: the
// runtime runs each exactly once with BPF_PROG_TEST_RUN. That keeps them
// off every hot path, needs no helper uprobe (bpftrace attaches uprobes to
// functions in its own binary), and runs them at precisely the right
// moment: BEGIN after every probe is attached, END after tracing stopped
// and before maps are printed.

// rawTPContext is the argument block a test-run raw tracepoint receives
// (up to 12 u64 arguments); BEGIN/END read none of it.
var rawTPContext = make([]byte, 8*12)

// RunOnce runs the named loaded program once with test-run.
func (l *Loaded) RunOnce(p *compiler.Program) error {
	prog := l.Programs[p.Name]
	if prog == nil {
		return fmt.Errorf("run %s: program not loaded", p.Name)
	}
	if prog.Type() != ebpf.RawTracepoint {
		return fmt.Errorf("run %s: BEGIN/END/self programs must be RAW_TRACEPOINT, got %s", p.Name, prog.Type())
	}
	var err error
	l.on(func() { _, err = prog.Run(&ebpf.RunOptions{Context: rawTPContext}) })
	if err != nil {
		return fmt.Errorf("run %s: %w", p.Name, err)
	}
	return nil
}

// on runs f on the thread Options.RunOn gives, or here without one.
func (l *Loaded) on(f func()) {
	if l.runOn != nil {
		l.runOn(f)
		return
	}
	f()
}

// RunBegin runs every BEGIN program, in script order.
func (l *Loaded) RunBegin(pl *plan) error {
	for _, p := range pl.begin {
		if err := l.RunOnce(p); err != nil {
			return err
		}
	}
	return nil
}

// RunSignal runs every self:signal:SIGUSR1 program, in script order.
func (l *Loaded) RunSignal(pl *plan) error {
	for _, p := range pl.signal {
		if err := l.RunOnce(p); err != nil {
			return err
		}
	}
	return nil
}

// RunEnd runs every END program, in script order.
func (l *Loaded) RunEnd(pl *plan) error {
	for _, p := range pl.end {
		if err := l.RunOnce(p); err != nil {
			return err
		}
	}
	return nil
}
