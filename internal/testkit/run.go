package testkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Result is how a bounded subprocess ended.
type Result struct {
	Stdout, Stderr string
	ExitCode       int  // -1 when killed by a signal
	TimedOut       bool // the deadline passed and the process was stopped
	Duration       time.Duration
	Err            error // from Wait (an *exec.ExitError for non-zero exits)
}

// grace is how long a process gets between SIGTERM and SIGKILL.
const grace = 2 * time.Second

// RunBounded runs cmd in a new process group and waits at most timeout. At
// the deadline the group gets SIGTERM, then SIGKILL after a grace period;
// only that group, which holds what cmd started, is ever signalled. Stdout
// and stderr are captured unless cmd already sets them. Failing to start is
// fatal; a timeout is reported in Result.TimedOut, not as a test failure.
func RunBounded(t testing.TB, timeout time.Duration, cmd *exec.Cmd) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	setpgid(cmd)
	// A grandchild that keeps our pipes open must not hang Wait.
	cmd.WaitDelay = grace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: starting %s: %v", cmd.Path, err)
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var r Result
	select {
	case r.Err = <-done:
	case <-time.After(timeout):
		r.TimedOut = true
		r.Err = stopGroup(pgid, syscall.SIGTERM, done)
	}
	// Reap anything the command left behind in its own group.
	syscall.Kill(-pgid, syscall.SIGKILL)
	r.Duration = time.Since(start)
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	r.ExitCode = cmd.ProcessState.ExitCode()
	return r
}

func setpgid(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// stopGroup sends sig to process group pgid, escalating to SIGKILL after the
// grace period, and returns the leader's Wait error.
func stopGroup(pgid int, sig syscall.Signal, done <-chan error) error {
	syscall.Kill(-pgid, sig)
	select {
	case err := <-done:
		return err
	case <-time.After(grace):
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	return <-done
}

// NotifyAttached is the line bpftrace and gotrace print once every probe is
// attached when the environment variable of the same name is set.
const NotifyAttached = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"

// Tracer is a running tracer (gotrace or bpftrace) that has reported its
// probes attached.
type Tracer struct {
	Cmd    *exec.Cmd
	t      testing.TB
	mu     sync.Mutex
	stdout bytes.Buffer // without the notify line
	stderr bytes.Buffer
	done   chan error
	result *Result
}

// StartTracer runs bin with args (in its own process group, with
// __BPFTRACE_NOTIFY_PROBES_ATTACHED=1) and returns once it prints that line.
// If it exits first or does not attach within timeout, the test fails with
// its output. The tracer is stopped at the end of the test if still running.
func StartTracer(t testing.TB, timeout time.Duration, bin string, args ...string) *Tracer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), NotifyAttached+"=1")
	setpgid(cmd)
	tr := &Tracer{Cmd: cmd, t: t, done: make(chan error, 1)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		if tr.result == nil {
			tr.Stop(syscall.SIGKILL, grace)
		}
	})
	// bpftrace prints the notify line on stderr, gotrace may use stdout:
	// watch both, and keep the line out of the recorded output.
	attached := make(chan struct{})
	var once sync.Once
	var copiers sync.WaitGroup
	copyLines := func(r io.Reader, buf *bytes.Buffer) {
		defer copiers.Done()
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if strings.TrimRight(line, "\n") == NotifyAttached {
				once.Do(func() { close(attached) })
			} else if line != "" {
				tr.mu.Lock()
				buf.WriteString(line)
				tr.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}
	copiers.Add(2)
	go copyLines(stdout, &tr.stdout)
	go copyLines(stderr, &tr.stderr)
	go func() {
		copiers.Wait() // Wait closes the pipes: read them to the end first
		tr.done <- cmd.Wait()
	}()
	select {
	case <-attached:
		return tr
	case err := <-tr.done:
		r := tr.finish(err, false)
		t.Fatalf("testkit: %s exited before attaching (exit %d):\nstdout:\n%s\nstderr:\n%s", bin, r.ExitCode, r.Stdout, r.Stderr)
	case <-time.After(timeout):
		r := tr.Stop(syscall.SIGKILL, grace)
		t.Fatalf("testkit: %s did not attach within %v:\nstdout:\n%s\nstderr:\n%s", bin, timeout, r.Stdout, r.Stderr)
	}
	return nil
}

// Output returns what the tracer printed so far (stdout, stderr).
func (tr *Tracer) Output() (string, string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.stdout.String(), tr.stderr.String()
}

// Wait waits up to timeout for the tracer to exit by itself (e.g. after
// exit() in the script); past it the tracer is killed and TimedOut set.
func (tr *Tracer) Wait(timeout time.Duration) Result {
	tr.t.Helper()
	if tr.result != nil {
		return *tr.result
	}
	select {
	case err := <-tr.done:
		return tr.finish(err, false)
	case <-time.After(timeout):
		return tr.finish(stopGroup(tr.Cmd.Process.Pid, syscall.SIGKILL, tr.done), true)
	}
}

// Stop sends sig (SIGINT, SIGTERM...) to the tracer and waits up to timeout
// for it to exit (to print its maps); then kills its process group.
func (tr *Tracer) Stop(sig syscall.Signal, timeout time.Duration) Result {
	if tr.result != nil {
		return *tr.result
	}
	tr.Cmd.Process.Signal(sig)
	deadline := time.After(timeout)
	for {
		select {
		case err := <-tr.done:
			return tr.finish(err, false)
		case <-deadline:
			return tr.finish(stopGroup(tr.Cmd.Process.Pid, syscall.SIGKILL, tr.done), true)
		case <-time.After(5 * time.Second):
			// bpftrace 0.17 can miss a signal and then waits in
			// epoll_wait for events forever (CI saw it once in
			// TestBpftraceCountsHelper): sent again, as the bench does.
			if idleInEpoll(tr.Cmd.Process.Pid) {
				tr.Cmd.Process.Signal(sig)
			}
		}
	}
}

// idleInEpoll reports whether pid's main thread sleeps in epoll_wait.
func idleInEpoll(pid int) bool {
	w, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	return string(w) == "do_epoll_wait" || string(w) == "ep_poll"
}

func (tr *Tracer) finish(err error, timedOut bool) Result {
	syscall.Kill(-tr.Cmd.Process.Pid, syscall.SIGKILL) // stragglers of its group
	out, errs := tr.Output()
	r := Result{Stdout: out, Stderr: errs, ExitCode: tr.Cmd.ProcessState.ExitCode(), TimedOut: timedOut, Err: err}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.Err = fmt.Errorf("testkit: waiting for %s: %w", tr.Cmd.Path, err)
	}
	tr.result = &r
	return r
}
