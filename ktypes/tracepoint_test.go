package ktypes

import (
	"github.com/gotrace/gotrace/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang/types"
)

const fixtureTracefs = "testdata/tracefs"

type wantField struct {
	name    string
	typ     string
	off     int
	dataLoc bool
}

func TestTracepointFormats(t *testing.T) {
	r := New(Options{TracefsDir: fixtureTracefs, BTFPath: "testdata/does-not-exist.btf"})
	for _, tc := range []struct {
		cat, ev string
		size    int
		fields  []wantField
	}{
		{"syscalls", "sys_enter_openat", 48, []wantField{
			{"__syscall_nr", "int32", 8, false}, {"dfd", "uint64", 16, false},
			{"filename", "int8 *", 24, false}, {"flags", "uint64", 32, false}, {"mode", "uint64", 40, false}}},
		{"syscalls", "sys_exit_read", 24, []wantField{{"__syscall_nr", "int32", 8, false}, {"ret", "int64", 16, false}}},
		{"sched", "sched_switch", 64, []wantField{
			{"prev_comm", "string[16]", 8, false}, {"prev_pid", "int32", 24, false}, {"prev_prio", "int32", 28, false},
			{"prev_state", "int64", 32, false}, {"next_comm", "string[16]", 40, false},
			{"next_pid", "int32", 56, false}, {"next_prio", "int32", 60, false}}},
		{"sched", "sched_process_exec", 24, []wantField{
			{"filename", "int8 *", 8, true}, {"pid", "int32", 12, false}, {"old_pid", "int32", 16, false}}},
		{"block", "block_rq_issue", 64, []wantField{
			{"dev", "uint32", 8, false}, {"sector", "uint64", 16, false}, {"nr_sector", "uint32", 24, false},
			{"bytes", "uint32", 28, false}, {"ioprio", "uint16", 32, false}, {"rwbs", "string[10]", 34, false},
			{"comm", "string[16]", 44, false}, {"cmd", "int8 *", 60, true}}},
	} {
		rec, err := r.Tracepoint(tc.cat, tc.ev)
		if err != nil {
			t.Fatalf("%s:%s: %v", tc.cat, tc.ev, err)
		}
		if want := "struct _tracepoint_" + tc.cat + "_" + tc.ev; rec.Name != want {
			t.Errorf("name %q, want %q", rec.Name, want)
		}
		if rec.Size != tc.size {
			t.Errorf("%s: size %d, want %d", rec.Name, rec.Size, tc.size)
		}
		if len(rec.Fields) != len(tc.fields) {
			t.Fatalf("%s: %d fields, want %d", rec.Name, len(rec.Fields), len(tc.fields))
		}
		for i, w := range tc.fields {
			f := rec.Fields[i]
			if f.Name != w.name || f.Type.String() != w.typ || f.Offset != w.off || f.DataLoc != w.dataLoc {
				t.Errorf("%s field %d: got %s %s @%d dataloc=%v, want %s %s @%d dataloc=%v",
					rec.Name, i, f.Name, f.Type, f.Offset, f.DataLoc, w.name, w.typ, w.off, w.dataLoc)
			}
		}
		again, _ := r.Tracepoint(tc.cat, tc.ev)
		if again != rec {
			t.Errorf("%s: not cached", rec.Name)
		}
	}
	// Syscall pointers are user memory; others kernel.
	rec, _ := r.Tracepoint("syscalls", "sys_enter_openat")
	if f, _ := rec.Field("filename"); f.Type.Space != types.AddrUser {
		t.Errorf("sys_enter_openat filename space %v, want user", f.Type.Space)
	}
	if r.BTFLoaded() {
		t.Errorf("a tracepoint lookup loaded BTF")
	}
	_, err := r.Tracepoint("sched", "no_such_event")
	if !IsNotFound(err) || !strings.Contains(err.Error(), "sched:no_such_event") {
		t.Errorf("missing tracepoint error: %v", err)
	}
	if _, err := r.Tracepoint("..", "x"); err == nil {
		t.Errorf("path traversal accepted")
	}
}

func TestParseFormatErrors(t *testing.T) {
	for _, bad := range []string{"", "format:\n\tfield:int x;\toffset:zz;\tsize:4;\tsigned:1;\n", "field:int;\toffset:8;\tsize:4;\tsigned:1;"} {
		if _, err := ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) succeeded", bad)
		}
	}
}

func TestTracepointList(t *testing.T) {
	for _, tc := range []struct {
		pat  string
		want string
	}{
		{"sched:*", "sched:sched_process_exec sched:sched_switch"},
		{"*:sys_*_read", "syscalls:sys_exit_read"},
		{"sched_sw*", "sched:sched_switch"},
		{"syscalls:sys_enter_openat", "syscalls:sys_enter_openat"},
		{"nope:*", ""},
	} {
		got, err := tracepointsIn(fixtureTracefs, tc.pat)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: got %v, want %s", tc.pat, got, tc.want)
		}
	}
	if _, err := tracepointsIn(fixtureTracefs, "a:[b"); err == nil {
		t.Errorf("bad pattern accepted")
	}
}

// TestLiveTracepoints parses every format file of a few live categories.
func TestLiveTracepoints(t *testing.T) {
	dir, err := TracefsDir()
	if err != nil {
		needKernel(t, "tracefs: %v", err)
		return
	}
	names, err := Tracepoints("sched:*")
	if err != nil || len(names) == 0 {
		t.Fatalf("Tracepoints: %v %v", names, err)
	}
	all, _ := Tracepoints("*:*")
	r := New(Options{TracefsDir: dir})
	bad := 0
	for _, n := range all {
		cat, ev, _ := strings.Cut(n, ":")
		if _, err := os.Stat(filepath.Join(dir, "events", cat, ev, "format")); err != nil {
			continue
		}
		if _, err := r.Tracepoint(cat, ev); err != nil {
			t.Errorf("%s: %v", n, err)
			if bad++; bad > 10 {
				t.Fatal("too many failures")
			}
		}
	}
	if r.BTFLoaded() {
		t.Errorf("tracepoint lookups loaded BTF")
	}
}

// needKernel fails under CI and skips elsewhere.
func needKernel(t *testing.T, format string, args ...any) {
	t.Helper()
	testkit.Skipf(t, format, args...)
}
