package output

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

// srcSyms gives user stacks with source lines and an inlined call, and
// unwinds dw_ustack values (DwarfStacker) to the same frames.
type srcSyms struct{ fakeSyms }

var srcFrames = []Frame{
	{Addr: 0x401136, Sym: "inner", Module: "/bin/prog", File: "/src/prog.c", Line: 13, Inlined: true},
	{Addr: 0x401136, Sym: "outer", Offset: 22, Module: "/bin/prog", File: "/src/prog.c", Line: 22},
	{Addr: 0x401200, Sym: "main", Offset: 9, Module: "/bin/prog"},
}

func (srcSyms) Stack(info types.StackInfo, id int64, pid int) ([]Frame, error) {
	return srcFrames, nil
}

func (srcSyms) DwarfStack(pid int, regs []byte) ([]Frame, error) {
	if pid != 42 || len(regs) != 24+5 {
		return nil, fmt.Errorf("pid %d, %d bytes", pid, len(regs))
	}
	return srcFrames, nil
}

// TestStackSourceFrames: frames with a source line end in @file:line and
// inlined calls print as "[inlined] fn@file:line" (perf mode: "ADDR fn
// (inlined)"; raw mode lists addresses only); a dw_ustack value reaches
// DwarfStack with its registers and the copied bytes.
func TestStackSourceFrames(t *testing.T) {
	p := New(&strings.Builder{}, Text, srcSyms{})
	val := func(mode types.StackMode, dwarf bool) Value {
		st := &types.Type{Kind: types.Stack, Size: 16, Stack: types.StackInfo{User: true, Mode: mode, Dwarf: dwarf}}
		if !dwarf {
			return Value{Type: st, Bits: 7, Aux: 42}
		}
		st.Size = types.DwarfStackSize
		b := make([]byte, types.DwarfStackSize)
		b[0] = 5  // 5 bytes of stack copied
		b[8] = 42 // pid
		v, err := Decode(st, b)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		mode  types.StackMode
		dwarf bool
		want  string
	}{
		{types.StackBpftrace, false, "\n        [inlined] inner@/src/prog.c:13\n        outer+22@/src/prog.c:22\n        main+9\n"},
		{types.StackBpftrace, true, "\n        [inlined] inner@/src/prog.c:13\n        outer+22@/src/prog.c:22\n        main+9\n"},
		{types.StackPerf, false, "\n\t401136 inner (inlined)\n\t401136 outer+22 (/bin/prog)\n\t401200 main+9 (/bin/prog)\n"},
		{types.StackRaw, true, "\n401136\n401200\n"},
	} {
		if got := p.Text(val(c.mode, c.dwarf)); got != c.want {
			t.Errorf("mode %v dwarf %v:\n%q\nwant\n%q", c.mode, c.dwarf, got, c.want)
		}
	}
}
