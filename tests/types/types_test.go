// Package types_test checks gotrace's types end to end on the real kernel:
// kernel structs through BTF (curtask), tracepoint arguments from format
// files, structs declared in the script read from a traced program, casts,
// sizeof/offsetof against BTF and gcc, integer widths, strings and buffers,
// and the errors for unknown fields and types.
//
// Each test builds cmd/gotrace once (testkit.Gotrace), traces the C helpers
// of testdata/helpers filtered by their pid, and compares exact output. A
// missing capability skips the test, or fails it in CI (testkit.Require).
//
// The plain script-and-output cases (curtask, strings, integer widths,
// casts, pointer arithmetic, type errors...) are in
// testdata/runtime/types.txt, run by tests/runtime; the tests here need Go
// (temp files, gcc and BTF layouts, environment variations).
package types_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"
	"github.com/gotrace/gotrace/internal/testkit"
)

// requireTracing makes a test need what a real trace needs.
func requireTracing(t *testing.T, more ...testkit.Capability) {
	t.Helper()
	testkit.Require(t, append([]testkit.Capability{testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Go}, more...)...)
}

// body is a tracer's stdout without the "Attaching N probes..." line and
// the blank lines gotrace prints before its (here empty) maps at exit.
func body(out string) string {
	if strings.HasPrefix(out, "Attaching ") {
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return strings.TrimRight(out, "\n") + "\n"
}

func checkNoCrash(t *testing.T, r testkit.Result) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:"} {
		if strings.Contains(r.Stderr, s) {
			t.Fatalf("gotrace crashed (%q on stderr):\n%s", s, r.Stderr)
		}
	}
}

