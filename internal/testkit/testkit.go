// Package testkit holds the helpers gotrace's tests share: capability checks
// that never skip silently in CI, the C workload helpers of testdata/helpers,
// a once-per-process build of cmd/gotrace, golden files, bounded subprocess
// runs, and a check that a test left no BPF object or tracefs event behind.
//
// Real-kernel tests follow one rule: when the environment variable CI is set,
// a missing capability fails the test (t.Fatal); elsewhere it skips it.
package testkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit/helperbin"
)

// InCI reports whether the tests run in CI (environment variable CI set to
// anything but "", "0" or "false").
func InCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "0" && v != "false"
}

// missing skips t, or fails it in CI, because what is not available.
func missing(t testing.TB, what string, err error) {
	t.Helper()
	msg := what
	if err != nil {
		msg = fmt.Sprintf("%s: %v", what, err)
	}
	if InCI() {
		t.Fatalf("required in CI but missing: %s", msg)
	}
	t.Skipf("skipping: %s", msg)
}

// Skipf skips t for a reason given as t.Skipf's arguments, or fails it in
// CI, where nothing a test needs may be missing. Tests use it (or Require)
// rather than reading CI themselves.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	missing(t, fmt.Sprintf(format, args...), nil)
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// RepoRoot returns the directory of the gotrace module (where go.mod is).
func RepoRoot() (string, error) {
	rootOnce.Do(func() {
		// Tests run in their package directory: walk up to go.mod. Fall back
		// to this file's location for binaries run from elsewhere.
		dir, err := os.Getwd()
		if err == nil {
			if d, ok := helperbin.FindModule(dir); ok {
				rootDir = d
				return
			}
		}
		if _, file, _, ok := runtime.Caller(0); ok {
			if d, ok := helperbin.FindModule(filepath.Dir(file)); ok {
				rootDir = d
				return
			}
		}
		rootErr = errors.New("testkit: cannot find the gotrace module root (go.mod) above the working directory")
	})
	return rootDir, rootErr
}

func mustRoot(t testing.TB) string {
	t.Helper()
	d, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	runDirOnce sync.Once
	runDirPath string
	runDirErr  error
)

// runDir is a temporary directory private to this test process. Directories
// left by earlier processes that have exited are removed on first use, so
// nothing piles up even though a test binary has no hook to run at exit.
func runDir() (string, error) {
	runDirOnce.Do(func() {
		base := filepath.Join(os.TempDir(), "gotrace-testkit")
		if err := os.MkdirAll(base, 0o755); err != nil {
			runDirErr = fmt.Errorf("testkit: %w", err)
			return
		}
		ents, _ := os.ReadDir(base)
		for _, e := range ents {
			pid, ok := strings.CutPrefix(e.Name(), "run-")
			if !ok {
				continue
			}
			if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && !pidAlive(n) {
				os.RemoveAll(filepath.Join(base, e.Name()))
			}
		}
		runDirPath = filepath.Join(base, fmt.Sprintf("run-%d", os.Getpid()))
		runDirErr = os.MkdirAll(runDirPath, 0o755)
	})
	return runDirPath, runDirErr
}

func pidAlive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}
