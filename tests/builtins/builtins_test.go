package builtins_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/internal/testkit"
)

// cgroupV2 returns the cgroup v2 mount and this process's cgroup path.
func cgroupV2(t *testing.T) (string, string) {
	t.Helper()
	mnt := ""
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 2 && fs[2] == "cgroup2" {
			mnt = fs[1]
			break
		}
	}
	if mnt == "" {
		t.Skip("no cgroup v2 mount")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return mnt, p
		}
	}
	t.Fatal("no cgroup v2 line in /proc/self/cgroup")
	return "", ""
}

var varsScript = scriptOf("TestProcessVars", `tracepoint:syscalls:sys_enter_getpid /pid == PID && @once == 0/ {
	@once = 1;
	printf("%d %d %d %d %s %s\n", pid, tid, uid, gid, comm, username);
	printf("%d %d %d %d\n", cpu < NCPU, numaid, cgroup, cgroup == cgroupid("CGDIR"));
	printf("%s|%s\n", probe, cgroup_path(cgroup, "unified"));
	printf("%d %d %d %d\n", curtask->tgid, args->__syscall_nr, ctx != 0, rand <= 0xffffffff);
	printf("%llu %llu %llu\n", nsecs, elapsed, jiffies);
	exit();
}`)

// TestProcessVars: the process builtins of a known helper, cgroup against
// the cgroup directory's inode, nsecs against CLOCK_MONOTONIC, elapsed
// against the run's length, jiffies rising.
func TestProcessVars(t *testing.T) {
	requireTracing(t, testkit.BTF)
	mnt, cg := cgroupV2(t)
	dir := filepath.Join(mnt, cg)
	ino := mustStat(t, dir).Ino
	script := strings.NewReplacer("NCPU", strconv.Itoa(numCPU()), "CGDIR", dir).Replace(varsScript)
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	before := uint64(ts.Nano())
	start := time.Now()
	out, h := traceHelper(t, script, nil, false, "getpid", "3")
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	after := uint64(ts.Nano())
	out = strings.TrimSuffix(out, "\n\n\n@once: 1\n") + "\n"
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("want 5 lines, got:\n%s", out)
	}
	comm := helperComm(t, "getpid")
	expect(t, "ids", lines[0], fmt.Sprintf("%d %d 0 0 %s root", h.Pid, h.Pid, comm))
	expect(t, "cpu numaid cgroup", lines[1], fmt.Sprintf("1 0 %d 1", ino))
	expect(t, "probe cgroup_path", lines[2], "tracepoint:syscalls:sys_enter_getpid|unified:"+cgPath(cg))
	expect(t, "curtask args ctx rand", lines[3], fmt.Sprintf("%d 39 1 1", h.Pid))
	f := strings.Fields(lines[4])
	ns, _ := strconv.ParseUint(f[0], 10, 64)
	el, _ := strconv.ParseUint(f[1], 10, 64)
	jf, _ := strconv.ParseUint(f[2], 10, 64)
	if ns < before || ns > after {
		t.Errorf("nsecs %d not within the run [%d, %d] (CLOCK_MONOTONIC)", ns, before, after)
	}
	if el == 0 || el > uint64(time.Since(start)) {
		t.Errorf("elapsed %d not within (0, %d]", el, time.Since(start))
	}
	// jiffies64 starts 5 minutes before the 32-bit wrap (INITIAL_JIFFIES).
	if jf < 1<<32-300*1000 {
		t.Errorf("jiffies %d below INITIAL_JIFFIES", jf)
	}
}

func cgPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func numCPU() int {
	var s unix.CPUSet
	if unix.SchedGetaffinity(0, &s) == nil {
		if b, err := os.ReadFile("/sys/devices/system/cpu/possible"); err == nil {
			// "0-N": N+1 possible CPUs bound cpu.
			if _, hi, ok := strings.Cut(strings.TrimSpace(string(b)), "-"); ok {
				if n, err := strconv.Atoi(hi); err == nil {
					return n + 1
				}
			}
		}
		return s.Count()
	}
	return 1
}

