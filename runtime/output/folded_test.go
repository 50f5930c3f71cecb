package output

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/lang/types"
)

// chainSyms knows a few stacks, innermost first, as a profile of a small
// program would have them: ids 1-3 user stacks, 11-12 kernel stacks.
type chainSyms struct{ fakeSyms }

var chainStacks = map[int64][]Frame{
	1:  {{Addr: 0x401130, Sym: "leaf", Offset: 4}, {Addr: 0x401150, Sym: "work", Offset: 9}, {Addr: 0x401190, Sym: "main", Offset: 30}, {Addr: 0x7f0000001000, Sym: "__libc_start_call_main", Offset: 122}},
	2:  {{Addr: 0x401160, Sym: "work", Offset: 20}, {Addr: 0x401190, Sym: "main", Offset: 30}, {Addr: 0x7f0000001000, Sym: "__libc_start_call_main", Offset: 122}},
	3:  {{Addr: 0x401131, Sym: "leaf", Offset: 5}, {Addr: 0x401150, Sym: "work", Offset: 9}, {Addr: 0x401190, Sym: "main", Offset: 30}, {Addr: 0x7f0000001000, Sym: "__libc_start_call_main", Offset: 122}},
	4:  {{Addr: 0x7f00000020aa}, {Addr: 0x401190, Sym: "main;odd <name>", Offset: 30}},
	11: {{Addr: 0xffffffff81001000, Sym: "clear_page_erms", Offset: 7}, {Addr: 0xffffffff81002000, Sym: "do_anonymous_page", Offset: 100}, {Addr: 0xffffffff81003000, Sym: "asm_exc_page_fault", Offset: 38}},
	12: {{Addr: 0xffffffff81004000, Sym: "do_syscall_64", Offset: 90}, {Addr: 0xffffffff81005000, Sym: "entry_SYSCALL_64_after_hwframe", Offset: 118}},
}

func (chainSyms) Stack(info types.StackInfo, id int64, pid int) ([]Frame, error) {
	if f, ok := chainStacks[id]; ok && info.User == (id < 10) {
		return f, nil
	}
	return nil, fmt.Errorf("no stack %d", id)
}

// profileMap is @[kstack, ustack, comm] = count() over the stacks above;
// -14 is bpf_get_stackid's -EFAULT (no kernel stack: a sample in user
// mode), -17 its -EEXIST (lost to a collision).
func profileMap() MapData {
	kst := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{Limit: 127}}
	ust := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: true, Limit: 127}}
	comm := types.StringType(16)
	key := types.TupleOf(kst, ust, comm)
	e := func(k, u int64, c string, counts ...int64) Entry {
		vals := make([][]byte, len(counts))
		for i, n := range counts {
			vals[i] = u64(n)
		}
		return perCPU(pack(key, cat(u64(k), u64(42)), cat(u64(u), u64(42)), str(c, 16)), vals...)
	}
	return MapData{
		Info: mapInfo("@", types.Agg(types.Count, false), kst, ust, comm),
		Entries: []Entry{
			e(-14, 1, "app", 30, 20), // user mode in leaf
			e(-14, 3, "app", 5),      // leaf at another offset: the same line
			e(-14, 2, "app", 25),
			e(11, 2, "app", 7, 3), // page fault in work
			e(12, 4, "app", 4),    // a syscall from an unnamed frame
			e(-17, 2, "app", 1),   // the kernel stack was lost
			e(-14, 1, "idle", 0),  // no samples: left out
		},
	}
}

func TestFoldedGolden(t *testing.T) {
	p, out := newPrinter(Folded)
	p.syms = chainSyms{}
	if err := p.ExitMaps([]MapData{profileMap()}); err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "testdata/folded_profile.out", []byte(out.String()))
}

