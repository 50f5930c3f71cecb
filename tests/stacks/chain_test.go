package stacks_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/testkit"
)

// elfFuncs is a helper binary's function symbols and the bytes of each.
type elfFuncs struct {
	addr map[string]uint64
	code map[string][]byte
}

func readFuncs(t *testing.T, bin string, names ...string) elfFuncs {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	fs := elfFuncs{addr: map[string]uint64{}, code: map[string][]byte{}}
	for _, name := range names {
		for _, s := range syms {
			if s.Name != name || elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
				continue
			}
			if int(s.Section) >= len(f.Sections) {
				t.Fatalf("%s: %s in no section", bin, name)
			}
			sec := f.Sections[s.Section]
			data, err := sec.Data()
			if err != nil {
				t.Fatal(err)
			}
			lo := s.Value - sec.Addr
			fs.addr[name], fs.code[name] = s.Value, data[lo:lo+s.Size]
		}
		if fs.code[name] == nil {
			t.Fatalf("%s has no function %s", bin, name)
		}
	}
	return fs
}

// afterPrologue is the offset in code of the first instruction after the
// frame setup, an optional endbr64 then push %rbp; mov %rsp,%rbp. The
// uchain helper's functions start so (gcc -O2 -fno-omit-frame-pointer,
// nothing scheduled into the prologue); anything else fails the test.
func afterPrologue(t *testing.T, name string, code []byte) int {
	t.Helper()
	off := 0
	if bytes.HasPrefix(code, []byte{0xf3, 0x0f, 0x1e, 0xfa}) { // endbr64
		off = 4
	}
	if !bytes.HasPrefix(code[off:], []byte{0x55, 0x48, 0x89, 0xe5}) { // push %rbp; mov %rsp,%rbp
		t.Fatalf("%s does not start with push %%rbp; mov %%rsp,%%rbp: % x", name, code[:min(len(code), 16)])
	}
	return off + 4
}

// callReturn is the offset in caller's code just past its call
// (e8 rel32) to callee: the return address a stack walk shows for caller.
func callReturn(t *testing.T, fs elfFuncs, caller, callee string) uint64 {
	t.Helper()
	code := fs.code[caller]
	for i := 0; i+5 <= len(code); i++ {
		if code[i] != 0xe8 {
			continue
		}
		next := fs.addr[caller] + uint64(i+5)
		rel := int32(binary.LittleEndian.Uint32(code[i+1:]))
		if uint64(int64(next)+int64(rel)) == fs.addr[callee] {
			return uint64(i + 5)
		}
	}
	t.Fatalf("%s has no call to %s", caller, callee)
	return 0
}

// TestUstackChainAfterPrologue is the acceptance's known chain: the uchain
// helper calls main → chain_a → chain_b → target, each with a frame. A
// uprobe past target's prologue (target+OFF, OFF read from the ELF) sees
// %rbp at target's own frame, so the frame-pointer walk prints the whole
// chain, innermost first: target+OFF, chain_b, chain_a, main (each at the
// return address after its call, found in the ELF), then libc's start
// code; ustack(perf) prints the same with addresses and the binary.
// (bpftrace 0.17 as packaged here has no uprobe offset support: "Can't
// check if uprobe is in proper place"; the side-by-side check is at +0
// below.)
func TestUstackChainAfterPrologue(t *testing.T) {
	requireTracing(t)
	bin := testkit.Helper(t, "uchain")
	fs := readFuncs(t, bin, "target", "chain_b", "chain_a", "main")
	off := afterPrologue(t, "target", fs.code["target"])
	want := []string{
		fmt.Sprintf("target+%d", off),
		fmt.Sprintf("chain_b+%d", callReturn(t, fs, "chain_b", "target")),
		fmt.Sprintf("chain_a+%d", callReturn(t, fs, "chain_a", "chain_b")),
		fmt.Sprintf("main+%d", callReturn(t, fs, "main", "chain_a")),
	}
	// Exit on the 200th hit, not after a time: on a loaded machine the
	// helper may not run much in a short interval.
	_, o := traceHelper(t, false, true, fmt.Sprintf(`uprobe:BIN:target+%d /pid == PID/ { @[ustack] = count(); @p[ustack(perf)] = count(); @n++; if (@n == 200) { exit(); } }`, off), "uchain", "100000000000")

	es := mapEntries(o.gt, "@")
	if len(es) != 1 {
		t.Fatalf("want one ustack, got:\n%s", o.gt)
	}
	prefix := "@[\n    " + strings.Join(want, "\n    ") + "\n"
	if !strings.HasPrefix(es[0], prefix) {
		t.Errorf("ustack at target+%d:\n%s\nwant it to start with\n%s", off, es[0], prefix)
	}
	// The rest is libc's start code (__libc_start_call_main, ...).
	frames := stackFrames(t, es[0])
	if len(frames) < 5 || strings.Contains(strings.Join(frames[4:], " "), "chain_") {
		t.Errorf("ustack below main = %v, want libc's start code only", frames)
	}

	perf := mapEntries(o.gt, "@p")
	if len(perf) != 1 {
		t.Fatalf("want one ustack(perf), got:\n%s", o.gt)
	}
	var re strings.Builder
	re.WriteString(`^@p\[\n`)
	for _, w := range want {
		name, o, _ := strings.Cut(w, "+")
		n, _ := strconv.ParseUint(o, 10, 64)
		re.WriteString(`\t` + strconv.FormatUint(fs.addr[name]+n, 16) + ` ` + regexp.QuoteMeta(w) + ` \(` + regexp.QuoteMeta(bin) + `\)\n`)
	}
	if !regexp.MustCompile(re.String()).MatchString(perf[0]) {
		t.Errorf("ustack(perf):\n%s\nwant to match %s", perf[0], re.String())
	}
}

// TestUstackChainEntry: the same helper probed at target's first
// instruction, side by side with bpftrace: both print the same stack. There
// %rbp is still chain_b's frame; whether chain_b shows depends on the
// kernel, not the tracer (6.18 here adds the return address at [sp] for a
// uprobe on a function's push %rbp, older kernels skip chain_b), so only
// the outer frames are fixed: target+0 first, chain_a and main after.
func TestUstackChainEntry(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, true, true, `uprobe:BIN:target /pid == PID/ { @[ustack] = count(); @n++; if (@n == 200) { exit(); } }`, "uchain", "100000000000")
	es := mapEntries(o.gt, "@")
	if len(es) != 1 {
		t.Fatalf("want one ustack, got:\n%s", o.gt)
	}
	frames := stackFrames(t, es[0])
	if len(frames) < 3 || frames[0] != "target" || !strings.HasPrefix(es[0], "@[\n    target+0\n") {
		t.Fatalf("ustack at target+0:\n%s", es[0])
	}
	rest := strings.Join(frames[1:], " ")
	if !strings.HasPrefix(rest, "chain_b chain_a main ") && !strings.HasPrefix(rest, "chain_a main ") {
		t.Errorf("ustack at target+0 = %v, want target, [chain_b,] chain_a, main", frames)
	}
	// @n goes past 200 by the hits before each tracer stops: compare @.
	if b := mapEntries(o.bt, "@"); o.ranBpftrace && strings.Join(b, "\n") != es[0] {
		t.Errorf("gotrace and bpftrace differ\ngotrace:\n%s\nbpftrace:\n%s", es[0], strings.Join(b, "\n"))
	}
}
