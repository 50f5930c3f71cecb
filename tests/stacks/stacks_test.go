// Package stacks_test checks kstack/ustack, ksym/usym/kaddr and func end to
// end on the real kernel: gotrace's output against what the system says
// (/proc/kallsyms, the helpers' known call chains) and, where the output is
// deterministic, byte for byte against bpftrace 0.17 tracing the same
// helper at the same time.
package stacks_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// bpftraceOK reports whether bpftrace can run here for side-by-side checks.
// It is a reference, not a gotrace capability: without it only gotrace's
// own expectations are checked (and the test says so).
func bpftraceOK(t *testing.T) bool {
	t.Helper()
	if err := testkit.Check(testkit.Bpftrace); err != nil {
		t.Logf("bpftrace not available, no side-by-side check: %v", err)
		return false
	}
	return true
}

func requireTracing(t *testing.T) {
	t.Helper()
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC)
}

// outputs are what gotrace and (when it ran) bpftrace printed.
type outputs struct {
	gt, bt       string // stdout
	gtErr, btErr string // stderr
	ranBpftrace  bool
}

// traceHelper starts helper, attaches gotrace and, when side is set and
// bpftrace works, bpftrace with the same script (PID replaced by the
// helper's pid, BIN by its path, COMM by its comm) and waits for both
// tracers to exit by themselves (the script ends with exit()). A looping
// helper (running) is let go first, so that each tracer's interval counts
// while it runs; otherwise the helper starts once both are attached and the
// script must exit() on the event it waits for.
func traceHelper(t *testing.T, side, running bool, script string, helper string, args ...string) (*testkit.HelperProc, outputs) {
	t.Helper()
	btScript := ""
	if side {
		btScript = script
	}
	return traceHelperWith(t, running, script, btScript, helper, args...)
}

// traceHelperWith is traceHelper with bpftrace running its own script
// (none when btScript is empty): for what bpftrace 0.17 cannot parse.
func traceHelperWith(t *testing.T, running bool, script, btScript string, helper string, args ...string) (*testkit.HelperProc, outputs) {
	t.Helper()
	h := testkit.StartHelper(t, helper, args...)
	if running {
		h.Go()
	}
	subst := strings.NewReplacer("PID", strconv.Itoa(h.Pid), "BIN", testkit.Helper(t, helper), "COMM", helperComm(t, helper))
	script, btScript = subst.Replace(script), subst.Replace(btScript)
	var o outputs
	gt := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-e", script)
	var bt *testkit.Tracer
	if btScript != "" && bpftraceOK(t) {
		bt = testkit.StartTracer(t, 20*time.Second, "bpftrace", "-e", btScript)
		o.ranBpftrace = true
	}
	if !running {
		h.Go()
	}
	r := gt.Wait(15 * time.Second)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace -e %q: exit %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", script, r.ExitCode, r.TimedOut, r.Stdout, r.Stderr)
	}
	o.gt, o.gtErr = r.Stdout, r.Stderr
	if bt != nil {
		r := bt.Wait(15 * time.Second)
		if r.TimedOut || r.ExitCode != 0 {
			t.Fatalf("bpftrace -e %q: exit %d\nstdout:\n%s\nstderr:\n%s", btScript, r.ExitCode, r.Stdout, r.Stderr)
		}
		o.bt, o.btErr = r.Stdout, r.Stderr
	}
	return h, o
}

// helperComm is the helper's comm: its file name, cut to 15 bytes.
func helperComm(t *testing.T, helper string) string {
	c := filepath.Base(testkit.Helper(t, helper))
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

var countRE = regexp.MustCompile(`\]: [0-9]+\n`)

// entries splits printed maps into entries ("@name[key]: N", counts
// replaced by N), sorted, so two tracers' maps compare whatever their
// counts are.
func entries(out string) []string {
	out = countRE.ReplaceAllString(out, "]: N\n")
	var es []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(line, "@") && cur.Len() > 0 {
			es = append(es, cur.String())
			cur.Reset()
		}
		if strings.HasPrefix(line, "@") || cur.Len() > 0 {
			cur.WriteString(line)
		}
	}
	if cur.Len() > 0 {
		es = append(es, cur.String())
	}
	for i := range es {
		es[i] = strings.TrimRight(es[i], "\n")
	}
	sort.Strings(es)
	return es
}

