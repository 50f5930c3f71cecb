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
	m := newStackMemo()
	ids := func(l []string) []lineID {
		var out []lineID
		for _, s := range l {
			out = append(out, m.id(s))
		}
		return out
	}
	for i := 0; i < 20000; i++ {
		a, b := stack(), stack()
		ia, ib := ids(a), ids(b)
		if got, want := compareLines(ia, ib, m.ranked()), strings.Compare(strings.Join(a, ""), strings.Join(b, "")); got != want {
			t.Fatalf("compareLines(%q, %q) = %d, the texts compare %d", a, b, got, want)
		}
	}
}

// genKernelSyms has generated kernel stacks: stack id N holds frames drawn
// from a small set of addresses (so stacks share lines and prefixes), some
// unresolved. As a KernelStacker it counts the addresses it resolves.
type genKernelSyms struct {
	fakeSyms
	stacks   map[int64][]uint64
	resolved *int
}

func (g genKernelSyms) KernelStackAddrs(info types.StackInfo, id int64) ([]uint64, error) {
	a, ok := g.stacks[id]
	if !ok {
		return nil, fmt.Errorf("no stack %d", id)
	}
	if n := info.Frames(); len(a) > n {
		a = a[:n]
	}
	return a, nil
}

func (g genKernelSyms) KernelFrame(addr uint64) Frame {
	*g.resolved++
	if addr%7 == 3 {
		return Frame{Addr: addr} // unknown
	}
	return Frame{Addr: addr, Sym: fmt.Sprintf("fn%d", addr%13), Offset: addr % 100}
}

func (g genKernelSyms) Stack(info types.StackInfo, id int64, pid int) ([]Frame, error) {
	addrs, err := g.KernelStackAddrs(info, id)
	if err != nil {
		return nil, err
	}
	var fs []Frame
	for _, a := range addrs {
		fs = append(fs, g.KernelFrame(a))
	}
	return fs, nil
}

// onlySyms hides genKernelSyms' KernelStacker methods: the generic path.
type onlySyms struct{ g genKernelSyms }

func (o onlySyms) KernelSym(addr uint64) string        { return o.g.KernelSym(addr) }
func (o onlySyms) UserSym(pid int, addr uint64) string { return o.g.UserSym(pid, addr) }
func (o onlySyms) Username(uid uint64) string          { return o.g.Username(uid) }
func (o onlySyms) CgroupPath(id uint64) string         { return o.g.CgroupPath(id) }
func (o onlySyms) Stack(info types.StackInfo, id int64, pid int) ([]Frame, error) {
	return o.g.Stack(info, id, pid)
}

// TestKernelStackLinesAsGeneric: a map of generated kernel stacks (with
// equal counts, missing stacks and an integer key part) prints the same
// text through the kernel path, which makes a frame's line once per
// address, as through Stack, in every stack mode and frame limit, and
// the kernel path resolves each distinct address once.
func TestKernelStackLinesAsGeneric(t *testing.T) {
	x := uint64(7)
	next := func(n int) int {
		x = x*6364136223846793005 + 1442695040888963407
		return int(x>>33) % n
	}
	for _, mode := range []types.StackMode{types.StackBpftrace, types.StackPerf, types.StackRaw} {
		for _, limit := range []int{127, 3} {
			stacks := map[int64][]uint64{}
			distinct := map[uint64]bool{}
			var entries []Entry
			for id := int64(1); id <= 300; id++ {
				var a []uint64
				for i, n := 0, next(8); i < n; i++ {
					addr := 0xffffffff81000000 + uint64(next(40))
					a = append(a, addr)
				}
				if next(20) > 0 { // else: not in the stack map
					stacks[id] = a
					for i, addr := range a {
						if i < limit {
							distinct[addr] = true
						}
					}
				}
				entries = append(entries, perCPU(cat(u64(int64(next(3))), u64(id), u64(0)), u64(int64(next(4)))))
			}
			kst := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{Limit: limit, Mode: mode}}
			print := func(s Symbolizer) string {
				var sb strings.Builder
				p := New(&sb, Text, s)
				p.Compat = compat.V026
				info := mapInfo("@", types.Agg(types.Count, false), types.U64, kst)
				if err := p.Map(MapData{Info: info, Entries: entries}); err != nil {
					t.Fatal(err)
				}
				return sb.String()
			}
			resolved, generic := 0, 0
			g := genKernelSyms{stacks: stacks, resolved: &resolved}
			got := print(g)
			want := print(onlySyms{genKernelSyms{stacks: stacks, resolved: &generic}})
			if got != want {
				t.Fatalf("mode %d limit %d: kernel path prints\n%.2000s\nthe generic path\n%.2000s", mode, limit, got, want)
			}
			if resolved != len(distinct) {
				t.Errorf("mode %d limit %d: %d addresses resolved, want %d (each distinct one once)", mode, limit, resolved, len(distinct))
			}
			if sym := map[bool]string{true: "ffffffff81", false: "fn"}[mode == types.StackRaw]; !strings.Contains(got, sym) || strings.Count(got, "\n") < 300 {
				t.Fatalf("mode %d: too little printed:\n%.500s", mode, got)
			}
		}
	}
}
