package compiler

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestSyscallNrTable checks the name → number table against this kernel's
// syscalls tracepoints: every sys_enter_NAME must have a number (else that
// tracepoint silently stays on the slower perf path) and no two names may
// share one (the kernel registers an event only for a system call in its
// 64-bit table, once).
func TestSyscallNrTable(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the table is x86-64's") // lowering is off elsewhere
	}
	for ev, want := range map[string]int{"sys_enter_read": 0, "sys_exit_getpid": 39, "sys_enter_openat": 257,
		"sys_enter_newstat": 4, "sys_enter_newuname": 63, "sys_enter_umount": 166, "sys_enter_sendfile64": 40} {
		if nr, _, ok := SyscallNr(ev); !ok || nr != want {
			t.Errorf("SyscallNr(%s) = %d, %v; want %d", ev, nr, ok, want)
		}
	}
	if _, _, ok := SyscallNr("sched_switch"); ok {
		t.Errorf("SyscallNr(sched_switch) succeeded")
	}
	testkit.Require(t, testkit.Tracefs)
	dir, err := testkit.TracefsDir()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "events", "syscalls"))
	if err != nil {
		t.Fatal(err)
	}
	byNr := map[int]string{}
	n := 0
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "sys_enter_") && !strings.HasPrefix(name, "sys_exit_") {
			continue
		}
		n++
		nr, raw, ok := SyscallNr(name)
		if !ok {
			t.Errorf("%s: no system call number (add it to syscallAliases, or regenerate sysnrtable.go)", name)
			continue
		}
		if !strings.HasPrefix(name, raw+"_") {
			t.Errorf("%s: raw tracepoint %s", name, raw)
		}
		if raw == "sys_enter" {
			if other, dup := byNr[nr]; dup {
				t.Errorf("%s and %s both map to %d", name, other, nr)
			}
			byNr[nr] = name
		}
	}
	if n < 600 {
		t.Errorf("only %d syscalls tracepoints in %s", n, dir)
	}
	t.Logf("%d syscalls tracepoints, %d system calls, all numbered", n, len(byNr))
}
