package output

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// The golden files in testdata/ are bpftrace 0.17's stdout on this machine;
// NAME.cmd beside each NAME.out is the exact bpftrace command line, and
// testdata/gen.sh regenerates them. The tests build the same maps and values
// byte by byte per compiler/ABI.md and must print exactly the same bytes.

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func check(t *testing.T, name, got string) {
	t.Helper()
	if want := golden(t, name); got != want {
		t.Errorf("%s: output differs\n got: %q\nwant: %q", name, got, want)
	}
}

// --- byte builders per ABI.md ---

func u64(v int64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(v))
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func str(s string, size int) []byte {
	b := make([]byte, size)
	copy(b, s)
	return b
}

// pack lays out vals at the offsets of tuple type t.
func pack(t *types.Type, vals ...[]byte) []byte {
	b := make([]byte, t.Size)
	for i, f := range t.Fields {
		copy(b[f.Offset:], vals[i])
	}
	return b
}

// perCPU splits per-CPU values: each argument is one CPU's value.
func perCPU(key []byte, vals ...[]byte) Entry { return Entry{Key: key, PerCPU: vals} }

func pair(a, b int64) []byte { return cat(u64(a), u64(b)) }

func mapInfo(name string, value *types.Type, keys ...*types.Type) *lang.MapInfo {
	m := &lang.MapInfo{Name: name, Value: value, KeyParts: keys}
	switch len(keys) {
	case 0:
	case 1:
		m.Key = keys[0]
	default:
		m.Key = types.TupleOf(keys...)
	}
	return m
}

func lhistType(min, max, step int64) *types.Type {
	t := types.Agg(types.Lhist, false)
	t.Lhist = [3]int64{min, max, step}
	return t
}

// histEntries spreads the log2 bucket counts of one user key over two CPUs.
func histEntries(userKey []byte, buckets map[int64]uint64) []Entry {
	var es []Entry
	for b, n := range buckets {
		half := int64(n / 2)
		es = append(es, perCPU(cat(userKey, u64(b)), u64(half), u64(int64(n)-half)))
	}
	return es
}

type fakeSyms struct{}

