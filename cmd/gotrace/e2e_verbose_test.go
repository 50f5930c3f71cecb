package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestVerbose: -v reports each program's instruction counts, and on a
// verifier rejection prints the verifier's whole log before the
// diagnostic, which names the script's place whatever -v says.
func TestVerbose(t *testing.T) {
	requireTracing(t)
	r := gt(t, 30*time.Second, "-v", "--dry-run", "-e", `BEGIN { @x = count(); } tracepoint:syscalls:sys_enter_getpid { @y[pid] = count(); }`)
	if r.ExitCode != 0 {
		t.Fatalf("-v --dry-run: exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	for _, prog := range []string{"c0_begin", "c1_tp"} {
		if !regexp.MustCompile(`(?m)^program ` + prog + `: \d+ instructions, \d+ verified$`).MatchString(r.Stderr) {
			t.Errorf("-v lacks the instruction counts of %s:\n%s", prog, r.Stderr)
		}
	}

	// An unbounded loop: the verifier gives up after a million
	// instructions; its log (the first instructions, with the script's
	// lines as comments, and the summary) comes with -v only.
	loop := `BEGIN { $i = 0; while ($i >= 0) { $i++; } exit(); }`
	diag := "stdin:1:17-32: ERROR: loop is too large for the BPF verifier (bound it, or use unroll/for over a map)\n" +
		"BEGIN { $i = 0; while ($i >= 0) { $i++; } exit(); }\n" +
		"                ~~~~~~~~~~~~~~~\n" +
		"HINT: the verifier said: BPF program is too large. Processed 1000001 insn; run with -v for the full verifier log\n"
	plain := gt(t, 60*time.Second, "-e", loop)
	if plain.ExitCode != 1 || plain.Stderr != diag {
		t.Errorf("without -v: exit %d, stderr %q; want 1 and %q", plain.ExitCode, plain.Stderr, diag)
	}
	v := gt(t, 60*time.Second, "-v", "-e", loop)
	if v.ExitCode != 1 || !strings.HasSuffix(v.Stderr, diag) {
		t.Errorf("-v: exit %d, stderr ends %q; want 1 and the diagnostic", v.ExitCode, tail(v.Stderr, 600))
	}
	for _, want := range []string{"; 1:1: BEGIN { $i = 0; while ($i >= 0) { $i++; } exit(); }", "processed 1000001 insns (limit 1000000)"} {
		if !strings.Contains(v.Stderr, want) {
			t.Errorf("-v: the verifier log lacks %q", want)
		}
	}
}

// TestAttachProgress: attaching more than 100 probes reports progress
// (on a terminal, or with -v), ending with the whole count.
func TestAttachProgress(t *testing.T) {
	requireTracing(t)
	// Hundreds of probes on one raw sys_enter link: nothing slow for the
	// kernel to release afterwards (perf mode would hold its event mutex
	// for seconds while other tests attach).
	cmd := exec.Command(testkit.Gotrace(t), "-v", "-e", `tracepoint:syscalls:sys_enter_* { @ = count(); } interval:ms:100 { exit(); }`)
	cmd.Env = append(os.Environ(), "GOTRACE_SYSCALL_TRACEPOINTS=raw")
	r := testkit.RunBounded(t, 60*time.Second, cmd)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	m := regexp.MustCompile(`(?m)Attaching probes: (\d+)/(\d+)\n`).FindStringSubmatch(r.Stderr)
	if m == nil || m[1] != m[2] || len(m[1]) < 3 {
		t.Errorf("no final progress line for 100+ probes in stderr:\n%s", r.Stderr)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
