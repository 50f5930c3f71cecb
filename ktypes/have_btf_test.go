package ktypes

import (
	"testing"
)

// BPFTRACE_HAVE_BTF is defined for the script's C code when BTF is there
// (bpftrace's tools hide their kernel struct copies behind #ifndef).
func TestHaveBTFMacro(t *testing.T) {
	src := "#ifndef BPFTRACE_HAVE_BTF\nstruct only_without_btf { int x; };\n#endif\n"
	with := New(Options{BTFPath: fixtureBTF, TracefsDir: fixtureTracefs, CDecls: []string{src}, Arch: "x86_64"})
	d, err := with.Decls()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lookup("struct only_without_btf"); err == nil {
		t.Error("with BTF: the #ifndef BPFTRACE_HAVE_BTF block was read")
	}
	without := New(Options{BTFPath: "testdata/no-such.btf", TracefsDir: fixtureTracefs, CDecls: []string{src}, Arch: "x86_64"})
	if d, err = without.Decls(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lookup("struct only_without_btf"); err != nil {
		t.Errorf("without BTF: %v", err)
	}
}

func TestSourcesTracepointMatches(t *testing.T) {
	r := fixtureResolver()
	got, err := r.TracepointMatches("syscalls", "sys_*")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != [2]string{"syscalls", "sys_enter_openat"} || got[1] != [2]string{"syscalls", "sys_exit_read"} {
		t.Errorf("matches = %v", got)
	}
	if got, err := r.TracepointMatches("nope", "*"); err != nil || len(got) != 0 {
		t.Errorf("no match: %v %v", got, err)
	}
}
