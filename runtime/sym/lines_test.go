package sym

import (
	"debug/elf"
	"strings"
	"testing"
)

// linesProg: inner is inlined into middle, middle into outer (lines
// numbered from the first line of the string, which is line 1).
const linesProg = `volatile long acc;
static inline __attribute__((always_inline)) void inner(long k) {
	acc += k * 3;
}
static inline __attribute__((always_inline)) void middle(long k) {
	inner(k);
	acc ^= 1;
}
__attribute__((noipa)) void outer(long k) {
	middle(k);
	acc++;
}
int main(int argc, char **argv) { outer(argc); return 0; }
`

// TestLinesAndInlines: the statement of line 3 starts at one address, in
// outer; there the inlined calls are inner (called from line 6) inside
// middle (called from line 10), innermost first, and SourceAt's unit
// gives the same; a line without code and an unknown file are errors.
func TestLinesAndInlines(t *testing.T) {
	requireGCC(t)
	bin := build(t, t.TempDir(), "lines", "gcc", linesProg, "-g", "-O2", "-no-pie")
	addrs, err := LineAddrs(bin, "lines.c", 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var lo, hi uint64
	for _, s := range syms {
		if s.Name == "outer" {
			lo, hi = s.Value, s.Value+s.Size
		}
	}
	if len(addrs) != 1 || addrs[0] < lo || addrs[0] >= hi {
		t.Fatalf("line 3 at %x, want one address in outer [%x, %x)", addrs, lo, hi)
	}
	for _, l := range []func() (*DebugLines, bool){
		func() (*DebugLines, bool) { l, err := Lines(bin); return l, err == nil },
		func() (*DebugLines, bool) { return SourceAt(bin, addrs[0]) },
	} {
		dl, ok := l()
		if !ok {
			t.Fatal("no line table")
		}
		row, ok := dl.At(addrs[0])
		if !ok || row.Line != 3 || !strings.HasSuffix(row.File, "/lines.c") {
			t.Errorf("At(%x) = %+v", addrs[0], row)
		}
		in := dl.InlinedAt(addrs[0])
		if len(in) != 2 || in[0].Func != "inner" || in[0].CallLine != 6 || in[1].Func != "middle" || in[1].CallLine != 10 ||
			!strings.HasSuffix(in[1].CallFile, "/lines.c") {
			t.Errorf("InlinedAt(%x) = %+v, want inner (from line 6) in middle (from line 10)", addrs[0], in)
		}
	}
	if _, err := LineAddrs(bin, "lines.c", 1, 0); err == nil || !strings.Contains(err.Error(), "no code for lines.c:1") {
		t.Errorf("line 1: %v", err)
	}
	if _, err := LineAddrs(bin, "other.c", 3, 0); err == nil || !strings.Contains(err.Error(), "no source file other.c") {
		t.Errorf("other.c: %v", err)
	}
}
