package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestSelfSignal: self:signal:SIGUSR1 probes run, in script order, each
// time the tracer receives SIGUSR1 (bpftrace 0.22+); a program with only
// such probes keeps running until then; probe and probetype name them.
func TestSelfSignal(t *testing.T) {
	requireTracing(t)
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--compat", "0.26", "-B", "line", "-e",
		`self:signal:SIGUSR1 { @n++; printf("first %d\n", @n); }
		 self:signal:SIGUSR1 { printf("second %s %s\n", probe, probetype); if (@n == 2) { exit(); } }`)
	for i := 1; i <= 2; i++ {
		tr.Cmd.Process.Signal(syscall.SIGUSR1)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if out, _ := tr.Output(); strings.Count(out, "second") >= i {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	r := tr.Wait(10 * time.Second)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", r.Stdout,
		"first 1\nsecond self:signal:SIGUSR1 special\nfirst 2\nsecond self:signal:SIGUSR1 special\n\n\n@n: 2\n")
}

// TestMissingProbes: an attach point that matches nothing is bpftrace
// 0.26's "No matches for uprobe FILE:FUNC." error at its place (the
// warning of missing_probes = "warn" and 0.17's "could not resolve symbol"
// are in testdata/runtime/probes026.txt).
func TestMissingProbes(t *testing.T) {
	requireTracing(t)
	bin := testkit.Helper(t, "ufunc")
	probes := "uprobe:" + bin + ":target,uprobe:" + bin + ":no_such_function"
	col := len(probes) - len("uprobe:"+bin+":no_such_function") + 1
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e", probes+" { @n = count(); }", "-c", bin+" 8")
	want := fmt.Sprintf("stdin:1:%d-%d: ERROR: No matches for uprobe %s:no_such_function.\n", col, len(probes)+1, bin)
	if r.ExitCode == 0 || !strings.HasPrefix(r.Stderr, want) {
		mismatch(t, "exit %d, stderr:\n%s\nwant it to start:\n%s", r.ExitCode, r.Stderr, want)
	}
}

// TestUprobeNames: the probe builtin names a uprobe's file as the script
// wrote it (a relative path stays relative, each file a path wildcard
// matches so), and uprobe:*:FUNC -p PID probes FUNC in every file the
// process maps, named by its path there.
func TestUprobeNames(t *testing.T) {
	requireTracing(t)
	bin := testkit.Helper(t, "ufunc")
	dir := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteExecutable(t, filepath.Join(dir, "ufunc"), data)
	cmd := exec.Command(testkit.Gotrace(t), "--compat", "0.26", "-e",
		`uprobe:./ufun*:chain_* { @[probe] = count(); }`, "-c", "./ufunc 4")
	cmd.Dir = dir
	r := testkit.RunBounded(t, 30*time.Second, cmd)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", body(r.Stdout), "\n\n@[uprobe:./ufunc:chain_a]: 4\n@[uprobe:./ufunc:chain_b]: 4\n")

	h := testkit.StartHelper(t, "ufunc", "4")
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--compat", "0.26",
		"-p", fmt.Sprint(h.Pid), "-e", `uprobe:*:target { @[probe] = count(); }`)
	h.Go()
	h.Wait(10 * time.Second)
	g := tr.Wait(10 * time.Second)
	if g.ExitCode != 0 {
		t.Fatalf("-p: exit %d, stderr:\n%s", g.ExitCode, g.Stderr)
	}
	expectOutput(t, "-p stdout", g.Stdout, "\n\n@[uprobe:"+bin+":target]: 4\n")
	if !strings.Contains(g.Stderr, "Attached 1 probe\n") {
		mismatch(t, "-p: stderr lacks 'Attached 1 probe':\n%s", g.Stderr)
	}
}

// TestUaddrPIE: uaddr() in a uprobe of a position-independent executable
// is the symbol's address in the running process (the load address is
// the kernel's choice), so reading through it gives the global's value.
func TestUaddrPIE(t *testing.T) {
	requireTracing(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "pie.c")
	bin := filepath.Join(dir, "pie")
	const prog = `
int GLOBAL_A = 0x55555555;
long GLOBAL_C = 0x33333333;
__attribute__((noipa)) int probed(int x) { return x + GLOBAL_A; }
int main(void) { return probed(1) == 0; }
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-fPIE", "-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e",
		`uprobe:`+bin+`:probed { printf("0x%x -- 0x%x\n", *uaddr("GLOBAL_A"), *(int64 *)uaddr("GLOBAL_C")); exit(); }`, "-c", bin)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", body(r.Stdout), "0x55555555 -- 0x33333333\n\n\n")
}
