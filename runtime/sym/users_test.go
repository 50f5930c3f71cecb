package sym

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

func TestUsername(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	write := func(s string) {
		if err := os.WriteFile(passwd, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("root:x:0:0:root:/root:/bin/bash\n# comment\nbroken\nalice:x:1000:1000::/home/alice:/bin/sh\ndup:x:1000:1000::/:/bin/sh\n")
	s := New(Options{Passwd: passwd})
	for uid, want := range map[uint64]string{0: "root", 1000: "alice", 1001: ""} {
		if got := s.Username(uid); got != want {
			t.Errorf("Username(%d) = %q, want %q", uid, got, want)
		}
	}
	// A user added while tracing is found: the file is re-read when it changes.
	write("root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\n")
	if err := os.Chtimes(passwd, time.Now(), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := s.Username(1001); got != "bob" {
		t.Errorf("after adding bob, Username(1001) = %q", got)
	}
	if got := New(Options{}).Username(0); got != "root" {
		t.Errorf("live Username(0) = %q", got)
	}
}

func ino(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestCgroupPathFake resolves inodes of a directory tree standing in for
// cgroupfs, named by a fake mount table: v2 first, v1 by name.
func TestCgroupPathFake(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"v2/a/b", "cpu/a/b", "memory/x"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mounts := filepath.Join(dir, "mounts")
	tab := fmt.Sprintf("proc /proc proc rw 0 0\ncgroup %s/memory cgroup rw,memory 0 0\ncgroup %s/cpu cgroup rw,cpu 0 0\ncgroup2 %s/v2 cgroup2 rw 0 0\n", dir, dir, dir)
	if err := os.WriteFile(mounts, []byte(tab), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Mounts: mounts})
	id := ino(t, filepath.Join(dir, "v2/a/b"))
	if got := s.CgroupPath(id); got != "unified:/a/b" {
		t.Errorf("CgroupPath(v2/a/b) = %q", got)
	}
	if got := s.CgroupPath(ino(t, filepath.Join(dir, "memory/x"))); got != "memory:/x" {
		t.Errorf("CgroupPath(memory/x) = %q", got)
	}
	if got := s.CgroupPath(ino(t, filepath.Join(dir, "cpu"))); got != "cpu:/" {
		t.Errorf("CgroupPath(cpu root) = %q", got)
	}
	// A cgroup made after the first walk.
	if err := os.Mkdir(filepath.Join(dir, "v2/a/new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := s.CgroupPath(ino(t, filepath.Join(dir, "v2/a/new"))); got != "unified:/a/new" {
		t.Errorf("CgroupPath(new) = %q", got)
	}
	if got := s.CgroupPathFilter(id, "mem*"); got != "" {
		t.Errorf("CgroupPathFilter(id, mem*) = %q, want none", got)
	}
	if got := s.CgroupPath(1 << 60); got != "" {
		t.Errorf("CgroupPath(unknown) = %q", got)
	}
}

// TestCgroupPathBpftrace compares cgroup_path() with bpftrace's, for
// bpftrace's own cgroup.
func TestCgroupPathBpftrace(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.Bpftrace)
	cmd := exec.Command("bpftrace", "-e", `BEGIN { printf("%llu|%s|%s\n", cgroup, cgroup_path(cgroup), username); exit(); }`)
	res := testkit.RunBounded(t, 30*time.Second, cmd)
	var line string
	for _, l := range strings.Split(res.Stdout, "\n") {
		if strings.Count(l, "|") == 2 {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("bpftrace printed no result: %+v", res)
	}
	f := strings.Split(line, "|")
	var id uint64
	fmt.Sscan(f[0], &id)
	s := New(Options{})
	if got := s.CgroupPath(id); got != f[1] {
		t.Errorf("CgroupPath(%d) = %q, bpftrace says %q", id, got, f[1])
	}
	if got := s.Username(0); got != f[2] {
		t.Errorf("Username(0) = %q, bpftrace says %q", got, f[2])
	}
}

// TestCgroupPathLive makes a real cgroup v2 group and resolves its id.
func TestCgroupPathLive(t *testing.T) {
	testkit.RequireRoot(t)
	root := ""
	for _, r := range readCgroupRoots("/proc/mounts") {
		if r.name == "unified" {
			root = r.dir
			break
		}
	}
	if root == "" {
		t.Skip("no cgroup v2 mount")
	}
	s := New(Options{})
	s.CgroupPath(1) // index the hierarchy before the group exists
	dir := filepath.Join(root, fmt.Sprintf("gotrace-symtest-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skip("cannot create a cgroup:", err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	want := "unified:/" + filepath.Base(dir)
	if got := s.CgroupPathFilter(ino(t, dir), "unified"); got != want {
		t.Errorf("CgroupPath(new group) = %q, want %q", got, want)
	}
}