func sameEntries(t *testing.T, o outputs) {
	t.Helper()
	if !o.ranBpftrace {
		return
	}
	g, b := entries(o.gt), entries(o.bt)
	if strings.Join(g, "\n") != strings.Join(b, "\n") {
		t.Errorf("gotrace and bpftrace differ\ngotrace:\n%s\nbpftrace:\n%s", strings.Join(g, "\n"), strings.Join(b, "\n"))
	}
}

// kallsyms is /proc/kallsyms's text symbols: name → addresses.
var (
	ksymsOnce sync.Once
	ksyms     map[string][]uint64
	ksymsErr  error
)

func kallsyms(t *testing.T) map[string][]uint64 {
	t.Helper()
	ksymsOnce.Do(func() {
		f, err := os.Open("/proc/kallsyms")
		if err != nil {
			ksymsErr = err
			return
		}
		defer f.Close()
		ksyms = map[string][]uint64{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 3 || !strings.ContainsAny(fs[1], "tTwW") {
				continue
			}
			a, err := strconv.ParseUint(fs[0], 16, 64)
			if err != nil {
				continue
			}
			ksyms[fs[2]] = append(ksyms[fs[2]], a)
		}
		ksymsErr = sc.Err()
	})
	if ksymsErr != nil {
		t.Fatalf("reading /proc/kallsyms: %v", ksymsErr)
	}
	return ksyms
}

var frameRE = regexp.MustCompile(`^    ([A-Za-z0-9_.$]+)\+([0-9]+)$`)

// stackFrames returns the function names of the bpftrace-mode stack in
// entry (its lines indented by 4 spaces), failing on any other line.
func stackFrames(t *testing.T, entry string) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(entry, "\n")[1:] {
		if strings.HasPrefix(line, "]") {
			break
		}
		m := frameRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("stack line %q is not \"    sym+off\" in:\n%s", line, entry)
		}
		names = append(names, m[1])
	}
	return names
}

func mapEntries(out, name string) []string {
	var es []string
	for _, e := range entries(out) {
		if strings.HasPrefix(e, name+"[") {
			es = append(es, e)
		}
	}
	return es
}

