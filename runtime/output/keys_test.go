package output

import (
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

// Records in map keys print compactly, {.m=2,.n=3} (also in arrays and
// nested), values keep the spaced form — as bpftrace 0.17.
func TestRecordKeysCompact(t *testing.T) {
	foo := &types.Type{Kind: types.Record, Name: "struct Foo", Size: 8, Align: 4, Fields: []types.Field{
		{Name: "m", Type: types.S32, Offset: 0}, {Name: "n", Type: types.S32, Offset: 4}}}
	arr := &types.Type{Kind: types.Array, Elem: foo, Len: 2, Size: 16, Align: 4}
	i32 := func(v int32) []byte { return u64(int64(v))[:4] }
	fooVal := append(i32(2), i32(3)...)
	key := types.TupleOf(foo, types.S64)
	p, sb := newPrinter(Text)
	err := p.ExitMaps([]MapData{
		{Info: mapInfo("@s", foo, foo, types.S64), Entries: []Entry{{Key: pack(key, fooVal, u64(1)), Value: fooVal}}},
		{Info: mapInfo("@a", types.S64, arr), Entries: []Entry{{Key: append(append([]byte{}, fooVal...), append(i32(4), i32(5)...)...), Value: u64(42)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "\n\n@a[[{.m=2,.n=3},{.m=4,.n=5}]]: 42\n@s[{.m=2,.n=3}, 1]: { .m = 2, .n = 3 }\n"
	if sb.String() != want {
		t.Errorf("got %q\nwant %q", sb.String(), want)
	}
}
