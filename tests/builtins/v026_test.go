package builtins_test

// The rows bpftrace 0.26 added (and 0.17's pton and debugf), on the real
// kernel with deterministic helpers. The 0.26-only ones run with
// --compat 0.26 (the test binary's gotrace follows 0.17 otherwise).

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

var v26 = []string{"--compat", "0.26"}

// gt26 is gt under --compat 0.26.
func gt26(t *testing.T, args ...string) string {
	t.Helper()
	return gt(t, append(append([]string{}, v26...), args...)...)
}

var taskScript = scriptOf("TestTaskBuiltins", `tracepoint:syscalls:sys_enter_exit_group /ppid == PID && @n == 0/ {
	@n = 1;
	printf("%d %s %s %d %d %s\n", ppid, pcomm, leader_comm, leader_pid == pid, leader_tid == tid, probetype);
	printf("%d %d %d %d\n", ppid(curtask), leader_pid(curtask) == pid, strlen(comm), strlen(pcomm));
	exit();
}`)

var threadScript = scriptOf("TestTaskBuiltins", `tracepoint:syscalls:sys_enter_read /pid == PID && tid != pid && @t == 0/ {
	@t = 1;
	printf("%d %d %d %d %s\n", leader_pid == pid, leader_tid == pid, leader_tid == tid, leader_tid(curtask) == pid, leader_comm);
	exit();
}`)

// TestTaskBuiltins: in a child of the forker helper (at its _exit), ppid
// and pcomm name the helper and the child leads its own group; in the
// second thread of pingpong, the leader is the main thread (pid), not the
// thread itself.
func TestTaskBuiltins(t *testing.T) {
	requireTracing(t, testkit.BTF)
	comm := helperComm(t, "forker")
	got, h := traceHelper(t, taskScript, v26, false, "forker", "1")
	want := fmt.Sprintf("%d %s %s 1 1 tracepoint\n%d 1 %d %d\n\n\n@n: 1\n", h.Pid, comm, comm, h.Pid, len(comm), len(comm))
	expect(t, "task builtins in forker's child", got, want)

	pcomm := helperComm(t, "pingpong")
	got, _ = traceHelper(t, threadScript, v26, false, "pingpong", "200")
	expect(t, "leader of pingpong's second thread", got, "1 1 0 1 "+pcomm+"\n\n\n@t: 1\n")
}

var diagScript = scriptOf("TestDiagnostics", `BEGIN { errorf("bad %d, %s", 10, "x"); warnf("careful %d", 1); exit(); }`)
var assertScript = scriptOf("TestDiagnostics", `BEGIN { $x = 1; assert($x == 1, "one"); printf("after\n"); assert($x == 2, "x is not 2"); printf("not here\n"); }`)
var debugfScript = scriptOf("TestDiagnostics", `BEGIN { debugf("MARK %d %s", 5, "x"); exit(); }`)

// TestDiagnostics: errorf and warnf print on stderr as diagnostics at the
// call (and the run goes on); a failed assert prints its message there and
// ends the run with exit 1; debugf writes to the kernel's trace buffer.
func TestDiagnostics(t *testing.T) {
	requireTracing(t)
	r := run(t, testkit.Gotrace(t), append(append([]string{}, v26...), "-e", diagScript)...)
	want := `stdin:1:9-38: ERROR: bad 10, x
BEGIN { errorf("bad %d, %s", 10, "x"); warnf("careful %d", 1); exit(); }
        ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
stdin:1:40-62: WARNING: careful 1
BEGIN { errorf("bad %d, %s", 10, "x"); warnf("careful %d", 1); exit(); }
                                       ~~~~~~~~~~~~~~~~~~~~~~
`
	if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "" || diagOnly(r.Stderr) != want {
		t.Errorf("errorf/warnf: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", r.ExitCode, r.Stdout, r.Stderr, want)
	}
	r = run(t, testkit.Gotrace(t), append(append([]string{}, v26...), "-e", assertScript)...)
	want = `stdin:1:60-89: ERROR: assert failed: x is not 2
BEGIN { $x = 1; assert($x == 1, "one"); printf("after\n"); assert($x == 2, "x is not 2"); printf("not here\n"); }
                                                           ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
`
	if r.ExitCode != 1 || body(r.Stdout) != "after\n" || diagOnly(r.Stderr) != want {
		t.Errorf("assert: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", r.ExitCode, r.Stdout, r.Stderr, want)
	}

	marker := fmt.Sprintf("gtdbg%d", os.Getpid())
	got := gt(t, "-e", strings.ReplaceAll(debugfScript, "MARK", marker))
	expect(t, "debugf stdout", got, "\n")
	var lines []string
	for _, l := range strings.Split(traceBuffer(t), "\n") {
		if _, msg, ok := strings.Cut(l, "bpf_trace_printk: "); ok && strings.HasPrefix(msg, marker) {
			lines = append(lines, msg)
		}
	}
	expect(t, "debugf in the trace buffer", strings.Join(lines, "\n")+"\n", marker+" 5 x\n")
}

