package compiler

import (
	"encoding/binary"
	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/internal/testkit"
	"runtime"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/stdlib"
)

func countByPid() (*tb, *lang.Probe) {
	b := newTB("tracepoint:syscalls:sys_enter_getpid {", "  @[pid] = count();", "}")
	b.next()
	p := b.clause(attach("tracepoint:syscalls:sys_enter_getpid", "tracepoint", "syscalls", "sys_enter_getpid"), nil,
		b.assign(b.m("@", types.Agg(types.Count, false), b.builtin("pid", types.U64)), "=", b.call("count", types.Agg(types.Count, false))))
	return b, p
}

// hotPath counts the instructions a hit executes: from the start, follow
// fall-through until the first exit, skipping forward jumps' targets
// only when the branch is the miss (r0 == 0 after a lookup) branch.
func TestCountByPidIsMinimal(t *testing.T) {
	t.Run("perf", func(t *testing.T) { testCountByPidIsMinimal(t, true) })
	t.Run("raw", func(t *testing.T) { testCountByPidIsMinimal(t, false) })
}

// testCountByPidIsMinimal checks the syscalls tracepoint program (perf) or
// the raw sys_enter one it is lowered to (syscalls.go), whose hit path
// adds the number filter and the 32-bit check.
func testCountByPidIsMinimal(t *testing.T, perf bool) {
	b, p := countByPid()
	spec, err := Compile(b.result(p), Options{SyscallTracepoints: syscallMode(perf)})
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Programs) != 1 {
		t.Fatalf("got %d programs", len(spec.Programs))
	}
	prog := spec.Programs[0]
	want, maxExec := ebpf.TracePoint, 16
	if !perf && runtime.GOARCH == "amd64" {
		want, maxExec = ebpf.RawTracepoint, 23
		if prog.RawSyscall != "sys_enter" {
			t.Errorf("RawSyscall %q, want sys_enter", prog.RawSyscall)
		}
	}
	if prog.Type != want {
		t.Errorf("program type %s, want %s", prog.Type, want)
	}
	// One lookup, no update on the hit path: count executed instructions
	// from the start to the exit along the hit path (jumps followed).
	idx := map[string]int{}
	for i, ins := range prog.Insns {
		if s := ins.Symbol(); s != "" {
			idx[s] = i
		}
	}
	executed, lookups, updates := 0, 0, 0
	for i := 0; i < len(prog.Insns); {
		ins := prog.Insns[i]
		executed++
		if ins.IsBuiltinCall() {
			switch asm.BuiltinFunc(ins.Constant) {
			case asm.FnMapLookupElem:
				lookups++
			case asm.FnMapUpdateElem:
				updates++
			}
		}
		if ins.OpCode.JumpOp() == asm.Exit {
			break
		}
		if ins.OpCode.JumpOp() == asm.Ja || strings.HasPrefix(ins.Reference(), "sys_hit") {
			i = idx[ins.Reference()]
			continue
		}
		i++
	}
	t.Logf("hot path: %d instructions executed, %d in the program\n%s", executed, len(prog.Insns), spec.Dump())
	if lookups != 1 || updates != 0 {
		t.Errorf("hot path has %d lookups and %d updates, want 1 and 0", lookups, updates)
	}
	if executed > maxExec {
		t.Errorf("hot path executes %d instructions, want <= %d (bpftrace: 27)", executed, maxExec)
	}
	for _, m := range spec.Maps {
		if m.Name == "m_" && (m.Type != ebpf.PerCPUHash || m.KeySize != 8 || m.ValueSize != 8) {
			t.Errorf("map %s: %s key %d value %d", m.Name, m.Type, m.KeySize, m.ValueSize)
		}
	}
}

func TestEverySourcePosition(t *testing.T) {
	b, p := countByPid()
	spec := compileT(t, b.result(p))
	for i, ins := range spec.Programs[0].Insns {
		if line, _ := SourceOf(ins); line == 0 {
			t.Errorf("instruction %d (%v) has no source position", i, ins)
		}
	}
	if !strings.Contains(spec.Dump(), "; 2:1:   @[pid] = count();") {
		t.Errorf("dump lacks the source line:\n%s", spec.Dump())
	}
}

func TestDeterministic(t *testing.T) {
	b, p := countByPid()
	a := compileT(t, b.result(p)).Dump()
	b2, p2 := countByPid()
	if c := compileT(t, b2.result(p2)).Dump(); a != c {
		t.Errorf("two compilations differ:\n%s\n---\n%s", a, c)
	}
}

