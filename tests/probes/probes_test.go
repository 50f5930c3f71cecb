// Package probes_test runs the gotrace binary against the C helpers of
// testdata/helpers on the real kernel: uprobe, uretprobe and USDT probes
// counted exactly, -p and -c, wildcards over libc, the probe limit, the
// deny-list, and the kernel probe types this kernel cannot attach.
package probes_test

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// pending lists subtests kept but skipped until gotrace does what they
// check, each with what gotrace does instead. A pending test that passes
// fails, so the entry is removed when the feature lands.
var pending = map[string]string{}

func isPending(t *testing.T) (string, bool) {
	r, ok := pending[t.Name()]
	return r, ok
}

// check fails t with msg, or for a pending test only logs it and skips.
func check(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	reason, pend := isPending(t)
	switch {
	case ok && pend:
		t.Errorf("pending test passes now: remove %q from pending (%s)", t.Name(), reason)
	case !ok && pend:
		t.Skipf("pending: %s; got: %s", reason, fmt.Sprintf(format, args...))
	case !ok:
		t.Errorf(format, args...)
	}
}

func setup(t *testing.T) string {
	t.Helper()
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Go)
	return testkit.Gotrace(t)
}

// gt runs gotrace with args and a deadline.
func gt(t *testing.T, timeout time.Duration, env []string, args ...string) testkit.Result {
	t.Helper()
	cmd := exec.Command(testkit.Gotrace(t), args...)
	cmd.Env = append(cmd.Environ(), env...)
	r := testkit.RunBounded(t, timeout, cmd)
	if r.TimedOut {
		t.Fatalf("gotrace %q did not finish within %v:\nstdout:\n%s\nstderr:\n%s", args, timeout, r.Stdout, r.Stderr)
	}
	return r
}

// mapLines are the lines of out that print map entries ("@..."), in order.
func mapLines(out string) string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "@") {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, "\n")
}

// wantMaps checks a finished run exited 0 and printed exactly want as map lines.
func wantMaps(t *testing.T, r testkit.Result, want string) {
	t.Helper()
	if r.ExitCode != 0 {
		check(t, false, "exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
		return
	}
	got := mapLines(r.Stdout)
	check(t, got == want, "maps:\n%s\nwant:\n%s\nstderr:\n%s", got, want, r.Stderr)
}

// symAddr is the virtual address and size of function sym in path.
func symAddr(t *testing.T, path, sym string) (uint64, uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == sym && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Value, s.Size
		}
	}
	t.Fatalf("%s has no function %s", path, sym)
	return 0, 0
}

// secondInsn is the offset of target's second instruction, from objdump
// (a uprobe must sit on an instruction boundary).
func secondInsn(t *testing.T, path, sym string) int {
	t.Helper()
	addr, size := symAddr(t, path, sym)
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn",
		fmt.Sprintf("--start-address=0x%x", addr), fmt.Sprintf("--stop-address=0x%x", addr+size), path).Output()
	if err != nil {
		t.Skipf("objdump: %v", err)
	}
	re := regexp.MustCompile(`(?m)^\s+([0-9a-f]+):`)
	var offs []int
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		a, _ := strconv.ParseUint(m[1], 16, 64)
		offs = append(offs, int(a-addr))
	}
	if len(offs) < 2 {
		t.Fatalf("objdump shows fewer than 2 instructions in %s:\n%s", sym, out)
	}
	return offs[1]
}

const n = 1000

// libcPath is where the dynamic linker finds libc.so.6 (ldconfig's cache),
// the path bpftrace prints for uprobe:libc:FUNC.
func libcPath(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		t.Skipf("ldconfig -p: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		// "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6"
		if name, path, ok := strings.Cut(strings.TrimSpace(l), " => "); ok && strings.HasPrefix(name, "libc.so.6 ") && strings.Contains(name, "x86-64") {
			return path
		}
	}
	t.Skipf("ldconfig -p lists no x86-64 libc.so.6")
	return ""
}