// diagOnly drops the attach line from stderr (0.26 prints it there).
func diagOnly(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "Attached ") && !strings.HasPrefix(l, "Attaching ") && l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func traceBuffer(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/sys/kernel/tracing/trace", "/sys/kernel/debug/tracing/trace"} {
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
	}
	t.Fatal("no tracefs trace file")
	return ""
}

var signalThreadScript = unsafeScriptOf("TestUnsafe026", `tracepoint:syscalls:sys_enter_getpid /pid == PID/ { signal_thread("SIGUSR2"); exit(); }`)
var writeUserScript = unsafeScriptOf("TestUnsafe026", `tracepoint:syscalls:sys_enter_openat /pid == PID/ { printf("wrote %d\n", write_user(args.filename, "/etc/hostname", 14)); }
tracepoint:syscalls:sys_exit_openat /pid == PID/ { printf("opened %d\n", args.ret >= 0); exit(); }`)

// TestUnsafe026: signal_thread reaches the sigrecv helper (its only
// thread); write_user rewrites the path the openat helper passes, so an
// open of a file that does not exist opens /etc/hostname instead.
func TestUnsafe026(t *testing.T) {
	requireTracing(t)
	h := testkit.StartHelper(t, "sigrecv", "10000")
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--compat", "0.26", "--unsafe", "-e", strings.ReplaceAll(signalThreadScript, "PID", fmt.Sprint(h.Pid)))
	h.Go()
	hr := h.Wait(20 * time.Second)
	r := tr.Wait(10 * time.Second)
	noCrash(t, r)
	if hr.Stdout != "signal 12\n" || hr.ExitCode != 0 {
		t.Errorf("sigrecv: exit %d, stdout %q, want signal 12", hr.ExitCode, hr.Stdout)
	}

	if _, err := os.Stat("/etc/hostname"); err != nil {
		t.Skipf("write_user: %v", err)
	}
	// 14 bytes and a NUL: room for "/etc/hostname" and its NUL.
	const missing = "/nonexist/abcd"
	if _, err := os.Stat(missing); err == nil {
		t.Fatalf("%s exists", missing)
	}
	// Where the kernel gives tracing programs no bpf_probe_write_user (as
	// here: the kernel is locked down), the precise error.
	script := strings.ReplaceAll(writeUserScript, "PID", "1")
	if r := run(t, testkit.Gotrace(t), "--compat", "0.26", "--unsafe", "--dry-run", "-e", script); r.ExitCode != 0 {
		want := "stdin:1:72-118: ERROR: write_user() is not supported by this kernel: it needs the BPF helper bpf_probe_write_user (added in Linux 4.8)\n"
		if !strings.HasPrefix(r.Stderr, want) {
			t.Fatalf("write_user --dry-run: exit %d, stderr:\n%s\nwant it to start with:\n%s", r.ExitCode, r.Stderr, want)
		}
		t.Logf("write_user cannot run here: %s", want)
		return
	}
	got, _ := traceHelper(t, writeUserScript, []string{"--compat", "0.26", "--unsafe"}, false, "openat", "1", missing)
	expect(t, "write_user", got, "wrote 0\nopened 1\n")
}

