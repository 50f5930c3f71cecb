package runtime

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	const prog = "../compiler/layout/testdata/dwarf/prog"
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
		paths, err := mappedExecutables(cmd.Process.Pid)
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
