// Package guest holds the tests that run inside the vmtest VM: its test
// binary, built static, is the VM's /init. Run anywhere else, the tests
// skip: they are exercised through runtime/vmtest's TestVM.
package guest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime"
)

// Marker is the last console line: "GOTRACE-VMTEST: PASS" or "... FAIL".
const Marker = "GOTRACE-VMTEST:"

var inVM = os.Getpid() == 1

func TestMain(m *testing.M) {
	if v := os.Getenv("GOTRACE_VM_GETPID"); v != "" {
		var n int
		fmt.Sscan(v, &n)
		getpidLoop(n)
		os.Exit(0)
	}
	if os.Getenv("GOTRACE_VM_GETTID_LOOP") != "" {
		gettidLoop()
	}
	if v := os.Getenv("GOTRACE_VM_OPEN"); v != "" {
		var n int
		var path string
		fmt.Sscan(v, &n, &path)
		openLoop(n, path)
		os.Exit(0)
	}
	if !inVM {
		os.Exit(m.Run())
	}
	// Packages (cilium's among them) probe /proc and bpffs in their init
	// functions, which ran before anything was mounted: mount, then
	// re-execute this binary so they run again on a complete system.
	if os.Getenv("GOTRACE_VM_STAGE") == "" {
		if err := setup(); err != nil {
			fmt.Printf("vmtest setup: %v\n%s FAIL\n", err, Marker)
			poweroff()
		}
		env := append(os.Environ(), "GOTRACE_VM_STAGE=2", "PATH=/bin", "TMPDIR=/tmp")
		err := syscall.Exec("/init", []string{"/init"}, env)
		fmt.Printf("vmtest: re-exec /init: %v\n%s FAIL\n", err, Marker)
		poweroff()
	}
	flag.Set("test.v", "true")
	// runtime/vmtest's GOTRACE_VMTEST_RUN and _COUNT, through the
	// kernel command line.
	if v := os.Getenv("GOTRACE_VM_RUN"); v != "" {
		flag.Set("test.run", v)
	}
	if v := os.Getenv("GOTRACE_VM_COUNT"); v != "" {
		flag.Set("test.count", v)
	}
	code := m.Run()
	res := "PASS"
	if code != 0 {
		res = "FAIL"
	}
	fmt.Printf("%s %s\n", Marker, res)
	poweroff()
}

// setup mounts what BPF, tracing and Go need, before any BPF call.
func setup() error {
	for _, m := range []struct{ src, dir, typ string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/tmp", "tmpfs"},
		{"tracefs", "/sys/kernel/tracing", "tracefs"},
		{"debugfs", "/sys/kernel/debug", "debugfs"},
		{"bpf", "/sys/fs/bpf", "bpf"},
	} {
		os.MkdirAll(m.dir, 0o755)
		if err := unix.Mount(m.src, m.dir, m.typ, 0, ""); err != nil && err != unix.EBUSY {
			return fmt.Errorf("mount %s on %s: %w", m.typ, m.dir, err)
		}
	}
	for _, f := range []string{"/proc/self/mountinfo", "/sys/kernel/tracing/available_filter_functions", "/sys/kernel/btf/vmlinux"} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("after mounting: %w", err)
		}
	}
	if b, err := os.ReadFile("/sys/kernel/tracing/available_filter_functions"); err == nil {
		var getpid []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "getpid") {
				getpid = append(getpid, l)
			}
		}
		fmt.Printf("vmtest: %d traceable functions, getpid ones: %q\n", bytes.Count(b, []byte("\n")), getpid)
	}
	os.Setenv("PATH", "/bin")
	os.Setenv("TMPDIR", "/tmp")
	// The guest's expectations are bpftrace 0.17's output, as in the
	// suites on the host (internal/testkit.Gotrace sets the same).
	os.Setenv("GOTRACE_COMPAT", "0.17")
	return nil
}

func poweroff() {
	os.Stdout.Sync()
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {}
}

func requireVM(t *testing.T) {
	if !inVM {
		t.Skip("runs as /init inside the VM (runtime/vmtest TestVM)")
	}
}

