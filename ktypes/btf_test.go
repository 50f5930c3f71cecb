package ktypes

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gotrace/gotrace/ktypes/internal/btfdump"
	"github.com/gotrace/gotrace/lang/types"
)

const fixtureBTF = "testdata/vmlinux-subset.btf"

func fixtureResolver(decls ...string) *Sources {
	return New(Options{BTFPath: fixtureBTF, TracefsDir: fixtureTracefs, CDecls: decls, Arch: "x86_64"})
}

func TestBTFFixture(t *testing.T) {
	r := fixtureResolver()
	if r.BTFLoaded() {
		t.Fatal("BTF loaded before any lookup")
	}
	task, err := r.Type("struct task_struct")
	if err != nil {
		t.Fatal(err)
	}
	if !r.BTFLoaded() {
		t.Error("BTFLoaded false after a BTF lookup")
	}
	for _, tc := range []struct {
		name, typ string
		off       int
	}{
		{"pid", "int32", 1264}, {"tgid", "int32", 1268}, {"comm", "string[16]", 1752},
		{"real_parent", "struct task_struct *", 1280}, {"__state", "uint32", 24},
	} {
		f, ok := task.Field(tc.name)
		if !ok || f.Type.String() != tc.typ || f.Offset != tc.off {
			t.Errorf("task_struct.%s: %v %s @%d, want %s @%d", tc.name, ok, f.Type, f.Offset, tc.typ, tc.off)
		}
	}
	if task.Size != 3264 {
		t.Errorf("task_struct size %d", task.Size)
	}
	// Pointers to records are stubs, completed by name.
	rp, _ := task.Field("real_parent")
	if !IsStub(rp.Type.Elem) || rp.Type.Space != types.AddrKernel {
		t.Errorf("real_parent elem not a kernel stub: %+v", rp.Type)
	}
	full, err := Complete(r, rp.Type.Elem)
	if err != nil || full.Size != 3264 {
		t.Errorf("Complete: %v %v", full, err)
	}
	// A forward declaration stays incomplete.
	mm, _ := task.Field("mm")
	if _, err := Complete(r, mm.Type.Elem); err == nil {
		t.Errorf("struct mm_struct is only declared in the fixture, Complete succeeded")
	}

	sc, err := r.Type("struct sock_common")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name              string
		off, bitOff, bits int
	}{
		{"skc_daddr", 0, 0, 0}, {"skc_rcv_saddr", 4, 0, 0}, {"skc_dport", 12, 0, 0}, {"skc_num", 14, 0, 0},
		{"skc_family", 16, 0, 0}, {"skc_reuse", 19, 0, 4}, {"skc_reuseport", 19, 4, 1}, {"skc_bound_dev_if", 20, 0, 0},
	} {
		f, ok := sc.Field(tc.name)
		if !ok || f.Offset != tc.off || f.BitOff != tc.bitOff || f.BitWidth != tc.bits {
			t.Errorf("sock_common.%s: %v @%d.%d:%d, want @%d.%d:%d", tc.name, ok, f.Offset, f.BitOff, f.BitWidth, tc.off, tc.bitOff, tc.bits)
		}
	}
	names := strings.Join(MemberNames(sc), " ")
	if !strings.Contains(names, "skc_dport") || !strings.Contains(names, "skc_family") {
		t.Errorf("MemberNames: %s", names)
	}

	for name, want := range map[string]string{"pid_t": "int32", "u32": "uint32", "umode_t": "uint16", "struct list_head *": "struct list_head *"} {
		if ty, err := r.Type(name); err != nil || ty.String() != want {
			t.Errorf("%s: %v %v, want %s", name, ty, err, want)
		}
	}

	args, ret, err := r.Func("vfs_read")
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldList(args); got != "file:struct file *@0 buf:int8 *@8 count:uint64@16 pos:int64 *@24" || ret.String() != "int64" {
		t.Errorf("vfs_read: %s -> %s", got, ret)
	}
	rt, err := r.RawTracepoint("sched_switch")
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldList(rt); !strings.HasPrefix(got, "arg0:uint8@0 arg1:struct task_struct *@8 arg2:struct task_struct *@16") {
		t.Errorf("sched_switch raw args: %s", got)
	}
	if v, typ, ok := r.Enum("PIDTYPE_PGID"); !ok || v != 2 || typ.Name != "enum pid_type" {
		t.Errorf("PIDTYPE_PGID = %d %v %v", v, typ, ok)
	}
	if _, _, ok := r.Enum("NO_SUCH_ENUMERATOR"); ok {
		t.Error("unknown enumerator found")
	}
}

