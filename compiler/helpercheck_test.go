package compiler

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
)

// TestMissingHelper simulates kernels without some helpers (Options.HaveHelper)
// and wants the error to name the builtin, the helper and the kernel version
// that added it, at the builtin's place.
func TestMissingHelper(t *testing.T) {
	for _, tt := range []struct {
		script  string
		missing asm.BuiltinFunc
		want    string
	}{
		{`tracepoint:syscalls:sys_enter_getpid { @[cgroup] = count(); }`, asm.FnGetCurrentCgroupId,
			"1:42: cgroup is not supported by this kernel: it needs the BPF helper bpf_get_current_cgroup_id (added in Linux 4.18)"},
		{`tracepoint:syscalls:sys_enter_getpid { signal("SIGUSR1"); }`, asm.FnSendSignal,
			"1:40: signal() is not supported by this kernel: it needs the BPF helper bpf_send_signal (added in Linux 5.3)"},
		{`BEGIN { printf("%d\n", jiffies); }`, asm.FnJiffies64,
			"1:24: jiffies is not supported by this kernel: it needs the BPF helper bpf_jiffies64 (added in Linux 5.5)"},
		{`BEGIN { @a[1] = 1; for ($kv : @a) { print($kv); } }`, asm.FnForEachMapElem,
			"1:20: for ($kv : @a) is not supported by this kernel: it needs the BPF helper bpf_for_each_map_elem (added in Linux 5.13)"},
		{`BEGIN { printf("%s\n", str(0)); }`, asm.FnProbeReadKernelStr,
			"1:24: str() is not supported by this kernel: it needs the BPF helper bpf_probe_read_kernel_str (added in Linux 5.5)"},
		// A helper that is there: no error.
		{`BEGIN { @ = nsecs; }`, asm.FnJiffies64, ""},
	} {
		res := checkText(t, tt.script, check.Options{Unsafe: true})
		var (
			mu    sync.Mutex // HaveHelper runs on several goroutines
			asked []asm.BuiltinFunc
		)
		_, err := Compile(res, Options{HaveHelper: func(pt ebpf.ProgramType, fn asm.BuiltinFunc) error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, fn)
			if fn == tt.missing {
				return fmt.Errorf("helper %v: %w", fn, ebpf.ErrNotSupported)
			}
			return nil
		}})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s\n got: %s\nwant: %s", tt.script, got, tt.want)
		}
		if len(asked) == 0 {
			t.Errorf("%s: HaveHelper never asked", tt.script)
		}
	}
	// Without a stub the running kernel is probed; this one has them all.
	prog, _ := lang.Parse(&lang.Source{Name: "stdin", Text: `BEGIN { @ = nsecs + pid; }`})
	res, err := check.Check(prog, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(res, Options{}); err != nil && strings.Contains(err.Error(), "not supported by this kernel") {
		t.Errorf("helpers of this kernel reported missing: %v", err)
	}
}

// TestSyscallHelpersProbedOnlyWhenLowering: the raw-syscalls shim's
// helpers (bpf_task_pt_regs, bpf_get_current_task_btf) are probed — a
// program load each at start-up — only for scripts whose syscalls
// tracepoints would move to the raw tracepoint, not for one tracepoint
// or none.
func TestSyscallHelpersProbedOnlyWhenLowering(t *testing.T) {
	shim := func(fn asm.BuiltinFunc) bool { return fn == asm.FnTaskPtRegs || fn == asm.FnGetCurrentTaskBtf }
	for _, tt := range []struct {
		script string
		mode   string
		probed bool
	}{
		{`tracepoint:syscalls:sys_enter_getpid { @[pid] = count(); }`, "", false},
		{`BEGIN { @ = 1; }`, "", false},
		{`tracepoint:syscalls:sys_enter_getpid { @[pid] = count(); }`, "raw", true},
	} {
		res := checkText(t, tt.script, check.Options{})
		var (
			mu     sync.Mutex // HaveHelper runs on several goroutines
			probed bool
		)
		_, err := Compile(res, Options{SyscallTracepoints: tt.mode, HaveHelper: func(pt ebpf.ProgramType, fn asm.BuiltinFunc) error {
			mu.Lock()
			defer mu.Unlock()
			probed = probed || shim(fn)
			return nil
		}})
		if err != nil {
			t.Fatalf("%s: %v", tt.script, err)
		}
		if probed != tt.probed {
			t.Errorf("%s (mode %q): shim helpers probed %v, want %v", tt.script, tt.mode, probed, tt.probed)
		}
	}
}

// TestMissingHelperOrder: the helper probes run in the background, but the
// error is the first missing helper in the program's order, and it comes
// before an error the generation met after it, as when the generation
// stopped at the first missing helper; a slow probe changes nothing.
func TestMissingHelperOrder(t *testing.T) {
	slowMissing := func(missing ...asm.BuiltinFunc) func(ebpf.ProgramType, asm.BuiltinFunc) error {
		return func(pt ebpf.ProgramType, fn asm.BuiltinFunc) error {
			for i, m := range missing {
				if fn == m {
					// The first missing helper answers last.
					time.Sleep(time.Duration(len(missing)-i) * 20 * time.Millisecond)
					return fmt.Errorf("helper %v: %w", fn, ebpf.ErrNotSupported)
				}
			}
			return nil
		}
	}
	for _, tt := range []struct {
		script  string
		missing []asm.BuiltinFunc
		want    string
	}{
		// Two builtins lack their helpers: the first one's is the error.
		{`BEGIN { @a = jiffies; printf("%s\n", str(0)); }`, []asm.BuiltinFunc{asm.FnJiffies64, asm.FnProbeReadKernelStr},
			"1:14: jiffies is not supported by this kernel: it needs the BPF helper bpf_jiffies64 (added in Linux 5.5)"},
		{`BEGIN { printf("%s\n", str(0)); @a = jiffies; }`, []asm.BuiltinFunc{asm.FnProbeReadKernelStr, asm.FnJiffies64},
			"1:24: str() is not supported by this kernel: it needs the BPF helper bpf_probe_read_kernel_str (added in Linux 5.5)"},
		// In a loop's body (a callback subprogram).
		{`BEGIN { @a[1] = 1; for ($kv : @a) { @b = jiffies; } }`, []asm.BuiltinFunc{asm.FnJiffies64},
			"1:42: jiffies is not supported by this kernel: it needs the BPF helper bpf_jiffies64 (added in Linux 5.5)"},
		{`BEGIN { for ($i : 0..3) { @b = jiffies; } }`, []asm.BuiltinFunc{asm.FnJiffies64},
			"1:32: jiffies is not supported by this kernel: it needs the BPF helper bpf_jiffies64 (added in Linux 5.5)"},
		// The first missing helper's error, not the later "unknown" one.
		{`BEGIN { @a = jiffies; printf("%s\n", str(0)); }`, []asm.BuiltinFunc{asm.FnJiffies64},
			"1:14: jiffies is not supported by this kernel: it needs the BPF helper bpf_jiffies64 (added in Linux 5.5)"},
	} {
		res := checkText(t, tt.script, check.Options{Unsafe: true})
		_, err := Compile(res, Options{HaveHelper: slowMissing(tt.missing...)})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s\n got: %s\nwant: %s", tt.script, got, tt.want)
		}
	}
}
