package sym

import (
	"debug/elf"
	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/ktypes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// splitDebug strips bin into a copy and writes its debug information
// apart (objcopy --only-keep-debug), returning the stripped copy and the
// debug file.
func splitDebug(t *testing.T, bin string) (stripped, debug string) {
	t.Helper()
	debug, stripped = bin+".debug", bin+".stripped"
	for _, args := range [][]string{
		{"objcopy", "--only-keep-debug", bin, debug},
		{"strip", "--strip-all", "-o", stripped, bin},
	} {
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	return stripped, debug
}

func hasSymbol(t *testing.T, path, name string) bool {
	t.Helper()
	syms, err := Symbols(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestDebugFileByBuildID: the static function of a stripped binary comes
// from DEBUGROOT/.build-id/xx/yyyy.debug, as a -dbg package installs it.
func TestDebugFileByBuildID(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "bid", "gcc", progC, "-fPIE", "-pie", "-Wl,--build-id")
	stripped, debug := splitDebug(t, bin)
	if hasSymbol(t, stripped, "hidden_fn") {
		t.Fatal("hidden_fn found before the debug file is installed")
	}
	f, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	id := ktypes.BuildID(f)
	f.Close()
	if len(id) < 8 {
		t.Fatalf("build ID %q", id)
	}
	root := filepath.Join(dir, "debug")
	if err := os.MkdirAll(filepath.Join(root, ".build-id", id[:2]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(debug, filepath.Join(root, ".build-id", id[:2], id[2:]+".debug")); err != nil {
		t.Fatal(err)
	}
	defer ktypes.SetDebugRoot(root)()
	// A fresh copy: parsed objects are cached by file identity.
	cp := filepath.Join(dir, "bid.copy")
	b, _ := os.ReadFile(stripped)
	testkit.WriteExecutable(t, cp, b)
	if !hasSymbol(t, cp, "hidden_fn") {
		t.Errorf("hidden_fn not found through %s/.build-id/%s/%s.debug", root, id[:2], id[2:])
	}
	if got := ktypes.DebugFile(cp); got != filepath.Join(root, ".build-id", id[:2], id[2:]+".debug") {
		t.Errorf("DebugFile = %q", got)
	}
}

// TestDebugFileByDebuglink: .gnu_debuglink names the debug file, found in
// the binary's directory and in its .debug subdirectory; one of another
// build (another build ID) is not used.
func TestDebugFileByDebuglink(t *testing.T) {
	requireGCC(t)
	for _, sub := range []string{"", ".debug"} {
		dir := t.TempDir()
		bin := build(t, dir, "dl", "gcc", progC, "-fPIE", "-pie", "-Wl,--build-id")
		stripped, debug := splitDebug(t, bin)
		if b, err := exec.Command("objcopy", "--add-gnu-debuglink="+debug, stripped).CombinedOutput(); err != nil {
			t.Fatalf("objcopy: %v\n%s", err, b)
		}
		if sub != "" {
			os.Mkdir(filepath.Join(dir, sub), 0o755)
			if err := os.Rename(debug, filepath.Join(dir, sub, filepath.Base(debug))); err != nil {
				t.Fatal(err)
			}
		}
		if !hasSymbol(t, stripped, "hidden_fn") {
			t.Errorf("debuglink in %q: hidden_fn not found", sub)
		}
	}
	// Another build's debug file under the linked name.
	dir := t.TempDir()
	bin := build(t, dir, "other", "gcc", progC, "-fPIE", "-pie", "-Wl,--build-id")
	stripped, debug := splitDebug(t, bin)
	if b, err := exec.Command("objcopy", "--add-gnu-debuglink="+debug, stripped).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, b)
	}
	other := build(t, t.TempDir(), "other", "gcc", "int other_build = 1;\n"+progC, "-fPIE", "-pie", "-Wl,--build-id")
	if b, err := exec.Command("objcopy", "--only-keep-debug", other, debug).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, b)
	}
	if hasSymbol(t, stripped, "hidden_fn") {
		t.Error("a debug file of another build was used")
	}
}

// TestOpenDWARFInDirs: a stripped binary's DWARF is found as BINARY.debug
// in a --debuginfo directory (relative ones from the binary's directory
// when the working directory has no such directory), and not at all when
// the debug file is another build's.
func TestOpenDWARFInDirs(t *testing.T) {
	requireGCC(t)
	dir := t.TempDir()
	bin := build(t, dir, "dd", "gcc", progC, "-g", "-Wl,--build-id")
	ext := filepath.Join(dir, "ext")
	if err := os.Mkdir(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "dd-stripped")
	for _, args := range [][]string{
		{"objcopy", "--only-keep-debug", bin, filepath.Join(ext, "dd-stripped.debug")},
		{"objcopy", "--strip-debug", bin, stripped},
	} {
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	f, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if d, _ := ktypes.OpenDWARF(f, stripped, nil); d != nil {
		d.Close()
		t.Fatal("found debug information without the directory")
	}
	d, p := ktypes.OpenDWARF(f, stripped, []string{"./ext"})
	if d == nil || p != filepath.Join(ext, "dd-stripped.debug") {
		t.Fatalf("OpenDWARF with ./ext: %v %q", d, p)
	}
	d.Close()
	// Another build's debug file (other build ID) is not taken.
	other := build(t, t.TempDir(), "dd", "gcc", progC+"\nint extra_fn(void) { return 7; }\n", "-g", "-Wl,--build-id")
	if b, err := exec.Command("objcopy", "--only-keep-debug", other, filepath.Join(ext, "dd-stripped.debug")).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, b)
	}
	if d, p := ktypes.OpenDWARF(f, stripped, []string{ext}); d != nil {
		d.Close()
		t.Errorf("took another build's debug file %s", p)
	}
}
