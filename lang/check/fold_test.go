package check

import (
	"github.com/gotrace/gotrace/compat"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

func checked(t *testing.T, text string) *Result {
	t.Helper()
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: text})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	res, err := Check(prog, Options{Compat: compat.V017})
	if err != nil {
		t.Fatalf("check %q: %v", text, err)
	}
	return res
}

// TestFold: the folded value of `printf("%d", E)`'s argument is what
// bpftrace 0.17 prints for E (each checked side by side with it): 64-bit
// arithmetic, unsigned / and %, logical >>, 0 for a zero divisor or a
// shift by 64 or more, comparisons signed only when both operands are,
// casts truncating, literals of 2^63 or more wrapping.
func TestFold(t *testing.T) {
	cases := []struct {
		expr string
		want int64
	}{
		{"2+2", 4},
		{"-7 / 2", 9223372036854775804},
		{"-7 % 2", 1},
		{"-1 >> 60", 15},
		{"(int8)-1 >> 1", 9223372036854775807},
		{"(int32)-8 % 3", 2},
		{"100 % -7", 100},
		{"1 << 63 >> 63", 1},
		{"(uint32)5 > -1", 0},
		{"-1 < (uint8)1", 0},
		{"5 > -1", 1},
		{"1 << 64", 0},
		{"-5 / -2", 0},
		{"10 % 0", 0},
		{"10 / 0", 0},
		{"(uint8)300", 44},
		{"(int8)200", -56},
		{"(int32)4294967295", -1},
		{"(uint32)4294967296", 0},
		{"(int8)127 + (int8)1", 128},
		{"9223372036854775808 > 0", 0},
		{"18446744073709551615", -1},
		{"!5", 0},
		{"~0", -1},
		{"0 && 1", 0},
		{"1 ? 7 : 8", 7},
		{"0 ? 7 : (int8)-1", -1},
		{"sizeof(int32)", 4},
		{"$# + 1", 1},
	}
	for _, tc := range cases {
		res := checked(t, `BEGIN { printf("%d\n", `+tc.expr+`); }`)
		call := res.Prog.Probes[0].Body.Stmts[0].(*lang.ExprStmt).X.(*lang.CallExpr)
		got, ok := lang.ConstOf(call.Args[1])
		if !ok || got != tc.want {
			t.Errorf("%s: folded to %d (constant: %v), want %d", tc.expr, got, ok, tc.want)
		}
	}
	// Not constants: variables, maps, a && whose left side decides nothing.
	for _, e := range []string{"$x", "$x + 1", "1 && $x", "@m", "$x ? 1 : 2"} {
		res := checked(t, `BEGIN { $x = 1; @m = 1; printf("%d\n", `+e+`); }`)
		call := res.Prog.Probes[0].Body.Stmts[2].(*lang.ExprStmt).X.(*lang.CallExpr)
		if v, ok := lang.ConstOf(call.Args[1]); ok {
			t.Errorf("%s folded to %d", e, v)
		}
	}
	// A constant left side decides && and || alone.
	res := checked(t, `BEGIN { $x = 1; printf("%d %d\n", 0 && $x, 1 || $x); }`)
	call := res.Prog.Probes[0].Body.Stmts[1].(*lang.ExprStmt).X.(*lang.CallExpr)
	if a, ok := lang.ConstOf(call.Args[1]); !ok || a != 0 {
		t.Errorf("0 && $x: %d %v", a, ok)
	}
	if b, ok := lang.ConstOf(call.Args[2]); !ok || b != 1 {
		t.Errorf("1 || $x: %d %v", b, ok)
	}
}