// TestUprobe: -c traces the helper from its first instruction (no
// handshake): exact counts, arguments, return values and func.
func TestUprobe(t *testing.T) {
	setup(t)
	ufunc := testkit.Helper(t, "ufunc")
	cmd := fmt.Sprintf("%s %d", ufunc, n)
	off := secondInsn(t, ufunc, "target")
	addr, _ := symAddr(t, ufunc, "target")
	cases := []struct{ name, script, want string }{
		{"count", `uprobe:` + ufunc + `:target { @ = count(); }`, fmt.Sprintf("@: %d", n)},
		// target(k % 4, 0x100000000 + k % 4) for k < N.
		{"args", `uprobe:` + ufunc + `:target { @[arg0, arg1] = count(); }`,
			"@[0, 4294967296]: 250\n@[1, 4294967297]: 250\n@[2, 4294967298]: 250\n@[3, 4294967299]: 250"},
		// target returns 2a+1.
		{"retval", `uretprobe:` + ufunc + `:target { @[retval] = count(); }`,
			"@[1]: 250\n@[3]: 250\n@[5]: 250\n@[7]: 250"},
		{"retval-sum", `uretprobe:` + ufunc + `:target { @ = sum(retval); @n = count(); }`,
			fmt.Sprintf("@: %d\n@n: %d", 4000, n)},
		{"offset", fmt.Sprintf(`uprobe:%s:target+%d { @ = count(); }`, ufunc, off), fmt.Sprintf("@: %d", n)},
		{"address", fmt.Sprintf(`uprobe:%s:0x%x { @ = count(); }`, ufunc, addr), fmt.Sprintf("@: %d", n)},
		{"wildcard", `uprobe:` + ufunc + `:chain_* { @ = count(); }`, fmt.Sprintf("@: %d", 2*n)},
		{"probe", `uprobe:` + ufunc + `:target,uprobe:` + ufunc + `:greet { @[probe] = count(); }`,
			fmt.Sprintf("@[uprobe:%s:greet]: %d\n@[uprobe:%s:target]: %d", ufunc, n, ufunc, n)},
		// The expanded function's name, as bpftrace prints it.
		{"probe-wildcard", `uprobe:` + ufunc + `:targe* { @[probe] = count(); }`,
			fmt.Sprintf("@[uprobe:%s:target]: %d", ufunc, n)},
		// Several functions behind one link (uprobe_multi: a cookie per
		// address), next to a plain probe of the same clause and one of
		// another clause that shares a name with an expansion.
		{"probe-wildcard-many", `uprobe:` + ufunc + `:chain_*, uprobe:` + ufunc + `:greet { @[probe] = count(); } uretprobe:` + ufunc + `:chain* { @r[probe] = count(); } uprobe:` + ufunc + `:chain_b { @b[probe] = count(); }`,
			fmt.Sprintf("@[uprobe:%[1]s:chain_a]: %[2]d\n@[uprobe:%[1]s:chain_b]: %[2]d\n@[uprobe:%[1]s:greet]: %[2]d\n"+
				"@b[uprobe:%[1]s:chain_b]: %[2]d\n@r[uretprobe:%[1]s:chain_a]: %[2]d\n@r[uretprobe:%[1]s:chain_b]: %[2]d", ufunc, n)},
		// A library name is printed as the path it resolved to (strtoll,
		// an alias at strtol's address, is not probed twice).
		{"probe-library", `uprobe:libc:strtol { @[probe] = count(); } uretprobe:libc:strtol* { @r[probe] = count(); }`,
			fmt.Sprintf("@[uprobe:%[1]s:strtol]: 1\n@r[uretprobe:%[1]s:strtol]: 1", libcPath(t))},
		// Library names resolve like the dynamic linker: the helper calls
		// libc's strtol once (gt_count parses N).
		{"library", `uprobe:libc:strtol { @ = count(); }`, "@: 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := gt(t, 60*time.Second, nil, "-e", tc.script, "-c", cmd)
			wantMaps(t, r, tc.want)
		})
	}
}