func fieldList(t *types.Type) string {
	var parts []string
	for _, f := range t.Fields {
		parts = append(parts, fmt.Sprintf("%s:%s@%d", f.Name, f.Type, f.Offset))
	}
	return strings.Join(parts, " ")
}

func TestResolverOrderAndErrors(t *testing.T) {
	// Script declarations win over BTF; what they lack comes from BTF.
	r := fixtureResolver(`struct list_head { int mine; };
struct holder { struct qstr q; struct list_head l; pid_t p; struct unknown_thing *u; };`)
	lh, err := r.Type("struct list_head")
	if err != nil || lh.Size != 4 {
		t.Errorf("script list_head: %v %v", lh, err)
	}
	h, err := r.Type("struct holder")
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldList(h); got != "q:struct qstr@0 l:struct list_head@16 p:int32@20 u:struct unknown_thing *@24" {
		t.Errorf("holder: %s", got)
	}
	_, err = r.Type("struct foo")
	want := "Unknown struct/union: 'struct foo' (not in the script's declarations or kernel BTF)"
	if r.opts.BTFPath != DefaultBTFPath {
		want = "Unknown struct/union: 'struct foo' (not in the script's declarations or BTF " + fixtureBTF + ")"
	}
	if err == nil || err.Error() != want || !IsNotFound(err) {
		t.Errorf("got %v\nwant %s", err, want)
	}
	r2 := New(Options{BTFPath: fixtureBTF, Includes: []string{"linux/not_a_header.h"}, CDecls: []string{"struct x { int a; };"}})
	_, err = r2.Type("struct nope")
	if err == nil || !strings.Contains(err.Error(), "included headers (not found: linux/not_a_header.h)") {
		t.Errorf("include note missing: %v", err)
	}
	if _, _, err := r2.Func("no_such_func"); err == nil || !strings.Contains(err.Error(), "Unknown function: 'no_such_func'") {
		t.Errorf("func error: %v", err)
	}
	r3 := New(Options{BTFPath: "testdata/missing.btf"})
	if _, err := r3.Type("struct task_struct"); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("missing BTF error: %v", err)
	}
	// Script declaration errors are reported by Decls, not swallowed.
	r4 := New(Options{CDecls: []string{"struct broken { int x y; }"}})
	if _, err := r4.Decls(); err == nil {
		t.Error("broken declaration accepted")
	}
}

// The kernel structs of the layout golden tests: testdata/kernel_structs.h
// holds their C declarations and testdata/kernel_structs.btf their BTF, both
// written by mkfixture from one kernel.
var goldenStructs = []string{"list_head", "hlist_node", "rb_node", "callback_head", "sock_common", "qstr", "path",
	"file", "inode", "sk_buff", "task_struct", "mm_struct", "cred", "timespec64"}

// TestGoldenKernelStructs lays out the C declarations in
// testdata/kernel_structs.h and checks every member's offset, bit position
// and size against the committed BTF of the same kernel (offline).
func TestGoldenKernelStructs(t *testing.T) {
	src, err := os.ReadFile("testdata/kernel_structs.h")
	if err != nil {
		t.Fatal(err)
	}
	compareStructs(t, string(src), New(Options{BTFPath: "testdata/kernel_structs.btf"}))
}

// TestLiveKernelStructs does the same for the running kernel: the structs'
// declarations printed from its BTF now (as mkfixture prints them), laid out
// from the C text, against its BTF.
func TestLiveKernelStructs(t *testing.T) {
	spec, err := btf.LoadSpec(DefaultBTFPath)
	if err != nil {
		needKernel(t, "no kernel BTF: %v", err)
		return
	}
	src, err := btfdump.Header(spec, goldenStructs)
	if err != nil {
		t.Fatal(err)
	}
	compareStructs(t, src, New(Options{}))
}

