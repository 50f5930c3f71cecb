package sym

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/runtime/output"
)

// TestStacksLikeBpftrace lets bpftrace print the kernel and user stacks
// of a helper's getpid in perf mode (address, then sym+off) and resolves
// the same addresses here: every frame must read the same.
func TestStacksLikeBpftrace(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.GCC, testkit.Bpftrace)
	bin := build(t, t.TempDir(), "chainbt", "gcc", chainC, "-O0", "-fno-omit-frame-pointer", "-fPIE", "-pie")
	p := start(t, bin)
	script := fmt.Sprintf(`tracepoint:raw_syscalls:sys_enter /pid == %d && args->id == %d/ { print(kstack(perf)); print(ustack(perf)); exit(); }`,
		p.pid(), syscall.SYS_GETPID)
	tr := testkit.StartTracer(t, 30*time.Second, "bpftrace", "-e", script)
	s := New(Options{})
	s.Snapshot(p.pid())
	if _, err := p.stdin.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	res := tr.Wait(20 * time.Second)
	if res.TimedOut {
		t.Fatalf("bpftrace did not exit: %+v", res)
	}
	stdout, _ := tr.Output()
	// Stacks are runs of tab-indented lines.
	var blocks []string
	cur := ""
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "\t") {
			cur += line + "\n"
		} else if cur != "" {
			blocks, cur = append(blocks, cur), ""
		}
	}
	if len(blocks) < 2 {
		t.Fatalf("bpftrace printed %q", stdout)
	}
	k, err := s.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	compare := func(which, block string, resolve func(uint64) output.Frame) int {
		n := 0
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			hex, want, _ := strings.Cut(line, " ")
			addr, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Errorf("%s: bpftrace line %q", which, line)
				continue
			}
			f := resolve(addr)
			got := output.UnknownAddr(addr)
			if f.Sym != "" {
				got = f.Sym + "+" + strconv.FormatUint(f.Offset, 10)
			}
			if which == "ustack" {
				mod := f.Module
				if mod == "" {
					mod = "[unknown]"
				}
				got += " (" + mod + ")"
			}
			// bpftrace read kallsyms after loading its program, as we do
			// here; the program's own frame is the only one allowed to
			// differ (its name embeds a tag).
			if got != want && !strings.HasPrefix(want, "bpf_prog_") {
				t.Errorf("%s frame %#x: got %q, bpftrace %q", which, addr, got, want)
			}
			n++
		}
		return n
	}
	nk := compare("kstack", blocks[0], func(a uint64) output.Frame {
		f := output.Frame{Addr: a}
		if name, off, _, ok := k.Lookup(a); ok {
			f.Sym, f.Offset = name, off
		}
		return f
	})
	nu := compare("ustack", blocks[1], func(a uint64) output.Frame { return s.UserFrame(p.pid(), a) })
	if nk < 3 || nu < 4 {
		t.Errorf("too few frames compared (kernel %d, user %d):\n%s", nk, nu, stdout)
	}
	t.Logf("bpftrace:\n%s", stdout)
}