// TestUprobeFunc: func is the traced function's name. It is resolved in
// the process's address space, so the helper runs long enough to outlive
// the printing of the first events.
func TestUprobeFunc(t *testing.T) {
	setup(t)
	ufunc := testkit.Helper(t, "ufunc")
	const runs = 50000
	r := gt(t, 60*time.Second, nil, "-e", `uprobe:`+ufunc+`:target,uprobe:`+ufunc+`:greet { if (@n < 4) { printf("%s\n", func); } @n++; }`,
		"-c", fmt.Sprintf("%s %d", ufunc, runs))
	want := fmt.Sprintf("Attaching 2 probes...\ntarget\ngreet\ntarget\ngreet\n\n\n@n: %d\n", 2*runs)
	got := r.Stdout
	if r.ExitCode != 0 || got != want {
		t.Errorf("exit %d, output %q, want %q; stderr:\n%s", r.ExitCode, got, want, r.Stderr)
	}
}

// TestUprobeLibc: uprobe:libc:FUNC counts the helper's libc calls: getpid
// N makes N syscall(2) calls through libc's syscall().
func TestUprobeLibc(t *testing.T) {
	setup(t)
	getpid := testkit.Helper(t, "getpid")
	r := gt(t, 60*time.Second, nil, "-e", `uprobe:libc:syscall { @ = count(); }`, "-c", fmt.Sprintf("%s %d", getpid, n))
	wantMaps(t, r, fmt.Sprintf("@: %d", n))
}

// TestUprobePID: -p counts only that process; a second instance of the
// same binary running at the same time is not counted.
func TestUprobePID(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	ufunc := testkit.Helper(t, "ufunc")
	a := testkit.StartHelper(t, "ufunc", strconv.Itoa(n))
	b := testkit.StartHelper(t, "ufunc", "300")
	tr := testkit.StartTracer(t, 60*time.Second, testkit.Gotrace(t), "-p", strconv.Itoa(a.Pid),
		"-e", `uprobe:`+ufunc+`:target { @ = count(); } uretprobe:`+ufunc+`:target { @r[retval] = count(); }`)
	b.Go()
	a.Go()
	for _, h := range []*testkit.HelperProc{a, b} {
		if r := h.Wait(30 * time.Second); r.ExitCode != 0 {
			t.Fatalf("helper: exit %d: %s", r.ExitCode, r.Stderr)
		}
	}
	// The traced process exited: gotrace -p ends by itself.
	r := tr.Wait(20 * time.Second)
	if r.TimedOut {
		r = tr.Stop(syscall.SIGINT, 10*time.Second)
		t.Errorf("gotrace -p did not exit when its process did")
	}
	wantMaps(t, r, fmt.Sprintf("@: %d\n@r[1]: 250\n@r[3]: 250\n@r[5]: 250\n@r[7]: 250", n))
}

