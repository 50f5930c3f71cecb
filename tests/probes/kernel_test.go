package probes_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestKernelProbesHere: kprobe/kretprobe scripts pass the verifier here
// (--dry-run: exit 0, nothing attached) and attaching them is one precise
// error naming the missing kernel support. kfunc/kretfunc programs are
// refused by this kernel at load (no BPF trampolines), before the
// verifier runs: --dry-run says so in one message. runtime/vmtest runs
// all four for real inside a VM.
func TestKernelProbesHere(t *testing.T) {
	setup(t)
	testkit.Require(t, testkit.BTF)
	testkit.NoBPFLeaks(t)
	const noKprobes = "this kernel has no kprobe support"
	const noTrampoline = "this kernel refuses fentry/fexit programs"
	for _, tc := range []struct {
		name, script, attachErr string
	}{
		{"kprobe:vfs_read", `kprobe:vfs_read /comm == "cat"/ { @[arg2] = count(); @s = sum(arg2); }`, noKprobes},
		{"kprobe:vfs_read+0", `kprobe:vfs_read+0 { @ = count(); }`, noKprobes},
		{"kretprobe:vfs_read", `kretprobe:vfs_read { @ = hist(retval); }`, noKprobes},
		{"kfunc:vfs_read", `kfunc:vfs_read { @[args->count] = count(); }`, noTrampoline},
		{"kretfunc:vfs_read", `kretfunc:vfs_read { @ = hist(retval); }`, noTrampoline},
	} {
		t.Run(tc.name+"_dry-run", func(t *testing.T) {
			r := gt(t, 60*time.Second, nil, "--dry-run", "-e", tc.script)
			check(t, r.ExitCode == 0 && !strings.Contains(r.Stdout, "Attaching"), "--dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
			// The kernel refuses fentry/fexit loads before verification:
			// the program is verified as a kprobe-type program, and says so.
			if tc.attachErr == noTrampoline {
				check(t, strings.Contains(r.Stderr, "passed the verifier loaded as"), "--dry-run of %s: no verification note\nstderr:\n%s", tc.name, r.Stderr)
			}
		})
		t.Run(tc.name+"_attach", func(t *testing.T) {
			r := gt(t, 60*time.Second, nil, "-e", tc.script)
			if r.ExitCode == 0 || strings.Count(r.Stderr, "ERROR") != 1 || !strings.Contains(r.Stderr, tc.attachErr) {
				t.Errorf("want one error %q: exit %d\nstderr:\n%s", tc.attachErr, r.ExitCode, r.Stderr)
			}
			if strings.Contains(r.Stdout, "Attaching") {
				t.Errorf("attached something:\n%s", r.Stdout)
			}
		})
	}
}
