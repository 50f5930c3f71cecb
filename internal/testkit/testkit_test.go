package testkit

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// fakeTB records what a testkit function reports instead of failing the
// real test, so the failure paths themselves can be tested.
type fakeTB struct {
	testing.TB
	errors, fatals, skips []string
	cleanups              []func()
}

type stopped struct{}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Cleanup(fn func())   { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(string, ...any) {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatal(args ...any) {
	f.fatals = append(f.fatals, fmt.Sprint(args...))
	panic(stopped{})
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
	panic(stopped{})
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skips = append(f.skips, fmt.Sprintf(format, args...))
	panic(stopped{})
}

// run calls fn with f, stopping where a real test would stop.
func (f *fakeTB) run(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopped); !ok {
				panic(r)
			}
		}
	}()
	fn()
}

func (f *fakeTB) finish() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.run(f.cleanups[i])
	}
}

func TestRequireSkipsLocallyFailsInCI(t *testing.T) {
	bogus := Capability("no-such-capability")
	t.Setenv("CI", "")
	f := &fakeTB{}
	f.run(func() { Require(f, bogus) })
	if len(f.skips) != 1 || len(f.fatals) != 0 {
		t.Errorf("without CI: skips %q fatals %q, want one skip", f.skips, f.fatals)
	}
	t.Setenv("CI", "true")
	f = &fakeTB{}
	f.run(func() { Require(f, bogus) })
	if len(f.fatals) != 1 || len(f.skips) != 0 || !strings.Contains(f.fatals[0], "no-such-capability") {
		t.Errorf("in CI: skips %q fatals %q, want one fatal naming the capability", f.skips, f.fatals)
	}
	for _, v := range []string{"0", "false", "FALSE"} {
		t.Setenv("CI", v)
		if InCI() {
			t.Errorf("CI=%q counted as CI", v)
		}
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeTB{}
	f.run(func() { Golden(f, path, []byte("a\nb\nc\n")) })
	if len(f.errors)+len(f.fatals) != 0 {
		t.Errorf("equal text reported: %q %q", f.errors, f.fatals)
	}
	f = &fakeTB{}
	f.run(func() { Golden(f, path, []byte("a\nB\nc\n")) })
	if len(f.errors) != 1 || !strings.Contains(f.errors[0], "first difference at line 2") {
		t.Errorf("mismatch report = %q, want one naming line 2", f.errors)
	}
	f = &fakeTB{}
	f.run(func() { Golden(f, path+".missing", []byte("a")) })
	if len(f.fatals) != 1 || !strings.Contains(f.fatals[0], "-update") {
		t.Errorf("missing file report = %q, want one suggesting -update", f.fatals)
	}
}

func TestRunBounded(t *testing.T) {
	r := RunBounded(t, 10*time.Second, exec.Command("sh", "-c", "echo out; echo err >&2; exit 3"))
	if r.Stdout != "out\n" || r.Stderr != "err\n" || r.ExitCode != 3 || r.TimedOut {
		t.Errorf("got %+v", r)
	}
	// A child that outlives the deadline, with a grandchild holding the pipes:
	// both must go, within the grace period.
	r = RunBounded(t, 300*time.Millisecond, exec.Command("sh", "-c", "sleep 30 & echo started; wait"))
	if !r.TimedOut || r.Stdout != "started\n" || r.Duration > grace+3*time.Second {
		t.Errorf("got %+v", r)
	}
}

func TestHelpersRun(t *testing.T) {
	Require(t, GCC)
	cases := []struct {
		name   string
		args   []string
		stdout string
		code   int
	}{
		{"getpid", []string{"10"}, "", 0},
		{"openat", []string{"4", "/etc/passwd", "/nonexistent"}, "", 0},
		{"reads", []string{"-r", "3", "1", "4096", "0"}, "", 0},
		{"ufunc", []string{"8"}, "", 0},
		{"execer", []string{"/bin/sh", "-c", "echo child $0", "argv0"}, "child argv0\n", 0},
		{"execer", nil, "", 0},
		{"sigrecv", []string{"50"}, "timeout\n", 1},
		{"sleeper", []string{"20"}, "", 0},
		{"getpid", nil, "", 2},
		{"getpid", []string{"-1"}, "", 2},
	}
	for _, c := range cases {
		r := RunBounded(t, 20*time.Second, exec.Command(Helper(t, c.name), c.args...))
		if r.Stdout != c.stdout || r.ExitCode != c.code {
			t.Errorf("%s %q: stdout %q exit %d, want %q exit %d (stderr %q)", c.name, c.args, r.Stdout, r.ExitCode, c.stdout, c.code, r.Stderr)
		}
	}
	r := RunBounded(t, 20*time.Second, exec.Command(Helper(t, "tcp")))
	if !strings.HasPrefix(r.Stdout, "port ") || r.ExitCode != 0 {
		t.Errorf("tcp: %+v", r)
	}
}

func TestHelperHandshake(t *testing.T) {
	Require(t, GCC)
	p := StartHelper(t, "sigrecv", "5000")
	// The helper is blocked before its work: it must still be alive.
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(p.Pid, 0); err != nil {
		t.Fatalf("helper gone before Go: %v", err)
	}
	p.Go()
	time.Sleep(30 * time.Millisecond)
	if err := syscall.Kill(p.Pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	r := p.Wait(10 * time.Second)
	if r.Stdout != fmt.Sprintf("signal %d\n", syscall.SIGUSR1) || r.ExitCode != 0 {
		t.Errorf("sigrecv: %+v", r)
	}
}

func TestHelperSymbolsAndNotes(t *testing.T) {
	Require(t, GCC, SDT)
	f, err := elf.Open(Helper(t, "ufunc"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"target": false, "chain_a": false, "chain_b": false, "point_sum": false, "apply": false, "callback": false, "greet": false}
	for _, s := range syms {
		if _, ok := want[s.Name]; ok && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			want[s.Name] = true
		}
	}
	for n, ok := range want {
		if !ok {
			t.Errorf("ufunc has no function symbol %q (inlined or cloned?)", n)
		}
	}

	u, err := elf.Open(Helper(t, "usdt"))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	sec := u.Section(".note.stapsdt")
	if sec == nil {
		t.Fatal("usdt has no .note.stapsdt section")
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	// Each note's description holds pc, base, semaphore (8 bytes each), then
	// provider, name and argument spec as NUL-terminated strings.
	probes := map[string]uint64{}
	for len(data) >= 12 {
		namesz := int(u.ByteOrder.Uint32(data[0:]))
		descsz := int(u.ByteOrder.Uint32(data[4:]))
		off := 12 + (namesz+3)&^3
		desc := data[off : off+descsz]
		parts := strings.Split(string(desc[24:]), "\x00")
		probes[parts[0]+":"+parts[1]+"("+parts[2]+")"] = u.ByteOrder.Uint64(desc[16:])
		data = data[off+(descsz+3)&^3:]
	}
	var names []string
	for k, sema := range probes {
		names = append(names, fmt.Sprintf("%s sema=%v", k, sema != 0))
	}
	got := strings.Join(sortedCopy(names), "\n")
	for _, w := range []string{"gotrace:fixed(", "gotrace:loop(", "gotrace:memarg(", "gotrace:guarded("} {
		if !strings.Contains(got, w) {
			t.Errorf("usdt notes lack %s; have:\n%s", w, got)
		}
	}
	if !strings.Contains(got, "sema=true") || strings.Count(got, "sema=true") != 1 {
		t.Errorf("want exactly one probe with a semaphore (guarded); have:\n%s", got)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

func TestNoBPFLeaksDetectsHeldProgram(t *testing.T) {
	Require(t, Root, BPF)
	load := func() *ebpf.Program {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: "gt_leaktest", Type: ebpf.SocketFilter, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	defer func(d time.Duration) { leakSettle = d }(leakSettle)
	leakSettle = 500 * time.Millisecond
	f := &fakeTB{}
	f.run(func() { NoBPFLeaks(f) })
	p := load()
	f.finish()
	p.Close()
	if len(f.errors) != 1 || !strings.Contains(f.errors[0], `"gt_leaktest"`) {
		t.Errorf("a program still open was not reported: %q %q", f.errors, f.fatals)
	}

	f = &fakeTB{}
	f.run(func() { NoBPFLeaks(f) })
	load().Close()
	f.finish()
	if len(f.errors)+len(f.fatals) != 0 {
		t.Errorf("closed program reported as leaked: %q %q", f.errors, f.fatals)
	}
}

// TestBpftraceCountsHelper checks the whole handshake with a real tracer:
// bpftrace attaches to a waiting helper and counts exactly its N getpids.
func TestBpftraceCountsHelper(t *testing.T) {
	Require(t, Root, Tracefs, GCC, Bpftrace)
	NoBPFLeaks(t)
	const n = 1000
	p := StartHelper(t, "getpid", fmt.Sprint(n))
	tr := StartTracer(t, 30*time.Second, "bpftrace",
		"-e", fmt.Sprintf("tracepoint:syscalls:sys_enter_getpid /pid == %d/ { @ = count(); }", p.Pid))
	p.Go()
	if r := p.Wait(10 * time.Second); r.ExitCode != 0 {
		t.Fatalf("helper: %+v", r)
	}
	// bpftrace detaches before it exits; a tracer elsewhere on the machine
	// releasing many tracepoints can hold that up for seconds.
	r := tr.Stop(syscall.SIGINT, 60*time.Second)
	if want := fmt.Sprintf("\n@: %d\n", n); !strings.Contains(r.Stdout, want) {
		t.Errorf("bpftrace output lacks %q:\n%s\nstderr:\n%s", want, r.Stdout, r.Stderr)
	}
}

func TestGotraceBuilds(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "gotrace")); err != nil {
		t.Skip("cmd/gotrace does not exist yet")
	}
	Require(t, Go)
	bin := Gotrace(t)
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("built gotrace at %s is not an executable: %v", bin, err)
	}
	if again := Gotrace(t); again != bin {
		t.Errorf("second Gotrace call built again: %s vs %s", again, bin)
	}
}

// TestStopResendsMissedSignal: a tracer that misses the first SIGINT and
// sleeps in epoll_wait (as bpftrace 0.17 can) gets it again and exits
// within the timeout, its output kept.
func TestStopResendsMissedSignal(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no python3 (CI installs it for the conformance runner)")
		}
		t.Skip("no python3")
	}
	script := `
import os, select, signal, sys
seen = []
def on_int(*_):
    seen.append(1)
    if len(seen) == 2:
        print("@: 2 signals"); sys.stdout.flush(); os._exit(0)
signal.signal(signal.SIGINT, on_int)
print("` + NotifyAttached + `", file=sys.stderr); sys.stderr.flush()
ep = select.epoll()
while True:
    ep.poll(-1)
`
	tr := StartTracer(t, 20*time.Second, py, "-c", script)
	start := time.Now()
	r := tr.Stop(syscall.SIGINT, 30*time.Second)
	if r.TimedOut || !strings.Contains(r.Stdout, "@: 2 signals") {
		t.Fatalf("timed out %v after %v; stdout %q, stderr %q", r.TimedOut, time.Since(start), r.Stdout, r.Stderr)
	}
}
