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

// These tests are not parallel: testkit.NoBPFLeaks counts every BPF object
// this test process's children hold when the test ends.

// bpfFDs counts the BPF objects (progs, maps, links) process pid holds.
func bpfFDs(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && strings.HasPrefix(target, "anon_inode:bpf") {
			n++
		}
	}
	return n
}

// uprobeEvents returns tracefs's uprobe_events lines.
func uprobeEvents(t *testing.T) map[string]bool {
	dir, err := testkit.TracefsDir()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "uprobe_events"))
	set := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			set[l] = true
		}
	}
	return set
}

// noNewUprobeEvents fails if uprobe events naming path appeared since before.
func noNewUprobeEvents(t *testing.T, before map[string]bool, path string) {
	t.Helper()
	for l := range uprobeEvents(t) {
		if !before[l] && strings.Contains(l, path) {
			t.Errorf("uprobe event left in tracefs: %s", l)
		}
	}
}

const cleanupScript = `tracepoint:syscalls:sys_enter_getpid /pid == $1/ { @ = count(); } END { printf("end\n"); }`

// TestCleanupOnSignal: SIGINT and SIGTERM run END, print the maps, exit 0
// and leave nothing loaded.
func TestCleanupOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			requireTracing(t)
			testkit.NoBPFLeaks(t)
			h := testkit.StartHelper(t, "getpid", "40")
			tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-e", cleanupScript, fmt.Sprint(h.Pid))
			if n := bpfFDs(tr.Cmd.Process.Pid); n == 0 {
				t.Errorf("gotrace holds no BPF objects while attached: the leak check would prove nothing")
			}
			h.Go()
			h.Wait(20 * time.Second)
			time.Sleep(100 * time.Millisecond)
			r := tr.Stop(sig, 10*time.Second)
			checkNoPanic(t, r)
			if r.TimedOut || r.ExitCode != 0 {
				t.Errorf("after %v: exit %d (timed out %v), want 0; stderr:\n%s", sig, r.ExitCode, r.TimedOut, r.Stderr)
			}
			expectOutput(t, "stdout", r.Stdout, "Attaching 2 probes...\nend\n\n\n@: 40\n")
		})
	}
}

// TestCleanupOnExit: exit() in a probe and the end of a -c command.
func TestCleanupOnExit(t *testing.T) {
	t.Run("exit", func(t *testing.T) {
		requireTracing(t)
		testkit.NoBPFLeaks(t)
		r := gt(t, 20*time.Second, "-e", `tracepoint:syscalls:sys_enter_getpid { @ = count(); } interval:ms:100 { exit(); }`)
		if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "Attaching 2 probes...\n") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
		}
	})
	t.Run("command", func(t *testing.T) {
		requireTracing(t)
		testkit.NoBPFLeaks(t)
		r := gt(t, 20*time.Second, "-c", testkit.Helper(t, "getpid")+" 3",
			"-e", `tracepoint:syscalls:sys_enter_getpid { @[comm] = count(); }`)
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "@["+helperComm(t, "getpid")+"]: 3\n") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
		}
	})
	t.Run("command_uprobe", func(t *testing.T) {
		requireTracing(t)
		testkit.NoBPFLeaks(t)
		bin := testkit.Helper(t, "ufunc")
		before := uprobeEvents(t)
		r := gt(t, 20*time.Second, "-c", bin, "-e", fmt.Sprintf(`uprobe:%s:main { @ = count(); }`, bin))
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "@: 1\n") {
			mismatch(t, "exit %d, stdout %q, stderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
		}
		noNewUprobeEvents(t, before, bin)
	})
}

// TestCleanupOnFailedAttach: a script whose later probe cannot attach fails
// with exit 1 and leaves nothing behind of the probes before it.
func TestCleanupOnFailedAttach(t *testing.T) {
	tests := []struct{ name, script, wantErr string }{
		{"uprobe_missing_symbol",
			`tracepoint:syscalls:sys_enter_getpid { @ = count(); } uprobe:/bin/true:no_such_symbol_gotrace { @u = count(); }`,
			"ERROR: could not resolve symbol: /bin/true:no_such_symbol_gotrace"},
		// Refused before anything is loaded: no hardware PMU in this VM.
		{"hardware_after_tracepoint",
			`tracepoint:syscalls:sys_enter_getpid { @ = count(); } hardware:cache-misses:1000000 { @h = count(); }`,
			"ERROR: "},
		// Half way: loaded and verified, then the kernel refuses the
		// uprobe at attach time (glibc 2.36's pthread_spin_lock starts
		// with an instruction uprobes cannot step, errno 524) after the
		// tracepoint was attached: all of it is rolled back.
		{"uprobe_refused_at_attach",
			`tracepoint:syscalls:sys_enter_getpid { @ = count(); } uprobe:libc:pthread_spin_lock { @u = count(); }`,
			"ERROR: 1 of 2 probes failed to attach: uprobe:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireTracing(t)
			testkit.NoBPFLeaks(t)
			before := uprobeEvents(t)
			cmd := exec.Command(testkit.Gotrace(t), "-e", tt.script)
			cmd.Env = append(os.Environ(), testkit.NotifyAttached+"=1")
			r := testkit.RunBounded(t, 20*time.Second, cmd)
			checkNoPanic(t, r)
			noNewUprobeEvents(t, before, "/bin/true")
			if strings.Contains(r.Stdout, testkit.NotifyAttached) {
				// This machine has what the probe needs: nothing failed.
				t.Logf("every probe attached here; only the cleanup was checked")
				return
			}
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, tt.wantErr) {
				t.Errorf("exit %d, want 1 with %q; stderr:\n%s", r.ExitCode, tt.wantErr, r.Stderr)
			}
		})
	}
}