var countInfo = &lang.MapInfo{Name: "@", Value: &types.Type{Kind: types.Count, Size: 8}}

// countProgram counts events of thread tid in m_count[0]; with
// storeRetval, m_count[1] holds the last value of the u64 at ctx+retOff
// (pt_regs ax for kretprobe, the return slot for fexit).
func countProgram(tid int, retOff int16) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg32(asm.R0, asm.R0),
		asm.JNE.Imm(asm.R0, int32(tid), "out"),
	}
	if retOff >= 0 {
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R6, retOff, asm.DWord),
			asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, -16),
			asm.Mov.Imm(asm.R4, 0),
			asm.LoadMapPtr(asm.R1, 0).WithReference("m_count"),
			asm.FnMapUpdateElem.Call(),
		)
	}
	return append(insns,
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.LoadMapPtr(asm.R1, 0).WithReference("m_count"),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "init"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Ja.Label("out"),
		asm.Mov.Imm(asm.R1, 1).WithSymbol("init"),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -16),
		asm.Mov.Imm(asm.R4, 0),
		asm.LoadMapPtr(asm.R1, 0).WithReference("m_count"),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
}

// The function every case counts: getpid's callee. 6.1's
// __x64_sys_getpid is not in available_filter_functions and its
// __do_sys_getpid copy is inlined (it never fires).
const target = "__task_pid_nr_ns"

func TestProbeTypes(t *testing.T) {
	requireVM(t)
	const n = 1000
	for _, tc := range []struct {
		provider string
		typ      ebpf.ProgramType
		at       ebpf.AttachType
		retOff   int16 // -1: no return value check
	}{
		{"kprobe", ebpf.Kprobe, 0, -1},
		{"kretprobe", ebpf.Kprobe, 0, 80}, // pt_regs->ax
		{"kfunc", ebpf.Tracing, ebpf.AttachTraceFEntry, -1},
		{"kretfunc", ebpf.Tracing, ebpf.AttachTraceFExit, 24}, // after its three arguments
	} {
		t.Run(tc.provider, func(t *testing.T) {
			// Each subtest is its own goroutine: pin it, count its thread.
			goruntime.LockOSThread()
			defer goruntime.UnlockOSThread()
			tid := unix.Gettid()
			ap := &lang.AttachPoint{Raw: tc.provider + ":" + target, Provider: lang.ProbeKindNamed(tc.provider), Func: target}
			p := &compiler.Program{Name: "p_" + tc.provider, Type: tc.typ, AttachType: tc.at, Attach: []*lang.AttachPoint{ap}, Insns: countProgram(tid, tc.retOff)}
			if tc.typ == ebpf.Tracing {
				p.AttachTo = target
			}
			spec := &compiler.Spec{
				Maps:     []*compiler.MapSpec{{Name: "m_count", Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4, User: countInfo}},
				Programs: []*compiler.Program{p},
				Source:   &lang.Source{Name: "stdin", Text: ap.Raw},
			}
			l, err := runtime.Load(spec)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			defer l.Close()
			pl, err := l.Expand(nil, 0)
			if err != nil {
				t.Fatalf("expand: %v", err)
			}
			if err := l.Attach(pl, nil); err != nil {
				t.Fatalf("attach: %v", err)
			}
			// Count only the loop: attaching may have called the function.
			m := l.Maps["m_count"]
			var k, v uint64
			m.Delete(&k)
			for range n {
				syscall.Getpid()
			}
			if err := m.Lookup(&k, &v); err != nil {
				t.Fatalf("no hits: %v", err)
			}
			if v != n {
				t.Errorf("%s:%s hits = %d, want %d", tc.provider, target, v, n)
			}
			hits := v
			if tc.retOff >= 0 {
				k = 1
				if err := m.Lookup(&k, &v); err != nil {
					t.Fatalf("no return value: %v", err)
				}
				if int(uint32(v)) != os.Getpid() { // pid_t: the low 32 bits
					t.Errorf("%s return value = %d, want the pid %d", tc.provider, v, os.Getpid())
				}
			}
			if err := l.Detach(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s:%s counted %d", tc.provider, target, hits)
		})
	}
}

// loopComm names the thread of getpidLoop: scripts filter on it.
const loopComm = "gtloop"

// getpidLoop makes n getpid calls on a thread of its own named loopComm.
// The thread is renamed after the Go runtime set it up (its gettid and
// signal setup also reach __task_pid_nr_ns) and, locked to the goroutine,
// runs nothing else: a script filtering on comm counts exactly n.
func getpidLoop(n int) {
	onLoopThread(func() error {
		for range n {
			syscall.Getpid()
		}
		return nil
	})
}

// openLoop opens and closes path n times on a thread named loopComm.
func openLoop(n int, path string) {
	onLoopThread(func() error {
		for range n {
			fd, err := unix.Open(path, unix.O_RDONLY, 0)
			if err != nil {
				return err
			}
			unix.Close(fd)
		}
		return nil
	})
}

// onLoopThread runs work on a thread of its own named loopComm, and exits
// the process if it fails.
func onLoopThread(work func() error) {
	if err := onThreadNamed(loopComm, work); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// onThreadNamed runs work on a thread of its own named comm (renamed after
// the Go runtime set it up, and running nothing else while locked to the
// goroutine), so a script filtering on comm sees only work's events.
func onThreadNamed(comm string, work func() error) error {
	done := make(chan error)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&[]byte(comm + "\x00")[0])), 0, 0, 0); err != nil {
			done <- fmt.Errorf("prctl(PR_SET_NAME): %w", err)
			return
		}
		done <- work()
	}()
	return <-done
}

