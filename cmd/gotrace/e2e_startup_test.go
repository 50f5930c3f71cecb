package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestEarlyRingTaken: the ring the first init makes for a script that
// prints (internal/early) is the runtime's, not a second one beside it,
// and a ring made for a wrong guess (printf( in a comment of a script with
// no ring) is closed once the script has loaded.
func TestEarlyRingTaken(t *testing.T) {
	requireTracing(t)
	for _, tc := range []struct {
		name, script string
		rings        int
	}{
		{"printf", `tracepoint:syscalls:sys_enter_getpid /pid == 1/ { printf("%d\n", tid); }`, 1},
		{"wrong guess", `tracepoint:syscalls:sys_enter_getpid /pid == 1/ { @ = count(); } // printf(`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-e", tc.script)
			// A discarded ring is closed in the background: give it a moment.
			n := -1
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if n = ringBufMaps(t, tr.Cmd.Process.Pid); n == tc.rings {
					break
				}
			}
			if n != tc.rings {
				t.Errorf("the tracer holds %d ring buffer maps, want %d", n, tc.rings)
			}
			if r := tr.Stop(syscall.SIGINT, 10*time.Second); r.ExitCode != 0 {
				t.Errorf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
			}
		})
	}
}

// ringBufMaps counts the distinct BPF ring buffer maps (map_type 27, by
// map_id: the reader holds a second descriptor of the ring) among pid's
// descriptors.
func ringBufMaps(t *testing.T, pid int) int {
	t.Helper()
	dir := filepath.Join("/proc", itoa(pid), "fdinfo")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !strings.Contains(string(b), "map_type:\t27\n") {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if id, ok := strings.CutPrefix(l, "map_id:\t"); ok {
				ids[id] = true
			}
		}
	}
	return len(ids)
}
