package testkit

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/internal/testkit/helperbin"
)

var (
	helperMu    sync.Mutex
	helperBuilt = map[string]string{} // name -> binary path, this process
)

// Helper returns the path of the C helper testdata/helpers/<name>.c, built
// with gcc (with any extra translation units <name>.*.c). Binaries are cached
// under the temp dir by a hash of the sources, headers and flags, so each is
// compiled once per change, not once per test. A missing gcc or sys/sdt.h is
// a test failure with the package to install.
func Helper(t testing.TB, name string) string {
	t.Helper()
	helperMu.Lock()
	defer helperMu.Unlock()
	if p, ok := helperBuilt[name]; ok {
		return p
	}
	p, err := helperbin.Build(mustRoot(t), name)
	if err != nil {
		t.Fatal(err)
	}
	helperBuilt[name] = p
	return p
}

// HelperProc is a helper started with the ready handshake: it has printed
// "ready <pid>" and waits for Go before doing its work.
type HelperProc struct {
	Pid  int
	Cmd  *exec.Cmd
	t    testing.TB
	in   io.WriteCloser
	out  *bufio.Reader
	errb *strings.Builder
	done bool
}

// StartHelper builds helper name, starts it with args and GT_WAIT=1, and
// returns once it is ready: attach tracers to Pid, then call Go. The process
// is killed at the end of the test if still running.
func StartHelper(t testing.TB, name string, args ...string) *HelperProc {
	t.Helper()
	path := Helper(t, name)
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "GT_WAIT=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: starting helper %s: %v", name, err)
	}
	p := &HelperProc{Cmd: cmd, t: t, in: in, out: bufio.NewReader(stdout), errb: &errb}
	t.Cleanup(p.kill)
	offIntervalCPU(cmd.Process.Pid)

	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := p.out.ReadString('\n')
		ch <- line{s, err}
	}()
	select {
	case l := <-ch:
		f := strings.Fields(l.s)
		if l.err != nil || len(f) != 2 || f[0] != "ready" {
			p.kill()
			t.Fatalf("testkit: helper %s did not print \"ready <pid>\": got %q (%v); stderr: %s", name, l.s, l.err, errb.String())
		}
		p.Pid, _ = strconv.Atoi(f[1])
		if p.Pid != cmd.Process.Pid {
			t.Fatalf("testkit: helper %s reported pid %d, started as %d", name, p.Pid, cmd.Process.Pid)
		}
	case <-time.After(10 * time.Second):
		p.kill()
		t.Fatalf("testkit: helper %s not ready after 10s", name)
	}
	return p
}

// offIntervalCPU keeps process pid off the CPU that interval probes run
// on (the first online CPU), when another is allowed. The kernel does not
// run a perf-event program (interval's) when its timer fires while another
// BPF program runs on that CPU (bpf_prog_active): a helper calling getpid
// in a loop under a script storing two kernel stacks per call keeps a CPU
// about 90% inside the tracepoint's program, and an interval:ms:400 {
// exit(); } on that CPU was skipped tick after tick until the test's
// timeout (measured: run_cnt 0 after 2 s with the loop pinned to CPU 0).
// bpftrace's interval is a cpu-clock event on one CPU too. The helper's
// children inherit the mask.
func offIntervalCPU(pid int) {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return
	}
	f := strings.FieldsFunc(strings.TrimSpace(string(b)), func(r rune) bool { return r == '-' || r == ',' })
	if len(f) == 0 {
		return
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || !set.IsSet(first) {
		return
	}
	set.Clear(first)
	if set.Count() == 0 {
		return
	}
	unix.SchedSetaffinity(pid, &set)
}

// Go lets the helper start its work.
func (p *HelperProc) Go() {
	p.t.Helper()
	if _, err := p.in.Write([]byte{'\n'}); err != nil {
		p.t.Fatalf("testkit: releasing helper: %v", err)
	}
}

// Wait waits up to timeout for the helper to exit and returns its stdout
// (after the ready line), stderr and exit code. On timeout the helper is
// killed and the test fails.
func (p *HelperProc) Wait(timeout time.Duration) Result {
	p.t.Helper()
	start := time.Now()
	// Read stdout to the end before Cmd.Wait, which closes the pipe.
	type exit struct {
		out string
		err error
	}
	ch := make(chan exit, 1)
	go func() {
		b, _ := io.ReadAll(p.out)
		ch <- exit{string(b), p.Cmd.Wait()}
	}()
	var r Result
	var e exit
	select {
	case e = <-ch:
	case <-time.After(timeout):
		p.kill()
		e = <-ch
		r.TimedOut = true
		p.t.Errorf("testkit: helper %s still running after %v: killed", p.Cmd.Path, timeout)
	}
	r.Stdout, r.Err = e.out, e.err
	p.done = true
	p.in.Close()
	r.Stderr = p.errb.String()
	r.ExitCode = p.Cmd.ProcessState.ExitCode()
	r.Duration = time.Since(start)
	return r
}

func (p *HelperProc) kill() {
	if p.done || p.Cmd.Process == nil {
		return
	}
	// The helper leads its own process group (Setpgid): kill that group only.
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	p.in.Close()
}