func (fakeSyms) KernelSym(addr uint64) string {
	if addr == 0xffffffff81000010 {
		return "vfs_read"
	}
	return UnknownAddr(addr)
}
func (fakeSyms) UserSym(pid int, addr uint64) string { return fmt.Sprintf("usym_%d", pid) }
func (fakeSyms) Stack(info types.StackInfo, id int64, pid int) ([]Frame, error) {
	if id != 7 {
		return nil, fmt.Errorf("no stack %d", id)
	}
	if info.User {
		return []Frame{
			{Addr: 0x7fcbfeb1f829, Sym: "syscall", Offset: 25, Module: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
			{Addr: 0x7fffa70f42c8},
		}, nil
	}
	return []Frame{
		{Addr: 0xffffffff81f0602a, Sym: "__bpf_prog_test_run_raw_tp", Offset: 106},
		{Addr: 0xffffffff81f07f97, Sym: "bpf_prog_test_run_raw_tp", Offset: 279},
	}, nil
}
func (fakeSyms) Username(uid uint64) string  { return "root" }
func (fakeSyms) CgroupPath(id uint64) string { return "unified:/" }

// newPrinter prints as bpftrace 0.17 does: the testdata files are its
// output. Tests of bpftrace 0.26's forms set Compat back (TestOutput026).
func newPrinter(f Format) (*Printer, *strings.Builder) {
	var sb strings.Builder
	p := New(&sb, f, fakeSyms{})
	p.Compat = compat.V017
	return p, &sb
}

// TestOutput026: what bpftrace 0.26 prints differently from the 0.17
// testdata: the attach line on Notices, hist/lhist headers without the
// trailing space.
func TestOutput026(t *testing.T) {
	var out, notices strings.Builder
	p := New(&out, Text, fakeSyms{})
	p.Notices = &notices
	if err := p.AttachedProbes(1); err != nil {
		t.Fatal(err)
	}
	if err := p.AttachedProbes(3); err != nil {
		t.Fatal(err)
	}
	if got, want := notices.String(), "Attached 1 probe\nAttached 3 probes\n"; got != want {
		t.Errorf("notices = %q, want %q", got, want)
	}
	if out.Len() != 0 {
		t.Errorf("the attach line went to the output: %q", out.String())
	}
	if err := p.ExitMaps([]MapData{{Info: mapInfo("@h", types.Agg(types.Hist, false)), Entries: histEntries(nil, map[int64]uint64{3: 1})}}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "\n@h:\n[2, 4)") {
		t.Errorf("hist header: %q, want \"@h:\" without a trailing space", got)
	}
}

// mapsScript: testdata/maps_text.cmd and maps_json.cmd.
func mapsScript() []MapData {
	tupleT := types.TupleOf(types.S64, types.StringType(2))
	return []MapData{
		{Info: mapInfo("@hist", types.Agg(types.Hist, false)), Entries: histEntries(nil, map[int64]uint64{3: 1})},
		{Info: mapInfo("@h2", types.Agg(types.Hist, false)), Entries: histEntries(nil, map[int64]uint64{12: 1})},
		{Info: mapInfo("@l", lhistType(0, 100, 10)), Entries: histEntries(nil, map[int64]uint64{1: 1})},
		{Info: mapInfo("@s", types.Agg(types.Stats, false)), Entries: []Entry{perCPU(u64(0), pair(1, 3), pair(0, 0))}},
		{Info: mapInfo("@a", types.Agg(types.Avg, false)), Entries: []Entry{perCPU(u64(0), pair(0, 0), pair(1, 5))}},
		{Info: mapInfo("@c", types.Agg(types.Count, false)), Entries: []Entry{perCPU(u64(0), u64(1), u64(0))}},
		{Info: mapInfo("@m", types.S64, types.StringType(2), types.S64), Entries: []Entry{
			{Key: pack(types.TupleOf(types.StringType(2), types.S64), str("a", 2), u64(1)), Value: u64(2)},
			{Key: pack(types.TupleOf(types.StringType(2), types.S64), str("b", 2), u64(2)), Value: u64(1)},
		}},
		{Info: mapInfo("@t", tupleT), Entries: []Entry{{Key: u64(0), Value: pack(tupleT, u64(1), str("x", 2))}}},
		// min: CPU 1 never set its value (flag 0), so its 0 must not win.
		{Info: mapInfo("@mm", types.Agg(types.Min, true)), Entries: []Entry{perCPU(u64(0), pair(3, 1), pair(0, 0))}},
		{Info: mapInfo("@sm", types.Agg(types.Sum, true)), Entries: []Entry{perCPU(u64(0), u64(-2), u64(-3))}},
	}
}

func TestExitMaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Format
		maps []MapData
	}{
		{"maps_text", Text, mapsScript()},
		{"maps_json", JSON, mapsScript()},
		{"hist_text", Text, []MapData{{Info: mapInfo("@", types.Agg(types.Hist, false)),
			Entries: histEntries(nil, map[int64]uint64{0: 1, 3: 2, 4: 1, 6: 1})}}},
		{"lhist_text", Text, lhistMaps()},
		{"lhist_json", JSON, lhistMaps()},
		{"keys_text", Text, keysMaps()},
		{"keys_json", JSON, keysMaps()},
		{"zero_text", Text, zeroMaps()},
		{"zero_json", JSON, zeroMaps()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, out := newPrinter(tc.f)
			if err := p.ExitMaps(tc.maps); err != nil {
				t.Fatal(err)
			}
			check(t, tc.name, out.String())
		})
	}
}

func lhistMaps() []MapData {
	return []MapData{
		{Info: mapInfo("@l", lhistType(0, 5000, 1024)), Entries: histEntries(nil, map[int64]uint64{0: 1, 3: 1, 5: 1})},
		{Info: mapInfo("@l2", lhistType(0, 4194304, 1048576)), Entries: histEntries(nil, map[int64]uint64{4: 1})},
	}
}

func keysMaps() []MapData {
	s2 := types.StringType(2)
	st := types.TupleOf(types.S64, s2)
	tk := func(n int64, s string) []byte { return pack(st, u64(n), str(s, 2)) }
	return []MapData{
		{Info: mapInfo("@s", s2, s2), Entries: []Entry{
			{Key: str("b", 2), Value: str("x", 2)}, {Key: str("c", 2), Value: str("a", 2)}, {Key: str("a", 2), Value: str("y", 2)}}},
		{Info: mapInfo("@t", s2, types.S64, s2), Entries: []Entry{
			{Key: tk(10, "a"), Value: str("q", 2)}, {Key: tk(2, "b"), Value: str("q", 2)},
			{Key: tk(1, "c"), Value: str("q", 2)}, {Key: tk(1, "a"), Value: str("q", 2)}}},
		{Info: mapInfo("@n", s2, types.S64), Entries: []Entry{
			{Key: u64(-1), Value: str("a", 2)}, {Key: u64(-7), Value: str("c", 2)}, {Key: u64(5), Value: str("b", 2)}}},
		{Info: mapInfo("@a", types.S64, types.S64), Entries: []Entry{
			{Key: u64(3), Value: u64(2)}, {Key: u64(1), Value: u64(3)}, {Key: u64(2), Value: u64(1)}}},
	}
}

