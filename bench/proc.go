package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
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
}

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
	p := &toolProc{cmd: cmd, exited: make(chan error, 1), tailMax: tailMax}
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
	go func() {
		readers.Wait()
		p.exited <- cmd.Wait()
	}()
	return p, nil
}

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
