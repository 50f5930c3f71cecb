package check

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang"
)

// TestSignWarnings026: bpftrace 0.26 still warns about integer signs
// (its type resolver's binop_int), by other rules than 0.17: only when two
// different integer types have no common type (a 64-bit operand of the
// other sign that is not a fitting literal), and signed operands of / and
// % only when the operand types differ. The same scripts in 0.17 mode:
// TestSignWarnings.
func TestSignWarnings026(t *testing.T) {
	check026 := func(text string) string {
		t.Helper()
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: text})
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		res, err := Check(prog, Options{Compat: compat.V026})
		if err != nil {
			t.Fatalf("check %q: %v", text, err)
		}
		if res.Warnings == nil {
			return ""
		}
		return res.Warnings.Error()
	}
	for _, tc := range []struct{ script, want string }{
		{`BEGIN { $x = 3; printf("%ld\n", $x / 2); }`,
			"stdin:1:36-37: WARNING: signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)"},
		{`BEGIN { printf("%ld\n", (uint64)5 / -2); }`,
			"stdin:1:35-36: WARNING: arithmetic on integers of different signs: 'uint64' and 'int64' can lead to undefined behavior\n" +
				"BEGIN { printf(\"%ld\\n\", (uint64)5 / -2); }\n                                  ~\n" +
				"stdin:1:35-36: WARNING: signed operands for '/' can lead to undefined behavior (cast to unsigned to silence warning)"},
		{`BEGIN { $a = (uint64)5; $b = -1; printf("%d\n", $a < $b); }`,
			"stdin:1:52-53: WARNING: comparison of integers of different signs: 'uint64' and 'int64' can lead to undefined behavior"},
		// Narrow types of different signs promote (no sign warning),
		// but a signed operand of % still warns.
		{`BEGIN { printf("%ld\n", (uint16)5 % (int8)-2); }`,
			"stdin:1:35-36: WARNING: signed operands for '%' can lead to undefined behavior (cast to unsigned to silence warning)\n" +
				"BEGIN { printf(\"%ld\\n\", (uint16)5 % (int8)-2); }\n                                  ~"},
		{`BEGIN { $y = (uint64)5; $y += -1; }`,
			"stdin:1:28-30: WARNING: arithmetic on integers of different signs: 'uint64' and 'int64' can lead to undefined behavior"},
	} {
		if got := check026(tc.script); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: warnings\n%s\nwant (prefix)\n%s", tc.script, got, tc.want)
		}
	}
	// Quiet in 0.26 (each warns in 0.17): a narrower unsigned operand
	// promotes to the signed one, two narrow types to a wider signed one,
	// a literal that fits the signed side's width; operands of one type.
	for _, s := range []string{
		`BEGIN { printf("%ld\n", (uint32)5 > -1); }`,
		`BEGIN { printf("%ld\n", (int8)5 != (uint8)2); }`,
		`BEGIN { $a = 1; $b = 2; printf("%ld\n", $a / $b); }`,
		`BEGIN { $a = -5; printf("%ld\n", $a + 100); }`,
		`BEGIN { printf("%d\n", pid > 0); }`,
	} {
		if got := check026(s); got != "" {
			t.Errorf("%s: want no warnings, got\n%s", s, got)
		}
	}
}