var valuesScript = scriptOf("TestValueFunctions", `BEGIN {
	printf("%s|%s|%s\n", ntop(0x0100007f), ntop(2, 0x0101a8c0), strerror(2));
	printf("%d %d %d\n", bswap((uint32)1), bswap((uint16)0x1234), bswap(1));
	printf("%d %d\n", sizeof(int32), sizeof(struct task_struct) > 100);
	printf("%d %d %d %d\n", strncmp("abc", "abd", 2), strncmp("abc", "abd", 3) != 0, strcontains("hello", "ll"), strcontains("hello", "lx"));
	printf("%s|%d\n", ksym(kaddr("do_sys_openat2")), kaddr("do_sys_openat2") == KADDR);
	print(strerror(1));
	print((1, "two", (3, 4)));
	exit();
}`)

var offsetofScript = scriptOf("TestValueFunctions", `BEGIN { printf("%d %d\n", offsetof(struct task_struct, pid) == OFFPID, sizeof(struct task_struct) > 0); exit(); }`)

// TestValueFunctions: functions of constants, side by side with bpftrace
// (kaddr against /proc/kallsyms).
func TestValueFunctions(t *testing.T) {
	requireTracing(t, testkit.BTF)
	addr := testkit.KallsymsAddr(t, "do_sys_openat2")
	script := strings.ReplaceAll(valuesScript, "KADDR", fmt.Sprint(addr))
	got := gt(t, "-e", script)
	want := `127.0.0.1|192.168.1.1|No such file or directory
16777216 13330 0
4 1
0 1 1 0
do_sys_openat2|1
Operation not permitted
(1, two, (3, 4))
`
	expect(t, "values", got, want)
	bpftraceSame(t, got, "-e", script)
	off := btfOffset(t, "task_struct", "pid")
	expect(t, "offsetof", gt(t, "-e", strings.ReplaceAll(offsetofScript, "OFFPID", fmt.Sprint(off))), "1 1\n")
}

var uprobeScript = scriptOf("TestUprobeFunctions", `uprobe:BIN:target /pid == PID && @t == 0/ { @t = 1; printf("%lld %lld %lld %s %s\n", arg0, arg1, reg("di"), func, probe); }
uretprobe:BIN:target /pid == PID && @r == 0/ { @r = 1; printf("ret %d\n", retval); }
uprobe:BIN:apply /pid == PID && @a == 0/ { @a = 1; printf("%s %s %d\n", usym(arg0), usym(reg("ip")), *uaddr("origin")); }
uprobe:BIN:point_sum /pid == PID && @p == 0/ { @p = 1; printf("%d %d %d\n", *(int32*)uptr(arg0), sarg0 >= 0, kptr(curtask)->pid == pid); }
uprobe:BIN:greet /pid == PID && @g == 0/ { @g = 1; printf("%s|%s|%r|%rx|%rh|%s\n", str(arg0), str(arg0, 5), buf(arg0, 5), buf(arg0, 3), buf(arg0, 3), macaddr(arg0)); }
interval:ms:800 { exit(); }`)

// TestUprobeFunctions: argN, retval, func, reg, usym, uaddr, uptr/kptr,
// sargN, str, buf and macaddr on the ufunc helper's known calls (a long
// run, so the process is alive when its symbols are resolved).
func TestUprobeFunctions(t *testing.T) {
	requireTracing(t, testkit.BTF)
	got, _ := traceHelperLong(t, uprobeScript, "ufunc", "200000000")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := map[string]bool{
		"0 4294967296 0 target uprobe:" + testkit.Helper(t, "ufunc") + ":target": true,
		"ret 1":             true,
		"callback apply -7": true,
		"-7 1 1":            true,
		`hello gotrace|hello|hello|\x68\x65\x6c|68 65 6c|68:65:6C:6C:6F:20`: true,
	}
	for _, l := range lines {
		if l == "" || strings.HasPrefix(l, "@") {
			continue // the guard maps printed at exit
		}
		if !want[l] {
			t.Errorf("unexpected line %q", l)
		}
		delete(want, l)
	}
	for l := range want {
		t.Errorf("missing line %q in:\n%s", l, got)
	}
}

