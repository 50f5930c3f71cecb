package probes_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// perfEnv keeps syscalls tracepoints on the kernel's perf events, rawEnv
// compiles them to raw sys_enter/sys_exit programs wherever the clauses
// allow; by default only scripts tracing many system calls are
// (compiler/syscalls.go).
var (
	perfEnv = []string{"GOTRACE_SYSCALL_TRACEPOINTS=perf"}
	rawEnv  = []string{"GOTRACE_SYSCALL_TRACEPOINTS=raw"}
)

// TestSyscallsRawTracepoint runs one script on both implementations of
// syscalls tracepoints, on a workload of known system calls, and wants the
// same, exact output: numbers, args by name at every width (pointer, int
// flags, size_t), ret on exit, several clauses per direction, a list of
// tracepoints in one clause, and a wildcard.
func TestSyscallsRawTracepoint(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	getpid, openat, reads := testkit.Helper(t, "getpid"), testkit.Helper(t, "openat"), testkit.Helper(t, "reads")
	sh := filepath.Join(t.TempDir(), "work.sh")
	body := fmt.Sprintf("%s 300\n%s 40 /etc/hostname /nonexistent/gotrace\n%s -r 7 1 100 4096\n", getpid, openat, reads)
	testkit.WriteExecutable(t, sh, []byte(body))
	work := "/bin/sh " + sh
	// The workload's processes are the -c shell's children.
	const mine = `/curtask->real_parent->tgid == cpid/`
	script := `
tracepoint:syscalls:sys_enter_getpid ` + mine + ` { @getpid = count(); }
tracepoint:syscalls:sys_exit_getpid ` + mine + ` { @getpid_ret[args->ret == pid] = count(); @nr[args->__syscall_nr] = count(); }
tracepoint:syscalls:sys_enter_openat /curtask->real_parent->tgid == cpid && str(args->filename) != "/etc/ld.so.cache"/ { @open[str(args->filename), args->flags & 3, args->dfd] = count(); }
tracepoint:syscalls:sys_exit_openat ` + mine + ` { @open_ok[args->ret >= 0] = count(); }
tracepoint:syscalls:sys_enter_read, tracepoint:syscalls:sys_enter_pread64 ` + mine + ` { @read[args->count] = count(); }
tracepoint:syscalls:sys_exit_read ` + mine + ` { @read_ret = hist(args->ret); }
tracepoint:syscalls:sys_enter_getp* ` + mine + ` { @getp = count(); }
`
	run := func(env []string) string {
		r := gt(t, 90*time.Second, env, "-e", script, "-c", work)
		if r.ExitCode != 0 {
			t.Fatalf("gotrace %v: exit %d\nstdout:\n%s\nstderr:\n%s", env, r.ExitCode, r.Stdout, r.Stderr)
		}
		return r.Stdout
	}
	raw, perf := run(rawEnv), run(perfEnv)
	if raw != perf {
		t.Errorf("raw sys_enter/sys_exit and perf syscalls tracepoints differ:\nraw:\n%s\nperf:\n%s", raw, perf)
	}
	for _, want := range []string{
		"@getpid: 300\n",
		"@getpid_ret[1]: 300\n",
		"@nr[39]: 300\n",
		// dfd is "int dfd; size:8; signed:0" in the format: AT_FDCWD prints
		// as bpftrace 0.17 prints it.
		"@open[/etc/hostname, 0, 4294967196]: 20\n",
		"@open[/nonexistent/gotrace, 0, 4294967196]: 20\n",
		"@read[1]: 7\n", "@read[100]: 7\n", "@read[4096]: 7\n",
		"@getp: 300\n", // getpid, getppid, getpgid, getpgrp, getpriority: only getpid runs
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("missing %q in:\n%s", want, raw)
		}
	}
	if !regexp.MustCompile(`@open_ok\[0\]: 20\n`).MatchString(raw) {
		t.Errorf("want 20 failed openat:\n%s", raw)
	}

	// The raw programs were used with the raw setting, not with perf nor
	// by default (a few system calls).
	dump := gt(t, 60*time.Second, rawEnv, "-d", "-e", script)
	if n := strings.Count(dump.Stdout, "on raw tracepoint sys_enter"); n != 4 {
		t.Errorf("-d: %d programs on raw tracepoint sys_enter, want 4 (getpid, openat, read+pread64, the wildcard)\n%s", n, dump.Stdout)
	}
	if n := strings.Count(dump.Stdout, "on raw tracepoint sys_exit"); n != 3 {
		t.Errorf("-d: %d programs on raw tracepoint sys_exit, want 3", n)
	}
	for _, env := range [][]string{perfEnv, nil} {
		dump = gt(t, 60*time.Second, env, "-d", "-e", script)
		if strings.Contains(dump.Stdout, "on raw tracepoint") {
			t.Errorf("%v: lowered:\n%s", env, dump.Stdout)
		}
	}
}