// TestBuiltins runs builtins that need what this machine's kernel lacks
// and the VM's has: path() (bpf_d_path, fentry programs only) and
// percpu_kaddr() (per-CPU variables resolved through kallsyms, which
// lists data symbols only with CONFIG_KALLSYMS_ALL). The VM has 2 CPUs.
func TestBuiltins(t *testing.T) {
	requireVM(t)
	if _, err := os.Stat("/bin/gotrace"); err != nil {
		t.Skip("no /bin/gotrace in the initramfs")
	}
	for _, tc := range []struct {
		name, script, env, want string
	}{
		// cpu_number is each CPU's own number; a CPU that does not exist
		// has no copy (NULL).
		{"percpu_kaddr", `BEGIN { printf("%d %d %d %d\n", *(int32 *)percpu_kaddr("cpu_number", 0), *(int32 *)percpu_kaddr("cpu_number", 1), ` +
			`percpu_kaddr("cpu_number", 2), *(int32 *)percpu_kaddr("cpu_number") == cpu); exit(); }`, "",
			"Attaching 1 probe...\n0 1 0 1\n\n\n"},
		// As in TestGotraceScripts, only getpid's calls (PIDTYPE_TGID).
		{"percpu_kaddr-probe", `kfunc:` + target + ` /comm == "` + loopComm + `" && args->type == 1/ { @[*(int32 *)percpu_kaddr("cpu_number") == cpu] = count(); }`,
			"GOTRACE_VM_GETPID=300", "Attaching 1 probe...\n\n\n@[1]: 300\n"},
		// The thread also closes the process's other files when it exits
		// last (pipes, eventfds): count the known file's closes only.
		{"path", `kfunc:filp_close /comm == "` + loopComm + `"/ { $p = path(args->filp->f_path); if ($p == "/bin/gotrace") { @[$p] = count(); } }`,
			"GOTRACE_VM_OPEN=7 /bin/gotrace", "Attaching 1 probe...\n\n\n@[/bin/gotrace]: 7\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-e", tc.script}
			if tc.env != "" {
				args = append([]string{"-c", "/init"}, args...)
			}
			cmd := exec.Command("/bin/gotrace", args...)
			if tc.env != "" {
				cmd.Env = append(os.Environ(), tc.env)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			t.Logf("gotrace %q:\n%s%s", args, stdout.String(), stderr.String())
			if err != nil {
				t.Fatalf("gotrace: %v", err)
			}
			if stdout.String() != tc.want {
				t.Errorf("stdout = %q, want %q", stdout.String(), tc.want)
			}
		})
	}
}

