package compat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestImport runs a script that imports another (bpftrace 0.25-0.26):
// the imported macro, map declaration and probes run, the imported begin
// and end probes before the script's own; under --compat 0.17 the import
// is refused, naming the release that added it. Errors in an imported
// script name it.
func TestImport(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/counter.bt", `macro bump(@m, k) { @m[k] += 2; }
let @hits = lruhash(16);
begin { printf("lib begin\n"); }
end { printf("lib end\n"); }
`)
	write("main.bt", `import "lib/counter.bt";
begin { bump(@hits, "a"); bump(@hits, "a"); printf("main begin %d\n", @hits["a"]); exit(); }
end { printf("main end\n"); }
`)
	write("broken.bt", `import "lib/bad.bt";
begin { exit(); }
`)
	write("lib/bad.bt", "begin {\n  $x = nosuch(1);\n}\n")
	write("missing.bt", "import \"nonexistent.bt\";\nbegin { exit(); }\n")

	runIn := func(version, script string) testkit.Result {
		t.Helper()
		cmd := exec.Command(testkit.Gotrace(t), "--compat", version, script)
		cmd.Dir = dir
		r := testkit.RunBounded(t, 20*time.Second, cmd)
		if r.TimedOut || strings.Contains(r.Stderr, "panic:") {
			t.Fatalf("--compat %s %s: timed out or crashed:\n%s", version, script, r.Stderr)
		}
		return r
	}

	r := runIn("0.26", "main.bt")
	if want := "lib begin\nmain begin 4\nlib end\nmain end\n\n\n@hits[a]: 4\n"; r.ExitCode != 0 || r.Stdout != want {
		t.Errorf("main.bt: exit %d, stdout\n%q\nwant\n%q\nstderr:\n%s", r.ExitCode, r.Stdout, want, r.Stderr)
	}

	r = runIn("0.17", "main.bt")
	want017 := "main.bt:1:1-25: ERROR: import was added in bpftrace 0.25; --compat 0.17 follows bpftrace 0.17, which has no imports\n"
	if r.ExitCode == 0 || !strings.HasPrefix(r.Stderr, want017) {
		t.Errorf("--compat 0.17 main.bt: exit %d, stderr\n%s\nwant it to start with\n%s", r.ExitCode, r.Stderr, want017)
	}

	r = runIn("0.26", "broken.bt")
	wantBad := "lib/bad.bt:2:8-14: ERROR: Unknown function: nosuch\n  $x = nosuch(1);\n       ~~~~~~\n"
	if r.ExitCode == 0 || !strings.HasPrefix(r.Stderr, wantBad) {
		t.Errorf("broken.bt: exit %d, stderr\n%s\nwant it to start with\n%s", r.ExitCode, r.Stderr, wantBad)
	}

	r = runIn("0.26", "missing.bt")
	wantMissing := "missing.bt:1:1-25: ERROR: Unable to find suitable path for import\nimport \"nonexistent.bt\";\n~~~~~~~~~~~~~~~~~~~~~~~~\nHINT: checked: nonexistent.bt\n"
	if r.ExitCode == 0 || !strings.HasPrefix(r.Stderr, wantMissing) {
		t.Errorf("missing.bt: exit %d, stderr\n%s\nwant it to start with\n%s", r.ExitCode, r.Stderr, wantMissing)
	}
}