// TestSyscallsIA32 checks that 32-bit system calls are not counted under
// the x86-64 name of their number: ia32 getpid (20) is not writev (20),
// and, as for the kernel's syscalls events, not getpid either.
func TestSyscallsIA32(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	int80 := testkit.Helper(t, "int80")
	script := `
tracepoint:syscalls:sys_enter_writev /pid == cpid/ { @writev = count(); }
tracepoint:syscalls:sys_exit_writev /pid == cpid/ { @writev_exit = count(); }
tracepoint:syscalls:sys_enter_getpid /pid == cpid/ { @getpid = count(); }
tracepoint:syscalls:sys_enter_write /pid == cpid/ { @write = count(); }
`
	for _, env := range [][]string{rawEnv, perfEnv} {
		r := gt(t, 60*time.Second, env, "-e", script, "-c", int80+" 500")
		if r.ExitCode != 0 {
			t.Fatalf("gotrace %v: exit %d\n%s\n%s", env, r.ExitCode, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stdout, "\n-38\n") {
			t.Fatalf("this kernel runs no ia32 system calls (int 0x80 returned -ENOSYS):\n%s", r.Stdout)
		}
		// Only the helper's one 64-bit write (its output) is seen.
		if got, want := mapLines(r.Stdout), "@getpid: 0\n@write: 1\n@writev: 0\n@writev_exit: 0"; got != want {
			t.Errorf("%v: map lines\n%s\nwant\n%s", env, got, want)
		}
	}
}

// TestSyscallsLoweringPolicy: what is and is not lowered to raw programs,
// by default and with GOTRACE_SYSCALL_TRACEPOINTS=raw.
func TestSyscallsLoweringPolicy(t *testing.T) {
	setup(t)
	lowered := func(env []string, script string) int {
		t.Helper()
		r := gt(t, 60*time.Second, env, "-d", "-e", script)
		if r.ExitCode != 0 {
			t.Fatalf("-d %s: exit %d\n%s", script, r.ExitCode, r.Stderr)
		}
		return strings.Count(r.Stdout, "on raw tracepoint sys_")
	}
	five := `tracepoint:syscalls:sys_enter_read { @a = count(); } tracepoint:syscalls:sys_enter_write { @b = count(); }
	tracepoint:syscalls:sys_enter_openat { @c = count(); } tracepoint:syscalls:sys_enter_close { @d = count(); }
	tracepoint:syscalls:sys_enter_getpid { @e = count(); }`
	for _, tc := range []struct {
		script    string
		auto, raw int
	}{
		// Many system calls: lowered by default.
		{`tracepoint:syscalls:sys_enter_* { @ = count(); }`, 1, 1},
		{`tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_* { @ = count(); }`, 2, 2},
		{`tracepoint:syscalls:sys_enter_* { @[args->__syscall_nr] = count(); } tracepoint:syscalls:sys_exit_read { @r = count(); }`, 1, 2},
		// A few: only when asked for.
		{`tracepoint:syscalls:sys_enter_openat { @[comm] = count(); } tracepoint:sched:sched_process_exit { @e = count(); }`, 0, 1},
		// Never, with the reason:
		{`tracepoint:syscalls:sys_enter_* { @[probe] = count(); }`, 0, 0},                                                       // probe under a wildcard: cookies
		{`tracepoint:syscalls:sys_enter_getpid { @[kstack] = count(); }`, 0, 0},                                                 // the stack would show the raw tracepoint
		{`tracepoint:syscalls:sys_enter_getpid { print(args); }`, 0, 0},                                                         // args as a whole
		{`tracepoint:syscalls:sys_enter_* { @[kstack] = count(); } tracepoint:syscalls:sys_enter_read { @r = count(); }`, 0, 0}, // all or none per raw tracepoint
		{five, 0, 0}, // five programs would each run on every system call
	} {
		if got := lowered(nil, tc.script); got != tc.auto {
			t.Errorf("%s: %d lowered programs by default, want %d", tc.script, got, tc.auto)
		}
		if got := lowered(rawEnv, tc.script); got != tc.raw {
			t.Errorf("%s: %d lowered programs with raw, want %d", tc.script, got, tc.raw)
		}
	}
}
