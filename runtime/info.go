package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
)

// InfoOptions configure Info.
type InfoOptions struct {
	Version string // gotrace's version ("v0.1.0")
	Follows string // the bpftrace release followed ("0.17", "0.26")
}

// Info prints what this system offers tracing (--info), in bpftrace's
// sections and form ("  name: yes"), adapted to gotrace: the system, the
// build (no LLVM, no bcc: everything is in the binary), the kernel helpers
// and features scripts use, the map types and the probe types, each found
// by asking the kernel (loading a tiny program or creating a map).
func Info(w io.Writer, o InfoOptions) error {
	var b strings.Builder
	yn := func(err error) string {
		if err == nil {
			return "yes"
		}
		return "no"
	}
	line := func(name, val string) { fmt.Fprintf(&b, "  %s: %s\n", name, val) }

	b.WriteString("System\n")
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		line("OS", fmt.Sprintf("%s %s %s", unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:])))
		line("Arch", unix.ByteSliceToString(u.Machine[:]))
	}

	b.WriteString("\nBuild\n")
	line("version", o.Version)
	line("bpftrace compatibility", "v"+o.Follows)
	line("Go", goruntime.Version())
	line("LLVM", "none (BPF instructions are generated directly)")
	line("unsafe uprobe", "no")
	line("bfd", "no")
	line("libdw (DWARF support)", "yes (built in)")

	b.WriteString("\nKernel helpers\n")
	helpers := []struct {
		name string
		pt   ebpf.ProgramType
		fn   asm.BuiltinFunc
	}{
		{"probe_read", ebpf.Kprobe, asm.FnProbeRead},
		{"probe_read_str", ebpf.Kprobe, asm.FnProbeReadStr},
		{"probe_read_user", ebpf.Kprobe, asm.FnProbeReadUser},
		{"probe_read_user_str", ebpf.Kprobe, asm.FnProbeReadUserStr},
		{"probe_read_kernel", ebpf.Kprobe, asm.FnProbeReadKernel},
		{"probe_read_kernel_str", ebpf.Kprobe, asm.FnProbeReadKernelStr},
		{"get_current_cgroup_id", ebpf.Kprobe, asm.FnGetCurrentCgroupId},
		{"send_signal", ebpf.Kprobe, asm.FnSendSignal},
		{"override_return", ebpf.Kprobe, asm.FnOverrideReturn},
		{"get_boot_ns", ebpf.Kprobe, asm.FnKtimeGetBootNs},
		{"dpath", ebpf.Tracing, asm.FnDPath},
		{"skboutput", ebpf.Tracing, asm.FnSkbOutput},
		{"ringbuf_output", ebpf.Kprobe, asm.FnRingbufOutput},
		{"get_func_ip", ebpf.Kprobe, asm.FnGetFuncIp},
		{"get_attach_cookie", ebpf.Kprobe, asm.FnGetAttachCookie},
	}
	for _, h := range helpers {
		err := features.HaveProgramHelper(h.pt, h.fn)
		if h.pt == ebpf.Tracing && err == nil {
			// Tracing programs need fentry, which this kernel may refuse.
			err = kfuncSupport()
		}
		line(h.name, yn(err))
	}

	b.WriteString("\nKernel features\n")
	limit := "4096"
	if features.HaveLargeInstructions() == nil {
		limit = "1000000"
	}
	line("Instruction limit", limit)
	line("Loop support", yn(features.HaveBoundedLoops()))
	_, btfErr := os.Stat("/sys/kernel/btf/vmlinux")
	line("btf", yn(btfErr))
	line("map batch", yn(mapBatchSupported()))
	line("ring buffer", yn(features.HaveMapType(ebpf.RingBuf)))
	line("kprobe_multi", yn(kprobeMultiSupported()))
	line("uprobe_multi", yn(features.HaveBPFLinkUprobeMulti()))

	b.WriteString("\nMap types\n")
	for _, m := range []struct {
		name string
		t    ebpf.MapType
	}{
		{"hash", ebpf.Hash}, {"percpu hash", ebpf.PerCPUHash}, {"array", ebpf.Array},
		{"percpu array", ebpf.PerCPUArray}, {"stack_trace", ebpf.StackTrace},
		{"perf_event_array", ebpf.PerfEventArray}, {"ringbuf", ebpf.RingBuf},
		{"lru hash", ebpf.LRUHash},
	} {
		line(m.name, yn(features.HaveMapType(m.t)))
	}

	b.WriteString("\nProbe types\n")
	_, tfErr := tracefsDir()
	// The probe types by their table names (perf_event, kprobe_multi and
	// raw_tp_special are bpftrace's feature names, not probe types).
	iter := lang.ProbeIter.String()
	line(lang.ProbeKprobe.String(), yn(kprobeSupport()))
	line(lang.ProbeTracepoint.String(), yn(firstErr(tfErr, features.HaveProgramType(ebpf.TracePoint))))
	line("perf_event", yn(features.HaveProgramType(ebpf.PerfEvent)))
	line(lang.ProbeKfunc.String(), yn(kfuncSupport()))
	line(iter+":task", yn(firstErr(kfuncSupport(), features.HaveProgramType(ebpf.Tracing))))
	line(iter+":task_file", yn(firstErr(kfuncSupport(), features.HaveProgramType(ebpf.Tracing))))
	line("kprobe_multi", yn(kprobeMultiSupported()))
	line("raw_tp_special", yn(features.HaveProgramType(ebpf.RawTracepoint)))
	line(lang.ProbeUprobe.String(), yn(uprobeSupported()))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func kprobeMultiSupported() error {
	return firstErr(kprobeSupport(), features.HaveBPFLinkKprobeMulti())
}

// uprobeSupported: the kernel's uprobe PMU (perf_event_open of a uprobe).
func uprobeSupported() error {
	_, err := os.Stat("/sys/bus/event_source/devices/uprobe/type")
	return err
}

// mapBatchSupported: a batch lookup on an empty hash map is refused as
// unsupported, or answers "no more keys".
func mapBatchSupported() error {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		return err
	}
	defer m.Close()
	keys, vals := make([]uint32, 1), make([]uint32, 1)
	var cursor ebpf.MapBatchCursor
	_, err = m.BatchLookup(&cursor, keys, vals, nil)
	if errors.Is(err, ebpf.ErrNotSupported) {
		return err
	}
	return nil
}