func TestCountByPidVerifies(t *testing.T) {
	b, p := countByPid()
	load(t, compileT(t, b.result(p)))
}

// TestEveryRowHasGen fails for a stdlib row the compiler cannot generate.
func TestEveryRowHasGen(t *testing.T) {
	// Rows computed entirely by the checker or in userspace.
	for _, row := range stdlib.Rows() {
		if row.Gen == nil && row.Folded == "" {
			t.Errorf("builtin %s has no code generation", row.Name)
		}
	}
}

// Semantics, executed by the kernel with BPF_PROG_TEST_RUN.
func TestArithmeticSemantics(t *testing.T) {
	t.Run("0.26", func(t *testing.T) { testArithmeticSemantics(t, compat.V026) })
	t.Run("0.17", func(t *testing.T) { testArithmeticSemantics(t, compat.V017) })
}

func testArithmeticSemantics(t *testing.T, v compat.Version) {
	legacy := v.Ints017()
	pick := func(v026, v017 int64) int64 {
		if legacy {
			return v017
		}
		return v026
	}
	b := newTB("BEGIN {", "  arith", "}")
	b.next()
	s64, u64 := types.S64, types.U64
	neg := func(v int64) lang.Expr { return b.int(v, s64) }
	var stmts []lang.Stmt
	want := map[string]int64{}
	add := func(name string, e lang.Expr, w int64) {
		stmts = append(stmts, b.assign(b.m(name, e.Type()), "=", e))
		want[name] = w
	}
	x := b.v("$x", s64)
	y := b.v("$y", s64)
	z := b.v("$z", s64)
	stmts = append(stmts, b.assign(x, "=", neg(-7)), b.assign(y, "=", neg(2)), b.assign(z, "=", neg(0)))
	// bpftrace 0.17: / and % are unsigned whatever the signs, >> is
	// logical; at run time x / 0 is 0 and x % 0 is x (BPF's). 0.26 mode:
	// C's, with 1 for a zero divisor (and a run-time warning), as
	// bpftrace 0.26.
	add("@div", b.bin("/", s64, x, y), pick(-3, int64(uint64(1<<64-7)/2)))
	add("@mod", b.bin("%", s64, x, y), pick(-1, 1))
	add("@divimm", b.bin("/", s64, x, neg(2)), pick(-3, int64(uint64(1<<64-7)/2)))
	add("@divz", b.bin("/", s64, x, z), pick(1, 0))
	add("@modz", b.bin("%", s64, x, z), pick(1, -7))
	add("@udiv", b.bin("/", u64, b.cast(u64, neg(100)), b.int(7, u64)), 14)
	add("@shr", b.bin(">>", s64, x, b.int(1, s64)), pick(-4, int64(uint64(1<<64-7)>>1)))
	add("@ushr", b.bin(">>", u64, b.cast(u64, x), b.int(60, s64)), 15)
	add("@s8", b.cast(types.S8, b.int(200, s64)), -56)
	add("@u8", b.cast(types.U8, neg(-1)), 255)
	add("@u32", b.cast(types.U32, neg(-1)), 0xffffffff)
	add("@lt", b.bin("<", types.BoolType, x, y), 1)
	add("@ult", b.bin("<", types.BoolType, b.cast(u64, x), y), 0)
	add("@and", b.bin("&&", types.BoolType, x, z), 0)
	add("@or", b.bin("||", types.BoolType, z, y), 1)
	add("@not", b.unary("!", types.BoolType, z, false), 1)
	add("@neg", b.unary("-", s64, x, false), 7)
	add("@tern", b.tern(s64, b.bin(">", types.BoolType, x, z), neg(10), neg(20)), 20)
	add("@big", b.bin("+", u64, b.int(1<<40, u64), b.int(5, u64)), 1<<40+5)
	add("@mul", b.bin("*", s64, b.bin("+", s64, x, y), b.bin("-", s64, x, y)), (-5)*(-9))
	// Nested enough to need more than four registers.
	deep := lang.Expr(neg(1))
	for i := 0; i < 6; i++ {
		deep = b.bin("+", s64, neg(1), b.bin("*", s64, x, deep))
	}
	wantDeep := int64(1)
	for i := 0; i < 6; i++ {
		wantDeep = 1 + (-7)*wantDeep
	}
	add("@deep", deep, wantDeep)
	// Compound assignment and increments on variables and maps.
	stmts = append(stmts, b.assign(x, "+=", neg(10)), b.expr(b.unary("++", s64, x, true)))
	add("@x", x, 4)
	cnt := b.m("@cnt", s64)
	stmts = append(stmts, b.expr(b.unary("++", s64, cnt, false)), b.expr(b.unary("++", s64, b.m("@cnt", s64), true)),
		b.assign(b.m("@cnt", s64), "*=", neg(5)))
	want["@cnt"] = 10
	res := b.result(b.clause(attach("BEGIN", "BEGIN", "", ""), nil, stmts...))
	res.Opts.Compat = v
	spec := compileT(t, res)
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	for name, w := range want {
		got, ok := lookupU64(t, coll, spec, userMapName(name), u64key(0))
		if !ok {
			t.Errorf("%s: not set", name)
			continue
		}
		if int64(got) != w {
			t.Errorf("%s = %d, want %d", name, int64(got), w)
		}
	}
}

