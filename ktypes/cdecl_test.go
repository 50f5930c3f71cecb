package ktypes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

// layoutString prints a record's members as "name:type@off[.bit:width]".
func layoutString(t *types.Type) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s size=%d align=%d {", t.Name, t.Size, t.Alignment())
	for _, f := range t.Fields {
		ts := f.Type.String()
		if f.Name == "" {
			ts = "record"
		}
		fmt.Fprintf(&b, " %s:%s@%d", nameOr(f.Name, "_"), ts, f.Offset)
		if f.BitWidth > 0 {
			fmt.Fprintf(&b, ".%d:%d", f.BitOff, f.BitWidth)
		}
	}
	b.WriteString(" }")
	return b.String()
}

func TestCLayout(t *testing.T) {
	for _, tc := range []struct {
		src, name, arch, want string
	}{
		{`struct a { char c; int i; short s; };`, "struct a", "x86_64",
			"struct a size=12 align=4 { c:int8@0 i:int32@4 s:int16@8 }"},
		{`struct a { char c; long l; } __attribute__((packed));`, "struct a", "x86_64",
			"struct a size=9 align=1 { c:int8@0 l:int64@1 }"},
		{`struct a { char c; int i __attribute__((aligned(16))); };`, "struct a", "x86_64",
			"struct a size=32 align=16 { c:int8@0 i:int32@16 }"},
		{`struct __attribute__((aligned(8))) a { char c; };`, "struct a", "x86_64",
			"struct a size=8 align=8 { c:int8@0 }"},
		// Bitfields share a unit and never cross one of their type.
		{`struct b { unsigned int a:3, b:7; unsigned char c:6; unsigned char d:4; int e:30; };`, "struct b", "x86_64",
			"struct b size=8 align=4 { a:uint32@0.0:3 b:uint32@0.3:7 c:uint8@1.2:6 d:uint8@2.0:4 e:int32@4.0:30 }"},
		{`struct b { char x; int :0; char y; long z:40; long w:30; };`, "struct b", "x86_64",
			"struct b size=24 align=8 { x:int8@0 y:int8@4 z:int64@8.0:40 w:int64@16.0:30 }"},
		{`struct b { unsigned a:3; unsigned b:7; } __attribute__((packed));`, "struct b", "x86_64",
			"struct b size=2 align=1 { a:uint32@0.0:3 b:uint32@0.3:7 }"},
		// Unions, anonymous members, arrays, strings, function pointers.
		{`union u { char c[3]; int i; long long l; };`, "union u", "x86_64",
			"union u size=8 align=8 { c:string[3]@0 i:int32@0 l:int64@0 }"},
		{`struct s { int a; union { int x; struct { short p, q; }; }; unsigned char m[2][3]; void (*fn)(int, char *); struct s *next; };`,
			"struct s", "x86_64",
			"struct s size=32 align=8 { a:int32@0 _:record@4 m:uint8[3][2]@8 fn:void *@16 next:struct s *@24 }"},
		{`typedef struct { u8 a; u64 b; __u16 c; } pair_t;`, "pair_t", "x86_64",
			"pair_t size=24 align=8 { a:uint8@0 b:uint64@8 c:uint16@16 }"},
		{`struct f { int n; char data[]; };`, "struct f", "x86_64",
			"struct f size=4 align=4 { n:int32@0 data:int8[0]@4 }"},
		// Plain char is unsigned on arm64.
		{`struct c { char c; signed char s; };`, "struct c", "arm64",
			"struct c size=2 align=1 { c:uint8@0 s:int8@1 }"},
		{`struct c { char c; signed char s; };`, "struct c", "x86_64",
			"struct c size=2 align=1 { c:int8@0 s:int8@1 }"},
		// Enumerators as constants, sizeof, casts, forward references.
		{`enum { A = 2, B = A * 3 }; struct later; struct e { struct later *p; int v[B + sizeof(long)]; char k[(int)sizeof(struct later2)]; }; struct later2 { long x[2]; };`,
			"struct e", "x86_64", ""},
		{`struct g { long double d; __int128 i; };`, "struct g", "arm64",
			"struct g size=32 align=16 { d:uint8[16]@0 i:uint8[16]@16 }"},
		// The last member's ';' may be left out, as clang and bpftrace allow.
		{`struct x {unsigned long x};`, "struct x", "x86_64",
			"struct x size=8 align=8 { x:uint64@0 }"},
		{`struct y { struct { int m[1] } y; struct { int n } a }`, "struct y", "x86_64",
			"struct y size=8 align=4 { y:@0 a:@4 }"},
		{`struct p { int (*tab[4])(void); int *(*pp)[3]; };`, "struct p", "x86_64",
			"struct p size=40 align=8 { tab:void *[4]@0 pp:int32 *[3] *@32 }"},
	} {
		d, err := ParseC(tc.src, tc.arch)
		if err != nil {
			if tc.want == "" {
				continue
			}
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		got, err := d.Lookup(tc.name)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: laid out a struct with an incomplete member: %s", tc.src, layoutString(got))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if s := layoutString(got); s != tc.want {
			t.Errorf("%s (%s):\n got %s\nwant %s", tc.src, tc.arch, s, tc.want)
		}
	}
}