// TestUSDT: USDT probes count exactly, with arguments and semaphores.
func TestUSDT(t *testing.T) {
	setup(t)
	testkit.Require(t, testkit.SDT)
	usdt := testkit.Helper(t, "usdt")
	cmd := fmt.Sprintf("%s %d", usdt, n)
	for _, tc := range []struct{ name, script, want string }{
		{"count", `usdt:` + usdt + `:gotrace:loop { @ = count(); }`, fmt.Sprintf("@: %d", n)},
		{"provider-wildcard", `usdt:` + usdt + `:gotrace:* { @[probe] = count(); }`, fmt.Sprintf("@[usdt:%[1]s:gotrace:fixed]: 1\n@[usdt:%[1]s:gotrace:memarg]: 1\n@[usdt:%[1]s:gotrace:guarded]: %[2]d\n@[usdt:%[1]s:gotrace:loop]: %[2]d", usdt, n)},
		{"args", `usdt:` + usdt + `:gotrace:fixed { printf("%d %d %s\n", arg0, arg1, str(arg2)); } usdt:` + usdt + `:gotrace:loop { @[arg0 % 4, str(arg1)] = count(); }`,
			"-42 200 gotrace\n@[0, hello]: 250\n@[1, hello]: 250\n@[2, hello]: 250\n@[3, hello]: 250"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gt(t, 60*time.Second, nil, "-e", tc.script, "-c", cmd)
			got := mapLines(r.Stdout)
			if tc.name == "args" {
				// printf lines come before the maps.
				for _, l := range strings.Split(r.Stdout, "\n") {
					if strings.HasPrefix(l, "-42") || strings.HasPrefix(l, "0 0") {
						got = l + "\n" + got
					}
				}
			}
			check(t, r.ExitCode == 0 && got == tc.want, "exit %d; got:\n%s\nwant:\n%s\nstderr:\n%s", r.ExitCode, got, tc.want, r.Stderr)
		})
	}
	// The semaphore is set only while a tracer is attached to the probe:
	// the helper counts the probe's firings itself.
	t.Run("semaphore", func(t *testing.T) {
		r := gt(t, 60*time.Second, nil, "-e", `usdt:`+usdt+`:gotrace:guarded { @ = count(); }`, "-c", cmd)
		wantMaps(t, r, fmt.Sprintf("@: %d", n))
		if !strings.Contains(r.Stdout, fmt.Sprintf("guarded %d\n", n)) {
			t.Errorf("helper did not see its semaphore set for all %d iterations:\n%s", n, r.Stdout)
		}
		r = gt(t, 60*time.Second, nil, "-e", `usdt:`+usdt+`:gotrace:loop { @ = count(); }`, "-c", cmd)
		if !strings.Contains(r.Stdout, "guarded 0\n") {
			t.Errorf("semaphore set without a probe on gotrace:guarded:\n%s", r.Stdout)
		}
	})
}

// TestUSDTPID: usdt:PROVIDER:NAME with -p finds the probe in the
// process's mapped files; the semaphore is set in that process. With -p the
// path may also be left empty, as in bpftrace: usdt::PROVIDER:NAME and
// usdt:::NAME (any provider).
func TestUSDTPID(t *testing.T) {
	setup(t)
	testkit.Require(t, testkit.SDT)
	for _, script := range []string{
		`usdt:gotrace:loop { @ = count(); } usdt:gotrace:guarded { @g = count(); }`,
		`usdt::gotrace:loop { @ = count(); } usdt::gotrace:guarded { @g = count(); }`,
		`usdt:::loop { @ = count(); } usdt:::gua*ed { @g = count(); }`,
	} {
		t.Run(script, func(t *testing.T) { testUSDTPID(t, script) })
	}
}

func testUSDTPID(t *testing.T, script string) {
	testkit.NoBPFLeaks(t)
	h := testkit.StartHelper(t, "usdt", strconv.Itoa(n))
	other := testkit.StartHelper(t, "usdt", "77")
	tr := testkit.StartTracer(t, 60*time.Second, testkit.Gotrace(t), "-p", strconv.Itoa(h.Pid), "-e", script)
	other.Go()
	h.Go()
	hr := h.Wait(30 * time.Second)
	or := other.Wait(30 * time.Second)
	r := tr.Wait(20 * time.Second)
	if r.TimedOut {
		t.Errorf("gotrace -p did not exit when its process did")
	}
	wantMaps(t, r, fmt.Sprintf("@: %d\n@g: %d", n, n))
	if !strings.Contains(hr.Stdout, fmt.Sprintf("guarded %d\n", n)) {
		t.Errorf("traced helper printed %q, want guarded %d", hr.Stdout, n)
	}
	if !strings.Contains(or.Stdout, "guarded 0\n") {
		t.Errorf("untraced helper printed %q: its semaphore was set", or.Stdout)
	}
}