// TestKstackSyscall: a kstack at a syscall tracepoint of a helper looping
// on getpid is one stack, innermost first (the tracepoint's perf hook on
// top, the syscall entry at the bottom), every frame a kallsyms function;
// kstack(perf) prints the same frames as "\taddr sym+off" with addr - off a
// symbol's address; kstack(2) is its two innermost frames. All as bpftrace.
func TestKstackSyscall(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { @[kstack] = count(); @p[kstack(perf)] = count(); }
interval:ms:400 { exit(); }`, "getpid", "1000000000")
	es := mapEntries(o.gt, "@")
	if len(es) != 1 {
		t.Fatalf("want one @ stack, got %d:\n%s", len(es), o.gt)
	}
	frames := stackFrames(t, es[0])
	syms := kallsyms(t)
	for _, f := range frames {
		if syms[f] == nil {
			t.Errorf("frame %s is not a kallsyms function", f)
		}
	}
	if len(frames) < 3 || frames[len(frames)-1] != "entry_SYSCALL_64_after_hwframe" || frames[len(frames)-2] != "do_syscall_64" {
		t.Errorf("want the syscall entry outermost (last), got %v", frames)
	}

	perf := mapEntries(o.gt, "@p")
	if len(perf) != 1 {
		t.Fatalf("want one @p stack, got:\n%s", o.gt)
	}
	perfRE := regexp.MustCompile(`^\t([0-9a-f]{16}) ([A-Za-z0-9_.$]+)\+([0-9]+)$`)
	lines := strings.Split(perf[0], "\n")
	lines = lines[1 : len(lines)-1]
	if len(lines) != len(frames) {
		t.Errorf("kstack(perf) has %d frames, kstack %d", len(lines), len(frames))
	}
	for i, line := range lines {
		m := perfRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("kstack(perf) line %q is not \\taddr sym+off", line)
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		off, _ := strconv.ParseUint(m[3], 10, 64)
		found := false
		for _, a := range syms[m[2]] {
			found = found || a == addr-off
		}
		if !found {
			t.Errorf("%s: %x - %d is not an address of %s in kallsyms", line, addr, off, m[2])
		}
		if i < len(frames) && m[2] != frames[i] {
			t.Errorf("kstack(perf) frame %d is %s, kstack's %s", i, m[2], frames[i])
		}
	}
	sameEntries(t, o)

	_, o2 := traceHelper(t, true, true, `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { @[kstack(2)] = count(); }
interval:ms:400 { exit(); }`, "getpid", "1000000000")
	es2 := mapEntries(o2.gt, "@")
	if len(es2) != 1 {
		t.Fatalf("kstack(2): want one stack, got:\n%s", o2.gt)
	}
	if got := stackFrames(t, es2[0]); strings.Join(got, " ") != strings.Join(frames[:2], " ") {
		t.Errorf("kstack(2) = %v, want the two innermost frames %v", got, frames[:2])
	}
	sameEntries(t, o2)
}

// TestProfileKstack: profile stacks of a busy helper keyed in a map print
// kallsyms functions, innermost first: any stack through do_syscall_64 ends
// with the syscall entry.
func TestProfileKstack(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, false, true, `profile:hz:997 /pid == PID/ { @[kstack] = count(); }
interval:ms:500 { exit(); }`, "getpid", "1000000000")
	syms := kallsyms(t)
	through := 0
	for _, e := range mapEntries(o.gt, "@") {
		frames := stackFrames(t, e)
		for _, f := range frames {
			if syms[f] == nil {
				t.Errorf("frame %s is not a kallsyms function in:\n%s", f, e)
			}
		}
		for i, f := range frames {
			if f == "do_syscall_64" {
				through++
				if i != len(frames)-2 || frames[i+1] != "entry_SYSCALL_64_after_hwframe" {
					t.Errorf("stack through do_syscall_64 does not end with the syscall entry:\n%s", e)
				}
			}
		}
	}
	if through == 0 {
		t.Errorf("no profile sample of the getpid loop in a syscall:\n%s", o.gt)
	}
}

// TestUstackUprobeChain: the ufunc helper calls main → chain_a → chain_b →
// target, but its target is a frameless leaf (no push %rbp at -O2): %rbp
// stays chain_b's frame all through target, so the frame-pointer walk
// skips chain_b (bpftrace prints the same): target+0, chain_a, main, then
// libc's start code. The whole chain, from a target with a frame probed
// past its prologue, is TestUstackChainAfterPrologue (uchain helper).
func TestUstackUprobeChain(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `uprobe:BIN:target /pid == PID/ { @[ustack] = count(); @p[ustack(perf)] = count(); }
interval:ms:400 { exit(); }`, "ufunc", "100000000000")
	es := mapEntries(o.gt, "@")
	if len(es) != 1 {
		t.Fatalf("want one ustack, got:\n%s", o.gt)
	}
	frames := stackFrames(t, es[0])
	if len(frames) < 3 || frames[0] != "target" || frames[1] != "chain_a" || frames[2] != "main" {
		t.Errorf("ustack at target = %v, want target, chain_a, main first", frames)
	}
	if !strings.HasPrefix(es[0], "@[\n    target+0\n    chain_a+") {
		t.Errorf("ustack entry:\n%s", es[0])
	}
	perf := mapEntries(o.gt, "@p")
	bin := testkit.Helper(t, "ufunc")
	want := regexp.MustCompile(`^@p\[\n\t([0-9a-f]+) target\+0 \(` + regexp.QuoteMeta(bin) + `\)\n\t[0-9a-f]+ chain_a\+[0-9]+ \(` + regexp.QuoteMeta(bin) + `\)\n\t[0-9a-f]+ main\+[0-9]+ \(` + regexp.QuoteMeta(bin) + `\)\n`)
	if len(perf) != 1 || !want.MatchString(perf[0]) {
		t.Errorf("ustack(perf):\n%s\nwant to match %s", strings.Join(perf, "\n"), want)
	}
	sameEntries(t, o)
}

// TestTwoStacksOneKey: kstack and ustack in one key with comm, at a
// syscall tracepoint: both stacks print, each in full, as bpftrace.
func TestTwoStacksOneKey(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { @[kstack, ustack, comm] = count(); }
interval:ms:400 { exit(); }`, "getpid", "1000000000")
	es := mapEntries(o.gt, "@")
	if len(es) != 1 {
		t.Fatalf("want one entry, got:\n%s", o.gt)
	}
	want := regexp.MustCompile(`^@\[\n(    [A-Za-z0-9_.$]+\+[0-9]+\n)+    entry_SYSCALL_64_after_hwframe\+[0-9]+\n, \n    syscall\+[0-9]+\n(    \S+\n)*, ` + regexp.QuoteMeta(helperComm(t, "getpid")) + `\]: N$`)
	if !want.MatchString(es[0]) {
		t.Errorf("entry:\n%s\nwant to match %s", es[0], want)
	}
	sameEntries(t, o)
}