// TestFoldedLines checks the golden file's claims independently: root
// first, user below kernel, offsets dropped, values summed.
func TestFoldedLines(t *testing.T) {
	p, _ := newPrinter(Folded)
	p.syms = chainSyms{}
	stacks, ok, err := p.Folded(profileMap())
	if err != nil || !ok {
		t.Fatalf("Folded: ok %v, err %v", ok, err)
	}
	var got []string
	for _, s := range stacks {
		got = append(got, s.Text())
	}
	want := []string{
		"app;0x7f00000020aa;main:odd <name>;entry_SYSCALL_64_after_hwframe;do_syscall_64 4",
		"app;__libc_start_call_main;main;work 25",
		"app;__libc_start_call_main;main;work;[lost] 1",
		"app;__libc_start_call_main;main;work;asm_exc_page_fault;do_anonymous_page;clear_page_erms 10",
		"app;__libc_start_call_main;main;work;leaf 55",
	}
	// Reversed: the user stack's outermost frame first.
	want[0] = "app;main:odd <name>;0x7f00000020aa;entry_SYSCALL_64_after_hwframe;do_syscall_64 4"
	if strings.Join(got, "\n") != strings.Join(sortStrings(want), "\n") {
		t.Errorf("folded:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(sortStrings(want), "\n"))
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestFoldedOtherMaps: maps without stacks fold by their keys (or their
// name), hist maps by their counts; maps of strings print as text.
func TestFoldedOtherMaps(t *testing.T) {
	p, out := newPrinter(Folded)
	comm := types.StringType(16)
	p.Map(MapData{Info: mapInfo("@bytes", types.Agg(types.Sum, false), comm, types.U64), Entries: []Entry{
		perCPU(pack(types.TupleOf(comm, types.U64), str("cat", 16), u64(3)), u64(4096)),
	}})
	p.Map(MapData{Info: mapInfo("@total", types.Agg(types.Count, false)), Entries: []Entry{perCPU(nil, u64(9), u64(1))}})
	p.Map(MapData{Info: mapInfo("@h", types.Agg(types.Hist, false), comm), Entries: histEntries(str("sh", 16), map[int64]uint64{3: 4, 5: 2})})
	p.Map(MapData{Info: mapInfo("@s", comm, types.U64), Entries: []Entry{{Key: u64(1), Value: str("text", 16)}}})
	want := "cat;3 4096\n@total 10\nsh 6\n@s[1]: text\n"
	if got := out.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestFlameGraphGolden: the SVG for the synthetic profile, and what it
// must hold whatever the golden file says: one frame group per call-tree
// node with its samples, the root at the bottom, escaped names, the
// script.
func TestFlameGraphGolden(t *testing.T) {
	p, _ := newPrinter(Folded)
	p.syms = chainSyms{}
	stacks, err := p.FlameStacks([]MapData{profileMap()})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := WriteFlameGraph(&sb, stacks, "profile <test>"); err != nil {
		t.Fatal(err)
	}
	svg := sb.String()
	testkit.Golden(t, "testdata/flamegraph_profile.svg", []byte(svg))

	frames := regexp.MustCompile(`<g class="f" data-x="(\d+)" data-w="(\d+)" data-d="(\d+)"><title>([^<]*) \((\d+) samples, ([0-9.]+)%\)</title><rect x="([0-9.]+)" y="(\d+)" width="([0-9.]+)"`).FindAllStringSubmatch(svg, -1)
	// all, app, 0x7f.., main:odd, entry, do_syscall_64, __libc, main,
	// work, [lost], asm_exc, do_anon, clear_page, leaf.
	if len(frames) != 14 {
		t.Fatalf("%d frames in the SVG, want 14:\n%s", len(frames), svg)
	}
	byName := map[string][]string{}
	for _, f := range frames {
		byName[f[4]] = f
	}
	for name, want := range map[string][2]string{ // samples, depth
		"all": {"95", "0"}, "app": {"95", "1"}, "work": {"91", "4"}, "leaf": {"55", "5"},
		"clear_page_erms": {"10", "7"}, "main:odd &lt;name&gt;": {"4", "2"}, "do_syscall_64": {"4", "5"},
	} {
		f := byName[name]
		if f == nil || f[2] != want[0] || f[5] != want[0] || f[3] != want[1] {
			t.Errorf("frame %s = %v, want %s samples at depth %s", name, f, want[0], want[1])
		}
	}
	if r := byName["all"]; r[7] != "10.00" || r[9] != "1180.00" || r[6] != "100.00" {
		t.Errorf("root frame %v: want x 10, width 1180, 100%%", r)
	}
	if !strings.Contains(svg, "<script") || !strings.Contains(svg, "function zoom(") || !strings.Contains(svg, `<text id="title" x="600" y="24">profile &lt;test&gt;</text>`) {
		t.Errorf("SVG lacks its script or title")
	}
	// Deeper frames sit higher: the root is the lowest row.
	if ly, ry := atoi(byName["leaf"][8]), atoi(byName["all"][8]); ly != ry-5*16 {
		t.Errorf("leaf y %s, want 5 rows above root y %s", byName["leaf"][8], byName["all"][8])
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// TestFlameGraphEmpty: no stacks still give a valid picture, with the root
// alone.
func TestFlameGraphEmpty(t *testing.T) {
	var sb strings.Builder
	if err := WriteFlameGraph(&sb, nil, ""); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sb.String(), `<g class="f"`); n != 1 || !strings.Contains(sb.String(), "Flame Graph</text>") {
		t.Errorf("empty flame graph: %d frames:\n%s", n, sb.String())
	}
}

// TestExitMapsFlameGraphFile: ExitMaps writes the SVG file beside the
// folded (or text) output, drawing only stack-keyed maps.
func TestExitMapsFlameGraphFile(t *testing.T) {
	p, out := newPrinter(Text)
	p.syms = chainSyms{}
	p.FlameGraph = filepath.Join(t.TempDir(), "out.svg")
	other := MapData{Info: mapInfo("@other", types.Agg(types.Count, false), types.StringType(16)), Entries: []Entry{perCPU(str("unique_key_name", 16), u64(1))}}
	if err := p.ExitMaps([]MapData{profileMap(), other}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.FlameGraph)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<title>clear_page_erms (10 samples") || strings.Contains(string(b), "unique_key_name") {
		t.Errorf("flame graph file:\n%s", b)
	}
	if !strings.Contains(out.String(), "@other[unique_key_name]: 1") {
		t.Errorf("text output:\n%s", out.String())
	}
	p.FlameGraph = filepath.Join(t.TempDir(), "no", "such", "dir.svg")
	if err := p.ExitMaps([]MapData{profileMap()}); err == nil || !strings.Contains(err.Error(), "flame graph") {
		t.Errorf("unwritable file: err %v", err)
	}
}