// The tseries() scripts: bpftrace's own test hook BPFTRACE_DUMMY_TS_MAP
// makes @ts the clock, so the intervals are fixed (100ms each, from the
// Unix epoch, printed in UTC).
var (
	tseriesScript = scriptOf("TestTseries", `BEGIN { @ts = (uint64)0; $i = (uint64)0;
	while ($i < 100) { @a = tseries($i % 10, 100ms, 5); @ts += 10000000; $i++; }
	@ts = 0; $i = 0;
	while ($i < 100) { @m = tseries($i % 10, 100ms, 3, "min"); @h = tseries($i % 10, 100ms, 3, "max");
		@g = tseries($i % 10, 100ms, 3, "avg"); @s = tseries($i % 10, 100ms, 3, "sum"); @ts += 10000000; $i++; }
	clear(@ts); exit(); }`)
	tseriesKeysScript = scriptOf("TestTseries", `BEGIN { @ts = (uint64)0; $i = 0;
	while ($i < 4) { @a["one"] = tseries(-3 + $i, 1s, 6); @ts += 1000000000; $i++; }
	$i = 0;
	while ($i < 2) { @a["two"] = tseries(7, 1s, 6); @ts += 1000000000; $i++; }
	clear(@ts); exit(); }`)
)

// TestTseries: tseries() as bpftrace 0.26 prints it: a 53-column graph
// per interval between the series' bounds (widened by one when they are
// equal, a '.' column at zero when the range spans it, "-" for an interval
// without a value, from a key's first interval to the map's latest), and
// in JSON the intervals that hold a value. num_intervals keeps the latest
// intervals; the aggregation combines the values of one interval.
func TestTseries(t *testing.T) {
	requireTracing(t)
	t.Setenv("BPFTRACE_DUMMY_TS_MAP", "@ts")
	t.Setenv("TZ", "UTC")
	graph := func(name, lo, hi, rows string) string {
		pad := func(s string) string { return s + strings.Repeat(" ", 21-len(s)) }
		rpad := func(s string) string { return strings.Repeat(" ", 32-len(s)) + s }
		return name + ":\n" + strings.Repeat(" ", 13) + pad(lo) + rpad(hi) + "\n" +
			"hh:mm:ss.ms  |" + strings.Repeat("_", 51) + "|\n" + rows +
			"             v" + strings.Repeat("_", 51) + "v\n" + strings.Repeat(" ", 13) + pad(lo) + rpad(hi) + "\n"
	}
	mid := "|" + strings.Repeat(" ", 25) + "*" + strings.Repeat(" ", 25) + "|"
	left := "*" + strings.Repeat(" ", 51) + "|"
	rowsOf := func(line, val string, from, to int) string {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&sb, "00:00:00.%d00 %s %s\n", i, line, val)
		}
		return sb.String()
	}
	got := gt26(t, "-e", tseriesScript)
	want := "\n\n" + graph("@a", "8", "10", rowsOf(mid, "9", 5, 9)) + "\n" +
		graph("@g", "3", "5", rowsOf(mid, "4", 7, 9)) + "\n" +
		graph("@h", "8", "10", rowsOf(mid, "9", 7, 9)) + "\n" +
		graph("@m", "0", "1", rowsOf(left, "0", 7, 9)) + "\n" +
		graph("@s", "44", "46", rowsOf(mid, "45", 7, 9))
	expect(t, "tseries text", got, want)

	got = gt26(t, "-e", tseriesKeysScript)
	// "one": -3 is lost (its interval is epoch 0, which bpftrace reads as
	// unused: value 0); -2, -1, 0; then "-" up to "two"'s latest interval.
	line := func(at int, zero int) string {
		b := []byte("|" + strings.Repeat(" ", 51) + "|")
		if zero > 0 {
			b[zero] = '.'
		}
		b[at] = '*'
		return string(b)
	}
	one := "@a[one]:\n" + strings.Repeat(" ", 8+1) + "-2" + strings.Repeat(" ", 19) + strings.Repeat(" ", 31) + "0\n" +
		"hh:mm:ss |" + strings.Repeat("_", 51) + "|\n"
	for i, v := range []string{"0", "-2", "-1", "0"} {
		at := map[string]int{"-2": 0, "-1": 26, "0": 52}[v]
		one += fmt.Sprintf("00:00:0%d %s %s\n", i, line(at, 0), v)
	}
	one += "00:00:04 |" + strings.Repeat(" ", 51) + "| -\n00:00:05 |" + strings.Repeat(" ", 51) + "| -\n" +
		"         v" + strings.Repeat("_", 51) + "v\n" + strings.Repeat(" ", 9) + "-2" + strings.Repeat(" ", 50) + "0\n"
	two := "@a[two]:\n" + strings.Repeat(" ", 9) + "6" + strings.Repeat(" ", 51) + "8\n" +
		"hh:mm:ss |" + strings.Repeat("_", 51) + "|\n" +
		"00:00:04 " + mid + " 7\n00:00:05 " + mid + " 7\n" +
		"         v" + strings.Repeat("_", 51) + "v\n" + strings.Repeat(" ", 9) + "6" + strings.Repeat(" ", 51) + "8\n"
	expect(t, "tseries with keys", got, "\n\n"+one+"\n"+two)

	got = gt26(t, "-f", "json", "-e", tseriesKeysScript)
	got = got[strings.LastIndex(strings.TrimRight(got, "\n"), "\n")+1:]
	js := func(s, v int) string {
		return fmt.Sprintf(`{"interval_start": "1970-01-01 00:00:0%d.000000000", "value": %d}`, s, v)
	}
	expect(t, "tseries json", got, `{"type": "tseries", "data": {"@a": {"one": [`+js(0, 0)+", "+js(1, -2)+", "+js(2, -1)+", "+js(3, 0)+
		`], "two": [`+js(4, 7)+", "+js(5, 7)+"]}}}\n")

	msg := gtErr(t, "--compat", "0.17", "-e", `BEGIN { @ = tseries(1, 1s, 2); exit(); }`)
	if !strings.Contains(msg, "ERROR: Unknown function: tseries") || !strings.Contains(msg, "added in bpftrace 0.24") {
		t.Errorf("tseries under --compat 0.17: %s", msg)
	}
}