// TestWakerWakee: offwaketime-style, the sleeper helper's blocked stack
// (taken at sched_switch) and its waker's stack (at sched_wakeup) in one
// key: the wakee blocked in nanosleep, the waker in the hrtimer that ends it.
func TestWakerWakee(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, false, `tracepoint:sched:sched_switch /args->prev_pid == PID/ { @sw[args->prev_pid] = kstack; @has[args->prev_pid] = 1; }
tracepoint:sched:sched_wakeup /args->pid == PID && @has[args->pid]/ { @[kstack, @sw[args->pid], args->comm] = count(); exit(); }`, "sleeper", "200")
	es := mapEntries(o.gt, "@")
	if len(es) != 1 {
		t.Fatalf("want one waker/wakee entry, got:\n%s", o.gt)
	}
	parts := strings.Split(es[0], "\n, ")
	if len(parts) != 3 {
		t.Fatalf("want waker stack, wakee stack, comm; got:\n%s", es[0])
	}
	// The kernel calls a tracepoint's probes through __traceiter_NAME
	// instead of a static call when the tracepoint has more than one
	// (kernel builds differ: 6.18.44-fc-v857 always shows it here), so
	// that frame may lead either stack; it says nothing about the event.
	waker := dropTraceiter(stackFrames(t, parts[0]))
	wakee := dropTraceiter(stackFrames(t, "@[\n"+strings.TrimPrefix(parts[1], "\n")))
	// sched_wakeup fires in try_to_wake_up (or ttwu_do_activate inlined or
	// not) on the waker's CPU, from the hrtimer that ends the sleep, or on
	// the sleeper's CPU when the wakeup was queued to it (an IPI).
	if len(waker) == 0 || !(waker[0] == "try_to_wake_up" || waker[0] == "ttwu_do_activate") ||
		!(contains(waker, "hrtimer_wakeup") || contains(waker, "sched_ttwu_pending")) {
		t.Errorf("waker stack is not the hrtimer's wakeup: %v", waker)
	}
	// glibc's nanosleep is clock_nanosleep(CLOCK_REALTIME).
	wantWakee := []string{"__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep", "common_nsleep", "__x64_sys_clock_nanosleep", "do_syscall_64", "entry_SYSCALL_64_after_hwframe"}
	if strings.Join(wakee, " ") != strings.Join(wantWakee, " ") {
		t.Errorf("wakee stack = %v, want %v", wakee, wantWakee)
	}
	if want := helperComm(t, "sleeper") + "]: N"; parts[2] != want {
		t.Errorf("comm part %q, want %q", parts[2], want)
	}
	syms := kallsyms(t)
	for _, f := range append(waker, wakee...) {
		if syms[f] == nil {
			t.Errorf("frame %s is not a kallsyms function", f)
		}
	}
	if o.ranBpftrace {
		// The waker's stack depends on what the timer interrupted: compare
		// the wakee's part only.
		for _, e := range mapEntries(o.bt, "@") {
			if p := strings.Split(e, "\n, "); len(p) == 3 && p[1] != parts[1] {
				t.Errorf("wakee stack differs from bpftrace's:\ngotrace:\n%s\nbpftrace:\n%s", parts[1], p[1])
			}
		}
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestUsymFunc: apply(callback, k) passes a function pointer: usym(arg0) is
// "callback"; func and usym(reg("ip")) at apply's entry are "apply".
func TestUsymFunc(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `uprobe:BIN:apply /pid == PID/ { @[func, usym(arg0), usym(reg("ip"))] = count(); }
interval:ms:400 { exit(); }`, "ufunc", "100000000000")
	if es := mapEntries(o.gt, "@"); len(es) != 1 || es[0] != "@[apply, callback, apply]: N" {
		t.Errorf("got:\n%s\nwant @[apply, callback, apply]: N", o.gt)
	}
	sameEntries(t, o)
}

