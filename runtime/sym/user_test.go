package sym

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/runtime/output"
)

// progC prints the run-time addresses of its functions and of a variable,
// then waits until stdin closes. alpha/beta are exported (dynamic symbol
// table when linked with -rdynamic), hidden_fn is static.
const progC = `
#include <stdio.h>
#include <unistd.h>
#define KEEP __attribute__((noinline, used))
int counter = 5;
KEEP int alpha(int x) { return x * 3 + counter; }
KEEP int beta(int x) { return alpha(x) + 2; }
KEEP static int hidden_fn(int x) { return beta(x) - 1; }
#ifdef WITH_LIB
extern int lib_func(int);
extern void *lib_func_addr(void);
#endif
int main(void) {
	printf("alpha %lx\n", (unsigned long)&alpha);
	printf("beta %lx\n", (unsigned long)&beta);
	printf("hidden_fn %lx\n", (unsigned long)&hidden_fn);
	printf("main %lx\n", (unsigned long)&main);
	printf("counter %lx\n", (unsigned long)&counter);
#ifdef WITH_LIB
	printf("lib_func %lx\n", (unsigned long)lib_func_addr());
#endif
	printf("ready 0\n");
	fflush(stdout);
	char c;
	(void)!read(0, &c, 1);
	return hidden_fn(c) & 1;
}
`

const libC = `
__attribute__((noinline)) int lib_func(int x) { return x * 7 + 1; }
void *lib_func_addr(void) { return (void *)&lib_func; }
`

const progCXX = `
#include <cstdio>
#include <unistd.h>
namespace ns {
struct Widget {
	__attribute__((noinline)) static int frob(int x) { return x * 5 + 1; }
};
}
int main() {
	std::printf("frob %lx\n", (unsigned long)&ns::Widget::frob);
	std::printf("ready 0\n");
	std::fflush(stdout);
	char c;
	(void)!read(0, &c, 1);
	return ns::Widget::frob(c) & 1;
}
`

// build compiles src with cc and args into dir/name.
func build(t *testing.T, dir, name, cc, src string, args ...string) string {
	t.Helper()
	ext := ".c"
	if cc == "g++" {
		ext = ".cc"
	}
	srcPath := filepath.Join(dir, name+ext)
	if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command(cc, append([]string{"-O1", "-g0", "-o", out, srcPath}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, name, err, b)
	}
	return out
}

// proc is a running test program and the addresses it printed.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addrs map[string]uint64
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop closes stdin so the program exits, and reaps it.
func (p *proc) stop() {
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	}
}

func start(t *testing.T, bin string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, addrs: map[string]uint64{}}
	t.Cleanup(p.stop)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		name, hex, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("%s printed %q", bin, sc.Text())
		}
		if name == "ready" {
			return p
		}
		a, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			t.Fatalf("%s printed %q: %v", bin, sc.Text(), err)
		}
		p.addrs[name] = a
	}
	t.Fatalf("%s exited before it was ready", bin)
	return nil
}

func requireGCC(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.GCC)
}

// checkFrames resolves every printed address (and one inside each
// function) in the live process.
func checkFrames(t *testing.T, s *Symbolizer, p *proc, names ...string) {
	t.Helper()
	for _, name := range names {
		addr, ok := p.addrs[name]
		if !ok {
			t.Fatalf("program printed no address for %s", name)
		}
		if got := s.UserSym(p.pid(), addr); got != name {
			t.Errorf("UserSym(%s at %#x) = %q", name, addr, got)
		}
		f := s.UserFrame(p.pid(), addr+1)
		if f.Sym != name || f.Offset != 1 || f.Module == "" {
			t.Errorf("UserFrame(%s+1) = %+v", name, f)
		}
	}
}

func TestUserSymsPIE(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "pie", "gcc", progC, "-fPIE", "-pie")
	p := start(t, bin)
	s := New(Options{})
	checkFrames(t, s, p, "alpha", "beta", "hidden_fn", "main")
	if f := s.UserFrame(p.pid(), p.addrs["alpha"]); f.Module != bin {
		t.Errorf("module of alpha = %q, want %q", f.Module, bin)
	}
	// A data address resolves to the variable, as bcc resolves all types.
	if got := s.UserSym(p.pid(), p.addrs["counter"]); got != "counter" {
		t.Errorf("UserSym(&counter) = %q", got)
	}
	// uaddr(): the variable's unrelocated address and size.
	sym, err := UserAddr(bin, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if sym.Size != 4 || sym.Type != SymObject || sym.Addr == 0 {
		t.Errorf("UserAddr(counter) = %+v", sym)
	}
	if _, err := UserAddr(bin, "alpha"); err == nil {
		t.Errorf("UserAddr(alpha) of a function succeeded; uaddr() takes variables")
	}
	// An address in no mapping prints as bpftrace's unknown address.
	if got := s.UserSym(p.pid(), 0x10); got != "0x10" {
		t.Errorf("UserSym(0x10) = %q", got)
	}
}

