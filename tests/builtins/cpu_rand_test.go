package builtins_test

import (
	"fmt"
	"regexp"
	goruntime "runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/internal/testkit"
)

var cpuScript = scriptOf("TestCPUExact", `tracepoint:syscalls:sys_enter_getpid /tid == $1/ { printf("cpu %d\n", cpu); exit(); }`)

// TestCPUExact: cpu is the CPU the traced thread ran on: this test's
// thread, pinned to each CPU in turn, makes a getpid.
func TestCPUExact(t *testing.T) {
	requireTracing(t)
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 2 && c < goruntime.NumCPU(); c++ {
		if !allowed.IsSet(c) {
			continue
		}
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			goruntime.LockOSThread()
			defer goruntime.UnlockOSThread() // the thread keeps no affinity: it is restored below
			var one unix.CPUSet
			one.Set(c)
			if err := unix.SchedSetaffinity(0, &one); err != nil {
				t.Fatal(err)
			}
			defer unix.SchedSetaffinity(0, &allowed)
			tid := syscall.Gettid()
			tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "-e", cpuScript, strconv.Itoa(tid))
			syscall.Getpid()
			r := tr.Wait(20 * time.Second)
			if want := fmt.Sprintf("Attaching 1 probe...\ncpu %d\n\n\n", c); r.Stdout != want {
				t.Errorf("stdout %q, want %q; stderr:\n%s", r.Stdout, want, r.Stderr)
			}
		})
	}
}

var randScript = scriptOf("TestRandValues", `BEGIN { unroll(32) { @r[rand] = count(); } exit(); }`)

// TestRandValues: 32 rand values are 32-bit and, drawn from
// bpf_get_prandom_u32, all different (a repeat among 32 draws of 2^32
// values has a chance of about 1 in 10^7).
func TestRandValues(t *testing.T) {
	requireTracing(t)
	r := run(t, testkit.Gotrace(t), "-e", randScript)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	m := regexp.MustCompile(`(?m)^@r\[(\d+)\]: (\d+)$`).FindAllStringSubmatch(r.Stdout, -1)
	if len(m) != 32 {
		t.Fatalf("%d distinct values, want 32:\n%s", len(m), r.Stdout)
	}
	for _, e := range m {
		v, err := strconv.ParseUint(e[1], 10, 64)
		if err != nil || v > 0xffffffff || e[2] != "1" {
			t.Errorf("@r[%s]: %s: not a 32-bit value drawn once", e[1], e[2])
		}
	}
}