// trace runs script against helper (started with args, held until the
// tracer is attached); the script filters on $1, the helper's pid. When
// exits is true the script ends itself with exit() (run the helper for a
// single hit: gotrace still prints events that follow an exit() in the
// ring buffer, which bpftrace drops), else the tracer is stopped with
// SIGINT once the helper is done. It returns the tracer's
// result and the helper's pid.
func trace(t *testing.T, script string, exits bool, helper string, args ...string) (testkit.Result, int) {
	t.Helper()
	h := testkit.StartHelper(t, helper, args...)
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "-e", script, fmt.Sprint(h.Pid))
	h.Go()
	if hr := h.Wait(20 * time.Second); hr.ExitCode != 0 {
		t.Fatalf("helper %s exited %d: %s", helper, hr.ExitCode, hr.Stderr)
	}
	var r testkit.Result
	if exits {
		r = tr.Wait(10 * time.Second)
		if r.TimedOut {
			t.Errorf("gotrace did not exit after exit(); stderr:\n%s", r.Stderr)
		}
	} else {
		time.Sleep(150 * time.Millisecond) // let the ring buffer drain
		r = tr.Stop(syscall.SIGINT, 10*time.Second)
	}
	checkNoCrash(t, r)
	if r.ExitCode != 0 {
		t.Errorf("gotrace exited %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return r, h.Pid
}

// run runs a script that ends by itself (BEGIN ... exit()).
func run(t *testing.T, env []string, args ...string) testkit.Result {
	t.Helper()
	cmd := exec.Command(testkit.Gotrace(t), args...)
	cmd.Env = append(os.Environ(), env...)
	r := testkit.RunBounded(t, 30*time.Second, cmd)
	if r.TimedOut {
		t.Fatalf("gotrace %q timed out:\nstdout:\n%s\nstderr:\n%s", args, r.Stdout, r.Stderr)
	}
	checkNoCrash(t, r)
	return r
}

// runOK runs a self-ending script and wants exit 0.
func runOK(t *testing.T, script string) string {
	t.Helper()
	r := run(t, nil, "-e", script)
	if r.ExitCode != 0 {
		t.Fatalf("gotrace exited %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return body(r.Stdout)
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n--- got\n%s--- want\n%s", what, got, want)
	}
}

// shortDir is a temp dir with a short path, so traced paths stay under the
// default 64-byte string length.
func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "gtty")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestOpenatFilenames: str(args->filename) (a user pointer in the
// tracepoint's format file) shows exactly the paths the helper opens, in
// order, including ones that do not exist.
func TestOpenatFilenames(t *testing.T) {
	requireTracing(t)
	dir := shortDir(t)
	paths := []string{filepath.Join(dir, "a"), filepath.Join(dir, "missing"), "/etc/hostname", filepath.Join(dir, "b c")}
	for _, p := range []string{paths[0], paths[3]} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const n = 10
	r, _ := trace(t, `tracepoint:syscalls:sys_enter_openat /pid == $1/ { printf("%s\n", str(args->filename)); }`,
		false, "openat", append([]string{fmt.Sprint(n)}, paths...)...)
	var want strings.Builder
	for i := 0; i < n; i++ {
		want.WriteString(paths[i%len(paths)] + "\n")
	}
	expect(t, "opened paths", body(r.Stdout), want.String())
}

// longPath is a path of about 700 bytes that does not exist (openat fails
// with ENOENT, after the tracepoint saw the name).
func longPath(dir string) string {
	p := dir
	for i := 0; i < 6; i++ {
		p += "/" + strings.Repeat(string(rune('a'+i)), 110)
	}
	return p + "/end"
}

// TestStrlen: the maximum string length follows GOTRACE_STRLEN and
// BPFTRACE_STRLEN (default 64, NUL included); values far above the 512-byte
// BPF stack work (the compiler uses per-CPU scratch space); str(p, n)
// keeps n bytes, as bpftrace 0.17 does.
func TestStrlen(t *testing.T) {
	requireTracing(t)
	dir := shortDir(t)
	long := longPath(dir)
	script := `tracepoint:syscalls:sys_enter_openat /pid == $1/ { printf("%s\n%s\n", str(args->filename), str(args->filename, 10)); @[str(args->filename)] = count(); }`
	for _, c := range []struct {
		env  string
		keep int
	}{
		{"", 63},
		{"GOTRACE_STRLEN=200", 199},
		{"BPFTRACE_STRLEN=200", 199},
		{"GOTRACE_STRLEN=1024", len(long)},
		{"BPFTRACE_STRLEN=1024", len(long)},
	} {
		name := c.env
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			for _, v := range []string{"GOTRACE_STRLEN", "BPFTRACE_STRLEN"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			if k, v, ok := strings.Cut(c.env, "="); ok {
				t.Setenv(k, v)
			}
			r, _ := trace(t, script, false, "openat", "2", long)
			s := long[:c.keep]
			want := fmt.Sprintf("%s\n%s\n%s\n%s\n\n\n@[%s]: 2\n", s, long[:10], s, long[:10], s)
			expect(t, "long path", strings.TrimPrefix(r.Stdout, "Attaching 1 probe...\n"), want)
		})
	}
}

// The declarations of TestScriptLayout, laid out by gotrace and by gcc.
const layoutDecls = `struct point { int x; long y; char name[8]; };
struct bits { unsigned int a:3, b:5; unsigned char c; short d[3]; };
struct nest { char tag; struct point p; union { int i; char c[5]; } u; long tail; };
struct __attribute__((packed)) pk { char c; int i; long l; };
`

var layoutFields = [][2]string{
	{"point", "y"}, {"point", "name"}, {"bits", "c"}, {"bits", "d"},
	{"nest", "p"}, {"nest", "u"}, {"nest", "tail"}, {"pk", "i"}, {"pk", "l"},
}

// TestScriptLayout: sizeof and offsetof of script structs (padding,
// bitfields, nesting, unions, packed) equal gcc's for the same text.
func TestScriptLayout(t *testing.T) {
	requireTracing(t)
	names := []string{"point", "bits", "nest", "pk"}
	var script, csrc strings.Builder
	script.WriteString(layoutDecls)
	script.WriteString("BEGIN {\n")
	csrc.WriteString("#include <stdio.h>\n#include <stddef.h>\n" + layoutDecls + "int main(void) {\n")
	for _, n := range names {
		fmt.Fprintf(&script, "\tprintf(\"sizeof %s %%d\\n\", sizeof(struct %s));\n", n, n)
		fmt.Fprintf(&csrc, "\tprintf(\"sizeof %s %%d\\n\", (int)sizeof(struct %s));\n", n, n)
	}
	for _, f := range layoutFields {
		fmt.Fprintf(&script, "\tprintf(\"offsetof %s.%s %%d\\n\", offsetof(struct %s, %s));\n", f[0], f[1], f[0], f[1])
		fmt.Fprintf(&csrc, "\tprintf(\"offsetof %s.%s %%d\\n\", (int)offsetof(struct %s, %s));\n", f[0], f[1], f[0], f[1])
	}
	script.WriteString("\texit();\n}\n")
	csrc.WriteString("\treturn 0;\n}\n")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "l.c"), []byte(csrc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-o", filepath.Join(dir, "l"), filepath.Join(dir, "l.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	want, err := exec.Command(filepath.Join(dir, "l")).Output()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "layout (gotrace vs gcc)", runOK(t, script.String()), string(want))
}