// traceHelperLong traces a helper that runs longer than the script, which
// ends itself; the helper is killed at the end of the test.
func traceHelperLong(t *testing.T, script, helper string, args ...string) (string, *testkit.HelperProc) {
	t.Helper()
	h := testkit.StartHelper(t, helper, args...)
	script = strings.ReplaceAll(script, "PID", fmt.Sprint(h.Pid))
	script = strings.ReplaceAll(script, "BIN", testkit.Helper(t, helper))
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "-e", script)
	h.Go()
	r := tr.Wait(30 * time.Second)
	noCrash(t, r)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace: exit %d timed out %v; stderr:\n%s", r.ExitCode, r.TimedOut, r.Stderr)
	}
	return body(r.Stdout), h
}

var timeScript = scriptOf("TestTimeCat", `BEGIN { printf("%s\n", strftime("%Y-%m-%d %H:%M:%S.%f", nsecs)); time("%Y-%m-%d\n"); cat("CATFILE"); cat("%s", "CATFILE"); exit(); }`)

// TestTimeCat: strftime (with %f microseconds) and time() against the
// clock, cat() of a file the test writes.
func TestTimeCat(t *testing.T) {
	requireTracing(t)
	f := filepath.Join(t.TempDir(), "cat.txt")
	if err := os.WriteFile(f, []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	got := gt(t, "-e", strings.ReplaceAll(timeScript, "CATFILE", f))
	after := time.Now()
	lines := strings.Split(got, "\n")
	if len(lines) < 6 {
		t.Fatalf("output:\n%s", got)
	}
	ts, err := time.ParseInLocation("2006-01-02 15:04:05.000000", lines[0], time.Local)
	if err != nil {
		t.Fatalf("strftime %q: %v", lines[0], err)
	}
	if ts.Before(before.Add(-time.Second)) || ts.After(after.Add(time.Second)) {
		t.Errorf("strftime %v not within [%v, %v]", ts, before, after)
	}
	if d := after.Format("2006-01-02"); lines[1] != d && lines[1] != before.Format("2006-01-02") {
		t.Errorf("time(): %q, want %q", lines[1], d)
	}
	expect(t, "cat", strings.Join(lines[2:6], "\n")+"\n", "line one\nline two\nline one\nline two\n")
}

var unsafeSignal = unsafeScriptOf("TestUnsafe", `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { signal("SIGUSR1"); exit(); }`)
var unsafeSignalNum = unsafeScriptOf("TestUnsafe", `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { signal(12); exit(); }`)

// TestUnsafe: with --unsafe, signal() reaches the sigrecv helper, which
// records the signal sent (the refusals without --unsafe and system() are
// cases of testdata/runtime/builtins.txt).
func TestUnsafe(t *testing.T) {
	requireTracing(t)
	for _, c := range []struct{ script, want string }{{unsafeSignal, "signal 10\n"}, {unsafeSignalNum, "signal 12\n"}} {
		h := testkit.StartHelper(t, "sigrecv", "10000")
		tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--unsafe", "-e", strings.ReplaceAll(c.script, "PID", fmt.Sprint(h.Pid)))
		h.Go()
		hr := h.Wait(20 * time.Second)
		r := tr.Wait(10 * time.Second)
		noCrash(t, r)
		if hr.Stdout != c.want || hr.ExitCode != 0 {
			t.Errorf("sigrecv: exit %d, stdout %q, want %q", hr.ExitCode, hr.Stdout, c.want)
		}
	}
}

// btfOffset is the byte offset of member of struct name in the kernel's BTF.
func btfOffset(t *testing.T, name, member string) int {
	t.Helper()
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	var st *btf.Struct
	if err := spec.TypeByName(name, &st); err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if m.Name == member {
			return int(m.Offset.Bytes())
		}
	}
	t.Fatalf("no member %s in struct %s", member, name)
	return 0
}

