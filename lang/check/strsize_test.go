package check

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// TestLongLiteralWarning: bpftrace 0.17's warning for `==` between a string
// and a longer literal, text and place as bpftrace 0.17.0 prints them here
// for these scripts; 0.26 gives none.
func TestLongLiteralWarning(t *testing.T) {
	cases := []struct{ script, want string }{
		{`BEGIN { $v = "ab"; if ($v == "abcdef") { printf("y\n"); } exit(); }`,
			"stdin:1:23-38: WARNING: The literal is longer than the variable string (size=3), condition will always be false\n" +
				"BEGIN { $v = \"ab\"; if ($v == \"abcdef\") { printf(\"y\\n\"); } exit(); }\n" +
				"                      ~~~~~~~~~~~~~~~"},
		{`BEGIN { $v = "ab"; printf("%d\n", "abcdef" == $v); exit(); }`,
			"stdin:1:35-49: WARNING: The literal is longer than the variable string (size=3)"},
		{`BEGIN { @v = "ab"; printf("%d\n", @v == "abcdef"); exit(); }`,
			"stdin:1:35-49: WARNING: The literal is longer than the variable string (size=3)"},
		// The variable's final size counts (here 9 bytes, "abcdefgh").
		{`BEGIN { $v = "ab"; $v = "abcdefgh"; printf("%d\n", $v == "abcdefghij"); exit(); }`,
			"stdin:1:52-70: WARNING: The literal is longer than the variable string (size=9)"},
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
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: tc.script})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := Check(prog, Options{Compat: compat.V026}); err != nil || res.Warnings != nil {
			t.Errorf("%s: 0.26 mode: err %v, warnings %v", tc.script, err, res.Warnings)
		}
	}
	// Quiet: `!=`, a literal that fits without its NUL, two literals.
	for _, s := range []string{
		`BEGIN { $v = "ab"; printf("%d\n", $v != "abcdef"); }`,
		`BEGIN { $v = "ab"; printf("%d\n", $v == "abc"); }`,
		`BEGIN { printf("%d\n", "ab" == "abcdef"); }`,
	} {
		if res := checked(t, s); res.Warnings != nil {
			t.Errorf("%s: unexpected warnings\n%s", s, res.Warnings.Error())
		}
	}
}

// TestGrowingStringVar: a string variable that a later statement of a loop
// makes longer has its final size at every read, so a tuple made from it
// in an earlier statement holds the longer value whole (bpftrace 0.17
// prints "1 0123456789abcdefghij" for the second line of this script).
func TestGrowingStringVar(t *testing.T) {
	for _, s := range []string{
		`BEGIN { $v = "ab"; unroll(2) { $t = (1, $v); printf("%ld %s\n", $t.0, $t.1); $v = "0123456789abcdefghij"; } }`,
		`BEGIN { $v = "ab"; $i = 0; while ($i < 2) { $t = (1, $v); print($t); $v = "0123456789abcdefghij"; $i++; } }`,
	} {
		res := checked(t, s)
		var tuples []*types.Type
		lang.Inspect(res.Prog, func(n lang.Node) bool {
			if te, ok := n.(*lang.TupleExpr); ok {
				tuples = append(tuples, te.Type())
			}
			return true
		})
		if len(tuples) != 1 {
			t.Fatalf("%s: %d tuples", s, len(tuples))
		}
		tt := tuples[0]
		if tt.Kind != types.Tuple || len(tt.Fields) != 2 || tt.Fields[1].Type.Kind != types.String || tt.Fields[1].Type.Size != 21 {
			t.Errorf("%s: tuple type %s, want its string of 21 bytes", s, tt.Spell(true))
		}
		for _, p := range res.Prog.Probes {
			for _, v := range p.Vars {
				if v.Name == "$t" && (v.Type.Kind != types.Tuple || v.Type.Fields[1].Type.Size != 21) {
					t.Errorf("%s: $t is %s", s, v.Type.Spell(true))
				}
			}
		}
	}
}