// TestKernelLayout: sizeof/offsetof of kernel structs equal what BTF says,
// read here with cilium/ebpf's btf package.
func TestKernelLayout(t *testing.T) {
	requireTracing(t, testkit.BTF)
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatalf("loading kernel BTF: %v", err)
	}
	type q struct{ typ, field string }
	queries := []q{{"task_struct", "pid"}, {"task_struct", "tgid"}, {"task_struct", "comm"},
		{"task_struct", "real_parent"}, {"sock_common", "skc_dport"}, {"file", "f_inode"}, {"inode", "i_ino"}}
	var script, want strings.Builder
	script.WriteString("BEGIN {\n")
	seen := map[string]bool{}
	for _, qq := range queries {
		var s *btf.Struct
		if err := spec.TypeByName(qq.typ, &s); err != nil {
			t.Fatalf("BTF: struct %s: %v", qq.typ, err)
		}
		if !seen[qq.typ] {
			seen[qq.typ] = true
			fmt.Fprintf(&script, "\tprintf(\"sizeof %s %%d\\n\", sizeof(struct %s));\n", qq.typ, qq.typ)
			fmt.Fprintf(&want, "sizeof %s %d\n", qq.typ, s.Size)
		}
		off, ok := memberOffset(s, qq.field)
		if !ok {
			t.Fatalf("BTF: struct %s has no member %s", qq.typ, qq.field)
		}
		fmt.Fprintf(&script, "\tprintf(\"offsetof %s.%s %%d\\n\", offsetof(struct %s, %s));\n", qq.typ, qq.field, qq.typ, qq.field)
		fmt.Fprintf(&want, "offsetof %s.%s %d\n", qq.typ, qq.field, off)
	}
	script.WriteString("\texit();\n}\n")
	expect(t, "kernel layout (gotrace vs BTF)", runOK(t, script.String()), want.String())
}

// memberOffset finds a member by name, also inside anonymous members, in
// bytes.
func memberOffset(s btf.Type, name string) (int, bool) {
	var members []btf.Member
	switch x := s.(type) {
	case *btf.Struct:
		members = x.Members
	case *btf.Union:
		members = x.Members
	default:
		return 0, false
	}
	for _, m := range members {
		if m.Name == name {
			return int(m.Offset.Bytes()), true
		}
		if m.Name == "" {
			if off, ok := memberOffset(btf.UnderlyingType(m.Type), name); ok {
				return int(m.Offset.Bytes()) + off, true
			}
		}
	}
	return 0, false
}
