package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// strippedUfunc copies the ufunc helper, strips it and gives it its debug
// information apart, linked by .gnu_debuglink (objcopy --only-keep-debug,
// --add-gnu-debuglink), as distributions ship binaries.
func strippedUfunc(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	full, debug, bin := filepath.Join(dir, "ufunc.full"), filepath.Join(dir, "ufunc.debug"), filepath.Join(dir, "ufunc")
	for _, args := range [][]string{
		{"cp", testkit.Helper(t, "ufunc"), full},
		{"objcopy", "--only-keep-debug", full, debug},
		{"strip", "--strip-all", "-o", bin, full},
		{"objcopy", "--add-gnu-debuglink=" + debug, bin},
		{"rm", full},
	} {
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	if b, _ := exec.Command("readelf", "-S", bin).Output(); strings.Contains(string(b), ".symtab") || strings.Contains(string(b), ".debug_info") {
		t.Fatalf("%s still has its symbols", bin)
	}
	return bin
}

// TestSeparateDebugInfo: symbols (-l, uprobes on static functions),
// arguments (-lv) and ustack names of a stripped binary come from its
// debuglink file, as in bpftrace.
func TestSeparateDebugInfo(t *testing.T) {
	requireTracing(t)
	bt := requireBpftrace(t)
	bin := strippedUfunc(t)
	// both runs gotrace and bpftrace with args; each stdout (through
	// norm) must be want, or (want == "") the same as the other's and
	// contain every string of has.
	norm := body
	both := func(want string, has []string, args ...string) {
		t.Helper()
		g := gt(t, 60*time.Second, args...)
		b := testkit.RunBounded(t, 60*time.Second, exec.Command(bt, args...))
		if want == "" {
			want = norm(b.Stdout)
			for _, l := range has {
				if !strings.Contains(want, l) {
					t.Errorf("bpftrace %q: no %q in\n%s", args, l, want)
				}
			}
		}
		expectOutput(t, "gotrace "+strings.Join(args, " "), norm(g.Stdout), want)
		expectOutput(t, "bpftrace "+strings.Join(args, " "), norm(b.Stdout), want)
	}
	both("uprobe:"+bin+":chain_a\nuprobe:"+bin+":chain_b\n", nil, "-l", "uprobe:"+bin+":chain*")
	both("uprobe:"+bin+":point_sum\n    struct point* p\n", nil, "-lv", "uprobe:"+bin+":point_sum")
	// ustack printed while the helper still runs (its maps are read then).
	// Only the first event is compared: the helper calls target in a
	// loop, so either tool may print a second event that was already in
	// its buffer at exit(); bpftrace prints that one after it has ended
	// the helper, as bare addresses (CI saw it once).
	norm = firstEvent
	both("", []string{"\n        target+0\n", "\n        chain_a+"},
		"-e", "uprobe:"+bin+`:target { printf("%s", ustack); exit(); }`, "-c", bin+" 3000000")
	norm = body
	both("\n\n@[3]: 2\n", nil, "-e", "uprobe:"+bin+`:target /args->a == 3/ { @[args->a] = count(); }`, "-c", bin+" 8")
}

// firstEvent is the first of the "\n<frames>\n" blocks printf("%s",
// ustack) prints, one per event.
func firstEvent(s string) string {
	s = body(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		return s[:i+2]
	}
	return s
}

// TestLibcDebugPackage: with Debian's libc6-dbg installed, libc's static
// functions (malloc_consolidate) are listed and attach, as in bpftrace.
func TestLibcDebugPackage(t *testing.T) {
	requireTracing(t)
	testkit.Require(t, testkit.LibcDbg)
	bt := requireBpftrace(t)
	lib := "/usr/lib/x86_64-linux-gnu/libc.so.6"
	want := "uprobe:" + lib + ":malloc_consolidate\n"
	g := gt(t, 60*time.Second, "-l", "uprobe:"+lib+":malloc_consolidate")
	expectOutput(t, "gotrace -l", g.Stdout, want)
	b := testkit.RunBounded(t, 60*time.Second, exec.Command(bt, "-l", "uprobe:"+lib+":malloc_consolidate"))
	expectOutput(t, "bpftrace -l", b.Stdout, want)
	// python3 frees enough small blocks that malloc consolidates them.
	script := "uprobe:" + lib + `:malloc_consolidate { @hit = 1; } END { printf("hit %d\n", @hit); clear(@hit); }`
	r := gt(t, 60*time.Second, "-e", script, "-c", "/usr/bin/python3 -c x=[bytearray(100)for(i)in(range(100000))];del(x);y=bytearray(1<<20)")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "hit 1\n") {
		t.Errorf("gotrace exited %d; stdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	// libc's time is an IFUNC libc never calls itself: probed, as in
	// bpftrace, on its resolver, with one warning naming the
	// implementation the debug symbols have.
	r = gt(t, 60*time.Second, "-e", "uprobe:libc:time { @ = count(); }", "-c", "/usr/bin/true")
	warn := "WARNING: uprobe:libc:time: time is an IFUNC: the probe is on its resolver, which runs once per process, not on each call; probe one of its implementations in libc.so.6 instead: time_syscall\n"
	if r.ExitCode != 0 || !strings.Contains(r.Stderr, warn) || strings.Count(r.Stderr, "WARNING") != 1 {
		t.Errorf("gotrace exited %d; stderr:\n%s\nwant the one warning %q", r.ExitCode, r.Stderr, warn)
	}
	b = testkit.RunBounded(t, 60*time.Second, exec.Command(bt, "-e", "uprobe:libc:time { @ = count(); }", "-c", "/usr/bin/true"))
	if b.ExitCode != 0 {
		t.Errorf("bpftrace exited %d: %s", b.ExitCode, b.Stderr)
	}
}