var dwStackScript = scriptOf("TestDwUstack", `uprobe:BIN:target /pid == PID && @once == 0/ { @once = 1; print(dw_ustack(2)); exit(); }`)

// TestDwUstack: dw_ustack (bpftrace 0.26) at the entry of the ufunc
// helper's target, unwound with the .eh_frame rules: target+0, then its
// caller at a return address (tests/stacks checks a chain built without
// frame pointers in depth).
func TestDwUstack(t *testing.T) {
	requireTracing(t)
	h := testkit.StartHelper(t, "ufunc", "100000000")
	script := strings.NewReplacer("PID", fmt.Sprint(h.Pid), "BIN", testkit.Helper(t, "ufunc")).Replace(dwStackScript)
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "-p", fmt.Sprint(h.Pid), "-e", script)
	h.Go()
	r := tr.Wait(30 * time.Second)
	noCrash(t, r)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("gotrace: exit %d timed out %v; stderr:\n%s", r.ExitCode, r.TimedOut, r.Stderr)
	}
	// Each value is 8 KiB: a hot loop may overrun the ring buffer before
	// exit() stops it ("Lost N events").
	if got := body(r.Stdout); !regexp.MustCompile(`^\n {8}target\+0\n {8}chain_b\+\d+\n\n(Lost \d+ events\n)?\n*@once: 1\n$`).MatchString(got) {
		t.Errorf("dw_ustack(2) at target:\n%q", got)
	}
}

var constArgsScript = scriptOf("TestConstantArguments", `BEGIN { $s = "abcdef"; printf("%d %d|%r|%d\n", strncmp($s, "abd", 1+1), strncmp($s, "abd", 2*2) != 0, buf($s, 2+2), (int64)(1 << 3) - 1); @l = lhist(3, 0, 5*2, 1+1); exit(); }`)

// TestConstantArguments: builtins whose arguments must be constants take
// any constant expression (strncmp's length, buf's size, lhist's bounds),
// folded once by the checker and read by code generation.
func TestConstantArguments(t *testing.T) {
	requireTracing(t)
	expect(t, "constant arguments", gt(t, "-e", constArgsScript), "0 1|abcd|7\n\n\n@l: \n[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n")
}

// exitingProg calls leaf_fn twice through caller_fn and exits at once.
const exitingProg = `
__attribute__((noinline)) int leaf_fn(int x) { return x + 1; }
__attribute__((noinline)) int caller_fn(int x) { return leaf_fn(x) * 2; }
int main(void) { return caller_fn(1) + caller_fn(2) == 10 ? 0 : 1; }
`

// TestUserSymbolsAfterExit: func and ustack of a probed non-PIE program
// print by name at exit although the program has exited (and been reaped)
// before the maps print; bpftrace 0.26's PER_PROGRAM symbol cache resolves
// them the same way (conformance case builtin.func_uprobe_elf_symtable).
func TestUserSymbolsAfterExit(t *testing.T) {
	requireTracing(t)
	dir := t.TempDir()
	src, bin := dir+"/exiting.c", dir+"/exiting"
	if err := os.WriteFile(src, []byte(exitingProg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O0", "-fno-omit-frame-pointer", "-fno-pie", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	script := scriptOf("TestUserSymbolsAfterExit", "uprobe:"+bin+":leaf_fn { @f[func] = count(); @s[ustack(2)] = count(); }")
	got := gt(t, "--compat", "0.26", "-e", script, "-c", bin)
	want := regexp.MustCompile(`^\n*@f\[leaf_fn\]: 2\n\n?@s\[\n    leaf_fn\+0\n    caller_fn\+[0-9]+\n\]: 2\n$`)
	if !want.MatchString(got) {
		t.Errorf("symbols of the exited program did not resolve:\n--- got\n%s--- want\n%s", got, want)
	}
}