func TestUserSymsNonPIE(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "nopie", "gcc", progC, "-fno-pie", "-no-pie")
	p := start(t, bin)
	checkFrames(t, New(Options{}), p, "alpha", "beta", "hidden_fn", "main")
}

// TestUserSymsStripped: with .symtab gone, exported functions still
// resolve through .dynsym; the static one no longer does.
func TestUserSymsStripped(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "stripped", "gcc", progC, "-fPIE", "-pie", "-rdynamic")
	if b, err := exec.Command("strip", "--strip-all", bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, b)
	}
	p := start(t, bin)
	s := New(Options{})
	checkFrames(t, s, p, "alpha", "beta")
	if got := s.UserSym(p.pid(), p.addrs["hidden_fn"]); got == "hidden_fn" {
		t.Errorf("static function resolved in a stripped binary: %q", got)
	}
}

func TestUserSymsSharedLib(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "libsymtest.so")
	libSrc := filepath.Join(dir, "lib.c")
	if err := os.WriteFile(libSrc, []byte(libC), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("gcc", "-O1", "-shared", "-fPIC", "-o", lib, libSrc).CombinedOutput(); err != nil {
		t.Fatalf("gcc lib: %v\n%s", err, b)
	}
	bin := build(t, dir, "withlib", "gcc", progC, "-DWITH_LIB", "-L"+dir, "-lsymtest", "-Wl,-rpath,"+dir)
	p := start(t, bin)
	s := New(Options{})
	checkFrames(t, s, p, "lib_func", "alpha")
	if f := s.UserFrame(p.pid(), p.addrs["lib_func"]); f.Module != lib {
		t.Errorf("module of lib_func = %q, want %q", f.Module, lib)
	}
	// The uprobe resolver: lib_func's file offset lies in the library.
	syms, err := MatchSymbols(lib, "lib_*", SymFunc)
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 2 || syms[0].Name != "lib_func" || syms[1].Name != "lib_func_addr" || syms[0].Offset == 0 {
		t.Errorf("MatchSymbols(lib_*) = %+v", syms)
	}
}

// TestUserSymsDeleted: the binary is removed while it runs; map_files still
// reaches it.
func TestUserSymsDeleted(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "deleted", "gcc", progC, "-fPIE", "-pie")
	p := start(t, bin)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	s := New(Options{})
	checkFrames(t, s, p, "alpha", "hidden_fn")
	if f := s.UserFrame(p.pid(), p.addrs["alpha"]); f.Module != bin {
		t.Errorf("module of alpha = %q, want %q (without \" (deleted)\")", f.Module, bin)
	}
}

// TestUserSymsReplaced: the binary is rebuilt on disk with different code
// while the old one runs; the old one's symbols must be used.
func TestUserSymsReplaced(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "replaced", "gcc", progC, "-fPIE", "-pie")
	p := start(t, bin)
	// New contents at the same path: padding functions shift everything.
	pad := "int pad1(int x){return x+1;} int pad2(int x){return x*x+pad1(x);}\n"
	tmp := build(t, t.TempDir(), "replaced", "gcc", pad+progC, "-fPIE", "-pie")
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	checkFrames(t, New(Options{}), p, "alpha", "beta", "hidden_fn")
}

// TestUserSymsExited: a snapshot taken while the process lives resolves
// its addresses after it exits; without one they print as addresses.
func TestUserSymsExited(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "exits", "gcc", progC, "-fPIE", "-pie")
	p := start(t, bin)
	pid, addr := p.pid(), p.addrs["beta"]
	s := New(Options{})
	s.Snapshot(pid)
	late := New(Options{})
	p.stop()
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Fatalf("process %d still exists", pid)
	}
	if got := s.UserSym(pid, addr); got != "beta" {
		t.Errorf("after exit, UserSym = %q, want beta", got)
	}
	if got := late.UserSym(pid, addr); got != output.UnknownAddr(addr) {
		t.Errorf("no snapshot: UserSym = %q, want %q", got, output.UnknownAddr(addr))
	}
}

