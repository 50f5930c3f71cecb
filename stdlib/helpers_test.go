package stdlib

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestKernelHelpers: every helper a row names has a kernel version, every
// row has code generation or a documented reason, and the missing-helper
// message names the builtin, the helper and the version.
func TestKernelHelpers(t *testing.T) {
	for name, b := range table() {
		for _, h := range b.Helpers {
			if _, _, ok := HelperByName(h); !ok {
				t.Errorf("%s: helper %s has no entry in KernelHelpers", name, h)
			}
		}
		if b.Gen == nil && b.Folded == "" {
			t.Errorf("%s: no code generation and no Folded reason", name)
		}
		if b.Gen != nil && b.Folded != "" {
			t.Errorf("%s: has code generation but says it is Folded", name)
		}
	}
	for fn, h := range KernelHelpers() {
		if !strings.HasPrefix(h.Name, "bpf_") || h.Since == "" {
			t.Errorf("%v: bad entry %+v", fn, h)
		}
	}
	for _, c := range []struct {
		name string
		fn   asm.BuiltinFunc
		want string
	}{
		{"signal", asm.FnSendSignal, "signal() is not supported by this kernel: it needs the BPF helper bpf_send_signal (added in Linux 5.3)"},
		{"jiffies", asm.FnJiffies64, "jiffies is not supported by this kernel: it needs the BPF helper bpf_jiffies64 (added in Linux 5.5)"},
		{"arg3", asm.FnProbeReadKernel, "arg3 is not supported by this kernel: it needs the BPF helper bpf_probe_read_kernel (added in Linux 5.5)"},
		{"path", asm.FnDPath, "path() is not supported by this kernel: it needs the BPF helper bpf_d_path (added in Linux 5.10)"},
	} {
		if got := MissingHelperError(c.name, c.fn).Error(); got != c.want {
			t.Errorf("MissingHelperError(%s, %v):\n got %s\nwant %s", c.name, c.fn, got, c.want)
		}
	}
	if got := HelperCalls(asm.Instructions{asm.FnKtimeGetNs.Call(), asm.Mov.Imm(asm.R1, 0), asm.FnKtimeGetNs.Call(), asm.FnSendSignal.Call()}); len(got) != 2 || got[0] != asm.FnKtimeGetNs || got[1] != asm.FnSendSignal {
		t.Errorf("HelperCalls: %v", got)
	}
}