// TestSignWarnings: bpftrace 0.17's warnings, text and place, as it
// prints them for these scripts (stderr of bpftrace 0.17.0 here).
func TestSignWarnings(t *testing.T) {
	cases := []struct{ script, want string }{
		{`BEGIN { $x = 3; printf("%ld\n", $x / 2); }`,
			"stdin:1:36-37: WARNING: signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)"},
		{`BEGIN { printf("%ld\n", (uint64)5 / -2); }`,
			"stdin:1:35-36: WARNING: arithmetic on integers of different signs: 'unsigned int64' and 'int64' can lead to undefined behavior\n" +
				"BEGIN { printf(\"%ld\\n\", (uint64)5 / -2); }\n                                  ~\n" +
				"stdin:1:35-36: WARNING: signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)"},
		{`BEGIN { printf("%ld\n", (uint32)5 > -1); }`,
			"stdin:1:35-36: WARNING: comparison of integers of different signs: 'unsigned int32' and 'int64' can lead to undefined behavior"},
		{`BEGIN { printf("%ld\n", (int8)5 != (uint8)2); }`,
			"stdin:1:33-35: WARNING: comparison of integers of different signs: 'int8' and 'unsigned int8' can lead to undefined behavior"},
		{`BEGIN { printf("%ld\n", (uint16)5 % (int8)-2); }`,
			"stdin:1:35-36: WARNING: arithmetic on integers of different signs: 'unsigned int16' and 'int8' can lead to undefined behavior"},
		// A compound assignment's key warns twice (0.17 rewrites it as
		// @m[k] = @m[k] + v), then its value, then its operator.
		{`BEGIN { $a = 1; @m[$a / 2] += (uint64)1 - $a; }`,
			"stdin:1:23-24: WARNING: signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)\n" +
				"BEGIN { $a = 1; @m[$a / 2] += (uint64)1 - $a; }\n                      ~\n" +
				"stdin:1:23-24: WARNING: signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)\n" +
				"BEGIN { $a = 1; @m[$a / 2] += (uint64)1 - $a; }\n                      ~\n" +
				"stdin:1:41-42: WARNING: arithmetic on integers of different signs: 'unsigned int64' and 'int64' can lead to undefined behavior\n" +
				"BEGIN { $a = 1; @m[$a / 2] += (uint64)1 - $a; }\n                                        ~"},
		// ... and its operator too once the map has a type.
		{`BEGIN { $a = 1; @m[1] = 1; @m[1] += (uint64)1; }`,
			"stdin:1:34-36: WARNING: arithmetic on integers of different signs: 'int64' and 'unsigned int64' can lead to undefined behavior"},
		// Types as bpftrace 0.17 gives them: a ternary has its first
		// branch's sign, a shift its left operand's.
		{`BEGIN { $a = 1; printf("%ld\n", ($a ? (uint8)1 : -1) - -1); }`,
			"stdin:1:54-55: WARNING: arithmetic on integers of different signs: 'unsigned int64' and 'int64'"},
		{`BEGIN { $a = (uint16)1; printf("%ld\n", (1 << $a) - (uint64)1); }`,
			"stdin:1:51-52: WARNING: arithmetic on integers of different signs: 'int64' and 'unsigned int64'"},
		{`BEGIN { $y = (uint64)5; $y += -1; }`,
			"stdin:1:28-30: WARNING: arithmetic on integers of different signs: 'unsigned int64' and 'int64' can lead to undefined behavior"},
	}
	for _, tc := range cases {
		res := checked(t, tc.script)
		if res.Warnings == nil {
			t.Errorf("%s: no warnings, want\n%s", tc.script, tc.want)
			continue
		}
		if got := res.Warnings.Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: warnings\n%s\nwant (prefix)\n%s", tc.script, got, tc.want)
		}
	}
	// Quiet: a non-negative literal takes the other side's sign; bitwise
	// operators, shifts, && and bool are not checked.
	for _, s := range []string{
		`BEGIN { printf("%ld\n", (uint64)8 / 2); }`,
		`BEGIN { printf("%ld\n", (uint32)5 * 2); }`,
		`BEGIN { printf("%ld\n", 5 < (uint16)2); }`,
		`BEGIN { printf("%ld\n", (uint64)5 & -1); }`,
		`BEGIN { printf("%ld\n", (uint64)5 >> -1); }`,
		`BEGIN { printf("%ld\n", (uint64)5 && -1); }`,
		`BEGIN { printf("%ld\n", true / 2); }`,
		`BEGIN { $y = (uint64)5; $y /= 2; }`,
	} {
		if res := checked(t, s); res.Warnings != nil {
			t.Errorf("%s: unexpected warnings\n%s", s, res.Warnings.Error())
		}
	}
}

// TestFoldStrings: the checker records a constant string's text on its
// node (lang.ConstStrOf), the one value code generation and the builtins'
// generators read: a literal, a string parameter, str($N) — and the
// parameter inside str(), whatever it looks like, is its text; a
// numeric parameter elsewhere is an integer, a variable no constant.
func TestFoldStrings(t *testing.T) {
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: `BEGIN { $v = "x"; printf("%s %s %s %s %s %d\n", "lit", $1, str($2), str($2, 1), $v, $2); }`})
	if err != nil {
		t.Fatal(err)
	}
	// 0.26: a string parameter outside str() is a string (0.17 refuses
	// it: "$1 used numerically but given ...", TestErrors).
	res, err := Check(prog, Options{Compat: compat.V026, Params: []string{"abc", "42"}})
	if err != nil {
		t.Fatal(err)
	}
	call := res.Prog.Probes[0].Body.Stmts[1].(*lang.ExprStmt).X.(*lang.CallExpr)
	str := func(e lang.Expr) string {
		s, ok := lang.ConstStrOf(e)
		if !ok {
			return "<none>"
		}
		return s
	}
	a := call.Args
	got := []string{str(a[1]), str(a[2]), str(a[3]), str(a[4].(*lang.CallExpr).Args[0]), str(a[5]), str(a[6])}
	want := []string{"lit", "abc", "42", "42", "<none>", "<none>"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("folded strings %q, want %q", got, want)
	}
	if v, ok := lang.ConstOf(a[6]); !ok || v != 42 {
		t.Errorf("$2 as an integer: %d %v", v, ok)
	}
	if v, ok := lang.ConstOf(a[3].(*lang.CallExpr).Args[0]); !ok || v != 42 {
		t.Errorf("$2 inside str() keeps its integer value: %d %v", v, ok)
	}
}
