package main

// Reliability (issue 19): inputs that used to be accepted silently, to
// fail late or to fail in internal words get a clear error naming the
// limit, early.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// gtEnv runs gotrace with extra environment, bounded.
func gtEnv(t *testing.T, timeout time.Duration, env []string, args ...string) testkit.Result {
	t.Helper()
	cmd := exec.Command(testkit.Gotrace(t), args...)
	cmd.Env = append(os.Environ(), env...)
	r := testkit.RunBounded(t, timeout, cmd)
	if r.TimedOut {
		t.Fatalf("gotrace %q timed out after %v:\nstdout:\n%s\nstderr:\n%s", args, timeout, r.Stdout, r.Stderr)
	}
	checkNoPanic(t, r)
	return r
}

// An empty program is bpftrace's syntax error, not "Attaching 0 probes"
// and a wait without end (item 7).
func TestEmptyProgram(t *testing.T) {
	testkit.Require(t, testkit.Go)
	for _, prog := range []string{" ", "// x", "\n\n"} {
		r := gt(t, 20*time.Second, "-e", prog)
		first := strings.SplitN(r.Stderr, "\n", 2)[0]
		if r.ExitCode != 1 || first != "stdin:1:1-2: ERROR: unexpected end of file, expected {" || r.Stdout != "" {
			t.Errorf("-e %q: exit %d, stdout %q, stderr %q", prog, r.ExitCode, r.Stdout, r.Stderr)
		}
	}
}