func zeroMaps() []MapData {
	return []MapData{
		{Info: mapInfo("@hist", types.Agg(types.Hist, false)), Entries: []Entry{perCPU(u64(3), u64(0), u64(0))}},
		{Info: mapInfo("@c", types.Agg(types.Count, false), types.S64), Entries: []Entry{perCPU(u64(1), u64(0), u64(0))}},
	}
}

// TestPrintTopDiv: testdata/top_text.cmd / top_json.cmd: print(@m, top, div)
// on each kind, then the cleared (empty) maps at exit.
func TestPrintTopDiv(t *testing.T) {
	for _, f := range []Format{Text, JSON} {
		name := map[Format]string{Text: "top_text", JSON: "top_json"}[f]
		t.Run(name, func(t *testing.T) {
			p, out := newPrinter(f)
			c := mapInfo("@c", types.S64, types.S64)
			a := mapInfo("@a", types.Agg(types.Avg, true), types.S64)
			s := mapInfo("@s", types.Agg(types.Stats, true), types.S64)
			h := mapInfo("@h", types.Agg(types.Hist, false), types.S64)
			steps := []MapData{
				{Info: c, Top: 2, Div: 3, Entries: []Entry{{Key: u64(1), Value: u64(10)}, {Key: u64(2), Value: u64(25)}, {Key: u64(3), Value: u64(7)}}},
				{Info: a, Top: 1, Div: 2, Entries: []Entry{perCPU(u64(1), pair(1, 10)), perCPU(u64(2), pair(1, 20))}},
				{Info: s, Top: 1, Div: 2, Entries: []Entry{perCPU(u64(1), pair(1, 10)), perCPU(u64(2), pair(1, 20))}},
				{Info: h, Top: 1, Div: 2, Entries: append(histEntries(u64(1), map[int64]uint64{3: 2}), histEntries(u64(2), map[int64]uint64{8: 1})...)},
			}
			for _, m := range steps {
				if err := p.Map(m); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.ExitMaps([]MapData{{Info: c}, {Info: a}, {Info: s}, {Info: h}}); err != nil {
				t.Fatal(err)
			}
			check(t, name, out.String())
		})
	}
}

// TestValues: testdata/values_text.cmd / values_json.cmd (print(value)).
func TestValues(t *testing.T) {
	tup := types.TupleOf(types.S64, types.StringType(3))
	inet := &types.Type{Kind: types.Inet, Size: 24}
	addr6 := []byte{0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255}
	vals := []struct {
		t *types.Type
		b []byte
	}{
		{tup, pack(tup, u64(1), str("ab", 3))},
		{types.StringType(4), str("str", 4)},
		{types.S64, u64(5)},
		{types.S64, u64(-5)},
		{types.S8, []byte{0xff}},
		{inet, cat(u64(2), []byte{127, 0, 0, 1}, make([]byte, 12))},
		{types.ArrayOf(types.U8, 16), addr6},
		{inet, cat(u64(10), addr6)},
		{&types.Type{Kind: types.Strerror, Size: 8}, u64(2)},
		{&types.Type{Kind: types.Buffer, Size: 5}, []byte{4, 'a', 'b', 0, 0xff}},
	}
	for _, f := range []Format{Text, JSON} {
		name := map[Format]string{Text: "values_text", JSON: "values_json"}[f]
		p, out := newPrinter(f)
		for _, v := range vals {
			d, err := Decode(v.t, v.b)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Value(d); err != nil {
				t.Fatal(err)
			}
		}
		p.ExitMaps(nil)
		check(t, name, out.String())
	}
}

// TestPrintf: testdata/printf_text.cmd / printf_json.cmd.
func TestPrintf(t *testing.T) {
	i := func(t *types.Type, n int64) Value {
		v, err := Decode(t, u64(n))
		if err != nil {
			panic(err)
		}
		return v
	}
	s := func(x string) Value { return Value{Type: types.StringType(64), Bytes: []byte(x)} }
	buf := Value{Type: &types.Type{Kind: types.Buffer, Size: 5}, Bytes: []byte("ab\x01c")}
	x := int64(0x12345678abcdef)
	calls := []struct {
		f    string
		args []Value
	}{
		{"%10.3s|%.2d|%5.3d|%-10s|\n", []Value{s("abcdef"), i(types.S64, 5), i(types.S64, 7), s("hi")}},
		{"%lx %llx %lu %ld %hx %hhx %zd %jd %p\n", []Value{i(types.S64, -1), i(types.S64, -1), i(types.S64, -1), i(types.S64, -1),
			i(types.S64, -1), i(types.S64, -1), i(types.S64, -1), i(types.S64, -1), i(types.S64, 4096)}},
		{"%5s|%-5d|%05x|%.3s|%8.3d|%-08d|\n", []Value{s("abcdefgh"), i(types.S64, -3), i(types.S64, 255), s("abcdef"), i(types.S64, -5), i(types.S64, 7)}},
		{"%c|%hhd|%hd|%lu|%llx\n", []Value{i(types.S64, 0x141), i(types.S64, 200), i(types.S64, 70000), i(types.S64, -2), i(types.S64, 255)}},
		{"%d|%u|%d|%x|%ld|%p|%p\n", []Value{i(types.S64, 0x100000005), i(types.S64, -1), i(types.S64, -1), i(types.S64, -1), i(types.S64, 0x100000005), i(types.S64, 0), i(types.S64, 255)}},
		{"%5c|%-3c|%r|\n", []Value{i(types.S64, 65), i(types.S64, 66), buf}},
		{"%hhx %hx %x %jx\n", []Value{i(types.S64, x), i(types.S64, x), i(types.S64, x), i(types.S64, x)}},
		// Narrow args arrive at their own width and are sign-extended.
		{"%d %d %d %u %x\n", []Value{i(types.S8, -1), i(types.U8, 255), i(types.S32, -5), i(types.S32, -5), i(types.S32, -5)}},
	}
	p, out := newPrinter(Text)
	for _, c := range calls {
		if err := p.Printf(c.f, c.args); err != nil {
			t.Fatal(err)
		}
	}
	p.ExitMaps(nil)
	check(t, "printf_text", out.String())

	p, out = newPrinter(JSON)
	p.Printf("test \r \n \t \\ \" bar", nil)
	p.Printf("a\x01b\xffc\x7f", nil)
	p.ExitMaps(nil)
	check(t, "printf_json", out.String())

	// The package-level Printf formats without a Printer.
	var sb strings.Builder
	if err := Printf(&sb, "%-5s|%5d|%x\n", []Value{s("ab"), i(types.S64, 42), i(types.S64, 255)}); err != nil {
		t.Fatal(err)
	}
	if got := sb.String(); got != "ab   |   42|ff\n" {
		t.Errorf("Printf = %q", got)
	}
	if err := Printf(&sb, "%d %d\n", []Value{i(types.S64, 1)}); err == nil {
		t.Error("Printf with a missing argument: no error")
	}
}

func TestAttachedProbes(t *testing.T) {
	p, out := newPrinter(Text)
	p.AttachedProbes(1)
	p.ExitMaps(nil)
	check(t, "attach_text", out.String())
	p, out = newPrinter(JSON)
	p.AttachedProbes(2)
	p.ExitMaps(nil)
	check(t, "attach_json", out.String())
}

// TestStacks: formats as printed by
//
//	bpftrace -q -e 'BEGIN { printf("%s|%s|\n", kstack(perf, 3), ustack(perf,3)); print(kstack(3));
//	  @[kstack(2)] = count(); @a[kstack(2), 1] = count(); @k = kstack(2); @u=ustack(perf,2); exit(); }'
//
// (addresses differ between runs, so the frames come from a fake symbolizer).
func TestStacks(t *testing.T) {
	kst := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{Limit: 127}}
	kperf := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{Mode: types.StackPerf, Limit: 3}}
	uperf := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: true, Mode: types.StackPerf, Limit: 3}}
	stack := func(t *types.Type, pid int64) Value {
		v, err := Decode(t, cat(u64(7), u64(pid)))
		if err != nil {
			panic(err)
		}
		return v
	}
	p, out := newPrinter(Text)
	p.Printf("%s|%s|\n", []Value{stack(kperf, 0), stack(uperf, 42)})
	p.Value(stack(kst, 0))
	p.Map(MapData{Info: mapInfo("@", types.Agg(types.Count, false), kst), Entries: []Entry{perCPU(cat(u64(7), u64(0)), u64(1))}})
	two := types.TupleOf(kst, types.S64)
	p.Map(MapData{Info: mapInfo("@a", types.Agg(types.Count, false), kst, types.S64), Entries: []Entry{perCPU(pack(two, cat(u64(7), u64(0)), u64(1)), u64(1))}})
	p.Map(MapData{Info: mapInfo("@k", kst), Entries: []Entry{{Key: u64(0), Value: cat(u64(7), u64(0))}}})
	want := "\n\tffffffff81f0602a __bpf_prog_test_run_raw_tp+106\n\tffffffff81f07f97 bpf_prog_test_run_raw_tp+279\n" +
		"|\n\t7fcbfeb1f829 syscall+25 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\t7fffa70f42c8 0x7fffa70f42c8 ([unknown])\n|\n" +
		"\n        __bpf_prog_test_run_raw_tp+106\n        bpf_prog_test_run_raw_tp+279\n\n" +
		"@[\n    __bpf_prog_test_run_raw_tp+106\n    bpf_prog_test_run_raw_tp+279\n]: 1\n" +
		"@a[\n    __bpf_prog_test_run_raw_tp+106\n    bpf_prog_test_run_raw_tp+279\n, 1]: 1\n" +
		"@k: \n        __bpf_prog_test_run_raw_tp+106\n        bpf_prog_test_run_raw_tp+279\n\n"
	if got := out.String(); got != want {
		t.Errorf("stacks:\n got %q\nwant %q", got, want)
	}

	// JSON: keys indent frames by 4, values by 8 (bpftrace -f json, same script).
	p, out = newPrinter(JSON)
	p.Map(MapData{Info: mapInfo("@a", types.Agg(types.Count, false), kst, types.S64), Entries: []Entry{perCPU(pack(two, cat(u64(7), u64(0)), u64(1)), u64(1))}})
	p.Value(stack(kst, 0))
	want = `{"type": "map", "data": {"@a": {"\n    __bpf_prog_test_run_raw_tp+106\n    bpf_prog_test_run_raw_tp+279\n,1": 1}}}` + "\n" +
		`{"type": "value", "data": "\n        __bpf_prog_test_run_raw_tp+106\n        bpf_prog_test_run_raw_tp+279\n"}` + "\n"
	if got := out.String(); got != want {
		t.Errorf("json stacks:\n got %q\nwant %q", got, want)
	}
}

