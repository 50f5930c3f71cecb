package stdlib

import (
	"slices"
	"sort"
	"testing"

	"github.com/gotrace/gotrace/stdlib/emitguess"
)

// TestEmitGuessNames: emitguess.Names, the list the command's first init
// guesses with, is what the builtin table says writes events, and the two
// guesses agree on every builtin called.
func TestEmitGuessNames(t *testing.T) {
	var want []string
	for name := range table() {
		if emits(name) {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	got := slices.Clone(emitguess.Names)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("emitguess.Names = %q, the table's emitting builtins are %q", got, want)
	}
	for name := range table() {
		src := "BEGIN { " + name + "(1); }"
		if MayEmitEvents(src) != emitguess.MayEmit(src) {
			t.Errorf("%s: the table's guess %v, emitguess's %v", src, MayEmitEvents(src), emitguess.MayEmit(src))
		}
	}
}
