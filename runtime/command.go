package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// childProc is the -c command. As in bpftrace, it is started stopped
// *before* its execve: a copy of this program (the exec stub, below) waits
// on a socket and only then execs the command, so probes on execve and
// sched_process_exec see the command's own exec, and uprobes on the command
// are in place before its first instruction. release sends the go-ahead
// once every probe is attached.
type childProc struct {
	cmd  *exec.Cmd
	pid  int
	path string // the command's file
	done chan struct{}
	gate *os.File // our end of the stub's socket; nil once released
}

// stubArg0 marks the exec stub, as its argv[0]: a copy of this program
// started with fd 3 a socket to gotrace and fd 4 a pipe carrying the
// command's environment (NUL-separated). The stub runs with asynchronous
// preemption and the GC off: the Go runtime's preemption signals cost a
// getpid each, which a probe on the command's pid would count.
const stubArg0 = "gotrace-internal-exec-stub"

// The exec stub runs as early as package initialisation allows: before
// main, before any flag parsing.
func init() {
	if len(os.Args) >= 1 && os.Args[0] == stubArg0 {
		execStub()
	}
}

// execStub reads the command's environment, tells gotrace it is ready (one
// byte on fd 3), waits for the go-ahead (one byte back) and execs
// os.Args[1] with the arguments os.Args[2:] (argv[0] included). If the
// socket closes first (gotrace died, or gave up before attaching), the
// command is not run.
func execStub() {
	const sock, envFD = 3, 4
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "gotrace: bad exec stub invocation")
		os.Exit(127)
	}
	var env []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(envFD, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n <= 0 {
			break
		}
		env = append(env, buf[:n]...)
	}
	unix.Close(envFD)
	var envv []string
	for _, kv := range strings.Split(string(env), "\x00") {
		if kv != "" {
			envv = append(envv, kv)
		}
	}
	b := []byte{'r'}
	if n, _ := unix.Write(sock, b); n != 1 {
		os.Exit(127)
	}
	for {
		n, err := unix.Read(sock, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n != 1 {
			os.Exit(127) // not released: do not run the command
		}
		break
	}
	unix.Close(sock)
	err := unix.Exec(os.Args[1], os.Args[2:], envv)
	fmt.Fprintf(os.Stderr, "ERROR: failed to run command %q: %v\n", os.Args[2], err)
	os.Exit(127)
}

// lockThread pins the calling goroutine to its OS thread: a parent-death
// signal of the child is tied to the thread that started it.
func lockThread() func() {
	goruntime.LockOSThread()
	return goruntime.UnlockOSThread
}

// startStopped starts argv stopped before its exec (see childProc), to
// run with the environment env.
func startStopped(argv, env []string) (*childProc, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("ERROR: failed to run command %q: %w", argv[0], err)
	}
	if !strings.Contains(path, "/") {
		path = "./" + path
	}
	fail := func(err error) (*childProc, error) {
		return nil, fmt.Errorf("ERROR: failed to run command %q: %w", argv[0], err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "exec-stub"), os.NewFile(uintptr(fds[1]), "exec-stub")
	er, ew, err := os.Pipe()
	if err != nil {
		ours.Close()
		theirs.Close()
		return fail(err)
	}
	// /proc/self/exe: this very binary, even if its file was replaced.
	cmd := exec.Command("/proc/self/exe", append([]string{path}, argv...)...)
	cmd.Args[0] = stubArg0
	// The stub's own settings replace the user's (the first of a
	// variable wins); the command gets env unchanged.
	var stubEnvv []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GODEBUG=") {
			stubEnvv = append(stubEnvv, kv)
		}
	}
	cmd.Env = append(stubEnvv, "GOGC=off", "GODEBUG=asyncpreemptoff=1")
	cmd.ExtraFiles = []*os.File{theirs, er}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Pdeathsig: the command dies with us, even when we are SIGKILLed
	// (bpftrace's child does too); it would otherwise run on untraced. It
	// survives the stub's exec, and is tied to this thread, which
	// lockThread keeps for the whole run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	theirs.Close()
	er.Close()
	if err != nil {
		ours.Close()
		ew.Close()
		return fail(err)
	}
	go func() {
		// The command's environment: exactly env.
		ew.Write([]byte(strings.Join(env, "\x00")))
		ew.Close()
	}()
	c := &childProc{cmd: cmd, pid: cmd.Process.Pid, path: path, done: make(chan struct{}), gate: ours}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	// Wait until the stub waits: its start-up is not the command's.
	var b [1]byte
	if n, _ := ours.Read(b[:]); n != 1 {
		c.kill()
		return nil, fmt.Errorf("command %q exited before it could be traced", argv[0])
	}
	return c, nil
}

// release lets the waiting child exec the command.
func (c *childProc) release() error {
	select {
	case <-c.done:
		return fmt.Errorf("command %q exited before it could be started", c.path)
	default:
	}
	_, err := c.gate.Write([]byte{1})
	c.gate.Close()
	c.gate = nil
	if err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	return nil
}

// kill ends the child if it still runs (we started it; it must not outlive
// us) and reaps it.
func (c *childProc) kill() {
	if c.gate != nil {
		// Not released: closing the socket alone ends the stub.
		c.gate.Close()
		c.gate = nil
	}
	select {
	case <-c.done:
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
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
