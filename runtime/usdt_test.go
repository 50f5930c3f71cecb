package runtime

import (
	"encoding/binary"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/ktypes"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/lang"
)

// readelfNotes parses `readelf -n` for an independent view of the notes.
func readelfNotes(t *testing.T, path string) map[string][3]string {
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Skipf("readelf: %v", err)
	}
	re := regexp.MustCompile(`Provider: (\S+)\s+Name: (\S+)\s+Location: (0x[0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: (0x[0-9a-f]+)\s+Arguments: ([^\n]*)`)
	got := map[string][3]string{}
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		got[m[1]+":"+m[2]] = [3]string{m[3], m[4], strings.TrimSpace(m[5])}
	}
	return got
}

func TestUSDTProbesOfHelper(t *testing.T) {
	testkit.Require(t, testkit.SDT)
	bin := testkit.Helper(t, "usdt")
	probes, err := ktypes.USDTProbes(bin, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := readelfNotes(t, bin)
	var names []string
	body, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probes {
		key := p.Provider + ":" + p.Name
		names = append(names, key)
		w, ok := want[key]
		if !ok {
			t.Errorf("%s not in readelf's notes", key)
			continue
		}
		pc, _ := strconv.ParseUint(w[0], 0, 64)
		sem, _ := strconv.ParseUint(w[1], 0, 64)
		if len(p.Locations) != 1 || p.Locations[0].PC != pc || p.Semaphore != sem {
			t.Errorf("%s: locations %+v semaphore 0x%x, readelf pc %s semaphore %s", key, p.Locations, p.Semaphore, w[0], w[1])
			continue
		}
		// The site is the nop STAP_PROBE emits.
		if off := p.Locations[0].FileOffset; off >= uint64(len(body)) || body[off] != 0x90 {
			t.Errorf("%s: file offset 0x%x does not hold a nop", key, off)
		}
		var specs []string
		for _, a := range p.Args() {
			specs = append(specs, a.Spec)
		}
		if strings.Join(specs, " ") != w[2] {
			t.Errorf("%s: args %v, readelf %q", key, specs, w[2])
		}
		if sem != 0 {
			// The semaphore's file bytes are the (zero) counter.
			if p.SemaphoreOffset == 0 || p.SemaphoreOffset+2 > uint64(len(body)) {
				t.Errorf("%s: semaphore offset 0x%x", key, p.SemaphoreOffset)
			}
		}
	}
	if got := strings.Join(names, " "); got != "gotrace:fixed gotrace:guarded gotrace:loop gotrace:memarg" {
		t.Errorf("probes = %s", got)
	}
	fixed := probes[0].Args()
	if len(fixed) != 3 || fixed[0].Kind != ktypes.USDTConst || fixed[0].Value != -42 || !fixed[0].Signed ||
		fixed[1].Size != 1 || fixed[1].Signed || fixed[2].Kind != ktypes.USDTReg {
		t.Errorf("fixed args = %+v", fixed)
	}
}

// usdtProgram counts hits in m_count[0] and, when memOff is set, stores
// the 8 bytes at ip+memOff (a %rip-relative argument) in m_count[1].
func usdtProgram(memArg *ktypes.USDTArg) asm.Instructions {
	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	if memArg != nil {
		insns = append(insns,
			asm.LoadMem(asm.R3, asm.R6, int16(memArg.RegOffset), asm.DWord),
			asm.Add.Imm(asm.R3, int32(memArg.Offset)),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, -16),
			asm.Mov.Imm(asm.R2, 8),
			asm.FnProbeReadUser.Call(),
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
	return append(insns, countInsns(-1)...)
}

// TestUSDTAttach: a program on gotrace:loop counts exactly N hits, the
// semaphore of gotrace:guarded is set while attached (the helper reports
// how often its guarded probe fired), and a %rip-relative argument reads
// the global it names.
func TestUSDTAttach(t *testing.T) {
	requireBPF(t)
	testkit.Require(t, testkit.SDT)
	bin := testkit.Helper(t, "usdt")
	probes, err := ktypes.USDTProbes(bin, 0)
	if err != nil {
		t.Fatal(err)
	}
	var memArg *ktypes.USDTArg
	for _, p := range probes {
		if p.Name == "memarg" {
			a := p.Args()[0]
			memArg = &a
		}
	}
	if memArg == nil || memArg.Reg != "ip" {
		t.Fatalf("memarg arg = %+v", memArg)
	}
	before := bpfFDs(t)
	const n = 321
	h := testkit.StartHelper(t, "usdt", strconv.Itoa(n))
	usdt := func(name string) *lang.AttachPoint {
		return &lang.AttachPoint{Raw: "usdt:" + bin + ":gotrace:" + name, Provider: lang.ProbeUSDT, Target: bin, NS: "gotrace", Func: name}
	}
	mk := func(name string, insns asm.Instructions, ap *lang.AttachPoint) *compiler.Program {
		return &compiler.Program{Name: name, Type: ebpf.Kprobe, Attach: []*lang.AttachPoint{ap}, Insns: insns}
	}
	countG := countMap()
	countG.Name = "m_guard"
	spec := &compiler.Spec{
		Maps: []*compiler.MapSpec{countMap(), countG},
		Programs: []*compiler.Program{
			mk("u_loop", countInsns(h.Pid), usdt("loop")),
			mk("u_mem", usdtProgram(memArg), usdt("memarg")),
			mk("u_guard", renameMap(countInsns(h.Pid), "m_count", "m_guard"), usdt("guarded")),
		},
		Source: &lang.Source{Name: "stdin", Text: "usdt"},
	}
	l, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pl, err := l.Expand(&Env{PID: h.Pid}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Attach(pl, &Env{PID: h.Pid}); err != nil {
		t.Fatal(err)
	}
	// The kernel set the semaphore in the running helper.
	semOK := false
	for _, p := range probes {
		if p.Name == "guarded" {
			b := make([]byte, 2)
			f, err := os.Open("/proc/" + strconv.Itoa(h.Pid) + "/mem")
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.ReadAt(b, int64(p.Semaphore))
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			semOK = binary.LittleEndian.Uint16(b) == 1
		}
	}
	if !semOK {
		t.Error("the guarded probe's semaphore is not 1 while attached")
	}
	h.Go()
	res := h.Wait(20 * time.Second)
	if err := l.Detach(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "guarded "+strconv.Itoa(n)) {
		t.Errorf("helper says %q, want guarded %d", res.Stdout, n)
	}
	vals := map[uint64]uint64{}
	for _, ms := range []string{"m_count", "m_guard"} {
		var k uint64
		it := l.Maps[ms].Iterate()
		var per []uint64
		for it.Next(&k, &per) {
			sum := uint64(0)
			for _, x := range per {
				sum += x
			}
			if ms == "m_guard" {
				k += 100
			}
			vals[k] = sum
		}
	}
	// m_count[0] = loop hits + 1 memarg hit; m_count[1] = the global.
	if vals[0] != n+1 {
		t.Errorf("loop+memarg hits = %d, want %d", vals[0], n+1)
	}
	if vals[1] != 123456789 {
		t.Errorf("rip-relative argument read %d, want 123456789", vals[1])
	}
	if vals[100] != n {
		t.Errorf("guarded hits = %d, want %d", vals[100], n)
	}
	l.Close()
	checkNoLeaks(t, before)
}

func renameMap(insns asm.Instructions, from, to string) asm.Instructions {
	for i := range insns {
		if insns[i].Reference() == from {
			insns[i] = insns[i].WithReference(to)
		}
	}
	return insns
}

func TestListUSDT(t *testing.T) {
	testkit.Require(t, testkit.SDT)
	bin := testkit.Helper(t, "usdt")
	var b strings.Builder
	if err := List(&b, "usdt:"+bin+":*", false); err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, n := range []string{"fixed", "guarded", "loop", "memarg"} {
		want += "usdt:" + bin + ":gotrace:" + n + "\n"
	}
	if b.String() != want {
		t.Errorf("list:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := List(&b, "usdt:"+bin+":gotrace:l*", false); err != nil {
		t.Fatal(err)
	}
	if b.String() != "usdt:"+bin+":gotrace:loop\n" {
		t.Errorf("list gotrace:l* = %q", b.String())
	}
}
