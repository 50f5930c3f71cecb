// Package early makes the event ring buffer in the command's first init,
// on another thread, while the Go runtime initialises the rest of the
// program and the script is parsed, checked and compiled: creating the
// default 4 MiB ring takes the kernel 1-1.5 ms here, more than all of that
// for a small script, and is the printf script's longest single wait
// otherwise (runtime.PrepareRing starts it only once the command has read
// its arguments, after every package's init).
//
// It runs before the command has parsed anything, so it guesses, and only
// for the plainest command lines: options among -e, -q, -c, -p, -B, -o,
// -f, --compat, --no-warnings, --unsafe (anything else, -d, --dry-run, -l
// or --help among them, makes nothing), a script whose text calls a
// builtin that writes events (emitguess), and no PERF_RB_PAGES setting
// (the default size, ringsize). The command hands the ring to the runtime
// (runtime.AdoptRing), which checks it is the ring it would have made; a
// wrong guess costs a ring made and closed on another CPU.
package early

// It imports only what the Go runtime initialises first (os, syscall) and
// two packages that import nothing: a package's init runs once every
// package it imports has run theirs, in import-path order, and
// golang.org/x/sys/unix or strings would put this one after most of the
// program's (the parser's build among them).
import (
	"os"
	"syscall"
	"unsafe"

	"github.com/gotrace/gotrace/runtime/ringsize"
	"github.com/gotrace/gotrace/stdlib/emitguess"
)

var (
	size uint32        // the size being made; 0: none
	done chan struct{} // closed once made (fd) or failed (err)
	fd   = -1
	err  error
)

// Name is the ring's kernel object name (the runtime's map name).
const Name = "ringbuf"

func init() {
	// The binary re-executed as the runtime's helpers (the -c stub, the
	// detach reaper: argv[0] "gotrace-internal-...") traces nothing.
	if sysBPF == 0 || len(os.Args) == 0 || hasPrefix(os.Args[0], "gotrace-internal-") || !plainRun(os.Args[1:], os.LookupEnv) {
		return
	}
	ncpu := possibleCPUs()
	if ncpu < 1 {
		return
	}
	size = ringsize.Bytes(ncpu, os.Getpagesize(), 0, 0)
	done = make(chan struct{})
	go func() {
		defer close(done)
		fd, err = create(size)
	}()
}

// Ring returns the size of the ring being made (0: none) and a function
// that waits for it and returns its descriptor, which the caller then owns.
func Ring() (uint32, func() (int, error)) {
	if size == 0 {
		return 0, nil
	}
	return size, func() (int, error) {
		<-done
		return fd, err
	}
}

// Discard closes the ring, once made, if no one took it (in the
// background: nothing waits for it).
func Discard() {
	if size == 0 {
		return
	}
	size = 0
	go func() {
		<-done
		if fd >= 0 {
			syscall.Close(fd)
		}
	}()
}

// plainRun reports whether args run a script, as far as a guess from the
// words alone goes, whose text may write events, with no setting that
// changes the ring's size.
func plainRun(args []string, lookup func(string) (string, bool)) bool {
	for _, k := range []string{"GOTRACE_PERF_RB_PAGES", "BPFTRACE_PERF_RB_PAGES"} {
		if _, ok := lookup(k); ok {
			return false
		}
	}
	var text string
	haveText := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e":
			if i+1 >= len(args) {
				return false
			}
			i++
			text, haveText = args[i], true
		case a == "-c" || a == "-p" || a == "-B" || a == "-o" || a == "-f" || a == "--compat":
			i++
		case a == "-q" || a == "--quiet" || a == "--no-warnings" || a == "--unsafe" || hasPrefix(a, "--compat="):
		case a == "" || a[0] == '-':
			return false
		default:
			if haveText {
				return emitguess.MayEmit(text) // the rest are positional parameters
			}
			b, err := os.ReadFile(a)
			if err != nil || len(b) > 1<<20 {
				return false
			}
			return emitguess.MayEmit(string(b))
		}
	}
	return haveText && emitguess.MayEmit(text)
}

// possibleCPUs is the number of CPUs /sys/devices/system/cpu/possible
// lists; 0 if it cannot be read.
func possibleCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0
	}
	return parseCPUs(string(b))
}

// parseCPUs reads a possible-CPUs list, "0" or "0-N" as cilium/ebpf's
// PossibleCPU does; 0 for any other form.
func parseCPUs(s string) int {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	if s == "0" {
		return 1
	}
	if !hasPrefix(s, "0-") || len(s) == 2 {
		return 0
	}
	hi := s[2:]
	n := 0
	for _, c := range hi {
		if c < '0' || c > '9' || n > 1<<20 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n + 1
}

// The kernel's numbers (x/sys/unix has them, but see the imports).
const (
	bpfMapCreate      = 0  // BPF_MAP_CREATE
	bpfMapTypeRingbuf = 27 // BPF_MAP_TYPE_RINGBUF
	rlimitMemlock     = 8  // RLIMIT_MEMLOCK
)

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// mapCreateAttr is the head of union bpf_attr for BPF_MAP_CREATE, up to
// map_name (the kernel zeroes the rest).
type mapCreateAttr struct {
	mapType, keySize, valueSize, maxEntries, mapFlags, innerMapFD, numaNode uint32
	name                                                                    [16]byte
}

// create makes a ring buffer of size bytes named Name.
func create(size uint32) (int, error) {
	// Kernels before 5.11 charge maps to RLIMIT_MEMLOCK (as the runtime's
	// raiseMemlock does).
	inf := &syscall.Rlimit{Cur: ^uint64(0), Max: ^uint64(0)} // RLIM_INFINITY
	syscall.Setrlimit(rlimitMemlock, inf)
	attr := mapCreateAttr{mapType: bpfMapTypeRingbuf, maxEntries: size}
	copy(attr.name[:], Name)
	r, _, errno := syscall.Syscall(sysBPF, bpfMapCreate, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}
