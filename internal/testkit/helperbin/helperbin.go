// Package helperbin builds the C workload helpers of testdata/helpers. It is
// separate from testkit so that non-test programs (bench/) can use it
// without importing package testing.
package helperbin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// CFlags are the flags every C helper is built with: symbols and frame
// pointers for ustack tests, no sibling calls so call chains stay visible, and
// a fixed load address (like bpftrace's own test programs).
var CFlags = []string{"-O2", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-no-pie", "-Wall"}

// Build returns the path of helper name (testdata/helpers/<name>.c plus any
// <name>.*.c) of the module at root, compiling it with gcc unless a binary
// for the same sources, headers and flags is already in the cache under the
// temp dir. Errors name the package to install when gcc or sys/sdt.h is
// missing.
func Build(root, name string) (string, error) {
	dir := filepath.Join(root, "testdata", "helpers")
	main := filepath.Join(dir, name+".c")
	if _, err := os.Stat(main); err != nil {
		return "", fmt.Errorf("helperbin: no helper %q: %w", name, err)
	}
	extra, _ := filepath.Glob(filepath.Join(dir, name+".*.c"))
	headers, _ := filepath.Glob(filepath.Join(dir, "*.h"))
	srcs := append([]string{main}, extra...)
	hashed := append(append([]string{}, srcs...), headers...)
	sort.Strings(hashed[1:])

	h := sha256.New()
	fmt.Fprintln(h, strings.Join(CFlags, " "))
	// The binary's DWARF names its sources by absolute path: another
	// checkout's build is another binary.
	fmt.Fprintln(h, dir)
	for _, f := range hashed {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("helperbin: helper %q: %w", name, err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	cache := filepath.Join(os.TempDir(), "gotrace-testkit", "helpers")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("helperbin: %w", err)
	}
	out := filepath.Join(cache, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		return "", fmt.Errorf("helperbin: building helper %q needs gcc, which is not in PATH (apt-get install gcc)", name)
	}
	// Build under a unique name and rename: test binaries of several packages
	// may build the same helper at once.
	tmp := fmt.Sprintf("%s.tmp%d", out, os.Getpid())
	args := append(append([]string{}, CFlags...), "-o", tmp)
	args = append(args, srcs...)
	cmd := exec.Command("gcc", args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		msg := strings.TrimSpace(string(b))
		if strings.Contains(msg, "sys/sdt.h") {
			return "", fmt.Errorf("helperbin: helper %q needs <sys/sdt.h> (apt-get install systemtap-sdt-dev): %s", name, msg)
		}
		return "", fmt.Errorf("helperbin: gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("helperbin: %w", err)
	}
	return out, nil
}

// FindModule walks up from dir to the gotrace module's root (its go.mod).
func FindModule(dir string) (string, bool) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/gotrace/gotrace\n") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