var bigStrScript = scriptOf("TestBigStrings", `tracepoint:syscalls:sys_enter_execve /pid == cpid/ {
	$s = str(args.filename);
	printf("%d %s\n", strncmp($s, "/XXX", 4) == 0, $s);
	print($s);
	@m[$s] = $s;
	for ($kv : @m) { print($kv); }
	delete(@m, $s);
}`)

// TestBigStrings: with BPFTRACE_MAX_STRLEN above 4096 (bpftrace 0.26
// allows it; gotrace keeps such strings in an array with a slot per CPU),
// a 5555-byte path goes through str(), strncmp, printf, print, a map key
// and value, a for loop's (key, value) tuple and delete() by that key
// (in the kernel: clear() is handled by the reader, too late for the next
// execve, which follows at once).
func TestBigStrings(t *testing.T) {
	requireTracing(t)
	t.Setenv("BPFTRACE_MAX_STRLEN", "9999")
	long := "/" + strings.Repeat("X", 5555)
	got := gt26(t, "-c", "/usr/bin/env "+long, "-e", bigStrScript)
	want := "0 /usr/bin/env\n/usr/bin/env\n(/usr/bin/env, /usr/bin/env)\n1 " + long + "\n" + long + "\n(" + long + ", " + long + ")\n"
	expect(t, "big strings", got, want)
}
