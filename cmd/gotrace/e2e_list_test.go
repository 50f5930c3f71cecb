package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestListKernelFunctions: -l over kfunc (BTF functions, spelled
// kfunc:MODULE:FUNC as bpftrace 0.17 does) and kprobe (the traceable kernel
// functions), -lv with each argument's C type, and -l without a pattern
// covering both. Where bpftrace can list the same probes on this kernel
// (it cannot when available_filter_functions is unreadable or kfuncs are
// unavailable), the outputs must be identical. (As bpftrace 0.17, the
// tests' default: 0.26 spells kfunc fentry, TestListV026.)
func TestListKernelFunctions(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BTF, testkit.Tracefs, testkit.Go)
	const vfsRead = "    struct file * file\n    char * buf\n    size_t count\n    loff_t * pos\n    ssize_t retval\n"
	for _, c := range []struct {
		args   []string
		want   string // exact stdout, or with prefix: every line starts with prefix
		prefix string
		first  string // the first line, with prefix
	}{
		{args: []string{"-lv", "kfunc:vfs_read"}, want: "kfunc:vmlinux:vfs_read\n" + vfsRead},
		{args: []string{"-lv", "kretfunc:vfs_read"}, want: "kretfunc:vmlinux:vfs_read\n" + vfsRead},
		{args: []string{"-l", "kfunc:vfs_rea*"}, prefix: "kfunc:vmlinux:vfs_rea", first: "kfunc:vmlinux:vfs_read"},
		{args: []string{"-l", "kprobe:vfs_rea*"}, prefix: "kprobe:vfs_rea", first: "kprobe:vfs_read"},
		{args: []string{"-l", "kretprobe:vfs_rea*"}, prefix: "kretprobe:vfs_rea", first: "kretprobe:vfs_read"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := gt(t, 30*time.Second, c.args...)
			if r.ExitCode != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
			}
			if c.prefix == "" {
				expectOutput(t, "stdout", r.Stdout, c.want)
			} else {
				lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
				if lines[0] != c.first {
					mismatch(t, "first line %q, want %q:\n%s", lines[0], c.first, r.Stdout)
				}
				for _, l := range lines {
					if !strings.HasPrefix(l, c.prefix) {
						mismatch(t, "line %q lacks %q", l, c.prefix)
					}
				}
			}
			compareListing(t, c.args, r.Stdout)
		})
	}
	t.Run("no pattern", func(t *testing.T) {
		r := gt(t, 60*time.Second, "-l")
		if r.ExitCode != 0 || r.Stderr != "" {
			t.Fatalf("exit %d, stderr:\n%s", r.ExitCode, r.Stderr)
		}
		var kinds []string
		for _, l := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
			k, _, _ := strings.Cut(l, ":")
			if len(kinds) == 0 || kinds[len(kinds)-1] != k {
				kinds = append(kinds, k)
			}
		}
		// kfunc only where this kernel runs fentry programs, as bpftrace.
		got := strings.Join(kinds, " ")
		if got != "hardware kprobe software tracepoint" && got != "hardware kfunc kprobe software tracepoint" {
			mismatch(t, "-l lists the probe types %q", got)
		}
		for _, l := range []string{"\nkprobe:vfs_read\n", "\ntracepoint:syscalls:sys_enter_openat\n"} {
			if !strings.Contains(r.Stdout, l) {
				mismatch(t, "-l lacks %q", l[1:])
			}
		}
		if strings.Contains(r.Stdout, "\nkprobe:__pfx_") || strings.Contains(r.Stdout, "\nkretprobe:") {
			mismatch(t, "-l lists __pfx_ symbols or return probes")
		}
	})
}

// compareListing runs bpftrace with the same arguments: when it lists
// something (it can), gotrace must have listed exactly that.
func compareListing(t *testing.T, args []string, got string) {
	t.Helper()
	if testkit.Check(testkit.Bpftrace) != nil && !testkit.InCI() {
		return
	}
	b := testkit.RunBounded(t, 60*time.Second, exec.Command(requireBpftrace(t), args...))
	if b.ExitCode != 0 || b.Stdout == "" {
		t.Logf("bpftrace %q lists nothing here (exit %d): %s", args, b.ExitCode, strings.TrimSpace(b.Stderr))
		return
	}
	expectOutput(t, "gotrace vs bpftrace", got, b.Stdout)
}

// TestListV026: bpftrace 0.26's listing: kfunc probes as fentry:, timer
// units, event aliases, the probes of a script file by their event or
// unit, and the warning for a -l argument that looks like a missing file.
func TestListV026(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.Go)
	dir := t.TempDir()
	script := dir + "/timers.bt"
	if err := os.WriteFile(script, []byte("interval:ms:100 { } interval:s:1 { } software:cpu:1e6 { } BEGIN { }"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args         []string
		stdout, warn string
	}{
		{args: []string{"-l", "interval:*"}, stdout: "interval:hz:\ninterval:ms:\ninterval:s:\ninterval:us:\n"},
		{args: []string{"-l", "software:cpu*"}, stdout: "software:cpu-clock:\nsoftware:cpu:\nsoftware:cpu-migrations:\n"},
		{args: []string{"-l", script}, stdout: "interval:ms:\ninterval:s:\nsoftware:cpu:\nBEGIN\n"},
		{args: []string{"-l", "no_such_file.bt"},
			warn: "WARNING: It appears that 'no_such_file.bt' is a filename but the file does not exist. Treating 'no_such_file.bt' as a search pattern.\n"},
		// Not a file name: no warning.
		{args: []string{"-l", "software:no.such"}},
	} {
		r := gt(t, 60*time.Second, append([]string{"--compat", "0.26"}, c.args...)...)
		if r.ExitCode != 0 {
			t.Fatalf("%q: exit %d, stderr:\n%s", c.args, r.ExitCode, r.Stderr)
		}
		expectOutput(t, strings.Join(c.args, " ")+" stdout", r.Stdout, c.stdout)
		expectOutput(t, strings.Join(c.args, " ")+" stderr", r.Stderr, c.warn)
	}
	if testkit.Check(testkit.BTF) == nil {
		r := gt(t, 60*time.Second, "--compat", "0.26", "-l", "fentry:vmlinux:vfs_read")
		expectOutput(t, "-l fentry:vmlinux:vfs_read", r.Stdout, "fentry:vmlinux:vfs_read\n")
	}
}