// TestKprobeOffset: kprobe:FUNC+OFF attaches inside the function. The
// first offsets are the entry's few straight-line instructions (endbr64,
// the ftrace call, the frame setup), which every call passes and which
// leave the argument registers alone: the first offset the kernel accepts
// as an instruction boundary must count every getpid. Offsets inside an
// instruction must be refused with the kernel's reason.
func TestKprobeOffset(t *testing.T) {
	requireVM(t)
	if _, err := os.Stat("/bin/gotrace"); err != nil {
		t.Skip("no /bin/gotrace in the initramfs")
	}
	const n = 200
	refused, first := 0, ""
	for off := 1; off < 16; off++ {
		script := fmt.Sprintf(`kprobe:%s+%d /comm == "%s" && arg1 == 1/ { @ = count(); }`, target, off, loopComm)
		cmd := exec.Command("/bin/gotrace", "-c", "/init", "-e", script)
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOTRACE_VM_GETPID=%d", n))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			t.Logf("+%d refused: %s", off, strings.TrimSpace(stderr.String()))
			if want := fmt.Sprintf("kprobe:%s+%d (the kernel refused offset %[2]d of %[1]s: not at an instruction boundary", target, off); !strings.Contains(stderr.String(), want) {
				t.Errorf("+%d: the error lacks %q:\n%s", off, want, stderr.String())
			}
			if refused == 0 {
				first = strings.SplitN(strings.TrimSpace(stderr.String()), "\n", 2)[0]
			}
			refused++
			continue
		}
		want := fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", n)
		if stdout.String() != want {
			t.Fatalf("kprobe:%s+%d: stdout = %q, want %q", target, off, stdout.String(), want)
		}
		// +1 is inside the function's first instruction (the 5-byte
		// ftrace call): had the offset been dropped, it would attach.
		if refused == 0 {
			t.Errorf("kprobe:%s+%d attached: the offset inside the first instruction was not refused", target, off)
		}
		t.Logf("kprobe:%s+%d counted %d (%d smaller offsets refused, the first with: %s)", target, off, n, refused, first)
		return
	}
	t.Fatalf("no offset in +1..+15 of %s attached", target)
}

// TestGotraceScripts runs the gotrace binary packed at /bin/gotrace, when
// present, with -e scripts for each kernel probe type whose output is exact:
// the traced command is /init in getpid mode (GOTRACE_VM_GETPID=N).
func TestGotraceScripts(t *testing.T) {
	requireVM(t)
	if _, err := os.Stat("/bin/gotrace"); err != nil {
		t.Skip("no /bin/gotrace in the initramfs")
	}
	const n = 500
	for _, tc := range gotraceScripts(n) {
		t.Run(tc.name, func(t *testing.T) {
			runGotraceScript(t, tc, n)
		})
	}
}

// TestDetachUnderLoad runs each of TestGotraceScripts's scripts while
// another process calls the traced function (gettid reaches
// __task_pid_nr_ns) in a loop on two threads, so that the probes are
// attached and detached, and the kernel code patched, while another CPU
// runs it. Under multi-threaded TCG this crashed the guest within a few
// runs (see TestVM); it checks that the counts stay exact too.
func TestDetachUnderLoad(t *testing.T) {
	requireVM(t)
	if _, err := os.Stat("/bin/gotrace"); err != nil {
		t.Skip("no /bin/gotrace in the initramfs")
	}
	loop := exec.Command("/init")
	loop.Env = append(os.Environ(), "GOTRACE_VM_GETTID_LOOP=1")
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		loop.Process.Kill()
		loop.Wait()
	}()
	const n = 50
	for _, tc := range gotraceScripts(n) {
		t.Run(tc.name, func(t *testing.T) {
			before := cpuTicks(t, loop.Process.Pid)
			runGotraceScript(t, tc, n)
			// The loop ran beside the script (else this tests nothing
			// more than TestGotraceScripts).
			if after := cpuTicks(t, loop.Process.Pid); after <= before {
				t.Errorf("the gettid loop used no CPU while %s ran (%d -> %d ticks)", tc.name, before, after)
			}
		})
	}
}

