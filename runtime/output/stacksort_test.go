package output

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang/types"
)

// countingSyms gives stack id N one frame "fN" and counts the Stack calls.
type countingSyms struct {
	fakeSyms
	calls *int
}

func (s countingSyms) Stack(info types.StackInfo, id int64, pid int) ([]Frame, error) {
	*s.calls++
	return []Frame{{Addr: 0xffffffff81000000 + uint64(id), Sym: fmt.Sprintf("f%04d", id)}}, nil
}

// TestStackKeySortSymbolizesOnce: a map keyed by stacks is sorted by the
// stacks' text, made once per stack for both the sort and the print, not
// once per comparison — 10^5 distinct stacks took minutes that way — nor
// again for printing (that doubled the exit time of 10^5 kernel stacks).
func TestStackKeySortSymbolizesOnce(t *testing.T) {
	const n = 500
	kst := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{Limit: 127}}
	var entries []Entry
	for i := n; i > 0; i-- { // reverse order: the sort has work to do
		entries = append(entries, perCPU(cat(u64(int64(i)), u64(0)), u64(1)))
	}
	calls := 0
	var sb strings.Builder
	p := New(&sb, Text, countingSyms{calls: &calls})
	p.Compat = compat.V026
	if err := p.Map(MapData{Info: mapInfo("@", types.Agg(types.Count, false), kst), Entries: entries}); err != nil {
		t.Fatal(err)
	}
	if calls != n {
		t.Errorf("%d stack symbolizations for %d keys, want %d (one per stack, shared by the sort and the print)", calls, n, n)
	}
	out := sb.String()
	if i, j := strings.Index(out, "f0001"), strings.Index(out, "f0500"); i < 0 || j < 0 || i > j {
		t.Errorf("stacks not printed in their text's order:\n%.300s", out)
	}
}

// TestCompareLinesIsTextOrder: comparing two stacks line by line gives the
// order of their joined texts, for generated stacks whose lines share
// prefixes, differ only in their offsets or end early.
func TestCompareLinesIsTextOrder(t *testing.T) {
	syms := []string{"a", "ab", "abc", "b", "vfs_read", "vfs_readv", "do_syscall_64", "[unknown]"}
	x := uint64(1)
	next := func(n int) int {
		x = x*6364136223846793005 + 1442695040888963407
		return int(x>>33) % n
	}
	stack := func() []string {
		if next(10) == 0 {
			return nil // unreadable: prints as nothing
		}
		l := []string{"\n"}
		for i, n := 0, next(5); i < n; i++ {
			l = append(l, fmt.Sprintf("        %s+%d\n", syms[next(len(syms))], next(12)))
		}
		return l
	}
	for i := 0; i < 20000; i++ {
		a, b := stack(), stack()
		if got, want := compareLines(a, b), strings.Compare(strings.Join(a, ""), strings.Join(b, "")); got != want {
			t.Fatalf("compareLines(%q, %q) = %d, the texts compare %d", a, b, got, want)
		}
	}
}
