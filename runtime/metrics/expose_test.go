package metrics

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime"
	"github.com/gotrace/gotrace/runtime/output"
)

const up = "# HELP gotrace_up 1 while the gotrace script runs.\n# TYPE gotrace_up gauge\ngotrace_up 1\n"

func u64(vs ...uint64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

func str(s string, size int) []byte {
	b := make([]byte, size)
	copy(b, s)
	return b
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// mapData builds a map as runtime.ReadMap returns it (values merged).
func mapData(name string, value *types.Type, keyParts []*types.Type, entries ...runtime.Entry) *runtime.MapData {
	info := &lang.MapInfo{Name: name, Value: value, KeyParts: keyParts}
	switch len(keyParts) {
	case 0:
	case 1:
		info.Key = keyParts[0]
	default:
		info.Key = types.TupleOf(keyParts...)
	}
	return &runtime.MapData{Spec: &compiler.MapSpec{Name: "m_" + strings.TrimPrefix(name, "@"), User: info}, Entries: entries}
}

func entry(key, value []byte) runtime.Entry { return runtime.Entry{Key: key, Value: value} }

func expose(t *testing.T, syms output.Symbolizer, maps ...*runtime.MapData) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, output.New(&bytes.Buffer{}, output.Text, syms), maps); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func check(t *testing.T, got, want string) {
	t.Helper()
	if got != up+want {
		t.Errorf("exposition:\n%s\nwant:\n%s%s", got, up, want)
	}
}

func TestCount(t *testing.T) {
	s16 := types.StringType(16)
	got := expose(t, nil,
		mapData("@", types.Agg(types.Count, false), []*types.Type{s16},
			entry(str("sshd", 16), u64(7)),
			entry(str("bash", 16), u64(1<<63+5))),
		mapData("@calls", types.Agg(types.Count, false), nil, entry(u64(0), u64(3))))
	check(t, got, `# HELP gotrace_map_total gotrace map @: count()
# TYPE gotrace_map_total counter
gotrace_map_total{key="bash"} 9223372036854775813
gotrace_map_total{key="sshd"} 7
# HELP gotrace_calls_total gotrace map @calls: count()
# TYPE gotrace_calls_total counter
gotrace_calls_total 3
`)
}

func TestSumMinMax(t *testing.T) {
	neg := uint64(1<<64 - 5) // -5
	got := expose(t, nil,
		mapData("@ssum", types.Agg(types.Sum, true), []*types.Type{types.U64},
			entry(u64(10), u64(neg)), entry(u64(2), u64(40))),
		mapData("@usum", types.Agg(types.Sum, false), nil, entry(u64(0), u64(neg))),
		mapData("@lo", types.Agg(types.Min, true), nil, entry(u64(0), u64(neg, 1))),
		mapData("@hi", types.Agg(types.Max, true), []*types.Type{types.S64},
			entry(u64(neg), u64(9, 1)), entry(u64(3), u64(0, 0))))
	// Integer keys sort numerically (2 before 10; -5 before 3).
	check(t, got, `# HELP gotrace_ssum gotrace map @ssum: sum()
# TYPE gotrace_ssum gauge
gotrace_ssum{key="2"} 40
gotrace_ssum{key="10"} -5
# HELP gotrace_usum gotrace map @usum: sum()
# TYPE gotrace_usum gauge
gotrace_usum 18446744073709551611
# HELP gotrace_lo gotrace map @lo: min()
# TYPE gotrace_lo gauge
gotrace_lo -5
# HELP gotrace_hi gotrace map @hi: max()
# TYPE gotrace_hi gauge
gotrace_hi{key="-5"} 9
gotrace_hi{key="3"} 0
`)
}

func TestAvgStats(t *testing.T) {
	got := expose(t, nil,
		mapData("@lat", types.Agg(types.Avg, true), []*types.Type{types.U64}, entry(u64(1), u64(4, 100))),
		mapData("@st", types.Agg(types.Stats, true), nil, entry(u64(0), u64(3, uint64(1<<64-30)))))
	check(t, got, `# HELP gotrace_lat gotrace map @lat: avg()
# TYPE gotrace_lat summary
gotrace_lat_sum{key="1"} 100
gotrace_lat_count{key="1"} 4
# HELP gotrace_st gotrace map @st: stats()
# TYPE gotrace_st summary
gotrace_st_sum -30
gotrace_st_count 3
`)
}

func TestHistLog2(t *testing.T) {
	// Key-less: user key u64 0, then the bucket index (ABI.md).
	got := expose(t, nil, mapData("@h", types.Agg(types.Hist, false), nil,
		entry(u64(0, 1), u64(2)), // 0
		entry(u64(0, 2), u64(3)), // 1
		entry(u64(0, 4), u64(5)), // [4, 8)
	))
	check(t, got, `# HELP gotrace_h gotrace map @h: hist()
# TYPE gotrace_h histogram
gotrace_h_bucket{le="-1"} 0
gotrace_h_bucket{le="0"} 2
gotrace_h_bucket{le="1"} 5
gotrace_h_bucket{le="3"} 5
gotrace_h_bucket{le="7"} 10
gotrace_h_bucket{le="+Inf"} 10
gotrace_h_count 10
`)
}

func TestLhistKeyed(t *testing.T) {
	lh := types.Agg(types.Lhist, false)
	lh.Lhist = [3]int64{0, 30, 10} // buckets <0, [0,10), [10,20), [20,30), >=30
	s8 := types.StringType(8)
	got := expose(t, nil, mapData("@l", lh, []*types.Type{s8},
		entry(cat(str("b", 8), u64(4)), u64(7)), // >= 30: only in +Inf
		entry(cat(str("a", 8), u64(1)), u64(1)),
		entry(cat(str("a", 8), u64(2)), u64(2)),
	))
	// Both series list the same buckets: up to the highest non-empty one
	// that has a bound.
	check(t, got, `# HELP gotrace_l gotrace map @l: lhist()
# TYPE gotrace_l histogram
gotrace_l_bucket{key="a",le="-1"} 0
gotrace_l_bucket{key="a",le="9"} 1
gotrace_l_bucket{key="a",le="19"} 3
gotrace_l_bucket{key="a",le="29"} 3
gotrace_l_bucket{key="a",le="+Inf"} 3
gotrace_l_count{key="a"} 3
gotrace_l_bucket{key="b",le="-1"} 0
gotrace_l_bucket{key="b",le="9"} 0
gotrace_l_bucket{key="b",le="19"} 0
gotrace_l_bucket{key="b",le="29"} 0
gotrace_l_bucket{key="b",le="+Inf"} 7
gotrace_l_count{key="b"} 7
`)
}

func TestHistBadBucket(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, output.New(&b, output.Text, nil), []*runtime.MapData{
		mapData("@h", types.Agg(types.Hist, false), nil, entry(u64(0, 99), u64(1)))})
	if err == nil || !strings.Contains(err.Error(), "map @h: bucket index 99 out of range") {
		t.Fatalf("err = %v", err)
	}
}

