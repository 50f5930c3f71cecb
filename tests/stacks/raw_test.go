package stacks_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Raw mode (kstack(raw), ustack(raw)) prints each frame's address alone,
// as lowercase hex without 0x or zero padding, one per line, with no
// indentation: bpftrace's format (std::hex << addr, then a newline; raw
// mode came with bpftrace 0.18). bpftrace 0.17 does not know the mode
// ("Unknown identifier: 'raw'"), so the side-by-side checks compare the
// addresses with bpftrace's perf mode, which prints the same numbers
// ("\taddr sym+off").

var rawEntryRE = regexp.MustCompile(`^@[a-z]*\[(?:\n((?:[0-9a-f]+\n)*))?\]: N$`)

// rawAddrs parses a raw-mode entry's addresses, failing on any line that
// is not a bare hex address. An entry without a stack (bpf_get_stackid
// failed: a kstack taken in user mode) is "@[]: N", as bpftrace prints it.
func rawAddrs(t *testing.T, entry string) []uint64 {
	t.Helper()
	m := rawEntryRE.FindStringSubmatch(entry)
	if m == nil {
		t.Fatalf("raw stack entry is not bare hex addresses, one per line:\n%s", entry)
	}
	var as []uint64
	for _, l := range strings.Split(strings.TrimSuffix(m[1], "\n"), "\n") {
		if l == "" {
			continue
		}
		if len(l) > 1 && l[0] == '0' {
			t.Errorf("raw address %q is zero-padded", l)
		}
		a, err := strconv.ParseUint(l, 16, 64)
		if err != nil {
			t.Fatalf("raw address %q: %v", l, err)
		}
		as = append(as, a)
	}
	return as
}

var perfAddrRE = regexp.MustCompile(`(?m)^\t([0-9a-f]+) `)

// perfAddrs is the address column of a perf-mode entry.
func perfAddrs(entry string) []uint64 {
	var as []uint64
	for _, m := range perfAddrRE.FindAllStringSubmatch(entry, -1) {
		a, _ := strconv.ParseUint(m[1], 16, 64)
		as = append(as, a)
	}
	return as
}

func hexList(as []uint64) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = strconv.FormatUint(a, 16)
	}
	return strings.Join(s, " ")
}

// kernelText reports whether an address is kernel text by /proc/kallsyms:
// in the image's [_stext, _etext) or [_sinittext, _einittext) (the idle
// task on the boot CPU still runs from start_kernel, in init text), or
// inside a module's text (at or after a module text symbol and before the
// next symbol).
func kernelText(t *testing.T) func(uint64) bool {
	t.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type sym struct {
		addr   uint64
		module bool
		text   bool
	}
	var syms []sym
	var stext, etext, sinit, einit uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		switch fs[2] {
		case "_stext":
			stext = a
		case "_etext":
			etext = a
		case "_sinittext":
			sinit = a
		case "_einittext":
			einit = a
		}
		syms = append(syms, sym{a, len(fs) > 3 && strings.HasPrefix(fs[3], "["), strings.ContainsAny(fs[1], "tT")})
	}
	if stext == 0 || etext <= stext {
		t.Fatalf("/proc/kallsyms has no _stext/_etext (kptr_restrict?)")
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	return func(a uint64) bool {
		if a >= stext && a < etext || a >= sinit && a < einit {
			return true
		}
		i := sort.Search(len(syms), func(i int) bool { return syms[i].addr > a }) - 1
		return i >= 0 && syms[i].module && syms[i].text && i+1 < len(syms)
	}
}

// userText is the executable mappings of process pid, by /proc/PID/maps.
func userText(t *testing.T, pid int) func(uint64) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	type rng struct{ lo, hi uint64 }
	var rs []rng
	for _, l := range strings.Split(string(b), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 2 || !strings.Contains(fs[1], "x") {
			continue
		}
		lo, hi, ok := strings.Cut(fs[0], "-")
		if !ok {
			continue
		}
		a, _ := strconv.ParseUint(lo, 16, 64)
		z, _ := strconv.ParseUint(hi, 16, 64)
		rs = append(rs, rng{a, z})
	}
	return func(a uint64) bool {
		for _, r := range rs {
			if a >= r.lo && a < r.hi {
				return true
			}
		}
		return false
	}
}

