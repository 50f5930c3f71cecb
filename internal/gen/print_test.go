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
