package testkit

import (
	"os"
	"syscall"
	"testing"
)

// WriteExecutable writes data to path as an executable (mode 0755) while
// holding syscall.ForkLock, so no process forked meanwhile by another
// goroutine (a parallel test starting a tracer or helper) inherits the
// write descriptor: a child holding it between its fork and its exec makes
// an exec of path fail with ETXTBSY, "text file busy" (golang/go#22315;
// seen in CI starting a renamed copy of a helper).
func WriteExecutable(t testing.TB, path string, data []byte) {
	t.Helper()
	syscall.ForkLock.Lock()
	err := os.WriteFile(path, data, 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
}
