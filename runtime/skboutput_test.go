package runtime

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/stdlib"
)

// skbRecord is a perf sample as skboutput's program writes it: the header,
// the packet, the kernel's padding.
func skbRecord(id, ns, n, off uint64, pkt []byte, pad int) []byte {
	b := make([]byte, stdlib.SkbOutputHeaderSize, stdlib.SkbOutputHeaderSize+len(pkt)+pad)
	binary.NativeEndian.PutUint64(b[0:], id)
	binary.NativeEndian.PutUint64(b[8:], ns)
	binary.NativeEndian.PutUint64(b[16:], n)
	binary.NativeEndian.PutUint64(b[24:], off)
	b = append(b, pkt...)
	return append(b, make([]byte, pad)...)
}

// The pcap file skboutput writes, byte for byte: the file header, then a
// record per packet from its offset, the padding cut, time = boot + ns.
func TestSkbOutputPcap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcap")
	w, err := createPcap(path)
	if err != nil {
		t.Fatal(err)
	}
	o := &skbOutput{files: map[int]*pcapWriter{3: w}, byPath: map[string]*pcapWriter{path: w}, boot: time.Unix(1000, 0)}
	for _, rec := range [][]byte{
		skbRecord(3, 2_500_001_000, 4, 1, []byte{0xa, 0xb, 0xc, 0xd}, 4), // bytes b c d at 1002.500001
		skbRecord(3, 7_000_000_000, 2, 2, []byte{1, 2}, 6),               // offset past the packet: nothing
		skbRecord(9, 0, 1, 0, []byte{1}, 7),                              // no such call: nothing
	} {
		if err := o.record(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.closeFiles(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := []byte{
		0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 101, 0, 0, 0,
		0xea, 3, 0, 0, 0x21, 0xa1, 7, 0, // 1002 s, 500001 µs
		3, 0, 0, 0, 3, 0, 0, 0, 0xb, 0xc, 0xd,
	}
	if string(got) != string(want) {
		t.Fatalf("pcap file\n% x\nwant\n% x", got, want)
	}
}

// A tp_btf program (a rawtracepoint clause calling skboutput or
// socket_cookie) the kernel refuses fails with a message naming the probe
// and why it is tp_btf.
func TestTpBTFLoadError(t *testing.T) {
	requireBPF(t)
	ap := &lang.AttachPoint{Raw: "rawtracepoint:no_such_tracepoint_h27", Provider: lang.ProbeRawTracepoint, Func: "no_such_tracepoint_h27"}
	spec := &compiler.Spec{
		Source: &lang.Source{Name: "stdin", Text: "rawtracepoint:no_such_tracepoint_h27 { }"},
		Programs: []*compiler.Program{{
			Name: "c0_tpbtf", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp,
			AttachTo: ap.Func, Attach: []*lang.AttachPoint{ap}, License: "GPL",
			Insns: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		}},
	}
	l, err := Load(spec)
	if err == nil {
		l.Close()
		t.Fatal("loaded a tp_btf program for a tracepoint that does not exist")
	}
	const want = "rawtracepoint:no_such_tracepoint_h27: this kernel cannot load it as tp_btf (a BTF-typed raw tracepoint, which skboutput() and socket_cookie() need): "
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
}
