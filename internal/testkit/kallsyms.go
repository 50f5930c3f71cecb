package testkit

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// KallsymsAddr is symbol's address in /proc/kallsyms (its first line),
// read independently of the tracer's own kallsyms code so tests can check
// it. A zero address (not root) or a missing symbol fails t.
func KallsymsAddr(t testing.TB, symbol string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[2] == symbol {
			a, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil || a == 0 {
				t.Fatalf("kallsyms: %q (run as root to see addresses)", l)
			}
			return a
		}
	}
	t.Fatalf("%s not in /proc/kallsyms", symbol)
	return 0
}
