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