// cpuTicks is process pid's user+system time in clock ticks
// (/proc/PID/stat fields 14 and 15); it fails t once the process is gone.
func cpuTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("the gettid loop: %v", err)
	}
	// After the command's ")": state is field 3, utime and stime 14, 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 || f[0] == "Z" {
		t.Fatalf("the gettid loop is gone: %s", b)
	}
	var u, s uint64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return u + s
}

// gettidLoop calls gettid on two threads until killed.
func gettidLoop() {
	for range 2 {
		go func() {
			goruntime.LockOSThread()
			for {
				unix.Gettid()
			}
		}()
	}
	select {}
}

type gotraceScript struct{ name, script, want string }

// gotraceScripts are -e scripts for each kernel probe type whose output
// is exact when /init makes n getpid calls.
func gotraceScripts(n int) []gotraceScript {
	only := `comm == "` + loopComm + `"`
	return []gotraceScript{
		// __task_pid_nr_ns(task, type, ns): getpid asks for PIDTYPE_TGID
		// (1); the loop thread also reaches it once more with another type
		// (renamed or exiting, for perf's comm/exit records).
		{"kprobe", `kprobe:` + target + ` /` + only + ` && arg1 == 1/ { @ = count(); }`, ""},
		// A return probe cannot see the type, so the entry marks the
		// calls that asked for PIDTYPE_TGID (the extra call also returns
		// the tgid, and would make the count flaky: 501 in 1 of 4 boots).
		{"kretprobe", `kprobe:` + target + ` /` + only + ` && arg1 == 1/ { @in[tid] = 1; } ` +
			`kretprobe:` + target + ` /@in[tid] && retval == pid/ { delete(@in[tid]); @ = count(); }`,
			fmt.Sprintf("Attaching 2 probes...\n\n\n@: %d\n\n", n)},
		{"kfunc", `kfunc:` + target + ` /` + only + ` && args->type == 1/ { @ = count(); }`, ""},
		{"kretfunc", `kretfunc:` + target + ` /` + only + ` && args->type == 1 && retval == pid/ { @ = count(); }`, ""},
		// A kfunc wildcard compiles to one program per BTF function, so
		// probe is that program's constant: the expanded name.
		{"kfunc-wildcard-probe", `kfunc:` + target[:len(target)-1] + `* /` + only + ` && args->type == 1/ { @[probe] = count(); }`,
			fmt.Sprintf("Attaching 1 probe...\n\n\n@[kfunc:%s]: %d\n", target, n)},
		// probe under a wildcard names the expanded function (the attach
		// cookie of a kprobe_multi link); the plain clause's constant
		// takes the probe table's first entry, so a missing cookie (0)
		// would print the kretprobe's name.
		{"kprobe-wildcard-probe", `kretprobe:` + target + ` /` + only + ` && retval == pid && @in[tid]/ { delete(@in[tid]); @r[probe] = count(); } ` +
			`kprobe:` + target[:len(target)-1] + `* /` + only + ` && arg1 == 1/ { @[probe] = count(); @in[tid] = 1; }`,
			fmt.Sprintf("Attaching 2 probes...\n\n\n@[kprobe:%[1]s]: %[2]d\n\n@r[kretprobe:%[1]s]: %[2]d\n", target, n)},
		{"kretprobe-wildcard-probe", `kprobe:` + target + ` /` + only + ` && arg1 == 1/ { @[probe] = count(); @in[tid] = 1; } ` +
			`kretprobe:` + target[:len(target)-1] + `* /` + only + ` && retval == pid && @in[tid]/ { delete(@in[tid]); @r[probe] = count(); }`,
			fmt.Sprintf("Attaching 2 probes...\n\n\n@[kprobe:%[1]s]: %[2]d\n\n@r[kretprobe:%[1]s]: %[2]d\n", target, n)},
	}
}