func TestAggregationsAndKeys(t *testing.T) {
	b := newTB("BEGIN {", "  aggs", "}")
	b.next()
	s64 := types.S64
	var stmts []lang.Stmt
	for i, v := range []int64{5, -3, 12, 0, 1000} {
		_ = i
		val := b.int(v, s64)
		stmts = append(stmts,
			b.assign(b.m("@c", types.Agg(types.Count, false), b.str("k")), "=", b.call("count", types.Agg(types.Count, false))),
			b.assign(b.m("@s", types.Agg(types.Sum, true)), "=", b.call("sum", types.Agg(types.Sum, true), val)),
			b.assign(b.m("@mn", types.Agg(types.Min, true)), "=", b.call("min", types.Agg(types.Min, true), val)),
			b.assign(b.m("@mx", types.Agg(types.Max, true)), "=", b.call("max", types.Agg(types.Max, true), val)),
			b.assign(b.m("@a", types.Agg(types.Avg, true)), "=", b.call("avg", types.Agg(types.Avg, true), val)),
			b.assign(b.m("@h", types.Agg(types.Hist, true)), "=", b.call("hist", types.Agg(types.Hist, true), val)),
			b.assign(b.m("@t", types.S64, b.int(1, s64), b.str("ab")), "=", val),
		)
	}
	lh := &types.Type{Kind: types.Lhist, Size: 8, Signed: true, Lhist: [3]int64{0, 100, 10}}
	stmts = append(stmts, b.assign(b.m("@l", lh), "=", b.call("lhist", lh, b.int(35, s64), b.int(0, s64), b.int(100, s64), b.int(10, s64))))
	spec := compileT(t, b.result(b.clause(attach("BEGIN", "BEGIN", "", ""), nil, stmts...)))
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	check := func(m string, key []byte, want int64) {
		t.Helper()
		got, ok := lookupU64(t, coll, spec, m, key)
		if !ok || int64(got) != want {
			t.Errorf("%s%v = %d (present %v), want %d", m, key, int64(got), ok, want)
		}
	}
	check("m_c", []byte("k\x00"), 5)
	check("m_s", u64key(0), 1014)
	check("m_mn", u64key(0), -3)
	check("m_mx", u64key(0), 1000)
	check("m_a", u64key(0), 5) // count in [0:8]
	// A key-less hist is a per-CPU array keyed by the u32 bucket index
	// (ABI.md): 5 → [4,8) index 4; -3 → 0; 12 → 5; 0 → 1; 1000 → 2+9.
	u32key := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	for _, bk := range []uint32{4, 0, 5, 1, 11} {
		check("m_h", u32key(bk), 1)
	}
	check("m_h", u32key(3), 0)
	check("m_l", u32key(4), 1) // 35 in [30,40): index 1+3
	// Two-part key (int64, string[3]) → tuple (8 + 3, padded to 16).
	key := make([]byte, 16)
	binary.LittleEndian.PutUint64(key, 1)
	copy(key[8:], "ab")
	check("m_t", key, 1000)
}

func TestGolden(t *testing.T) {
	t.Run("perf", func(t *testing.T) { testGolden(t, "testdata/count_by_pid.dump", true) })
	if runtime.GOARCH == "amd64" {
		t.Run("raw", func(t *testing.T) { testGolden(t, "testdata/count_by_pid_raw.dump", false) })
	}
}

func testGolden(t *testing.T, path string, perf bool) {
	b, p := countByPid()
	spec, err := Compile(b.result(p), Options{SyscallTracepoints: syscallMode(perf)})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, path, []byte(spec.Dump()))
}

// syscallMode is Options.SyscallTracepoints for a test of the perf path
// or of the raw one.
func syscallMode(perf bool) string {
	if perf {
		return "perf"
	}
	return "raw"
}