func TestMultiKeyEscaping(t *testing.T) {
	s8 := types.StringType(8)
	got := expose(t, nil, mapData("@x-y", types.Agg(types.Count, false), []*types.Type{s8, types.U32},
		entry(cat(str("a\"b\\c\nd", 8), u64(42)), u64(1))))
	check(t, got, `# HELP gotrace_x_y_total gotrace map @x-y: count()
# TYPE gotrace_x_y_total counter
gotrace_x_y_total{key0="a\"b\\c\nd",key1="42"} 1
`)
}

func TestPlainValues(t *testing.T) {
	got := expose(t, nil,
		mapData("@n", types.S64, []*types.Type{types.U64}, entry(u64(1), u64(uint64(1<<64-2)))),
		mapData("@name", types.StringType(8), nil, entry(u64(0), str("init", 8))),
		mapData("@up", types.U64, nil, entry(u64(0), u64(5))))
	// @up would be gotrace_up: the map's family gets a suffix.
	check(t, got, `# HELP gotrace_n gotrace map @n: int64 values
# TYPE gotrace_n gauge
gotrace_n{key="1"} -2
# HELP gotrace_name gotrace map @name: string[8] values
# TYPE gotrace_name gauge
gotrace_name{value="init"} 1
# HELP gotrace_up_2 gotrace map @up: uint64 values
# TYPE gotrace_up_2 gauge
gotrace_up_2 5
`)
}

// fakeSyms resolves one stack.
type fakeSyms struct{}

func (fakeSyms) KernelSym(addr uint64) string        { return output.UnknownAddr(addr) }
func (fakeSyms) UserSym(pid int, addr uint64) string { return output.UnknownAddr(addr) }
func (fakeSyms) Username(uid uint64) string          { return "root" }
func (fakeSyms) CgroupPath(id uint64) string         { return "/" }
func (fakeSyms) Stack(info types.StackInfo, id int64, pid int) ([]output.Frame, error) {
	return []output.Frame{{Addr: 0x10, Sym: "inner", Offset: 1}, {Addr: 0x20, Sym: "outer", Offset: 2}}, nil
}

func TestStackKey(t *testing.T) {
	st := &types.Type{Kind: types.Stack, Size: 16}
	got := expose(t, fakeSyms{}, mapData("@s", types.Agg(types.Count, false), []*types.Type{st},
		entry(u64(3, 0), u64(2))))
	check(t, got, `# HELP gotrace_s_total gotrace map @s: count()
# TYPE gotrace_s_total counter
gotrace_s_total{key="outer+2;inner+1"} 2
`)
}

func TestEmptyMap(t *testing.T) {
	got := expose(t, nil, mapData("@h", types.Agg(types.Hist, false), nil),
		mapData("@c", types.Agg(types.Count, false), nil))
	check(t, got, `# HELP gotrace_h gotrace map @h: hist()
# TYPE gotrace_h histogram
# HELP gotrace_c_total gotrace map @c: count()
# TYPE gotrace_c_total counter
`)
}