// TestUserSymsExitedProgram: a probed non-PIE program that exits before
// any snapshot (a zombie's map is empty, then the pid is gone) still
// resolves through AddProgram, its code being at its ELF addresses; a
// probed PIE program's addresses stay numbers.
func TestUserSymsExitedProgram(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	nopie := build(t, dir, "nopie", "gcc", progC, "-fno-pie", "-no-pie")
	pie := build(t, dir, "pie", "gcc", progC, "-fPIE", "-pie")
	p, q := start(t, nopie), start(t, pie)
	s := New(Options{})
	s.AddProgram(nopie)
	s.AddProgram(pie)
	s.AddProgram(nopie) // again: no second entry
	pid, addr := p.pid(), p.addrs["beta"]
	qpid, qaddr := q.pid(), q.addrs["beta"]
	p.stop()
	q.stop()
	if got := s.UserSym(pid, addr); got != "beta" {
		t.Errorf("exited non-PIE: UserSym = %q, want beta", got)
	}
	if f := s.UserFrame(pid, addr+2); f.Sym != "beta" || f.Offset != 2 || f.Module != nopie {
		t.Errorf("exited non-PIE: UserFrame(beta+2) = %+v", f)
	}
	if got := s.UserSym(qpid, qaddr); got != output.UnknownAddr(qaddr) {
		t.Errorf("exited PIE: UserSym = %q, want %q", got, output.UnknownAddr(qaddr))
	}
	if n := len(s.programs); n != 2 {
		t.Errorf("%d programs registered, want 2", n)
	}
	without := New(Options{})
	if got := without.UserSym(pid, addr); got != output.UnknownAddr(addr) {
		t.Errorf("not registered: UserSym = %q, want %q", got, output.UnknownAddr(addr))
	}
}

func TestUserSymsCXX(t *testing.T) {
	requireGCC(t)
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++:", err)
	}
	dir := t.TempDir()
	bin := build(t, dir, "cxx", "g++", progCXX)
	p := start(t, bin)
	addr := p.addrs["frob"]
	if got := New(Options{}).UserSym(p.pid(), addr); got != "ns::Widget::frob(int)" {
		t.Errorf("UserSym(frob) = %q, want ns::Widget::frob(int)", got)
	}
	if got := New(Options{NoDemangle: true}).UserSym(p.pid(), addr); got != "_ZN2ns6Widget4frobEi" {
		t.Errorf("NoDemangle: UserSym(frob) = %q, want _ZN2ns6Widget4frobEi", got)
	}
}

// TestSymbolsFileOffsets checks Symbols' file offsets against the ELF's
// segments as readelf reports them: offset - vaddr is the segment's
// (p_offset - p_vaddr).
func TestSymbolsFileOffsets(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "offsets", "gcc", progC, "-fno-pie", "-no-pie")
	syms, err := Symbols(bin)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, s := range syms {
		if s.Name == "alpha" || s.Name == "main" {
			found++
			// Non-PIE x86-64 text is linked at 0x400000 + offset.
			if s.Type != SymFunc || s.Addr-s.Offset != 0x400000 {
				t.Errorf("%s: %+v, want func with addr-offset 0x400000", s.Name, s)
			}
		}
	}
	if found != 2 {
		t.Errorf("alpha/main not both in Symbols: %d", found)
	}
}

//go:noinline
func goMarker(x int) int { return x*3 + 1 }

// TestUserSymsGo resolves a function of this (Go) test binary in its own
// process: Go names print as they are. "go test" links without .symtab
// (-s), so this goes through .gopclntab.
func TestUserSymsGo(t *testing.T) {
	testkit.RequireRoot(t)
	addr := uint64(reflect.ValueOf(goMarker).Pointer())
	s := New(Options{})
	want := "github.com/gotrace/gotrace/runtime/sym.goMarker"
	if got := s.UserSym(os.Getpid(), addr); got != want {
		t.Errorf("UserSym(goMarker) = %q, want %q", got, want)
	}
}

// TestUserSymsPerfMap resolves JIT code through /tmp/perf-PID.map.
func TestUserSymsPerfMap(t *testing.T) {
	requireGCC(t)
	bin := build(t, t.TempDir(), "jit", "gcc", progC, "-fPIE", "-pie")
	p := start(t, bin)
	mapFile := "/tmp/perf-" + strconv.Itoa(p.pid()) + ".map"
	if err := os.WriteFile(mapFile, []byte("10000 100 jit_old\n10000 80 jit_fn\n20000 10 LazyCompile:*foo bar.js:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(mapFile) })
	s := New(Options{})
	if f := s.UserFrame(p.pid(), 0x10010); f.Sym != "jit_fn" || f.Offset != 0x10 || f.Module != mapFile {
		t.Errorf("UserFrame(0x10010) = %+v, want jit_fn+16 in %s", f, mapFile)
	}
	if got := s.UserSym(p.pid(), 0x20004); got != "LazyCompile:*foo bar.js:1" {
		t.Errorf("UserSym(0x20004) = %q", got)
	}
	if got := s.UserSym(p.pid(), 0x10090); got != "0x10090" {
		t.Errorf("UserSym past jit_fn = %q, want 0x10090", got)
	}
	checkFrames(t, s, p, "alpha")
}