// TestSymbolValueDelimiter: bpftrace 0.17 joins ksym/inet map values with
// nothing: bpftrace -q -e 'BEGIN { @k[1] = ksym(kaddr("vfs_read")); @k[2] = ksym(kaddr("vfs_read")); @i[1]=ntop(1); @i[2]=ntop(2); exit(); }'
// prints "@i[1]: 1.0.0.0@i[2]: 2.0.0.0\n@k[1]: vfs_read@k[2]: vfs_write\n".
func TestSymbolValueDelimiter(t *testing.T) {
	ks := &types.Type{Kind: types.Ksym, Size: 8}
	inet := &types.Type{Kind: types.Inet, Size: 24}
	p, out := newPrinter(Text)
	p.Map(MapData{Info: mapInfo("@i", inet, types.S64), Entries: []Entry{
		{Key: u64(2), Value: cat(u64(2), []byte{2, 0, 0, 0}, make([]byte, 12))},
		{Key: u64(1), Value: cat(u64(2), []byte{1, 0, 0, 0}, make([]byte, 12))}}})
	p.Map(MapData{Info: mapInfo("@k", ks, types.S64), Entries: []Entry{
		{Key: u64(1), Value: u64(-0x7efffff0)}, {Key: u64(2), Value: u64(0)}}})
	want := "@i[1]: 1.0.0.0@i[2]: 2.0.0.0\n@k[1]: vfs_read@k[2]: 0\n"
	if got := out.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2017, 7, 14, 2, 40, 0, 123456789, time.UTC)
	for _, c := range []struct{ f, want string }{
		{"%H:%M:%S", "02:40:00"},
		{"%Y-%m-%d %f", "2017-07-14 123456"},
		{"%%f %a %b %e %j %p %I %y %s", "%f Fri Jul 14 195 AM 02 17 1500000000"},
		{"%c", "Fri Jul 14 02:40:00 2017"},
	} {
		if got := Strftime(c.f, tm); got != c.want {
			t.Errorf("Strftime(%q) = %q, want %q", c.f, got, c.want)
		}
	}
	// strftime() values: Boot + nsecs, format from the EvTime event.
	p, out := newPrinter(Text)
	p.Boot = time.Date(2017, 7, 14, 2, 40, 0, 0, time.UTC)
	p.Loc = time.UTC
	p.TimeFormats[3] = "%H:%M:%S.%f"
	v, err := Decode(&types.Type{Kind: types.Timestamp, Size: 16}, cat(u64(3), u64(1500000)))
	if err != nil {
		t.Fatal(err)
	}
	p.Value(v)
	if got := out.String(); got != "02:40:00.001500\n" {
		t.Errorf("timestamp = %q", got)
	}
}

