package lang

import (
	"os"
	"strings"
	"testing"
)

// TestMain gives the parser the builtin tokens the table of builtins would
// (testdata/builtin-tokens.txt; package stdlib is not linked in here).
func TestMain(m *testing.M) {
	data, err := os.ReadFile("testdata/builtin-tokens.txt")
	if err != nil {
		panic(err)
	}
	words := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			words[l] = true
		}
	}
	BuiltinToken = func(w string) bool {
		if words[w] {
			return true
		}
		for _, fam := range []string{"sarg", "arg"} {
			if rest, ok := strings.CutPrefix(w, fam); ok && allDigits(rest) {
				return words[fam+"N"]
			}
		}
		return false
	}
	os.Exit(m.Run())
}