// runGotraceScript runs tc under gotrace -c /init making n getpid calls
// and checks its output.
func runGotraceScript(t *testing.T, tc gotraceScript, n int) {
	cmd := exec.Command("/bin/gotrace", "-c", "/init", "-e", tc.script)
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOTRACE_VM_GETPID=%d", n))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("gotrace -c /init -e %q:\n%s%s", tc.script, stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("gotrace: %v", err)
	}
	want := tc.want
	if want == "" {
		want = fmt.Sprintf("Attaching 1 probe...\n\n\n@: %d\n", n)
	}
	if stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	} else {
		t.Logf("gotrace %s counted %d", tc.name, n)
	}
}

// TestExamples runs the examples/ scripts that need kprobes or kfunc
// (packed under /examples by TestVM) against a workload of exactly known
// calls, made on a thread named for the script's COMM filter.
func TestExamples(t *testing.T) {
	requireVM(t)
	if _, err := os.Stat("/bin/gotrace"); err != nil {
		t.Skip("no /bin/gotrace in the initramfs")
	}
	const comm = "gtvfs"
	for _, tc := range []struct {
		file string
		work func() error
		want string
	}{
		// 1 open, 3 fsync (refused by /dev/null, but after
		// vfs_fsync_range is entered), 40 writes, 50 reads: distinct
		// counts, so the print order is fixed.
		{"27-kfunccount.gt", func() error {
			fd, err := unix.Open("/dev/null", unix.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			for range 3 {
				unix.Fsync(fd) // EINVAL: /dev/null has no fsync
			}
			b := make([]byte, 16)
			for range 40 {
				if _, err := unix.Write(fd, b); err != nil {
					return err
				}
			}
			for range 50 {
				if _, err := unix.Read(fd, b); err != nil {
					return err
				}
			}
			return nil
		}, "Attaching 4 probes...\n\n\n" +
			"@calls[kfunc:vfs_open]: 1\n@calls[kfunc:vfs_fsync_range]: 3\n" +
			"@calls[kfunc:vfs_write]: 40\n@calls[kfunc:vfs_read]: 50\n"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cmd := exec.Command("/bin/gotrace", "/examples/"+tc.file, comm)
			cmd.Env = append(os.Environ(), "__BPFTRACE_NOTIFY_PROBES_ATTACHED=1")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Wait for the notify line, keeping the rest of stderr.
			var errs bytes.Buffer
			attached := make(chan bool, 1)
			readDone := make(chan struct{})
			go func() {
				defer close(readDone)
				buf := make([]byte, 4096)
				notified := false
				for {
					n, err := stderr.Read(buf)
					errs.Write(buf[:n])
					if !notified && strings.Contains(errs.String(), "__BPFTRACE_NOTIFY_PROBES_ATTACHED") {
						notified = true
						attached <- true
					}
					if err != nil {
						if !notified {
							attached <- false
						}
						return
					}
				}
			}()
			if !<-attached {
				<-readDone
				cmd.Wait()
				t.Fatalf("gotrace %s exited before attaching:\n%s%s", tc.file, stdout.String(), errs.String())
			}
			// The workload on a thread of its own, named comm.
			if err := onThreadNamed(comm, tc.work); err != nil {
				t.Fatalf("workload: %v", err)
			}
			cmd.Process.Signal(syscall.SIGINT)
			<-readDone // Wait closes the pipe: read it to the end first
			err = cmd.Wait()
			t.Logf("gotrace /examples/%s %s:\n%s%s", tc.file, comm, stdout.String(), errs.String())
			if err != nil {
				t.Fatalf("gotrace: %v", err)
			}
			if stdout.String() != tc.want {
				t.Errorf("stdout = %q, want %q", stdout.String(), tc.want)
			} else {
				t.Logf("gotrace %s counted exactly", tc.file)
			}
		})
	}
}