func TestMessages(t *testing.T) {
	p, out := newPrinter(JSON)
	p.System("a b c\n")
	p.Cat("1.0 2.0\n")
	p.Join([]string{"/bin/echo", "a"}, ",")
	p.LostEvents(3)
	p.Now = func() time.Time { return time.Date(2020, 1, 1, 10, 23, 58, 0, time.UTC) }
	p.Loc = time.UTC
	p.Time("")
	// Forms from bpftrace -f json: system("echo a b c"), cat(), join(args->argv, ","), time().
	want := `{"type": "syscall", "data": "a b c\n"}` + "\n" +
		`{"type": "cat", "data": "1.0 2.0\n"}` + "\n" +
		`{"type": "join", "data": "/bin/echo,a"}` + "\n" +
		`{"type": "lost_events", "data": {"events": 3}}` + "\n" +
		`{"type": "time", "data": "10:23:58\n"}` + "\n"
	if got := out.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	p, out = newPrinter(Text)
	p.Join([]string{"/bin/echo", "a", "b"}, " ")
	p.LostEvents(3)
	if got, want := out.String(), "/bin/echo a b\nLost 3 events\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, err := Decode(types.U64, []byte{1, 2}); err == nil {
		t.Error("short int: no error")
	}
	if _, err := Decode(types.Agg(types.Count, false), u64(1)); err == nil {
		t.Error("aggregation decode: no error")
	}
	p, _ := newPrinter(Text)
	err := p.Map(MapData{Info: mapInfo("@h", types.Agg(types.Hist, false)), Entries: []Entry{{Key: u64(99), Value: u64(1)}}})
	if err == nil || !strings.Contains(err.Error(), "@h") {
		t.Errorf("bad bucket: err = %v", err)
	}
}

