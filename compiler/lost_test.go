package compiler

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/gotrace/gotrace/lang/check"
)

// TestRingbufOutputCountsLost: every bpf_ringbuf_output call is followed by
// the lost-record counter of ABI.md (jump over on success, else an atomic
// add of 1 to lost_events[0]), and lost_events exists exactly when the
// ring buffer does.
func TestRingbufOutputCountsLost(t *testing.T) {
	for _, tc := range []struct {
		name, text  string
		helperCheck int
	}{
		{"printf", `BEGIN { printf("%d\n", 1); print("x"); exit(); }`, 0},
		{"print map", `BEGIN { @a = 1; print(@a); clear(@a); zero(@a); }`, 0},
		{"join", `tracepoint:syscalls:sys_enter_execve { join(args->argv); }`, 0},
		{"time", `BEGIN { time("%H"); cat("/etc/hostname"); }`, 0},
		{"helper check", `BEGIN { @[1] = 1; @x = @[2]; delete(@[3]); }`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkText(t, tc.text, check.Options{})
			spec, err := Compile(res, Options{HelperCheck: tc.helperCheck})
			if err != nil {
				t.Fatal(err)
			}
			outputs := 0
			for _, p := range spec.Programs {
				for i, ins := range p.Insns {
					if !ins.IsBuiltinCall() || asm.BuiltinFunc(ins.Constant) != asm.FnRingbufOutput {
						continue
					}
					outputs++
					if i+6 > len(p.Insns) {
						t.Fatalf("%s: output at %d is not followed by the lost counter", p.Name, i)
					}
					next := p.Insns[i+1 : i+5]
					jmp, ld, mov, add := next[0], next[1], next[2], next[3]
					ok := jmp.OpCode.JumpOp() == asm.JEq && jmp.Dst == asm.R0 && jmp.Constant == 0 &&
						ld.IsLoadFromMap() && ld.Src == asm.PseudoMapValue && ld.Dst == asm.R1 && ld.Reference() == MapLostEvents &&
						mov.OpCode == asm.Mov.Op(asm.ImmSource) && mov.Dst == asm.R2 && mov.Constant == 1 &&
						add.OpCode == asm.StoreXAdd(asm.R1, asm.R2, asm.DWord).OpCode && add.Dst == asm.R1 && add.Src == asm.R2 && add.Offset == 0
					if !ok {
						t.Fatalf("%s: output at %d followed by %v", p.Name, i, next)
					}
					// The jump lands right after the add.
					if target := p.Insns[i+5]; target.Symbol() != jmp.Reference() {
						t.Fatalf("%s: jump to %q, next insn labelled %q", p.Name, jmp.Reference(), target.Symbol())
					}
				}
			}
			if outputs == 0 {
				t.Fatal("no ring buffer output")
			}
			var lost *MapSpec
			for _, m := range spec.Maps {
				if m.Name == MapLostEvents {
					lost = m
				}
			}
			if lost == nil || lost.Type != ebpf.Array || lost.KeySize != 4 || lost.ValueSize != 8 || lost.MaxEntries != 1 {
				t.Fatalf("lost_events = %+v", lost)
			}
			load(t, spec)
		})
	}
	spec := compileScript(t, "stdin", `BEGIN { @a = count(); }`)
	for _, m := range spec.Maps {
		if m.Name == MapLostEvents || m.Name == MapRingBuf {
			t.Errorf("script without output has map %s", m.Name)
		}
	}
}

// TestLostEventsCounted floods the smallest ring buffer from BEGIN: every
// generated record is either delivered or counted in lost_events.
func TestLostEventsCounted(t *testing.T) {
	const n = 2000
	spec := compileScript(t, "stdin", `BEGIN { $i = 0; while ($i < 2000) { printf("%d\n", $i); $i++; } }`)
	for _, m := range spec.Maps {
		if m.Name == MapRingBuf {
			m.MaxEntries = uint32(os.Getpagesize()) // holds ~170 records of 24 bytes
		}
	}
	coll := load(t, spec)
	rd, err := ringbuf.NewReader(coll.Maps[MapRingBuf])
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run(t, coll, spec.Programs[0].Name)
	delivered := 0
	seen := map[uint64]bool{}
	rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		rec, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.RawSample) < 16 {
			t.Fatalf("record of %d bytes", len(rec.RawSample))
		}
		v := uint64(0)
		for i := 15; i >= 8; i-- {
			v = v<<8 | uint64(rec.RawSample[i])
		}
		if seen[v] || v >= n {
			t.Fatalf("record %d twice or out of range", v)
		}
		seen[v] = true
		delivered++
	}
	lost, ok := lookupU64(t, coll, spec, MapLostEvents, []byte{0, 0, 0, 0})
	if !ok {
		t.Fatal("no lost_events[0]")
	}
	t.Logf("%d delivered, %d lost", delivered, lost)
	if lost == 0 || delivered == 0 {
		t.Errorf("a %d-byte ring: %d delivered, %d lost; want both > 0", os.Getpagesize(), delivered, lost)
	}
	if delivered+int(lost) != n {
		t.Errorf("delivered %d + lost %d != %d generated", delivered, lost, n)
	}
}