func compareStructs(t *testing.T, src string, kernel *Sources) {
	t.Helper()
	d, err := ParseC(src, "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range goldenStructs {
		c, err := d.Lookup("struct " + name)
		if err != nil {
			t.Errorf("C struct %s: %v", name, err)
			continue
		}
		k, err := kernel.Type("struct " + name)
		if err != nil {
			t.Fatalf("BTF struct %s: %v", name, err)
		}
		n := compareRecords(t, "struct "+name, c, k, 0)
		t.Logf("struct %s: size %d, %d members compared", name, k.Size, n)
	}
}

func compareRecords(t *testing.T, path string, c, k *types.Type, depth int) int {
	t.Helper()
	if c.Size != k.Size {
		t.Errorf("%s: C size %d, BTF size %d", path, c.Size, k.Size)
	}
	if depth > 0 && c.Alignment() != k.Alignment() {
		t.Errorf("%s: C align %d, BTF align %d", path, c.Alignment(), k.Alignment())
	}
	n := 0
	for _, name := range MemberNames(k) {
		kf, _ := k.Field(name)
		cf, ok := c.Field(name)
		if !ok {
			t.Errorf("%s.%s: missing in C", path, name)
			continue
		}
		n++
		if cf.Offset*8+cf.BitOff != kf.Offset*8+kf.BitOff || cf.BitWidth != kf.BitWidth || cf.Type.Size != kf.Type.Size {
			t.Errorf("%s.%s: C @%d.%d:%d size %d, BTF @%d.%d:%d size %d", path, name,
				cf.Offset, cf.BitOff, cf.BitWidth, cf.Type.Size, kf.Offset, kf.BitOff, kf.BitWidth, kf.Type.Size)
			continue
		}
		if kf.Type.Kind == types.Record && cf.Type.Kind == types.Record && depth < 8 {
			n += compareRecords(t, path+"."+name, cf.Type, kf.Type, depth+1)
		}
	}
	return n
}

// A script that redefines a kernel struct must define what it embeds (as
// bpftrace, which then drops BTF); other script structs embed kernel ones.
func TestRedefinedKernelStructEmbeds(t *testing.T) {
	r := fixtureResolver(`struct task_struct { struct thread_info x; int y; };`,
		`struct holder { struct qstr q; int z; };`,
		`struct mine { struct not_anywhere n; };`)
	_, err := r.Type("struct task_struct")
	var ie *IncompleteError
	if !errors.As(err, &ie) || ie.Tag != "struct thread_info" || ie.Member != "x" {
		t.Fatalf("redefined task_struct: error %v, want an IncompleteError for x (struct thread_info)", err)
	}
	if want := "definitions: error: field 'x' of struct task_struct has incomplete type 'struct thread_info'"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if h, err := r.Type("struct holder"); err != nil || h.Fields[0].Type.Name != "struct qstr" {
		t.Errorf("holder takes struct qstr from BTF: %v %v", h, err)
	}
	// CheckDecls reports the script's problems without any probe using them;
	// struct mine is not a kernel struct: its member is an unknown name, not
	// an incomplete one, and is left to the lookup that needs it.
	errs := r.CheckDecls()
	if len(errs) != 1 || errs[0].Name != "struct task_struct" {
		t.Fatalf("CheckDecls = %v, want one error for struct task_struct", errs)
	}
	if _, err := r.Type("struct mine"); err == nil || !strings.Contains(err.Error(), "Unknown struct/union: 'struct not_anywhere'") {
		t.Errorf("struct mine: %v", err)
	}
	// Parse errors in the script's text are reported too; none without decls.
	if errs := fixtureResolver(`struct bad { int y[; };`).CheckDecls(); len(errs) != 1 || errs[0].Name != "" {
		t.Errorf("parse error: CheckDecls = %v", errs)
	}
	if errs := fixtureResolver().CheckDecls(); errs != nil {
		t.Errorf("no decls: CheckDecls = %v", errs)
	}
}

// With the thread_info definition supplied, the redefinition lays out.
func TestRedefinedKernelStructComplete(t *testing.T) {
	r := fixtureResolver(`struct thread_info { unsigned long flags; unsigned int status; };`,
		`struct task_struct { struct thread_info x; int y; };`)
	ts, err := r.Type("struct task_struct")
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldList(ts); got != "x:struct thread_info@0 y:int32@16" || ts.Size != 24 {
		t.Errorf("task_struct: %s size %d", got, ts.Size)
	}
	if errs := r.CheckDecls(); len(errs) != 0 {
		t.Errorf("CheckDecls = %v", errs)
	}
}
