package gen

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPrintScripts prints the scripts of seeds GEN_FROM..GEN_TO (for a
// look at what the generator makes); it does nothing without them.
func TestPrintScripts(t *testing.T) {
	from, err1 := strconv.Atoi(os.Getenv("GEN_FROM"))
	to, err2 := strconv.Atoi(os.Getenv("GEN_TO"))
	if err1 != nil || err2 != nil {
		t.Skip("GEN_FROM and GEN_TO not set")
	}
	for s := from; s < to; s++ {
		fmt.Printf("# seed %d\n%s", s, Script(int64(s), DefaultConfig))
	}
}

// TestShrinkRefusal shrinks the script of seed GEN_SHRINK_SEED while
// gotrace refuses it with the same message kind (a tool for looking at
// what the generator finds); it does nothing without it.
func TestShrinkRefusal(t *testing.T) {
	seed, err := strconv.ParseInt(os.Getenv("GEN_SHRINK_SEED"), 10, 64)
	if err != nil {
		t.Skip("GEN_SHRINK_SEED not set")
	}
	kind := func(x string) string {
		o := compileOne(x)
		return kindOf(strings.TrimPrefix(o.refused, "compiler: "))
	}
	n := Script(seed, DefaultConfig)
	want := kind(n.String())
	small := Shrink(n, func(x *Node) bool { return kind(x.String()) == want }, 2000)
	fmt.Printf("%s\n%s", want, small)
}

// TestSameOutput: the side-by-side comparison lets equal values of one
// value-sorted map come in any order, and nothing else.
func TestSameOutput(t *testing.T) {
	script := `BEGIN { @a[1] = 1; @a[2] = 1; @v[1] = avg(2); @v[2] = avg(2); @s[1] = "x"; @s[2] = "x"; exit(); }`
	bt := "\n\n@a[1]: 1\n@a[2]: 1\n@a[3]: 5\n"
	for _, c := range []struct {
		gt   string
		same bool
	}{
		{"\n\n@a[2]: 1\n@a[1]: 1\n@a[3]: 5\n", true},
		{"\n\n@a[3]: 5\n@a[1]: 1\n@a[2]: 1\n", false}, // sorted by value
		{"\n\n@a[1]: 1\n@a[2]: 1\n@a[3]: 5\n\n", false},
	} {
		if got := sameOutput(bt, c.gt, script); got != c.same {
			t.Errorf("%q vs %q: same %v, want %v", bt, c.gt, got, c.same)
		}
	}
	// avg maps order equal values by key, strings sort by key: in order.
	if sameOutput("@v[1]: 2\n@v[2]: 2\n", "@v[2]: 2\n@v[1]: 2\n", script) {
		t.Error("avg ties compared as a set")
	}
	if sameOutput("@s[1]: x\n@s[2]: x\n", "@s[2]: x\n@s[1]: x\n", script) {
		t.Error("string values compared as a set")
	}
	// A map read in another map's avg() key is not an avg map (seed 760657).
	script = `BEGIN { @m1["a"] = 0; @m1["b"] = 0; @m2[(@m1["23"] ? 1 : 2)] = avg(3); exit(); }`
	if !sameOutput("@m1[a]: 0\n@m1[b]: 0\n", "@m1[b]: 0\n@m1[a]: 0\n", script) {
		t.Error("@m1 taken for an avg map")
	}
	if got := avgMaps(script); len(got) != 1 || !got["@m2"] {
		t.Errorf("avg maps %v, want @m2", got)
	}
}

// TestPrintMutated prints the mutated scripts of seeds GEN_FROM..GEN_TO
// (TestErrorsSameAsBpftrace's); it does nothing without them.
func TestPrintMutated(t *testing.T) {
	from, err1 := strconv.Atoi(os.Getenv("GEN_FROM"))
	to, err2 := strconv.Atoi(os.Getenv("GEN_TO"))
	if err1 != nil || err2 != nil {
		t.Skip("GEN_FROM and GEN_TO not set")
	}
	for s := from; s < to; s++ {
		n, kind := MutatedScript(int64(s))
		fmt.Printf("# seed %d: %s\n%s", s, kind, n)
	}
}