// Settings are validated before anything runs (items 4 and 10).
func TestBadSettingsRefused(t *testing.T) {
	testkit.Require(t, testkit.Go)
	for _, c := range []struct{ env, want string }{
		{"GOTRACE_MAP_KEYS_MAX=abc", "ERROR: Env var 'GOTRACE_MAP_KEYS_MAX' did not contain a valid uint64_t, or was zero-valued.\n"},
		{"BPFTRACE_MAX_MAP_KEYS=0", "ERROR: Env var 'BPFTRACE_MAX_MAP_KEYS' did not contain a valid uint64_t, or was zero-valued.\n"},
		{"GOTRACE_STRLEN=100000", "ERROR: 'GOTRACE_STRLEN' 100000 exceeds the maximum of 16384 bytes.\n"},
		{"GOTRACE_PERF_RB_PAGES=3", "ERROR: 'GOTRACE_PERF_RB_PAGES' 3 is not a power of 2 (the ring buffer's size must be one).\n"},
		{"GOTRACE_MAX_PROBES=-1", "ERROR: Env var 'GOTRACE_MAX_PROBES' did not contain a valid uint64_t, or was zero-valued.\n"},
		{"GOTRACE_SYSCALL_TRACEPOINTS=bogus", "ERROR: 'GOTRACE_SYSCALL_TRACEPOINTS' must be 'auto', 'raw' or 'perf', got 'bogus'.\n"},
		{"GOTRACE_STACK_MAP_ENTRIES=1e9", "ERROR: Env var 'GOTRACE_STACK_MAP_ENTRIES' did not contain a valid uint64_t, or was zero-valued.\n"},
	} {
		r := gtEnv(t, 20*time.Second, []string{c.env}, "-e", "BEGIN { exit(); }")
		if r.ExitCode != 1 || r.Stderr != c.want || r.Stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q, want %q", c.env, r.ExitCode, r.Stdout, r.Stderr, c.want)
		}
	}
	// bpftrace 0.17's range check (0.26 mode follows 0.26).
	r := gtEnv(t, 20*time.Second, []string{"GOTRACE_COMPAT=0.17"}, "-p", "0", "-e", "BEGIN { exit(); }")
	if r.ExitCode != 1 || r.Stderr != "ERROR: pid '0' out of valid pid range [1,4194304]\n" {
		t.Errorf("-p 0: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
	// --include of a file that is nowhere: clang's error, as bpftrace.
	res := testkit.RunBounded(t, 20*time.Second, exec.Command(testkit.Gotrace(t), "--include", "/nonexistent.h", "-e", "BEGIN { exit(); }"))
	if res.ExitCode != 1 || res.Stderr != "fatal error: '/nonexistent.h' file not found\n" {
		t.Errorf("--include /nonexistent.h: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

// The probe limit is checked before anything is compiled: 10,000 interval
// clauses took 27-40 s of compiling and verifying, then failed with "too
// many open files" (item 9).
func TestProbeLimitBeforeCompile(t *testing.T) {
	testkit.Require(t, testkit.Go)
	var b strings.Builder
	for i := range 10000 {
		b.WriteString("interval:s:1 { @[" + itoa(i) + "] = count(); }\n")
	}
	f := filepath.Join(t.TempDir(), "many.bt")
	os.WriteFile(f, []byte(b.String()), 0o644)
	r := gt(t, 60*time.Second, f)
	if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "ERROR: Can't attach to 10000 probes because it exceeds the current limit of 512 probes.\n") {
		t.Fatalf("exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
	if r.Duration > 10*time.Second {
		t.Errorf("refused after %v", r.Duration)
	}
	r = gtEnv(t, 60*time.Second, []string{"GOTRACE_MAX_PROBES=3"}, "-e", "BEGIN { exit(); } interval:s:1 {} interval:s:2 {} interval:s:3 {}")
	if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "ERROR: Can't attach to 4 probes because it exceeds the current limit of 3 probes.\n") {
		t.Errorf("GOTRACE_MAX_PROBES=3: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}

func itoa(i int) string { return fmtInt(i) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

// Limits the kernel enforces are named, not reported in its errno's or
// cilium's words (item 10).
func TestKernelLimitsNamed(t *testing.T) {
	requireTracing(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	for _, c := range []struct {
		name, script, want string
	}{
		{"big_literal", `BEGIN { printf("%s\n", "` + strings.Repeat("a", 100000) + `"); exit(); }`, "more than the kernel's limit of 32768 bytes for a per-CPU map value"},
		{"many_args", `BEGIN { printf("` + strings.Repeat("%d", 10000) + `\n", ` + strings.TrimSuffix(strings.Repeat("1,", 10000), ",") + `); exit(); }`, "more than the kernel's limit of 32768 bytes for a per-CPU map value"},
		{"unbounded_while", `BEGIN { $i = 0; while ($i < nsecs) { $i++; } exit(); }`, "loop"},
		{"not_elf", `uprobe:` + write("notelf", "#!/bin/sh\n") + `:foo { }`, "is not an ELF file"},
	} {
		r := gt(t, 60*time.Second, write(c.name+".bt", c.script))
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "argument list too long") || strings.Contains(r.Stderr, "LogSizeStart") && !strings.Contains(r.Stderr, "too complex") {
			t.Errorf("%s: exit %d, stderr %.300q, want %q", c.name, r.ExitCode, r.Stderr, c.want)
		}
	}
	// A NUL in a string literal compiles (line info escapes it).
	r := gt(t, 30*time.Second, write("nul.bt", "BEGIN { printf(\"a\x00b\\n\"); exit(); }"))
	if r.ExitCode != 0 || strings.Contains(r.Stderr, "null") {
		t.Errorf("NUL in a literal: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}

// GOTRACE_MAP_KEYS_MAX (and bpftrace's spellings) size every keyed map;
// updates refused because a map is full are counted and reported at exit,
// and under -k each failing update warns as bpftrace's does (item 4).
func TestMapKeysMax(t *testing.T) {
	requireTracing(t)
	script := `BEGIN { @a[1] = 1; @a[2] = 2; @a[3] = 3; @c[1] = count(); @c[2] = count(); @c[3] = count(); exit(); }`
	for _, env := range []string{"GOTRACE_MAP_KEYS_MAX=2", "BPFTRACE_MAP_KEYS_MAX=2", "BPFTRACE_MAX_MAP_KEYS=2"} {
		r := gtEnv(t, 30*time.Second, []string{env}, "-e", script)
		if r.ExitCode != 0 || strings.Contains(r.Stdout, "@a[3]") || strings.Contains(r.Stdout, "@c[3]") || !strings.Contains(r.Stdout, "@a[2]: 2") {
			t.Errorf("%s: exit %d, stdout %q", env, r.ExitCode, r.Stdout)
		}
		if !strings.Contains(r.Stderr, "WARNING: 2 map updates failed because a map was full (raise GOTRACE_MAP_KEYS_MAX)") {
			t.Errorf("%s: no map-full warning: %q", env, r.Stderr)
		}
	}
	r := gtEnv(t, 30*time.Second, []string{"GOTRACE_MAP_KEYS_MAX=2"}, "-k", "-e", script)
	want := "stdin:1:37-38: WARNING: Failed to map_update_elem: Argument list too long (-7)\n" + script + "\n" + strings.Repeat(" ", 36) + "~\n" +
		"stdin:1:84-91: WARNING: Failed to map_update_elem: Argument list too long (-7)\n" + script + "\n" + strings.Repeat(" ", 83) + "~~~~~~~\n"
	if !strings.Contains(r.Stdout+r.Stderr, want) {
		t.Errorf("-k: stdout %q\nstderr %q\nwant %q", r.Stdout, r.Stderr, want)
	}
}
