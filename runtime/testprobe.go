package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/runtime/output"
)

// test:NAME probes (bpftrace 0.25's --mode test, --test): RAW_TRACEPOINT
// programs never attached, each run once with BPF_PROG_TEST_RUN after
// BEGIN, in script order. What a test prints is captured; it fails when
// it calls errorf() (or a helper fails), calls exit() with a code other
// than 0, or its program returns non-zero. The report is bpftrace's
// (output.TestResults); the run exits 1 when a test failed.

type testProbe struct {
	name string
	prog *compiler.Program
}

// testCapture is the printer's side of a test's run (TextPrinter).
type testCapture interface {
	StartCapture()
	EndCapture() (text string, errors int)
}

// errTestsFailed ends a --mode test run whose tests did not all pass.
var errTestsFailed = &ExitCode{Code: 1}

// runTests runs pl's test probes and prints their report. The ring buffer
// is read here, synchronously, after each run (the reader goroutine starts
// after the tests), so each test's output is its own.
func (s *session) runTests(pl *plan, rd *ringReader) (failed bool, err error) {
	if rd != nil {
		// BEGIN's output, as in any run.
		if err := s.drainUntilExit(rd); err != nil {
			return false, err
		}
	}
	capt, _ := s.opts.Printer.(testCapture)
	var res []output.TestResult
	for _, tp := range pl.tests {
		prog := s.l.Programs[tp.prog.Name]
		if prog == nil {
			return false, fmt.Errorf("test:%s: program not loaded", tp.name)
		}
		if capt != nil {
			capt.StartCapture()
		}
		start := time.Now()
		var ret uint32
		var runErr error
		s.l.on(func() { ret, runErr = prog.Run(&ebpf.RunOptions{Context: rawTPContext}) })
		took := time.Since(start)
		var readErr error
		if rd != nil {
			readErr = s.drainUntilExit(rd)
		}
		text, errs := "", 0
		if capt != nil {
			text, errs = capt.EndCapture()
		}
		if runErr != nil {
			return false, fmt.Errorf("test:%s: %w", tp.name, runErr)
		}
		if readErr != nil {
			return false, readErr
		}
		passed := errs == 0 && ret == 0 && !(s.exited && s.exitCode != 0)
		s.exited, s.exitCode = false, 0 // exit() ends its own test only
		failed = failed || !passed
		res = append(res, output.TestResult{Name: tp.name, Duration: took, Passed: passed, Output: text})
	}
	if p, ok := s.opts.Printer.(interface {
		TestResults([]output.TestResult) error
	}); ok {
		if err := p.TestResults(res); err != nil {
			return false, err
		}
	}
	return failed, nil
}

// drainUntilExit dispatches what is in the ring buffer now; after an
// exit() record it drops the rest (bpftrace prints nothing after exit()).
func (s *session) drainUntilExit(rd *ringReader) error {
	exited := false
	err := readNow(rd, func(rec []byte) (bool, error) {
		stop, err := s.dispatch(rec)
		exited = exited || stop
		return stop, err
	})
	if err != nil || !exited {
		return err
	}
	return s.discard(rd)
}

// testsOutsideTestMode is the error for test probes in another mode.
func testsOutsideTestMode(pl *plan) error {
	if len(pl.tests) == 0 {
		return nil
	}
	return errors.New("test:" + pl.tests[0].name + ": test probes run with --mode test (or --test)")
}

// runTestMode runs the tests (after BEGIN), then starts the reader.
func (s *session) runTestMode() error {
	failed, err := s.runTests(s.pl, s.rd)
	if err != nil {
		return err
	}
	s.testsFailed = failed
	if s.rd != nil {
		s.goReadLoop()
	}
	return nil
}
