package runtime

import (
	"encoding/binary"
	"syscall"
	"testing"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// fakeSyms records what the tracker asks of a Symbolizer.
type fakeSyms struct {
	output.Symbolizer // unused methods
	snaps             []int
	errs              map[int64]uint64
}

func (f *fakeSyms) Snapshot(pid int) { f.snaps = append(f.snaps, pid) }
func (f *fakeSyms) CountStackError(id int64, n uint64) {
	if f.errs == nil {
		f.errs = map[int64]uint64{}
	}
	f.errs[id] += n
}
func (f *fakeSyms) StackWarnings() []string {
	if n := f.errs[-int64(syscall.EEXIST)]; n > 0 {
		return []string{"lost"}
	}
	return nil
}

func stackVal(id int64, pid uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(id))
	binary.LittleEndian.PutUint64(b[8:], pid)
	return b
}

func TestSymTrackerEvents(t *testing.T) {
	f := &fakeSyms{}
	tp := &TextPrinter{sym: symTracker{syms: f}}
	ustack := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: true}}
	kstack := &types.Type{Kind: types.Stack, Size: 16}
	usym := &types.Type{Kind: types.Usym, Size: 16}
	args := &types.Type{Kind: types.Tuple, Size: 48, Fields: []types.Field{
		{Name: "0", Type: ustack, Offset: 0}, {Name: "1", Type: kstack, Offset: 16}, {Name: "2", Type: usym, Offset: 32}}}
	ev := &compiler.Event{ID: 1, Kind: compiler.EvPrintf, Args: args}
	for _, rec := range [][]byte{
		append(append(stackVal(3, 100), stackVal(-int64(syscall.EEXIST), 0)...), stackVal(0x401000, 200)...),
		append(append(stackVal(4, 100), stackVal(5, 0)...), stackVal(0x401000, 300)...),
	} {
		vs, err := tp.decodeArgs(ev, rec)
		if err != nil {
			t.Fatal(err)
		}
		tp.sym.event(ev, vs)
	}
	if want := []int{100, 200, 300}; !equalInts(f.snaps, want) {
		t.Errorf("snapshots %v, want %v (each pid once, kernel stacks none)", f.snaps, want)
	}
	if f.errs[-int64(syscall.EEXIST)] != 1 || len(f.errs) != 1 {
		t.Errorf("stack errors %v, want one -EEXIST", f.errs)
	}
	if w := tp.ExitWarnings(); len(w) != 1 {
		t.Errorf("exit warnings %v", w)
	}
}

func TestSymTrackerMaps(t *testing.T) {
	f := &fakeSyms{}
	tp := &TextPrinter{sym: symTracker{syms: f}}
	ustack := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: true}}
	info := &lang.MapInfo{Name: "@", Key: ustack, KeyParts: []*types.Type{ustack}, Value: &types.Type{Kind: types.Count, Size: 8}}
	count := func(n uint64) []byte { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, n); return b }
	md := &MapData{Spec: &compiler.MapSpec{Name: "m", User: info}, Entries: []Entry{
		{Key: stackVal(7, 42), Value: count(3)},
		{Key: stackVal(-int64(syscall.ENOMEM), 42), Value: count(5)},
	}}
	tp.sym.mapData(md, false) // print(@) during the run: snapshots only
	if len(f.errs) != 0 || !equalInts(f.snaps, []int{42}) {
		t.Errorf("print: errs %v snaps %v", f.errs, f.snaps)
	}
	tp.sym.mapData(md, true) // at exit: failed stacks weighted by count()
	if f.errs[-int64(syscall.ENOMEM)] != 5 || len(f.errs) != 1 {
		t.Errorf("exit: stack errors %v, want 5 x -ENOMEM", f.errs)
	}
	if !equalInts(f.snaps, []int{42}) {
		t.Errorf("pid snapshotted again: %v", f.snaps)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
