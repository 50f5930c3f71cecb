package output

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang/types"
)

func printer026(f Format) (*Printer, *strings.Builder) {
	var sb strings.Builder
	p := New(&sb, f, fakeSyms{})
	p.Compat = compat.V026
	return p, &sb
}

// bpftrace 0.26 prints bools as words, pointers in hex and enum values
// by name (print((true, false)) is "(true, false)"); 0.17 prints numbers.
func TestValues026(t *testing.T) {
	ptr := &types.Type{Kind: types.Pointer, Size: 8, Elem: types.S8}
	enum := &types.Type{Kind: types.Enum, Size: 8, Signed: true, Name: "enum e", Enumerators: map[int64]string{1: "ONE"}}
	tup := types.TupleOf(types.BoolType, types.BoolType, ptr, enum, enum)
	b := pack(tup, []byte{1}, []byte{0}, u64(0x33), u64(1), u64(7))
	v, err := Decode(tup, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    compat.Version
		f    Format
		want string
	}{
		{compat.V026, Text, "(true, false, 0x33, ONE, 7)\n"},
		{compat.V017, Text, "(1, 0, 51, 1, 7)\n"},
		{compat.V026, JSON, `{"type": "value", "data": [true,false,51,1,7]}` + "\n"},
		{compat.V017, JSON, `{"type": "value", "data": [1,0,51,1,7]}` + "\n"},
	} {
		var sb strings.Builder
		p := New(&sb, c.f, fakeSyms{})
		p.Compat = c.v
		if err := p.Value(v); err != nil {
			t.Fatal(err)
		}
		if sb.String() != c.want {
			t.Errorf("%v %v: got %q, want %q", c.v, c.f, sb.String(), c.want)
		}
	}
}

// bpftrace 0.26 prints struct keys as values ({ .m = 2, .n = 3 }), a
// single tuple key as several keys, and bool keys and values as words.
func TestKeys026(t *testing.T) {
	foo := &types.Type{Kind: types.Record, Name: "struct Foo", Size: 8, Align: 4, Fields: []types.Field{
		{Name: "m", Type: types.S32, Offset: 0}, {Name: "n", Type: types.S32, Offset: 4}}}
	i32 := func(v int32) []byte { return u64(int64(v))[:4] }
	fooVal := append(i32(2), i32(3)...)
	tup := types.TupleOf(types.S64, types.S64)
	p, sb := printer026(Text)
	err := p.ExitMaps([]MapData{
		{Info: mapInfo("@s", types.S64, foo), Entries: []Entry{{Key: fooVal, Value: u64(0)}}},
		{Info: mapInfo("@t", tup, tup), Entries: []Entry{{Key: pack(tup, u64(1), u64(2)), Value: pack(tup, u64(3), u64(4))}}},
		{Info: mapInfo("@b", types.BoolType, types.BoolType), Entries: []Entry{{Key: []byte{1}, Value: []byte{0}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "\n\n@b[true]: false\n@s[{ .m = 2, .n = 3 }]: 0\n@t[1, 2]: (3, 4)\n"
	if sb.String() != want {
		t.Errorf("got %q, want %q", sb.String(), want)
	}
}
