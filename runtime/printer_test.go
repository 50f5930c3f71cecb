package runtime

import (
	"bytes"
	"github.com/gotrace/gotrace/compat"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// strftime() counts from boot: the printer's Boot is now minus the uptime.
func TestPrinterBootTime(t *testing.T) {
	p := NewTextPrinter(&Output{w: &bytes.Buffer{}}, output.Text, nil, &compiler.Spec{})
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Skip("no /proc/uptime")
	}
	up, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Now().Add(-time.Duration(up * float64(time.Second)))
	if d := p.P.Boot.Sub(want); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("Boot = %v, want about %v (from /proc/uptime)", p.P.Boot, want)
	}
}

// A keyless count() map without a value prints as 0 (bpftrace 0.17), other
// empty maps print nothing.
func TestPrinterEmptyKeylessCount(t *testing.T) {
	var buf bytes.Buffer
	p := NewTextPrinter(&Output{w: &buf}, output.Text, nil, &compiler.Spec{})
	p.P.Compat = compat.V017
	count := &compiler.MapSpec{Name: "m_c", Type: ebpf.PerCPUHash, KeySize: 8, ValueSize: 8, PerCPU: true,
		User: &lang.MapInfo{Name: "@c", Value: &types.Type{Kind: types.Count, Size: 8}}}
	sum := &compiler.MapSpec{Name: "m_s", Type: ebpf.PerCPUHash, KeySize: 8, ValueSize: 8, PerCPU: true,
		User: &lang.MapInfo{Name: "@s", Value: &types.Type{Kind: types.Sum, Size: 8, Signed: true}}}
	keyed := &compiler.MapSpec{Name: "m_k", Type: ebpf.PerCPUHash, KeySize: 8, ValueSize: 8, PerCPU: true,
		User: &lang.MapInfo{Name: "@k", Key: types.U64, KeyParts: []*types.Type{types.U64}, Value: &types.Type{Kind: types.Count, Size: 8}}}
	if err := p.Maps([]*MapData{{Spec: count}, {Spec: sum}, {Spec: keyed}}); err != nil {
		t.Fatal(err)
	}
	p.Flush()
	if out := buf.String(); !strings.Contains(out, "@c: 0\n") || strings.Contains(out, "@s") || strings.Contains(out, "@k") {
		t.Errorf("output %q: want @c: 0 and nothing for @s, @k", out)
	}
}
