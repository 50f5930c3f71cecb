package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --fmt and --mode format print the script formatted (lang/format), need
// no privileges, and write -o FILE atomically.
func TestFmtFlag(t *testing.T) {
	script := `kprobe:f /pid>1/ { @[comm]=count(); } // c`
	want := "kprobe:f /pid > 1/ {\n  @[comm] = count();\n} // c\n"
	for _, flag := range [][]string{{"--fmt"}, {"--mode", "format"}} {
		r := v26(t, append(flag, "-e", script)...)
		if r.ExitCode != 0 || r.Stdout != want || r.Stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", flag, r.ExitCode, r.Stdout, r.Stderr, want)
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.bt")
	out := filepath.Join(dir, "out.bt")
	os.WriteFile(in, []byte("BEGIN{exit()}"), 0o644)
	os.WriteFile(out, []byte("old"), 0o644)
	r := v26(t, "--fmt", "-o", out, in)
	b, _ := os.ReadFile(out)
	if r.ExitCode != 0 || r.Stdout != "" || string(b) != "BEGIN {\n  exit()\n}\n" {
		t.Errorf("-o: exit %d, stdout %q, file %q", r.ExitCode, r.Stdout, b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("-o left %d files in the directory, want 2", len(ents))
	}
	r = v26(t, "--fmt", "-e", `BEGIN { printf("x" }`)
	if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "stdin:1:20-21: ERROR: syntax error, unexpected }") || r.Stdout != "" {
		t.Errorf("syntax error: exit %d, stdout %q, stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	r = v26(t, "--mode", "test", "--fmt", "-e", "BEGIN {}")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "USAGE: --fmt conflicts with existing --mode") {
		t.Errorf("--mode test --fmt: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}
