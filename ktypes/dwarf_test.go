package ktypes

import (
	"strings"
	"testing"
)

const dwarfFixture = "testdata/dwarf/prog"

func TestDWARFParams(t *testing.T) {
	ps, err := DWARFParams(dwarfFixture, "function2")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.CType+" "+p.Name)
	}
	if s := strings.Join(got, ", "); s != "struct Foo* foo1, struct Foo* foo2, myint k" {
		t.Errorf("params = %s", s)
	}
	if _, err := DWARFParams(dwarfFixture, "nope"); err == nil || !strings.Contains(err.Error(), "function nope not found") {
		t.Errorf("missing function: %v", err)
	}
	if _, err := DWARFParams("testdata/kernel_structs.h", "f"); err == nil || !strings.Contains(err.Error(), "no debug information for") {
		t.Errorf("not an ELF file: %v", err)
	}
}

func TestUprobeArgsAndDWARFTypes(t *testing.T) {
	r := New(Options{BTFPath: fixtureBTF, Binaries: []string{dwarfFixture},
		CDecls: []string{"struct Override { int b; }"}})
	args, err := r.UprobeArgs(dwarfFixture, "function1")
	if err != nil {
		t.Fatal(err)
	}
	if s := layoutString(args); s != "struct function1_args size=16 align=8 { n:int32 *@0 c:int8@8 }" {
		t.Errorf("function1 args: %s", s)
	}
	args, err = r.UprobeArgs(dwarfFixture, "function2")
	if err != nil {
		t.Fatal(err)
	}
	foo1 := args.Fields[0].Type
	if !IsStub(foo1.Elem) || foo1.Elem.Name != "struct Foo" {
		t.Fatalf("foo1 points to %v, want the struct Foo stub", foo1.Elem)
	}
	// The stub completes from the binary's DWARF (no such struct in BTF).
	full, err := Complete(r, foo1.Elem)
	if err != nil {
		t.Fatal(err)
	}
	want := "struct Foo size=48 align=8 { a:int32@0 b:string[10]@4 c:int32[3]@16 next:struct Foo *@32 bits:uint32@40.0:3 more:uint32@40.3:5 }"
	if s := layoutString(full); s != want {
		t.Errorf("struct Foo:\n got %s\nwant %s", s, want)
	}
	if _, err := r.UprobeArgs("testdata/dwarf/missing", "f"); err == nil || !strings.Contains(err.Error(), "no debug information for testdata/dwarf/missing") {
		t.Errorf("missing binary: %v", err)
	}
}