func TestCEnumsAndConstants(t *testing.T) {
	d, err := ParseC(`
#define SHIFT 4
enum color { RED, GREEN = 1 << SHIFT, BLUE, NEG = -1 };
enum big { HUGE = 0x100000000 };
struct s { int arr[BLUE - GREEN + 1]; };
`, "")
	if err != nil {
		t.Fatal(err)
	}
	v, typ, ok := d.Enumerator("BLUE")
	if !ok || v != 17 || typ.Name != "enum color" || typ.Size != 4 || !typ.Signed {
		t.Errorf("BLUE = %d %v %v", v, typ, ok)
	}
	if typ.Enumerators[16] != "GREEN" {
		t.Errorf("enumerators %v", typ.Enumerators)
	}
	if _, big, _ := d.Enumerator("HUGE"); big.Size != 8 {
		t.Errorf("enum big size %d, want 8", big.Size)
	}
	s, err := d.Lookup("struct s")
	if err != nil || s.Size != 8 {
		t.Errorf("struct s: %v %v", s, err)
	}
}

func TestCIncludes(t *testing.T) {
	d, err := ParseCFiles([]string{`#include <mylib.h>
#include <linux/not_installed_here.h>
struct use { struct mylib_rec r; word_t extra; };`}, []string{"stddef.h"}, []string{"testdata/include"}, "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Missing, ",") != "linux/not_installed_here.h" {
		t.Errorf("missing = %v", d.Missing)
	}
	rec, err := d.Lookup("struct mylib_rec")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := layoutString(rec), "struct mylib_rec size=72 align=8 { in:struct inner@0 name:string[24]@16 w:uint64@40 vals:int32[6]@48 }"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if _, err := d.Lookup("struct never"); err == nil {
		t.Errorf("#if 0 region was parsed")
	}
	u, err := d.Lookup("struct use")
	if err != nil || u.Size != 80 {
		t.Errorf("struct use: %v %v", u, err)
	}
}

// TestCSystemHeaders parses real installed headers (UAPI and libc).
func TestCSystemHeaders(t *testing.T) {
	d, err := ParseCFiles(nil, []string{"linux/types.h", "netinet/in.h", "sys/socket.h", "linux/if_ether.h", "linux/ip.h"}, nil, "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Missing) > 0 {
		t.Skipf("system headers not installed: %v", d.Missing)
	}
	for _, tc := range []struct{ name, want string }{
		{"struct in_addr", "struct in_addr size=4 align=4 { s_addr:uint32@0 }"},
		{"struct ethhdr", "struct ethhdr size=14 align=1 { h_dest:uint8[6]@0 h_source:uint8[6]@6 h_proto:uint16@12 }"},
		{"struct iphdr", "struct iphdr size=20 align=4 { ihl:uint8@0.0:4 version:uint8@0.4:4 tos:uint8@1 tot_len:uint16@2 id:uint16@4 frag_off:uint16@6 ttl:uint8@8 protocol:uint8@9 check:uint16@10 _:record@12 }"},
		{"struct sockaddr_in", "struct sockaddr_in size=16 align=4 { sin_family:uint16@0 sin_port:uint16@2 sin_addr:struct in_addr@4 sin_zero:uint8[8]@8 }"},
	} {
		got, err := d.Lookup(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s := layoutString(got); s != tc.want {
			t.Errorf("got  %s\nwant %s", s, tc.want)
		}
	}
}

func TestCErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`struct a { int x y };`, "script:1: expected ';', found 'y'"},
		{`struct a { int x; }; struct b { struct a a; int y[-1]; };`, "negative array size"},
		{`struct a { int x:40; };`, ""}, // reported at layout
		{`struct a { unsigned long long x y; };`, "expected ';'"},
		{`#error stop here`, "#error stop here"},
	} {
		_, err := ParseC(tc.src, "x86_64")
		if tc.want == "" {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
	d, _ := ParseC(`struct a { int x:40; }; struct r { struct r inner; }; struct u { struct unknown v; };`, "x86_64")
	for name, want := range map[string]string{
		"struct a":   "exceeds its type",
		"struct r":   "contains itself",
		"struct u":   "Unknown struct/union: 'struct unknown'",
		"struct zzz": "Unknown struct/union: 'struct zzz' (not in the C declarations)",
		"zzz_t":      "Unknown type: 'zzz_t'",
	} {
		if _, err := d.Lookup(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
	if _, err := ParseC("", "mips"); err == nil {
		t.Errorf("unknown arch accepted")
	}
}

func TestCMacroConstants(t *testing.T) {
	d, err := ParseCFiles([]string{"#define _UNDERSCORE 314\n#define TWICE (_UNDERSCORE * 2)\n#define F(x) x\n#define S \"str\""},
		[]string{"errno.h"}, nil, "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"_UNDERSCORE": 314, "TWICE": 628, "EPERM": 1, "ENOENT": 2} {
		if v, ok := d.Macro(name); !ok || v != want {
			t.Errorf("%s = %d %v, want %d", name, v, ok, want)
		}
	}
	for _, name := range []string{"F", "S", "NOPE"} {
		if v, ok := d.Macro(name); ok {
			t.Errorf("%s evaluated to %d", name, v)
		}
	}
	r := New(Options{BTFPath: fixtureBTF, CDecls: []string{"#define _UNDERSCORE 314"}})
	if v, typ, ok := r.Enum("_UNDERSCORE"); !ok || v != 314 || typ.Size != 8 || !typ.Signed {
		t.Errorf("Enum(_UNDERSCORE) = %d %v %v", v, typ, ok)
	}
}
