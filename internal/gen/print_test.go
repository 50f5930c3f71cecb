package gen

import (
	"fmt"
	"os"
	"strconv"
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
