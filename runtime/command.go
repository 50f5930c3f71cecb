package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// childProc is the -c command. It is started under ptrace so that it stops
// right after execve, before its first instruction; release detaches and
// lets it run once every probe is attached (uprobes on it included).
type childProc struct {
	cmd      *exec.Cmd
	pid      int
	done     chan struct{}
	released bool
}

// lockThread pins the calling goroutine to its OS thread: ptrace requests
// must come from the thread that became the tracer.
func lockThread() func() {
	goruntime.LockOSThread()
	return goruntime.UnlockOSThread
}

func startStopped(argv []string) (*childProc, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("ERROR: failed to run command %q: %w", argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ERROR: failed to run command %q: %w", argv[0], err)
	}
	c := &childProc{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	// Wait for the SIGTRAP stop that follows a traced execve.
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(c.pid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			c.kill()
			return nil, fmt.Errorf("wait for command %q to start: %w", argv[0], err)
		}
		break
	}
	if !ws.Stopped() {
		close(c.done)
		return nil, fmt.Errorf("command %q exited before it could be traced", argv[0])
	}
	return c, nil
}

// release lets the stopped child run and starts waiting for its exit.
func (c *childProc) release() error {
	if err := unix.PtraceDetach(c.pid); err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	c.released = true
	go func() {
		c.cmd.Wait()
		close(c.done)
	}()
	return nil
}

// kill ends the child if it still runs (we started it; it must not outlive
// us) and reaps it.
func (c *childProc) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	if c.released {
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
		}
		return
	}
	// Still traced and stopped: SIGKILL ends it; reap it here.
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(c.pid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || ws.Exited() || ws.Signaled() {
			break
		}
	}
	close(c.done)
}

// watchPID closes the returned channel when process pid exits (or stop is
// closed).
func watchPID(pid int, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	go func() {
		defer close(done)
		if err != nil {
			// No pidfd: poll for existence.
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if e := unix.Kill(pid, 0); errors.Is(e, unix.ESRCH) {
					return
				}
			}
		}
		defer unix.Close(fd)
		for {
			select {
			case <-stop:
				return
			default:
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(fds, 100)
			if n > 0 {
				return
			}
		}
	}()
	return done
}