// stackCounts maps each stack of map name in out (raw or perf mode) to
// its count, the stack given as its addresses (hexList).
func stackCounts(t *testing.T, out, name string) map[string]uint64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\[\n((?:[^\]\n][^\n]*\n)*)\]: ([0-9]+)$`)
	m := map[string]uint64{}
	for _, e := range re.FindAllStringSubmatch(out, -1) {
		var as []uint64
		if strings.HasPrefix(e[1], "\t") {
			as = perfAddrs(e[1])
		} else {
			as = rawAddrs(t, name+"[\n"+e[1]+"]: N")
		}
		n, _ := strconv.ParseUint(e[2], 10, 64)
		m[hexList(as)] += n
	}
	return m
}

func sameCounts(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// TestStackRawSyscall: kstack(raw) and ustack(raw) at the getpid loop's
// syscall tracepoint, keyed next to kstack(perf) and ustack(perf) of the
// same events: each raw key is the addresses of a perf key, innermost
// first, with the same count. Every kernel address is kernel text, every
// user address in an executable mapping of the helper. bpftrace tracing
// the same helper (perf mode) prints the same user stack and, among its
// kernel stacks, gotrace's. (The kernel stack is one stack unless other
// programs sit on sys_enter meanwhile: then __traceiter_sys_enter appears
// in some, in both tracers.)
func TestStackRawSyscall(t *testing.T) {
	requireTracing(t)
	h, o := traceHelperWith(t, true,
		`tracepoint:syscalls:sys_enter_getpid /pid == PID/ { @k[kstack(raw)] = count(); @kp[kstack(perf)] = count(); @u[ustack(raw)] = count(); @up[ustack(perf)] = count(); }
interval:ms:400 { exit(); }`,
		`tracepoint:syscalls:sys_enter_getpid /pid == PID/ { @kp[kstack(perf)] = count(); @up[ustack(perf)] = count(); }
interval:ms:400 { exit(); }`,
		"getpid", "1000000000")
	ks, us := mapEntries(o.gt, "@k"), mapEntries(o.gt, "@u")
	if len(ks) == 0 || len(us) != 1 {
		t.Fatalf("want kstack(raw) stacks and one ustack(raw), got:\n%s", o.gt)
	}
	isK := kernelText(t)
	for _, e := range ks {
		k := rawAddrs(t, e)
		if len(k) < 3 {
			t.Errorf("kstack(raw) has %d frames:\n%s", len(k), e)
		}
		for _, a := range k {
			if !isK(a) {
				t.Errorf("kstack(raw) address %x is not kernel text", a)
			}
		}
	}
	u := rawAddrs(t, us[0])
	if len(u) < 1 {
		t.Errorf("ustack(raw) is empty:\n%s", us[0])
	}
	isU := userText(t, h.Pid)
	for _, a := range u {
		if !isU(a) {
			t.Errorf("ustack(raw) address %x is not in an executable mapping of the helper", a)
		}
	}
	kraw, kperf := stackCounts(t, o.gt, "@k"), stackCounts(t, o.gt, "@kp")
	if !sameCounts(kraw, kperf) {
		t.Errorf("kstack(raw) stacks and counts %v, kstack(perf)'s %v", kraw, kperf)
	}
	uraw, uperf := stackCounts(t, o.gt, "@u"), stackCounts(t, o.gt, "@up")
	if !sameCounts(uraw, uperf) {
		t.Errorf("ustack(raw) stacks and counts %v, ustack(perf)'s %v", uraw, uperf)
	}
	if o.ranBpftrace {
		bk, common := stackCounts(t, o.bt, "@kp"), 0
		for s := range kraw {
			if _, ok := bk[s]; ok {
				common++
			}
		}
		if common == 0 {
			t.Errorf("no kstack(raw) stack of gotrace's is among bpftrace's kstack(perf) stacks\ngotrace:\n%s\nbpftrace:\n%s", o.gt, o.bt)
		}
		bu := stackCounts(t, o.bt, "@up")
		if _, ok := bu[hexList(u)]; !ok || len(bu) != 1 {
			t.Errorf("ustack(raw) %s, bpftrace's ustack(perf) stacks %v", hexList(u), bu)
		}
	}
}

// TestProfileKstackRaw: the audit's one-liner, `profile:hz:99 {
// @[kstack(raw)] = count(); }`, over the whole machine (a getpid loop keeps
// one CPU busy): every key is raw-format lines only, every address kernel
// text, and samples with a kernel stack are there. A sample taken in user
// mode has no kernel stack: its key is empty ("@[]: N", as bpftrace).
func TestProfileKstackRaw(t *testing.T) {
	requireTracing(t)
	_, o := traceHelper(t, false, true, `profile:hz:99 { @[kstack(raw)] = count(); }
interval:ms:700 { exit(); }`, "getpid", "1000000000")
	isK := kernelText(t)
	deep := 0
	for _, e := range mapEntries(o.gt, "@") {
		as := rawAddrs(t, e)
		for _, a := range as {
			if !isK(a) {
				t.Errorf("address %x is not kernel text in:\n%s", a, e)
			}
		}
		if len(as) >= 2 {
			deep++
		}
	}
	if deep == 0 {
		t.Errorf("no profile sample with a kernel stack of 2 frames or more:\n%s", o.gt)
	}
}
