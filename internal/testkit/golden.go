package testkit

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports testkit
// (`go test ./pkg -update`): Golden then rewrites files instead of comparing.
// Packages importing testkit must not define their own -update; call Updating.
var update = flag.Bool("update", false, "rewrite golden files with the output the tests produce")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Golden compares got with the golden file at path (relative to the test's
// package directory), or rewrites the file when -update is set. A mismatch
// names the first differing line and shows both versions.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated golden file %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Fatalf("golden file %s does not exist: run the test with -update to create it", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(want) == string(got) {
		return
	}
	t.Errorf("output differs from golden file %s (rerun with -update to accept):\n%s", path, diffSummary(string(want), string(got)))
}

// diffSummary describes where two texts first differ, then shows both.
func diffSummary(want, got string) string {
	wl := strings.Split(want, "\n")
	gl := strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return fmt.Sprintf("%q", l[i])
		}
		return "(end of text)"
	}
	return fmt.Sprintf("first difference at line %d:\n  want %s\n  got  %s\n--- want\n%s\n--- got\n%s",
		i+1, line(wl), line(gl), clip(want), clip(got))
}

func clip(s string) string {
	const max = 4000
	if len(s) > max {
		return s[:max] + fmt.Sprintf("\n... (%d more bytes)", len(s)-max)
	}
	return s
}
