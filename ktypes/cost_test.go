package ktypes

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartupCost shows that a tracepoint-only lookup does not pay for BTF:
// each case runs in a fresh process and reports wall time, heap allocated
// and peak RSS. Numbers are logged (timings are noisy); the assertions are
// that the tracepoint case never loads BTF and uses far less memory.
func TestStartupCost(t *testing.T) {
	if mode := os.Getenv("GOTRACE_LAYOUT_COST"); mode != "" {
		costChild(mode)
		return
	}
	if _, err := TracefsDir(); err != nil {
		needKernel(t, "tracefs: %v", err)
		return
	}
	if _, err := os.Stat(DefaultBTFPath); err != nil {
		needKernel(t, "no kernel BTF: %v", err)
		return
	}
	results := map[string]string{}
	for _, mode := range []string{"tracepoint", "btf"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartupCost$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GOTRACE_LAYOUT_COST="+mode)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", mode, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "COST ") {
				results[mode] = line
				t.Log(line)
			}
		}
	}
	var tpAlloc, btfAlloc int
	fmt.Sscanf(results["tracepoint"][strings.Index(results["tracepoint"], "alloc=")+6:], "%d", &tpAlloc)
	fmt.Sscanf(results["btf"][strings.Index(results["btf"], "alloc=")+6:], "%d", &btfAlloc)
	if !strings.Contains(results["tracepoint"], "btf_loaded=false") || tpAlloc*10 > btfAlloc {
		t.Errorf("tracepoint-only lookup is not cheap:\n%s\n%s", results["tracepoint"], results["btf"])
	}
}

func costChild(mode string) {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := New(Options{})
	var err error
	switch mode {
	case "tracepoint":
		_, err = r.Tracepoint("syscalls", "sys_enter_openat")
	case "btf":
		var task interface{}
		task, err = r.Type("struct task_struct")
		_ = task
	}
	elapsed := time.Since(start)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Printf("COST %s: time=%v alloc=%d KiB maxrss=%d KiB btf_loaded=%v\n",
		mode, elapsed.Round(time.Microsecond), (after.TotalAlloc-before.TotalAlloc)/1024, ru.Maxrss, r.BTFLoaded())
}