// bpftrace 0.17 prints a printf format that has no arguments verbatim:
// `bpftrace -e 'BEGIN { printf("100%%\n"); printf("a%%b %d\n", 1); exit(); }'`
// prints "100%%" then "a%b 1".
func TestPrintfNoArgsVerbatim(t *testing.T) {
	var b strings.Builder
	p := New(&b, Text, nil)
	if err := p.Printf("100%%\n", nil); err != nil {
		t.Fatal(err)
	}
	one, _ := Decode(types.S64, u64(1))
	if err := p.Printf("a%%b %d\n", []Value{one}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "100%%\na%b 1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// `bpftrace -e 'BEGIN { printf("%rx\n", buf("Hello\0", 6)); printf("%rh|%r\n", buf("Hello\0", 6), buf("Hi", 2)); exit(); }'`
// prints `\x48\x65\x6c\x6c\x6f\x00` then `48 65 6c 6c 6f 00|Hi`.
func TestPrintfRawBufferModes(t *testing.T) {
	hello := Value{Type: &types.Type{Kind: types.Buffer, Size: 7}, Bytes: []byte("Hello\x00")}
	hi := Value{Type: &types.Type{Kind: types.Buffer, Size: 3}, Bytes: []byte("Hi")}
	var b strings.Builder
	p := New(&b, Text, nil)
	if err := p.Printf("%rx\n", []Value{hello}); err != nil {
		t.Fatal(err)
	}
	if err := p.Printf("%rh|%r\n", []Value{hello, hi}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `\x48\x65\x6c\x6c\x6f\x00`+"\n48 65 6c 6c 6f 00|Hi\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
