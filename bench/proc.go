package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// toolProc is one started tracer (or floor program) of a measurement: its
// stdout and stderr read line by line by one handler, the lines the handler
// does not take kept in a bounded tail (for errors and "Lost" lines).
// measure.go (one script on one workload) and load.go (the load benchmark)
// both run their tools through it.
type toolProc struct {
	cmd    *exec.Cmd
	pid    int
	exited chan error // receives cmd.Wait()'s result once both streams end

	mu      sync.Mutex
	tail    bytes.Buffer
	tailMax int

	// hwm is the largest VmHWM (KiB) read from /proc/PID/status while the
	// tool ran: its own peak RSS. wait4's ru_maxrss is not: Go starts
	// children with vfork, and exec records the old (the harness's own)
	// memory's high-water mark in the child's maxrss, so a tool smaller
	// than the harness read as the harness's size.
	hwm  atomic.Int64
	done chan struct{} // closed when the tool has exited
	// poll is closed when watchHWM may start reading (pollNow): a read of
	// /proc/PID/status every 2 ms wakes a CPU of two while the tool starts,
	// measured to add 0.5-2 ms to a start-up of 7 ms. VmHWM is a high-water
	// mark, so the first read after the start-up holds the start-up's peak.
	poll     chan struct{}
	pollOnce sync.Once
}

// pollNow lets watchHWM start polling (once the timed start-up is over).
func (p *toolProc) pollNow() { p.pollOnce.Do(func() { close(p.poll) }) }

// startTool starts cmd in its own process group. take is called for every
// line of either stream (from two goroutines); a line it does not take
// (returns false) goes to the tail, up to tailMax bytes.
func startTool(cmd *exec.Cmd, tailMax int, take func(line []byte) bool) (*toolProc, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &toolProc{cmd: cmd, exited: make(chan error, 1), tailMax: tailMax, done: make(chan struct{}), poll: make(chan struct{})}
	var readers sync.WaitGroup
	scan := func(r io.Reader) {
		defer readers.Done()
		br := bufio.NewReaderSize(r, 1<<16)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 && !take(line) {
				p.mu.Lock()
				if p.tail.Len() < p.tailMax {
					p.tail.Write(line)
				}
				p.mu.Unlock()
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid
	readers.Add(2)
	go scan(stdout)
	go scan(stderr)
	go p.watchHWM()
	go func() {
		readers.Wait()
		err := cmd.Wait()
		close(p.done)
		p.exited <- err
	}()
	return p, nil
}

// watchHWM reads the tool's VmHWM, from pollNow on, every 2 ms for 200 ms,
// then every 10 ms, until it exits.
func (p *toolProc) watchHWM() {
	path := fmt.Sprintf("/proc/%d/status", p.pid)
	select {
	case <-p.poll:
	case <-p.done:
		return
	}
	for i := 0; ; i++ {
		if b, err := os.ReadFile(path); err == nil {
			if v := statusKiB(b, "VmHWM:"); v > p.hwm.Load() {
				p.hwm.Store(v)
			}
		}
		d := 10 * time.Millisecond
		if i < 100 {
			d = 2 * time.Millisecond
		}
		select {
		case <-p.done:
			return
		case <-time.After(d):
		}
	}
}

// statusKiB reads a "Name:   123 kB" field of /proc/PID/status.
func statusKiB(status []byte, field string) int64 {
	i := bytes.Index(status, []byte(field))
	if i < 0 {
		return 0
	}
	rest := status[i+len(field):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	f := bytes.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return v
}

// peakRSSKiB is the tool's peak RSS: the largest VmHWM read while it ran.
// The last reads come at most 10 ms before it exited; a tool that exited
// before its first read has 0.
func (p *toolProc) peakRSSKiB() int64 { return p.hwm.Load() }

// output is the tail so far.
func (p *toolProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tail.String()
}

// kill ends whatever is left of the tool's process group.
func (p *toolProc) kill() { syscall.Kill(-p.pid, syscall.SIGKILL) }

// interrupt sends SIGINT and waits for the tool to exit, up to 120 s
// (then it is killed and an error returned). A SIGINT the tool missed —
// bpftrace 0.17 can miss one; it is then idle in epoll_wait, where
// anything else, such as detaching hundreds of probes, is work to wait
// on — is sent again, and counted in resent. It returns how long the exit
// took.
func (p *toolProc) interrupt() (took time.Duration, resent int, err error) {
	stop := time.Now()
	p.cmd.Process.Signal(syscall.SIGINT)
	deadline := time.Now().Add(120 * time.Second)
	for {
		select {
		case <-p.exited:
			return time.Since(stop), resent, nil
		case <-time.After(5 * time.Second):
			if time.Now().After(deadline) {
				p.kill()
				<-p.exited
				return time.Since(stop), resent, errors.New("still running 120s after SIGINT: killed")
			}
			if w, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", p.pid)); string(w) == "do_epoll_wait" || string(w) == "ep_poll" {
				resent++
				p.cmd.Process.Signal(syscall.SIGINT)
			}
		}
	}
}

// compileC writes text to bin.c and builds it into bin with gcc flags;
// it returns bin.
func compileC(bin, text string, flags ...string) (string, error) {
	src := bin + ".c"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		return "", err
	}
	args := append(append([]string{}, flags...), "-o", bin, src)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v: %s", src, err, firstLine(string(out)))
	}
	return bin, nil
}
