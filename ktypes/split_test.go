package ktypes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const splitProg = `
struct Foo { int a; char b[10]; };
int __attribute__((noinline)) fn(int n, const char *s, struct Foo *foo) { return n + s[0] + foo->a; }
int main(int argc, char **argv) { struct Foo f = {1, "x"}; return fn(argc, argv[0], &f); }
`

// buildSplit compiles splitProg with -gsplit-dwarf in dir (the .dwo next
// to the binary, as gcc writes it) and returns the binary.
func buildSplit(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	src := filepath.Join(dir, "split.c")
	if err := os.WriteFile(src, []byte(splitProg), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "split")
	cmd := exec.Command("gcc", append([]string{"-g", "-O0", "-gsplit-dwarf", "-o", bin, src}, extra...)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return bin
}

func paramList(t *testing.T, bin, fn string) string {
	t.Helper()
	ps, err := DWARFParams(bin, fn)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.CType+" "+p.Name)
	}
	return strings.Join(got, ", ")
}

// TestSplitDWARF: a -gsplit-dwarf binary's parameters and types come from
// its .dwo (DWARF 5 split units; GNU DWARF 4 ones use forms Go's
// debug/dwarf cannot read), or from BINARY.dwp once the .dwo files are
// packed and removed (dwp/llvm-dwp, as bpftrace's tests build it).
func TestSplitDWARF(t *testing.T) {
	const want = "int n, const char* s, struct Foo* foo"
	for _, v := range []string{"-gdwarf-5"} {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			bin := buildSplit(t, dir, v)
			dwos, _ := filepath.Glob(filepath.Join(dir, "*.dwo"))
			if len(dwos) == 0 {
				t.Fatalf("gcc wrote no .dwo in %s", dir)
			}
			if got := paramList(t, bin, "fn"); got != want {
				t.Errorf("fn: %s, want %s", got, want)
			}
			r := New(Options{Binaries: []string{bin}})
			args, err := r.UprobeArgs(bin, "fn")
			if err != nil {
				t.Fatal(err)
			}
			if s := layoutString(args); s != "struct fn_args size=24 align=8 { n:int32@0 s:int8 *@8 foo:struct Foo *@16 }" {
				t.Errorf("fn args: %s", s)
			}
			if tt, ok := r.fromDWARF("struct Foo"); !ok || layoutString(tt) != "struct Foo size=16 align=4 { a:int32@0 b:string[10]@4 }" {
				t.Errorf("struct Foo from the .dwo: %v %v", tt, ok)
			}

			tool, err := exec.LookPath("llvm-dwp")
			if err != nil {
				if tool, err = exec.LookPath("dwp"); err != nil {
					t.Log("no dwp/llvm-dwp: package not checked")
					return
				}
			}
			if b, err := exec.Command(tool, "-e", bin, "-o", bin+".dwp").CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tool, err, b)
			}
			for _, d := range dwos {
				os.Remove(d)
			}
			if got := paramList(t, bin, "main"); got != "int argc, char** argv" {
				t.Errorf("main from the .dwp: %s", got)
			}
			os.Remove(bin + ".dwp")
			if _, err := DWARFParams(bin, "main"); err == nil || !strings.Contains(err.Error(), "split DWARF") {
				t.Errorf("no .dwo, no .dwp: %v", err)
			}
		})
	}
}