// TestUprobeIFUNC: an IFUNC (glibc's strlen) is probed at the
// implementation this machine's dynamic linker picks, read from the GOT
// slot of libc's own IRELATIVE relocation in a live process; an IFUNC libc
// never calls itself (no such relocation) is probed on its resolver, as in
// bpftrace, with a warning; -l lists IFUNCs as bpftrace does.
func TestUprobeIFUNC(t *testing.T) {
	setup(t)
	libc := libcPath(t)
	f, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	// The resolvers libc's IRELATIVE relocations name (x86-64: type 37).
	irel := map[uint64]bool{}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || f.Machine != elf.EM_X86_64 {
			continue
		}
		d, _ := s.Data()
		for i := 0; i+24 <= len(d); i += 24 {
			if uint32(binary.LittleEndian.Uint64(d[i+8:])) == 37 {
				irel[binary.LittleEndian.Uint64(d[i+16:])] = true
			}
		}
	}
	f.Close()
	isIFUNC := map[string]bool{}
	unresolvable := ""
	for _, s := range syms {
		name, _, _ := strings.Cut(s.Name, "@")
		isIFUNC[name] = elf.ST_TYPE(s.Info) == elf.STT_GNU_IFUNC
		if isIFUNC[name] && !irel[s.Value] && (unresolvable == "" || name < unresolvable) {
			unresolvable = name
		}
	}
	if !isIFUNC["strlen"] || isIFUNC["strtol"] || len(irel) == 0 {
		t.Skipf("%s: strlen is not an IFUNC with an IRELATIVE relocation (or strtol is an IFUNC)", libc)
	}
	t.Run("resolved", func(t *testing.T) {
		r := gt(t, 30*time.Second, nil, "-e", `uprobe:libc:strlen { @ = count(); }`, "-c", "/bin/ls /")
		m := regexp.MustCompile(`(?m)^@: (\d+)$`).FindStringSubmatch(r.Stdout)
		if r.ExitCode != 0 || m == nil || m[1] == "0" {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant a count of strlen calls", r.ExitCode, r.Stdout, r.Stderr)
		}
	})
	t.Run("unresolvable", func(t *testing.T) {
		if unresolvable == "" {
			t.Skipf("every IFUNC of %s has an IRELATIVE relocation", libc)
		}
		// As bpftrace: the probe goes on the resolver, with one warning.
		script := `uprobe:libc:` + unresolvable + ` { @ = count(); }`
		r := gt(t, 30*time.Second, nil, "-e", script, "-c", "/bin/true")
		want := "WARNING: uprobe:libc:" + unresolvable + ": " + unresolvable + " is an IFUNC: the probe is on its resolver, which runs once per process, not on each call; "
		if r.ExitCode != 0 || strings.Count(r.Stderr, want) != 1 || strings.Count(r.Stderr, "WARNING") != 1 {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 0 and one warning line starting %q", r.ExitCode, r.Stderr, want)
		}
		testkit.Require(t, testkit.Bpftrace)
		b := testkit.RunBounded(t, 30*time.Second, exec.Command("bpftrace", "-e", script, "-c", "/bin/true"))
		if b.ExitCode != 0 {
			t.Errorf("bpftrace exited %d: %s", b.ExitCode, b.Stderr)
		}
	})
	// -l lists IFUNCs as bpftrace does, unmarked.
	r := gt(t, 30*time.Second, nil, "-l", "uprobe:libc:str*")
	for _, line := range []string{"uprobe:" + libc + ":strlen\n", "uprobe:" + libc + ":strtol\n"} {
		if !strings.Contains(r.Stdout, line) {
			t.Errorf("-l uprobe:libc:str* lacks %q:\n%s", line, r.Stdout)
		}
	}
}
