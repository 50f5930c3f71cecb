package stdlib

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/asm"
)

// KernelHelper is one BPF helper a builtin's code may call: its name as the
// kernel spells it and the Linux version that added it (for "this kernel
// lacks ..." messages, include/uapi/linux/bpf.h history).
type KernelHelper struct {
	Name  string
	Since string
}

// KernelHelpers maps every helper the code generation emits to its name and
// first kernel version. TestKernelHelpers checks each helper named in a
// row's Helpers is here. Built at the first use.
var KernelHelpers = sync.OnceValue(func() map[asm.BuiltinFunc]KernelHelper {
	return map[asm.BuiltinFunc]KernelHelper{
		asm.FnMapLookupElem:              {"bpf_map_lookup_elem", "3.19"},
		asm.FnMapUpdateElem:              {"bpf_map_update_elem", "3.19"},
		asm.FnMapDeleteElem:              {"bpf_map_delete_elem", "3.19"},
		asm.FnProbeRead:                  {"bpf_probe_read", "4.1"},
		asm.FnKtimeGetNs:                 {"bpf_ktime_get_ns", "4.1"},
		asm.FnGetPrandomU32:              {"bpf_get_prandom_u32", "4.1"},
		asm.FnGetSmpProcessorId:          {"bpf_get_smp_processor_id", "4.1"},
		asm.FnGetCurrentPidTgid:          {"bpf_get_current_pid_tgid", "4.2"},
		asm.FnGetCurrentUidGid:           {"bpf_get_current_uid_gid", "4.2"},
		asm.FnGetCurrentComm:             {"bpf_get_current_comm", "4.2"},
		asm.FnGetStackid:                 {"bpf_get_stackid", "4.6"},
		asm.FnGetCurrentTask:             {"bpf_get_current_task", "4.8"},
		asm.FnProbeWriteUser:             {"bpf_probe_write_user", "4.8"},
		asm.FnGetStack:                   {"bpf_get_stack", "4.18"},
		asm.FnProbeReadStr:               {"bpf_probe_read_str", "4.11"},
		asm.FnGetNumaNodeId:              {"bpf_get_numa_node_id", "4.10"},
		asm.FnOverrideReturn:             {"bpf_override_return", "4.16"},
		asm.FnGetCurrentCgroupId:         {"bpf_get_current_cgroup_id", "4.18"},
		asm.FnSendSignal:                 {"bpf_send_signal", "5.3"},
		asm.FnTracePrintk:                {"bpf_trace_printk", "4.1"},
		asm.FnProbeReadUser:              {"bpf_probe_read_user", "5.5"},
		asm.FnProbeReadKernel:            {"bpf_probe_read_kernel", "5.5"},
		asm.FnProbeReadUserStr:           {"bpf_probe_read_user_str", "5.5"},
		asm.FnProbeReadKernelStr:         {"bpf_probe_read_kernel_str", "5.5"},
		asm.FnJiffies64:                  {"bpf_jiffies64", "5.5"},
		asm.FnGetNsCurrentPidTgid:        {"bpf_get_ns_current_pid_tgid", "5.7"},
		asm.FnKtimeGetBootNs:             {"bpf_ktime_get_boot_ns", "5.8"},
		asm.FnKtimeGetTaiNs:              {"bpf_ktime_get_tai_ns", "6.1"},
		asm.FnGetSocketCookie:            {"bpf_get_socket_cookie", "4.12"},
		asm.FnSkbOutput:                  {"bpf_skb_output", "5.5"},
		asm.FnRingbufOutput:              {"bpf_ringbuf_output", "5.8"},
		asm.FnDPath:                      {"bpf_d_path", "5.10"},
		asm.FnPerCpuPtr:                  {"bpf_per_cpu_ptr", "5.10"},
		asm.FnThisCpuPtr:                 {"bpf_this_cpu_ptr", "5.10"},
		asm.FnForEachMapElem:             {"bpf_for_each_map_elem", "5.13"},
		asm.FnLoop:                       {"bpf_loop", "5.17"},
		asm.FnGetFuncIp:                  {"bpf_get_func_ip", "5.15"},
		asm.FnGetAttachCookie:            {"bpf_get_attach_cookie", "5.15"}, // probe under wildcards
		asm.FnMapLookupPercpuElem:        {"bpf_map_lookup_percpu_elem", "5.19"},
		asm.FnSendSignalThread:           {"bpf_send_signal_thread", "5.5"},
		asm.FnGetCurrentAncestorCgroupId: {"bpf_get_current_ancestor_cgroup_id", "5.7"},
		asm.FnSeqPrintf:                  {"bpf_seq_printf", "5.7"},
	}
})

// HelperByName finds a helper of KernelHelpers by its kernel name
// ("bpf_send_signal").
func HelperByName(name string) (asm.BuiltinFunc, KernelHelper, bool) {
	for fn, h := range KernelHelpers() {
		if h.Name == name {
			return fn, h, true
		}
	}
	return 0, KernelHelper{}, false
}

// MissingHelperError is the message for a builtin whose code calls fn,
// which the running kernel lacks: it names the builtin, the helper and the
// kernel version that added it.
func MissingHelperError(builtin string, fn asm.BuiltinFunc) error {
	h, ok := KernelHelpers()[fn]
	if !ok {
		name := strings.TrimPrefix(fn.String(), "Fn")
		return &UserError{Msg: fmt.Sprintf("%s() is not supported by this kernel: it needs the BPF helper %s, which the kernel lacks", callName(builtin), name)}
	}
	return &UserError{Msg: fmt.Sprintf("%s is not supported by this kernel: it needs the BPF helper %s (added in Linux %s)",
		callName(builtin), h.Name, h.Since)}
}

// callName spells a builtin as users write it: functions with "()".
func callName(name string) string {
	if b, _, ok := Resolve(name); ok && b.Kind != Var {
		return name + "()"
	}
	return name
}

// HelperCalls lists the helpers insns call, in order of first use.
func HelperCalls(insns asm.Instructions) []asm.BuiltinFunc {
	var out []asm.BuiltinFunc
	seen := map[asm.BuiltinFunc]bool{}
	for _, ins := range insns {
		if !ins.IsBuiltinCall() {
			continue
		}
		fn := asm.BuiltinFunc(ins.Constant)
		if !seen[fn] {
			seen[fn] = true
			out = append(out, fn)
		}
	}
	return out
}
