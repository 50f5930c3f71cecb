package runtime

import (
	"debug/elf"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/ktypes"
)

// TestResolveIFUNC: libc's strlen (an IFUNC) resolves, in a child that
// maps libc and through any process, to the same code of libc's own, not
// to its resolver.
func TestResolveIFUNC(t *testing.T) {
	if os.Geteuid() != 0 {
		testkit.Skipf(t, "%v", "reading another process's memory needs root")
	}
	path, err := ktypes.ResolveBinary("libc", 0)
	if err != nil {
		t.Skipf("no libc: %v", err)
	}
	funcs, err := elfFuncs(path)
	if err != nil {
		t.Fatal(err)
	}
	var strlen *elfFunc
	for i := range funcs {
		if funcs[i].name == "strlen" {
			strlen = &funcs[i]
		}
	}
	if strlen == nil || !strlen.ifunc {
		t.Skipf("%s: strlen is not an IFUNC", path)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	cmd := exec.Command(sleep, "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Wait until the child has run the dynamic linker (it maps libc).
	for i := 0; i < 100; i++ {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/maps")
		if strings.Contains(string(b), "libc") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	inChild, err := resolveIFUNC(path, strlen.addr, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	anywhere, err := resolveIFUNC(path, strlen.addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if inChild != anywhere || inChild == strlen.addr {
		t.Errorf("strlen resolves to %#x in the child, %#x elsewhere; resolver at %#x", inChild, anywhere, strlen.addr)
	}
	if _, err := ktypes.FileOffset(path, inChild); err != nil {
		t.Errorf("resolved address: %v", err)
	}
	f, _ := elf.Open(path)
	if f != nil {
		defer f.Close()
		if f.Section(".text") != nil && (inChild < f.Section(".text").Addr || inChild >= f.Section(".text").Addr+f.Section(".text").Size) {
			t.Errorf("%#x is outside %s's .text", inChild, path)
		}
	}
}
