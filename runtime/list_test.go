package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/ktypes"
)

func TestListSearchCharacters(t *testing.T) {
	var b strings.Builder
	err := ListWith(&b, ListOptions{Pattern: "\\n"})
	if err == nil || err.Error() != "invalid character '\\' in search expression" {
		t.Errorf("-l '\\n': %v", err)
	}
	if err := checkSearchChars("uprobe:./a-b/c_d.so:f*[0-9]"); err != nil {
		t.Errorf("valid pattern rejected: %v", err)
	}
}

func TestListUprobesByFile(t *testing.T) {
	const prog = "../ktypes/testdata/dwarf/prog"
	var b strings.Builder
	if err := ListWith(&b, ListOptions{Pattern: "uprobe:" + prog + ":function*", Verbose: true}); err != nil {
		t.Fatal(err)
	}
	want := "uprobe:" + prog + ":function1\n    int* n\n    char c\n" +
		"uprobe:" + prog + ":function2\n    struct Foo* foo1\n    struct Foo* foo2\n    myint k\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// A wildcard provider lists a path's uprobes too.
	b.Reset()
	if err := ListWith(&b, ListOptions{Pattern: "*:" + prog + ":function1"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "uprobe:"+prog+":function1\n") {
		t.Errorf("'*:PATH:function1' listed\n%s", b.String())
	}
}

func TestListUprobesByPID(t *testing.T) {
	// A dynamically linked child: its libc is mapped once it runs.
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep binary: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var libc string
	for i := 0; i < 100 && libc == ""; i++ {
		paths, err := ktypes.MappedExecutables(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.Contains(filepath.Base(p), "libc.so") {
				libc = p
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if libc == "" {
		t.Fatal("libc never mapped by sleep")
	}
	var b strings.Builder
	if err := ListWith(&b, ListOptions{Pattern: "uprobe:malloc", PID: cmd.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "uprobe:"+libc+":malloc\n" {
		t.Errorf("-p listing of uprobe:malloc:\n%s", b.String())
	}
	b.Reset()
	if err := ListWith(&b, ListOptions{Pattern: "tracepoint:*", PID: cmd.Process.Pid}); err != nil || b.Len() != 0 {
		t.Errorf("-p with a tracepoint pattern: %q %v", b.String(), err)
	}
}

// requireKernelLists skips (under CI: fails) without kernel BTF or the
// kernel's function list.
func requireKernelLists(t *testing.T) {
	t.Helper()
	_, berr := os.Stat(ktypes.DefaultBTFPath)
	_, kerr := kernelFuncs()
	if err := errors.Join(berr, kerr); err != nil {
		testkit.Skipf(t, "%v", err)
	}
}

// TestListKfuncs: kfunc listing spells MODULE:FUNC as bpftrace 0.17 does
// (as kfunc:, bpftrace 0.26 as fentry:), and -lv prints each argument's C
// type and name from BTF, then retval.
func TestListKfuncs(t *testing.T) {
	requireKernelLists(t)
	list := func(pattern string, verbose bool, v compat.Version) string {
		var b strings.Builder
		if err := ListWith(&b, ListOptions{Pattern: pattern, Verbose: verbose, Compat: v}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := list("kfunc:vfs_rea*", false, compat.V017)
	if !strings.HasPrefix(got, "kfunc:vmlinux:vfs_read\n") {
		t.Errorf("-l kfunc:vfs_rea*:\n%s", got)
	}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if !strings.HasPrefix(l, "kfunc:vmlinux:vfs_rea") {
			t.Errorf("-l kfunc:vfs_rea* lists %q", l)
		}
	}
	const args = "    struct file * file\n    char * buf\n    size_t count\n    loff_t * pos\n    ssize_t retval\n"
	for _, c := range []struct {
		pattern string
		v       compat.Version
		want    string
	}{
		{"kfunc:vfs_read", compat.V017, "kfunc:vmlinux:vfs_read\n" + args},
		{"kretfunc:vfs_read", compat.V017, "kretfunc:vmlinux:vfs_read\n" + args},
		{"fentry:vmlinux:vfs_read", compat.V017, "kfunc:vmlinux:vfs_read\n" + args},
		{"kfunc:vmlinux:vfs_rea", compat.V017, ""},
		// void: no retval line.
		{"kfunc:vmlinux:fput", compat.V017, "kfunc:vmlinux:fput\n    struct file * file\n"},
		// bpftrace 0.26 names them fentry/fexit, whichever spelling is asked.
		{"fentry:vmlinux:vfs_read", compat.V026, "fentry:vmlinux:vfs_read\n" + args},
		{"kfunc:vfs_read", compat.V026, "fentry:vmlinux:vfs_read\n" + args},
		{"fexit:vfs_read", compat.V026, "fexit:vmlinux:vfs_read\n" + args},
	} {
		if got := list(c.pattern, true, c.v); got != c.want {
			t.Errorf("-lv %s (%s):\n%s\nwant:\n%s", c.pattern, c.v, got, c.want)
		}
	}
}

// TestListTimersAndEvents: bpftrace 0.26 lists interval:/profile: by unit
// and a software/hardware event's alias as an entry of its own; 0.17
// lists no timers and no aliases.
func TestListTimersAndEvents(t *testing.T) {
	for _, c := range []struct {
		pattern string
		v       compat.Version
		want    string
	}{
		{"interval:*", compat.V026, "interval:hz:\ninterval:ms:\ninterval:s:\ninterval:us:\n"},
		{"profile:*", compat.V026, "profile:hz:\nprofile:ms:\nprofile:s:\nprofile:us:\n"},
		{"profile:m*", compat.V026, "profile:ms:\n"},
		{"interval:*", compat.V017, ""},
		{"software:cpu*", compat.V026, "software:cpu-clock:\nsoftware:cpu:\nsoftware:cpu-migrations:\n"},
		{"software:cpu*", compat.V017, "software:cpu-clock:\nsoftware:cpu-migrations:\n"},
		{"software:faults", compat.V026, "software:faults:\n"},
		{"hardware:cycles", compat.V026, "hardware:cycles:\n"},
	} {
		var b strings.Builder
		if err := ListWith(&b, ListOptions{Pattern: c.pattern, Compat: c.v}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("-l %s (%s):\n%s\nwant:\n%s", c.pattern, c.v, b.String(), c.want)
		}
	}
}

// TestListKprobes: kprobe names once each, without the kallsyms fallback's
// __pfx_ padding symbols, sorted; kretprobe lists the same functions.
func TestListKprobes(t *testing.T) {
	requireKernelLists(t)
	var b strings.Builder
	if err := List(&b, "kprobe:*", false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 1000 {
		t.Fatalf("-l kprobe:* lists %d functions", len(lines))
	}
	if !sort.StringsAreSorted(lines) {
		t.Error("-l kprobe:* is not sorted")
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "kprobe:") || strings.HasPrefix(l, "kprobe:__pfx_") || i > 0 && lines[i-1] == l {
			t.Fatalf("-l kprobe:* lists %q", l)
		}
	}
	b.Reset()
	if err := List(&b, "kr:vfs_rea*", false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "kretprobe:vfs_read\n") || strings.Contains(b.String(), "__pfx_") {
		t.Errorf("-l kr:vfs_rea*:\n%s", b.String())
	}
	// A wildcard provider expands over kprobe, not kretprobe.
	b.Reset()
	if err := List(&b, "k*:vfs_read", false); err != nil {
		t.Fatal(err)
	}
	want := "kprobe:vfs_read\n"
	if kfuncSupport() == nil {
		want = "kfunc:vmlinux:vfs_read\n" + want
	}
	if b.String() != want {
		t.Errorf("-l k*:vfs_read:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestListAll: -l with no pattern covers the kernel probe types in
// bpftrace 0.17's order: hardware, kfunc (where it can run), kprobe,
// software, tracepoint, each type's probes together; bpftrace 0.26 adds
// the raw tracepoints (its basic test "it lists rawtracepoints").
func TestListAll(t *testing.T) {
	requireKernelLists(t)
	if _, err := tracefsDir(); err != nil {
		testkit.Skipf(t, "%v", err)
	}
	for _, v := range []compat.Version{compat.V017, compat.V026} {
		t.Run(v.String(), func(t *testing.T) { testListAll(t, v) })
	}
}

func testListAll(t *testing.T, v compat.Version) {
	var b strings.Builder
	if err := ListWith(&b, ListOptions{Compat: v}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		k, _, _ := strings.Cut(l, ":")
		if len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	want := []string{"hardware", "kprobe", "software", "tracepoint"}
	if kfuncSupport() == nil {
		want = []string{"hardware", "kfunc", "kprobe", "software", "tracepoint"}
	}
	if v == compat.V026 {
		want = append(want, "rawtracepoint")
	}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("-l lists %v, want %v", kinds, want)
	}
	for _, l := range []string{"\nkprobe:vfs_read\n", "\ntracepoint:syscalls:sys_enter_openat\n", "\nsoftware:cpu-clock:\n"} {
		if !strings.Contains(b.String(), l) {
			t.Errorf("-l lacks %q", l[1:])
		}
	}
}

// TestCDecl: C declarations of BTF types as libbpf's btf_dump prints them,
// its spacing included ("char * (*)(...)" for a function pointer returning
// a pointer, "char(*)[16]" for an abstract pointer to an array).
func TestCDecl(t *testing.T) {
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	intT := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	file := &btf.Struct{Name: "file"}
	attr := &btf.Struct{Name: "attribute"}
	ptr := func(t btf.Type) btf.Type { return &btf.Pointer{Target: t} }
	cnst := func(t btf.Type) btf.Type { return &btf.Const{Type: t} }
	void := &btf.Void{}
	for _, c := range []struct {
		t    btf.Type
		name string
		want string
	}{
		{intT, "", "int"},
		{intT, "x", "int x"},
		{ptr(file), "", "struct file *"},
		{ptr(ptr(char)), "", "char **"},
		{ptr(ptr(char)), "argv", "char **argv"},
		{ptr(cnst(char)), "", "const char *"},
		{cnst(ptr(char)), "", "char * const"},
		{ptr(cnst(ptr(cnst(attr)))), "", "const struct attribute * const *"},
		{ptr(void), "", "void *"},
		{ptr(cnst(void)), "", "const void *"},
		{&btf.Typedef{Name: "size_t", Type: intT}, "", "size_t"},
		{ptr(&btf.Volatile{Type: intT}), "", "volatile int *"},
		{&btf.Enum{Name: "bpf_cmd", Size: 4}, "", "enum bpf_cmd"},
		{ptr(&btf.Union{Name: "u"}), "", "union u *"},
		{ptr(&btf.Fwd{Name: "f", Kind: btf.FwdUnion}), "", "union f *"},
		{ptr(&btf.Struct{}), "", "struct {...} *"},
		{ptr(&btf.FuncProto{Return: intT, Params: []btf.FuncParam{{Type: ptr(void)}}}), "", "int (*)(void *)"},
		{ptr(&btf.FuncProto{Return: intT, Params: []btf.FuncParam{{Type: ptr(void)}}}), "fn", "int (*fn)(void *)"},
		{ptr(&btf.FuncProto{Return: void}), "", "void (*)(void)"},
		{ptr(&btf.FuncProto{Return: ptr(char), Params: []btf.FuncParam{{Name: "fmt", Type: ptr(cnst(char))}, {Type: void}}}), "", "char * (*)(const char *fmt, ...)"},
		{ptr(&btf.Array{Type: char, Nelems: 16}), "", "char(*)[16]"},
		{ptr(&btf.Array{Type: char, Nelems: 16}), "p", "char (*p)[16]"},
		{&btf.Array{Type: intT, Nelems: 4}, "a", "int a[4]"},
		{ptr(&btf.TypeTag{Value: "user", Type: char}), "", "char __attribute__((btf_type_tag(\"user\"))) *"},
	} {
		if got := cDecl(c.t, c.name); got != c.want {
			t.Errorf("cDecl(%v, %q) = %q, want %q", c.t, c.name, got, c.want)
		}
	}
}

// TestListUSDTByFileAndPID: usdt listing spells a file as the pattern does (./bin,
// each match of ./bin* so), matches an empty provider part as any, and
// with -p lists the probes of every file the process maps (after its
// uprobes when no pattern is given).
func TestListUSDTByFileAndPID(t *testing.T) {
	testkit.Require(t, testkit.SDT)
	bin := testkit.Helper(t, "usdt")
	probes, err := ktypes.USDTProbes(bin, 0)
	if err != nil || len(probes) == 0 {
		t.Fatalf("probes of the helper: %v %v", probes, err)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"usdtA", "usdtB"} {
		testkit.WriteExecutable(t, filepath.Join(dir, n), data)
	}
	t.Chdir(dir)
	var all, loopAB strings.Builder
	for _, p := range probes {
		fmt.Fprintf(&all, "usdt:./usdtA:%s:%s\n", p.Provider, p.Name)
	}
	for _, f := range []string{"./usdtA", "./usdtB"} {
		fmt.Fprintf(&loopAB, "usdt:%s:gotrace:loop\n", f)
	}
	list := func(o ListOptions) string {
		var b strings.Builder
		if err := ListWith(&b, o); err != nil {
			t.Fatalf("-l %s: %v", o.Pattern, err)
		}
		return b.String()
	}
	for _, c := range []struct{ pattern, want string }{
		{"usdt:./usdtA:*", all.String()},
		{"usdt:./usdtA", all.String()},
		{"usdt:./usdtA:gotrace:loop", "usdt:./usdtA:gotrace:loop\n"},
		{"usdt:./usdtA::loop", "usdt:./usdtA:gotrace:loop\n"},
		{"usdt:./usdtA:nosuch:loop", ""},
		{"usdt:./usdt*:gotrace:loop", loopAB.String()},
	} {
		if got := list(ListOptions{Pattern: c.pattern}); got != c.want {
			t.Errorf("-l %s:\n%s\nwant:\n%s", c.pattern, got, c.want)
		}
	}

	h := testkit.StartHelper(t, "usdt", "1")
	defer h.Go()
	want := fmt.Sprintf("usdt:%s:gotrace:loop\n", bin)
	if got := list(ListOptions{Pattern: "usdt:*:gotrace:loop", PID: h.Pid}); got != want {
		t.Errorf("-l usdt:*:gotrace:loop -p PID:\n%s\nwant:\n%s", got, want)
	}
	got := list(ListOptions{PID: h.Pid})
	if !strings.Contains(got, "\n"+want) || !strings.HasPrefix(got, "uprobe:") {
		t.Errorf("-l -p PID lists no uprobes first or not %q:\n%s", want, got)
	}
}
