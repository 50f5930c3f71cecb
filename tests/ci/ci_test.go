// Package ci tests the CI scripts' behaviour on a fresh machine.
package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformanceWithoutShared: with no conformance cases beside the
// clone, .ci/conformance notes it and skips outside CI, and fails in CI.
func TestConformanceWithoutShared(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-shared")
	for _, tc := range []struct {
		ci   string
		rc   int
		want string
	}{
		{"", 0, "NOTE: no conformance cases at " + missing},
		{"false", 0, "conformance step skipped"},
		{"true", 1, "ERROR: no conformance cases at " + missing},
	} {
		cmd := exec.Command("bash", "../../.ci/conformance")
		env := []string{"SHARED=" + missing}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "SHARED=") {
				env = append(env, kv)
			}
		}
		if tc.ci != "" {
			env = append(env, "CI="+tc.ci)
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		rc := 0
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if rc != tc.rc || !strings.Contains(string(out), tc.want) {
			t.Errorf("CI=%q: exit %d, output %q; want exit %d and %q", tc.ci, rc, out, tc.rc, tc.want)
		}
	}
}

// TestCIInstallsWhatTestsUse: .ci/run installs the packages the tests
// need on a fresh machine, after one apt-get update.
func TestCIInstallsWhatTestsUse(t *testing.T) {
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, pkg := range []string{"need+=(strace)", "need+=(libc6-dbg)", "need+=(util-linux)", "need+=(bsdutils)", "need+=(binutils)"} {
		if !strings.Contains(s, pkg) {
			t.Errorf(".ci/run does not install %s", pkg)
		}
	}
	if n := strings.Count(s, "apt-get update"); n != 1 {
		t.Errorf(".ci/run runs apt-get update %d times, want once", n)
	}
	if u, i := strings.Index(s, "apt-get update"), strings.Index(s, "apt-get install"); u < 0 || i < 0 || u > i {
		t.Errorf(".ci/run: apt-get update must come before apt-get install")
	}
	if strings.Contains(s, `apt-get update -qq && apt-get install`) {
		t.Errorf(".ci/run still updates only when something is missing")
	}
}
