package compiler

import (
	"fmt"
	"strings"
	"testing"
)

// body is n statements @m[i % 100] = i (each map update one conditional
// jump, its map-full check), then tail.
func body(n int, tail string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  @m[%d] = %d;\n", i%100, i)
	}
	b.WriteString(tail)
	return b.String()
}

// TestSplitRunOnce: a BEGIN of 10,000 map assignments (over the verifier's
// 8,192 pending jumps in one program) compiles to consecutive programs
// that each load, and run in order leave what the one body would; the
// parts after the first are marked as continuing it.
func TestSplitRunOnce(t *testing.T) {
	spec := compileScript(t, "split.bt", "BEGIN {\n"+body(10000, "  exit();\n")+"}\n")
	if len(spec.Programs) < 3 {
		t.Fatalf("%d programs, want the body split in several", len(spec.Programs))
	}
	for i, p := range spec.Programs {
		if p.Continues != (i > 0) {
			t.Errorf("program %d (%s): Continues %v", i, p.Name, p.Continues)
		}
		if n := condJumps(p.Insns); n > splitJumps {
			t.Errorf("program %s: %d conditional jumps, over %d", p.Name, n, splitJumps)
		}
	}
	coll := load(t, spec)
	for _, p := range spec.Programs {
		run(t, coll, p.Name)
	}
	for k := uint64(0); k < 100; k++ {
		if got, ok := lookupU64(t, coll, spec, "m_m", u64key(k)); !ok || got != 9900+k {
			t.Fatalf("@m[%d] = %d (present %v), want %d", k, got, ok, 9900+k)
		}
	}
}

// TestSplitKeepsTogether: what the parts cannot share is not split: a
// clause with scratch variables, one with a predicate, a probe that runs
// per event; and statements from the first that may end the probe
// (exit(), return) on stay in the last part.
func TestSplitKeepsTogether(t *testing.T) {
	big := body(10000, "")
	for _, tc := range []struct {
		name, src string
		progs     int
	}{
		{"variable", "BEGIN {\n  $x = 1;\n" + big + "  @y = $x;\n}\n", 1},
		{"predicate", "BEGIN /1 == 1/ {\n" + big + "}\n", 1},
		{"per event", "tracepoint:syscalls:sys_enter_getpid {\n" + big + "}\n", 1},
		// Ten statements, then an exit() and everything after it.
		{"exit", "BEGIN {\n" + body(10, "  if (@m[1] == 1) { exit(); }\n") + big + "}\n", 2},
		{"return", "END {\n" + body(10, "  if (@m[1] == 1) { return; }\n") + big + "}\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := compileScript(t, tc.name+".bt", tc.src)
			if len(spec.Programs) != tc.progs {
				t.Fatalf("%d programs, want %d", len(spec.Programs), tc.progs)
			}
			if tc.progs == 2 {
				if n := condJumps(spec.Programs[0].Insns); n != 10 {
					t.Errorf("first part: %d conditional jumps, want the 10 statements' 10", n)
				}
			}
		})
	}
}
