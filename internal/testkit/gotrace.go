package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	gotraceOnce sync.Once
	gotracePath string
	gotraceErr  error
)

// Gotrace returns the path of a gotrace binary built from ./cmd/gotrace, once
// per test process, into a temp dir private to the process.
//
// The binary runs with GOTRACE_COMPAT=0.17 in the test process's
// environment (unless the test process was given another value): the
// suites that use it were written against, and compare with, the bpftrace
// 0.17 installed here. A test of bpftrace 0.26 behaviour passes
// `--compat 0.26` explicitly (the flag wins over the variable).
func Gotrace(t testing.TB) string {
	t.Helper()
	gotraceOnce.Do(func() {
		if _, ok := os.LookupEnv("GOTRACE_COMPAT"); !ok {
			os.Setenv("GOTRACE_COMPAT", "0.17")
		}
		gotracePath, gotraceErr = buildGotrace()
	})
	if gotraceErr != nil {
		t.Fatal(gotraceErr)
	}
	return gotracePath
}

func buildGotrace() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "gotrace")); err != nil {
		return "", fmt.Errorf("testkit: no ./cmd/gotrace to build: %w", err)
	}
	goBin, err := goTool()
	if err != nil {
		return "", err
	}
	dir, err := runDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "gotrace")
	cmd := exec.Command(goBin, "build", "-o", out, "./cmd/gotrace")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testkit: go build ./cmd/gotrace: %v\n%s", err, strings.TrimSpace(string(b)))
	}
	return out, nil
}

// goTool finds the go command: PATH first, then GOROOT and /usr/local/go.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	for _, d := range []string{os.Getenv("GOROOT"), "/usr/local/go"} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("testkit: the go command is not in PATH, $GOROOT/bin or /usr/local/go/bin")
}
