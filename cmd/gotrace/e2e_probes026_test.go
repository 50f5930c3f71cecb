package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestSoftwareClockOrder: two probes on a software clock event run in
// script order (each perf event has its own timer, so the first attached
// fires first), as bpftrace 0.26's probe.software_order test requires.
func TestSoftwareClockOrder(t *testing.T) {
	requireTracing(t)
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e",
		`software:cpu:1e6 { printf("first"); } software:cpu:1e6 { printf(" second\n"); exit(); }`)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	if !regexp.MustCompile(`^(first)+ second\n`).MatchString(r.Stdout) {
		mismatch(t, "stdout %q, want (first)+ second", r.Stdout)
	}
}

// TestMissingProbes: an attach point that matches nothing is bpftrace
// 0.26's "No matches for uprobe FILE:FUNC." error, or with config =
// { missing_probes = "warn" } a warning while the other probes run;
// bpftrace 0.17 says "could not resolve symbol".
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
	r = gt(t, 30*time.Second, "--compat", "0.26", "-e", `config = { missing_probes = "warn" } `+probes+" { @n = count(); }", "-c", bin+" 8")
	if r.ExitCode != 0 {
		t.Fatalf("warn: exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "warn: stdout", body(r.Stdout), "\n\n@n: 8\n")
	if w := fmt.Sprintf(": WARNING: No matches for uprobe %s:no_such_function. Skipping.\n", bin); !strings.Contains(r.Stderr, w) {
		mismatch(t, "warn: stderr lacks %q:\n%s", w, r.Stderr)
	}
	r = gt(t, 30*time.Second, "--compat", "0.17", "-e", probes+" { @n = count(); }", "-c", bin+" 8")
	if w := ": ERROR: could not resolve symbol: " + bin + ":no_such_function\n"; r.ExitCode == 0 || !strings.Contains(r.Stderr, w) {
		mismatch(t, "0.17: exit %d, stderr lacks %q:\n%s", r.ExitCode, w, r.Stderr)
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
	if err := os.WriteFile(filepath.Join(dir, "ufunc"), data, 0o755); err != nil {
		t.Fatal(err)
	}
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

// TestUprobeArgsValue: a uprobe's args used whole is the record of its
// DWARF parameters (bpftrace 0.26): a map value, a map key, a tuple
// element, print()'s argument, *args; args.f still reads one parameter.
func TestUprobeArgsValue(t *testing.T) {
	requireTracing(t)
	bin := testkit.Helper(t, "ufunc")
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e",
		"uprobe:"+bin+":target { @[args] = count(); @t[args.a] = (1, args, \"x\"); } uprobe:"+bin+":point_sum { @p = *args; }",
		"-c", bin+" 8")
	if r.ExitCode != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", body(r.Stdout), "\n\n"+
		"@[{ .a = 0, .b = 4294967296 }]: 2\n@[{ .a = 1, .b = 4294967297 }]: 2\n"+
		"@[{ .a = 2, .b = 4294967298 }]: 2\n@[{ .a = 3, .b = 4294967299 }]: 2\n"+
		"@p: { .p = 0x404070 }\n"+
		"@t[0]: (1, { .a = 0, .b = 4294967296 }, x)\n@t[1]: (1, { .a = 1, .b = 4294967297 }, x)\n"+
		"@t[2]: (1, { .a = 2, .b = 4294967298 }, x)\n@t[3]: (1, { .a = 3, .b = 4294967299 }, x)\n")
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

// TestHelperErrors026: bpftrace 0.26's -k reports a failed read (0.17's
// -kk); in a special probe a pointer of no known space is read with
// bpf_probe_read, so NULL is EFAULT as in bpftrace; the JSON object has
// the error's text and the script's name.
func TestHelperErrors026(t *testing.T) {
	requireTracing(t)
	script := `struct foo {int a;}; begin { $tmp = ((struct foo*) 0).a;  }`
	r := gt(t, 30*time.Second, "--compat", "0.26", "-k", "-q", "-f", "json", "-e", script)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	// (The blank lines at exit are the exit's, not the object's.)
	expectOutput(t, "json", strings.TrimRight(r.Stdout, "\n")+"\n", `{"type": "helper_error", "msg": "Bad address", "helper": "probe_read", "retcode": -14, "filename": "stdin", "line": 1, "col": 38}`+"\n")
	r = gt(t, 30*time.Second, "--compat", "0.26", "-k", "-e", script)
	expectOutput(t, "text", r.Stdout, "stdin:1:38-56: WARNING: Failed to probe_read: Bad address (-14)\n"+
		script+"\n"+strings.Repeat(" ", 37)+strings.Repeat("~", 18)+"\n\n\n")
}

// TestSpecialProbeNames: bpftrace 0.26's probe builtin names the special
// probes begin and end, however they are spelt; 0.17 says BEGIN.
func TestSpecialProbeNames(t *testing.T) {
	requireTracing(t)
	script := `BEGIN { printf("%s", probe); } end { printf("-%s\n", probe); }`
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e", script)
	expectOutput(t, "0.26", body(r.Stdout), "begin-end\n\n\n")
	r = gt(t, 30*time.Second, "--compat", "0.17", "-e", `BEGIN { printf("%s\n", probe); exit(); }`)
	expectOutput(t, "0.17", body(r.Stdout), "BEGIN\n\n\n")
}

// TestProbeAsString: strcontains(probe, s) reads the probe's name in BPF,
// for a wildcard's each match (from the attach cookie) and for a probe
// named at compile time.
func TestProbeAsString(t *testing.T) {
	requireTracing(t)
	bin := testkit.Helper(t, "ufunc")
	r := gt(t, 30*time.Second, "--compat", "0.26", "-e",
		"uprobe:"+bin+":chain_* { if (strcontains(probe, \"chain_b\")) { @[probe] = count(); } } "+
			"uprobe:"+bin+":target { @t = strcontains(probe, \":targ\"); @f = strcontains(probe, \"chain\"); }",
		"-c", bin+" 4")
	if r.ExitCode != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
	}
	expectOutput(t, "stdout", body(r.Stdout), "\n\n@[uprobe:"+bin+":chain_b]: 4\n@f: false\n@t: true\n")
}
