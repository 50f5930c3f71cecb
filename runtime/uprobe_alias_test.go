package runtime

import (
	"github.com/gotrace/gotrace/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

// aliasC has a global function and a local alias of it (at the same
// address) whose name sorts first, as glibc's __GI_getaddrinfo does for
// getaddrinfo in libc6-dbg's debug file.
const aliasC = `
__attribute__((noinline)) int ztarget(int x) { __asm__ volatile(""); return x + 1; }
static int _local_ztarget(int x) __attribute__((alias("ztarget"), used));
int main(int argc, char **argv) { (void)argv; return ztarget(argc) == 0; }
`

// TestUprobeWildcardAliasName: a wildcard matching a function and its
// local alias makes one probe, named by the global symbol; an exact name
// keeps the name the script gave.
func TestUprobeWildcardAliasName(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "alias.c")
	if err := os.WriteFile(src, []byte(aliasC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "alias")
	if out, err := exec.Command("cc", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		testkit.Skipf(t, "cc: %v\n%s", err, out)
	}
	funcs, err := elfFuncs(bin)
	if err != nil {
		t.Fatal(err)
	}
	var g, l *elfFunc
	for i := range funcs {
		switch funcs[i].name {
		case "ztarget":
			g = &funcs[i]
		case "_local_ztarget":
			l = &funcs[i]
		}
	}
	if g == nil || l == nil || g.addr != l.addr || !g.global || l.global {
		t.Fatalf("symbols: global %+v, local alias %+v (want one address, global and local)", g, l)
	}
	expand := func(fn string) []string {
		t.Helper()
		ps, err := uprobeProvider{probeSide{kind: lang.ProbeUprobe}}.Expand(&lang.AttachPoint{Provider: lang.ProbeUprobe, Target: bin, Func: fn}, &Env{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names
	}
	for _, c := range []struct{ fn, want string }{
		{"*ztarget*", "uprobe:" + bin + ":ztarget"},
		{"*ztarge?", "uprobe:" + bin + ":ztarget"},
		{"_local_*", "uprobe:" + bin + ":_local_ztarget"}, // only the alias matches
		{"_local_ztarget", "uprobe:" + bin + ":_local_ztarget"},
		{"ztarget", "uprobe:" + bin + ":ztarget"},
	} {
		if got := strings.Join(expand(c.fn), " "); got != c.want {
			t.Errorf("uprobe:%s:%s names %q, want %q", bin, c.fn, got, c.want)
		}
	}
}

// TestWildcardFuncsPreferGlobal: of aliases the global one wins whatever
// the name order; unrelated addresses all stay, in name order.
func TestWildcardFuncsPreferGlobal(t *testing.T) {
	funcs := []elfFunc{
		{name: "__GI_getaddrinfo", addr: 0x100},
		{name: "__libc_a", addr: 0x300},
		{name: "b", addr: 0x200, global: true},
		{name: "getaddrinfo", addr: 0x100, global: true},
		{name: "getaddrinfo_a", addr: 0x300},
		{name: "x_ifunc", addr: 0x400, global: true, ifunc: true},
	}
	var got []string
	for _, f := range wildcardFuncs(funcs, "*") {
		got = append(got, f.name)
	}
	if s := strings.Join(got, " "); s != "__libc_a b getaddrinfo" {
		t.Errorf("wildcardFuncs(*) = %q, want %q", s, "__libc_a b getaddrinfo")
	}
}
