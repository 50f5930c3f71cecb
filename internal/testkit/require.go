package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// Capability is something a real-kernel test needs from the machine.
type Capability string

const (
	Root     Capability = "root"         // effective uid 0
	BPF      Capability = "bpf"          // may load a BPF program
	BTF      Capability = "btf"          // /sys/kernel/btf/vmlinux is readable
	Tracefs  Capability = "tracefs"      // tracefs is mounted (events/ readable)
	GCC      Capability = "gcc"          // gcc builds the C helpers
	SDT      Capability = "sys/sdt.h"    // systemtap-sdt-dev, for the usdt helper
	Bpftrace Capability = "bpftrace"     // bpftrace runs, for side-by-side tests
	Go       Capability = "go toolchain" // go builds cmd/gotrace
	LibcDbg  Capability = "libc6-dbg"    // libc's separate debug information

	Chromium   Capability = "chromium"   // headless Chromium, to render SVGs
	Podman     Capability = "podman"     // builds and runs container images
	Runc       Capability = "runc"       // podman's OCI runtime on hybrid cgroups (crun refuses them)
	Prometheus Capability = "prometheus" // Debian's prometheus server binary
)

// commands are the binaries of the capabilities that are a program, and
// the Debian package holding each.
var commands = map[Capability][2]string{
	Chromium:   {"chromium", "chromium"},
	Podman:     {"podman", "podman"},
	Runc:       {"runc", "runc"},
	Prometheus: {"prometheus", "prometheus"},
}

var (
	capMu    sync.Mutex
	capCache = map[Capability]error{}
)

// Check reports whether c is available (nil) or why not. Results are cached
// for the life of the process.
func Check(c Capability) error {
	capMu.Lock()
	defer capMu.Unlock()
	if err, ok := capCache[c]; ok {
		return err
	}
	err := probe(c)
	capCache[c] = err
	return err
}

// Require skips t when c is missing, or fails it when running in CI.
func Require(t testing.TB, caps ...Capability) {
	t.Helper()
	for _, c := range caps {
		if err := Check(c); err != nil {
			missing(t, string(c), err)
		}
	}
}

// RequireRoot is Require(t, Root).
func RequireRoot(t testing.TB) {
	t.Helper()
	Require(t, Root)
}

func probe(c Capability) error {
	switch c {
	case Root:
		if os.Geteuid() != 0 {
			return fmt.Errorf("running as uid %d, not root", os.Geteuid())
		}
		return nil
	case BPF:
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Type:         ebpf.SocketFilter,
			License:      "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		})
		if err != nil {
			return fmt.Errorf("loading a trivial program: %w", err)
		}
		return prog.Close()
	case BTF:
		f, err := os.Open("/sys/kernel/btf/vmlinux")
		if err != nil {
			return err
		}
		return f.Close()
	case Tracefs:
		if _, err := TracefsDir(); err != nil {
			return err
		}
		return nil
	case GCC:
		return gccCheck("int main(void) { return 0; }\n")
	case SDT:
		return gccCheck("#include <sys/sdt.h>\nint main(void) { STAP_PROBE(p, n); return 0; }\n")
	case Bpftrace:
		out, err := exec.Command("bpftrace", "--version").CombinedOutput()
		if err != nil {
			return fmt.Errorf("bpftrace --version: %v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	case Go:
		_, err := goTool()
		return err
	case LibcDbg:
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "libc6-dbg").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "installed") {
			return fmt.Errorf("libc6-dbg is not installed (apt-get install libc6-dbg): %s", strings.TrimSpace(string(out)))
		}
		return nil
	}
	if cmd, ok := commands[c]; ok {
		if _, err := exec.LookPath(cmd[0]); err != nil {
			return fmt.Errorf("%s not found in PATH (apt-get install %s)", cmd[0], cmd[1])
		}
		return nil
	}
	return fmt.Errorf("unknown capability %q", string(c))
}

// gccCheck compiles src to see whether gcc and its headers are there.
func gccCheck(src string) error {
	if _, err := exec.LookPath("gcc"); err != nil {
		return errors.New("gcc not found in PATH (apt-get install gcc)")
	}
	dir, err := os.MkdirTemp("", "testkit-gcc")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("gcc", "-x", "c", "-o", dir+"/a.out", "-")
	cmd.Stdin = strings.NewReader(src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gcc: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// TracefsDir returns where tracefs is mounted.
func TracefsDir() (string, error) {
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		var st unix.Statfs_t
		if unix.Statfs(d, &st) == nil && st.Type == unix.TRACEFS_MAGIC {
			return d, nil
		}
	}
	return "", errors.New("tracefs is not mounted at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing)")
}