// TestKsymKaddr: kaddr("vfs_read") is kallsyms's address; ksym of it, and
// of an address inside the function, is "vfs_read".
func TestKsymKaddr(t *testing.T) {
	requireTracing(t)
	addrs := kallsyms(t)["vfs_read"]
	if len(addrs) != 1 {
		t.Fatalf("kallsyms has %d vfs_read", len(addrs))
	}
	script := `BEGIN { printf("%lx %s %s\n", kaddr("vfs_read"), ksym(kaddr("vfs_read")), ksym(kaddr("vfs_read") + 5)); exit(); }`
	r := testkit.RunBounded(t, 20*time.Second, exec.Command(testkit.Gotrace(t), "-q", "-e", script))
	want := fmt.Sprintf("%x vfs_read vfs_read\n", addrs[0])
	// -q leaves the two blank lines before the (empty) maps, as bpftrace.
	if r.ExitCode != 0 || r.Stdout != want+"\n\n" {
		t.Errorf("gotrace: exit %d, stdout %q, want %q; stderr:\n%s", r.ExitCode, r.Stdout, want, r.Stderr)
	}
}

// TestUstackAfterExit: a process that exits before the maps print still
// has its ustack keys resolved, because gotrace took a snapshot of its
// symbols when it first saw the pid (the usym() event). bpftrace prints
// bare addresses here.
func TestUstackAfterExit(t *testing.T) {
	requireTracing(t)
	h := testkit.StartHelper(t, "ufunc", "20000")
	bin := testkit.Helper(t, "ufunc")
	script := strings.NewReplacer("PID", strconv.Itoa(h.Pid), "BIN", bin).Replace(
		`uprobe:BIN:target /pid == PID/ { @[ustack] = count(); }
uprobe:BIN:apply /pid == PID && @once == 0/ { @once = 1; printf("apply(%s)\n", usym(arg0)); }`)
	tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-e", script)
	h.Go()
	if hr := h.Wait(30 * time.Second); hr.ExitCode != 0 {
		t.Fatalf("ufunc: exit %d: %s", hr.ExitCode, hr.Stderr)
	}
	// The helper is gone (reaped): only the snapshot can resolve its stack.
	if err := syscall.Kill(h.Pid, 0); err == nil {
		t.Fatalf("helper %d still exists", h.Pid)
	}
	time.Sleep(100 * time.Millisecond)
	r := tr.Stop(syscall.SIGINT, 10*time.Second)
	if r.TimedOut {
		t.Fatalf("gotrace did not exit on SIGINT:\n%s\n%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "apply(callback)\n") {
		t.Errorf("usym event: want apply(callback) in:\n%s", r.Stdout)
	}
	es := mapEntries(r.Stdout, "@")
	if len(es) != 1 || !strings.HasPrefix(es[0], "@[\n    target+0\n    chain_a+") {
		t.Errorf("ustack of the exited helper:\n%s\nstderr:\n%s", strings.Join(es, "\n"), r.Stderr)
	}
}

// dropTraceiter removes a leading __traceiter_* frame (the kernel's
// tracepoint dispatch) from a kernel stack.
func dropTraceiter(frames []string) []string {
	if len(frames) > 0 && strings.HasPrefix(frames[0], "__traceiter_") {
		return frames[1:]
	}
	return frames
}
