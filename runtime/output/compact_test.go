package output

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang/types"
)

// mixedMaps are maps of int, signed int, string and tuple keys holding
// counts, signed sums, min, max, avg, stats, integers, strings, hist and
// lhist, with many ties in value and key (strings that differ only after
// a NUL, equal prefixes), the entries in a random order.
func mixedMaps(rng *rand.Rand, n int) []MapData {
	s8 := func() []byte { return u64(int64(rng.Intn(7) - 3)) }
	word := func() []byte {
		w := []string{"", "a", "ab", "abc", "b", "ba", "zz"}[rng.Intn(7)]
		b := str(w, 8)
		if rng.Intn(3) == 0 {
			copy(b[len(w)+1:], "junk") // after the NUL: not part of the key
		}
		return b
	}
	tup := types.TupleOf(types.S32, types.StringType(8), types.U64)
	tkey := func() []byte {
		return pack(tup, u64(int64(rng.Intn(5) - 2))[:4], word(), u64(int64(rng.Intn(4))))
	}
	keyers := []struct {
		keys []*types.Type
		gen  func() []byte
	}{
		{[]*types.Type{types.U64}, func() []byte { return u64(int64(rng.Intn(n)) - int64(n/2)) }},
		{[]*types.Type{types.S64}, s8},
		{[]*types.Type{types.StringType(8)}, word},
		{[]*types.Type{types.S32, types.StringType(8), types.U64}, tkey},
		{nil, func() []byte { return u64(0) }},
	}
	var maps []MapData
	for ki, k := range keyers {
		vals := []struct {
			t   *types.Type
			gen func() Entry
		}{
			{types.Agg(types.Count, false), func() Entry {
				return perCPU(nil, u64(int64(rng.Intn(3))), u64(int64(rng.Intn(3))))
			}},
			{types.Agg(types.Sum, true), func() Entry { return perCPU(nil, s8(), s8()) }},
			{types.Agg(types.Min, true), func() Entry { return perCPU(nil, pair(int64(rng.Intn(5)-2), 1), pair(9, int64(rng.Intn(2)))) }},
			{types.Agg(types.Max, true), func() Entry { return perCPU(nil, pair(int64(rng.Intn(5)-2), 1), pair(-9, int64(rng.Intn(2)))) }},
			{types.Agg(types.Avg, true), func() Entry { return perCPU(nil, pair(int64(rng.Intn(3)+1), int64(rng.Intn(9)-4))) }},
			{types.Agg(types.Stats, true), func() Entry { return perCPU(nil, pair(int64(rng.Intn(3)+1), int64(rng.Intn(9)))) }},
			{types.S64, func() Entry { return Entry{Value: s8()} }},
			{types.U32, func() Entry { return Entry{Value: u64(int64(rng.Intn(4)))} }},
			{types.StringType(8), func() Entry { return Entry{Value: word()} }},
		}
		for vi, v := range vals {
			info := mapInfo(fmt.Sprintf("@m%d_%d", ki, vi), v.t, k.keys...)
			seen := map[string]bool{}
			var es []Entry
			for j := 0; j < n; j++ {
				key := k.gen()
				if seen[string(key)] {
					continue
				}
				seen[string(key)] = true
				e := v.gen()
				e.Key = key
				es = append(es, e)
			}
			maps = append(maps, MapData{Info: info, Entries: es})
		}
		for hi, ht := range []*types.Type{types.Agg(types.Hist, false), lhistType(0, 100, 10)} {
			info := mapInfo(fmt.Sprintf("@h%d_%d", ki, hi), ht, k.keys...)
			seen := map[string]bool{}
			var es []Entry
			for j := 0; j < n; j++ {
				key := k.gen()
				if !seen[string(key)] {
					seen[string(key)] = true
					buckets := map[int64]uint64{}
					for b := rng.Intn(4); b >= 0; b-- {
						buckets[int64(rng.Intn(12))] = uint64(rng.Intn(5) + 1)
					}
					es = append(es, histEntries(key, buckets)...)
				}
			}
			rng.Shuffle(len(es), func(a, b int) { es[a], es[b] = es[b], es[a] })
			maps = append(maps, MapData{Info: info, Entries: es})
		}
	}
	return maps
}

// TestCompactMatchesRows: the compact path prints every map of mixedMaps
// byte for byte as the rows path does — text and JSON, bpftrace 0.17 and
// 0.26, all entries and print(@m, top, div).
func TestCompactMatchesRows(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	maps := mixedMaps(rng, 60)
	taken := 0
	for _, m := range maps {
		if _, ok := New(nil, Text, nil).compactRows(m); ok {
			taken++
		}
	}
	if taken != len(maps) {
		t.Fatalf("compact path took %d of %d maps", taken, len(maps))
	}
	print := func(v compat.Version, f Format, m MapData, compact bool) string {
		var sb strings.Builder
		p := New(&sb, f, fakeSyms{})
		p.Compat = v
		noCompact = !compact
		defer func() { noCompact = false }()
		if err := p.Map(m); err != nil {
			t.Fatalf("%s: %v", m.Info.Name, err)
		}
		return sb.String()
	}
	for _, v := range []compat.Version{compat.V017, compat.V026} {
		for _, f := range []Format{Text, JSON} {
			for _, m := range maps {
				for _, td := range [][2]int{{0, 0}, {3, 0}, {0, 2}, {5, 3}} {
					m.Top, m.Div = td[0], td[1]
					want := print(v, f, m, false)
					got := print(v, f, m, true)
					if got != want {
						t.Fatalf("%v %v %s top %d div %d:\ncompact %q\nrows    %q", v, f, m.Info.Name, m.Top, m.Div, got, want)
					}
					if len(m.Entries) > 2 && strings.Count(want, "\n") < 2 && f == Text {
						t.Fatalf("%s: %q prints too little to compare", m.Info.Name, want)
					}
				}
			}
		}
	}
}

// TestCompactLeavesTextKeys: keys that sort by their text (a stack
// key) are left to the rows path, and an entry that does not decode is
// reported as before.
func TestCompactLeavesTextKeys(t *testing.T) {
	stack := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{}}
	if _, ok := New(nil, Text, nil).compactRows(MapData{Info: mapInfo("@s", types.Agg(types.Count, false), stack)}); ok {
		t.Error("compact path took a stack-keyed count map")
	}
	p, sb := newPrinter(Text)
	err := p.Map(MapData{Info: mapInfo("@x", types.Agg(types.Count, false), types.U64), Entries: []Entry{{Key: u64(1)[:4], Value: u64(1)}}})
	if err == nil || !strings.Contains(err.Error(), "print map @x: key") || sb.Len() != 0 {
		t.Errorf("short key: err %v, printed %q", err, sb.String())
	}
}
