package early

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/runtime/ringsize"
)

func TestPlainRun(t *testing.T) {
	dir := t.TempDir()
	printf := filepath.Join(dir, "p.bt")
	count := filepath.Join(dir, "c.bt")
	os.WriteFile(printf, []byte(`BEGIN { printf("hi\n"); }`), 0o644)
	os.WriteFile(count, []byte(`BEGIN { @ = count(); }`), 0o644)
	none := func(string) (string, bool) { return "", false }
	pages := func(k string) (string, bool) { return "8", k == "BPFTRACE_PERF_RB_PAGES" }
	for _, tc := range []struct {
		args []string
		env  func(string) (string, bool)
		want bool
	}{
		{[]string{"-e", `BEGIN { printf("hi\n"); }`}, none, true},
		{[]string{"-q", "-B", "none", "-e", `BEGIN { exit(); }`, "7"}, none, true},
		{[]string{"--compat=0.17", "-c", "/bin/true", "-e", `i:s:1 { print(@); }`}, none, true},
		{[]string{"-e", `BEGIN { @ = count(); }`}, none, false},                 // no event
		{[]string{"-e", `BEGIN { printf("hi\n"); }`}, pages, false},             // another size
		{[]string{"--dry-run", "-e", `BEGIN { printf("hi\n"); }`}, none, false}, // loads nothing to keep
		{[]string{"-d", "-e", `BEGIN { printf("hi\n"); }`}, none, false},
		{[]string{"-l", "*printf*"}, none, false},
		{[]string{"--help"}, none, false},
		{[]string{"-e"}, none, false},
		{[]string{printf}, none, true},
		{[]string{printf, "1", "2"}, none, true},
		{[]string{count}, none, false},
		{[]string{filepath.Join(dir, "missing.bt")}, none, false},
		{nil, none, false},
	} {
		if got := plainRun(tc.args, tc.env); got != tc.want {
			t.Errorf("plainRun(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestKernelNumbers: the numbers early spells itself are the kernel's.
func TestKernelNumbers(t *testing.T) {
	if sysBPF != unix.SYS_BPF || bpfMapCreate != unix.BPF_MAP_CREATE || bpfMapTypeRingbuf != unix.BPF_MAP_TYPE_RINGBUF || rlimitMemlock != unix.RLIMIT_MEMLOCK {
		t.Fatal("a BPF or rlimit number differs from golang.org/x/sys/unix's")
	}
}

func TestParseCPUs(t *testing.T) {
	for s, want := range map[string]int{"0\n": 1, "0-1\n": 2, "0-63": 64, "0-1,3": 0, "1-3": 0, "0-": 0, "x": 0, "": 0} {
		if got := parseCPUs(s); got != want {
			t.Errorf("parseCPUs(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestCreate: the ring made here is the one the runtime would make: its
// type, size and name, for this machine's CPUs.
func TestCreate(t *testing.T) {
	testkit.RequireRoot(t)
	n := possibleCPUs()
	want, err := ebpf.PossibleCPU()
	if err != nil || n != want {
		t.Fatalf("possibleCPUs() = %d, cilium/ebpf says %d (%v)", n, want, err)
	}
	size := ringsize.Bytes(n, os.Getpagesize(), 0, 0)
	fd, err := create(size)
	if err != nil {
		t.Fatalf("create(%d): %v", size, err)
	}
	m, err := ebpf.NewMapFromFD(fd)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	defer m.Close()
	info, err := m.Info()
	if err != nil {
		t.Fatal(err)
	}
	if m.Type() != ebpf.RingBuf || m.MaxEntries() != size || info.Name != Name {
		t.Errorf("made %v of %d bytes named %q, want a ring buffer of %d named %q", m.Type(), m.MaxEntries(), info.Name, size, Name)
	}
}
