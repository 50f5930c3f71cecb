package stdlib

import (
	"encoding/binary"
	"sort"
	"sync"

	"github.com/cilium/ebpf/asm"
)

// syscall_name(nr): the name of an x86-64 system call (bpftrace 0.26's
// stdlib), a string the program builds itself: a constant for a constant
// number, else a binary search over the syscall table that writes the
// name into the zeroed result. A number the table lacks gives "".

// SyscallNameSize is syscall_name()'s string size: the longest name and
// its NUL.
var SyscallNameSize = func() int {
	n := 0
	for name := range SysnrAMD64 {
		n = max(n, len(name))
	}
	return n + 1
}()

type sysEntry struct {
	nr   int
	name string
}

// sysByNr is the table in number order (one name per number).
var sysByNr = sync.OnceValue(func() []sysEntry {
	seen := map[int]string{}
	for name, nr := range SysnrAMD64 {
		if old, ok := seen[nr]; !ok || name < old {
			seen[nr] = name
		}
	}
	es := make([]sysEntry, 0, len(seen))
	for nr, name := range seen {
		es = append(es, sysEntry{nr, name})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].nr < es[j].nr })
	return es
})

// SyscallName is the name of system call nr, "" if the table lacks it.
func SyscallName(nr int64) string {
	es := sysByNr()
	i := sort.Search(len(es), func(i int) bool { return int64(es[i].nr) >= nr })
	if i < len(es) && int64(es[i].nr) == nr {
		return es[i].name
	}
	return ""
}

func genSyscallName(g Gen, c *Call) error {
	if v, ok := intConst(c.Args[0]); ok {
		g.ConstResult(SyscallName(v))
		return nil
	}
	r, err := g.EvalInt(c.Args[0])
	if err != nil {
		return err
	}
	defer g.Free(r)
	g.ResultMem(asm.R1, SyscallNameSize, true)
	done := g.Label("sysname_done")
	sysNameTree(g, r, sysByNr(), done)
	g.Place(done)
	// A no-op to carry the done label when nothing follows it.
	g.Emit(asm.Mov.Reg(asm.R1, asm.R1))
	return nil
}

// sysNameTree emits the search of es (in number order) for the value of r:
// halves by comparison down to a few entries, each compared for equality;
// a match stores its name at R1 and jumps to done, no match jumps to done.
// r is compared unsigned, so a negative number matches nothing.
func sysNameTree(g Gen, r asm.Register, es []sysEntry, done string) {
	sysNameTreeElse(g, r, es, done, done)
}

// sysNameTreeElse is sysNameTree jumping to miss when nothing matches.
func sysNameTreeElse(g Gen, r asm.Register, es []sysEntry, done, miss string) {
	if len(es) <= 4 {
		for _, e := range es {
			next := g.Label("sysname_next")
			g.Emit(asm.JNE.Imm(r, int32(e.nr), next))
			storeName(g, e.name)
			g.Emit(asm.Ja.Label(done))
			g.Place(next)
		}
		g.Emit(asm.Ja.Label(miss))
		return
	}
	mid := len(es) / 2
	hi := g.Label("sysname_hi")
	g.Emit(asm.JGE.Imm(r, int32(es[mid].nr), hi))
	sysNameTreeElse(g, r, es[:mid], done, miss)
	g.Place(hi)
	sysNameTreeElse(g, r, es[mid:], done, miss)
}

// storeName writes name's bytes at R1 (already zeroed) four at a time.
func storeName(g Gen, name string) {
	b := make([]byte, (len(name)+3)/4*4)
	copy(b, name)
	for off := 0; off < len(b); off += 4 {
		w := binary.LittleEndian.Uint32(b[off:])
		g.Emit(StImm(asm.R1, int16(off), int64(int32(w)), asm.Word))
	}
}
