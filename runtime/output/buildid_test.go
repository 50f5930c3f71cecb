package output

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBuildIDFrame: an address in a mapped file prints as the file's build
// ID (readelf's) and the offset in the file; an unmapped one as hex.
func TestBuildIDFrame(t *testing.T) {
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("no readelf")
	}
	out, err := exec.Command(readelf, "-n", "/bin/sleep").Output()
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Skip("/bin/sleep has no build ID")
	}
	id := string(m[1])
	for len(id) < 2*buildIDSize {
		id += "0"
	}
	cmd := exec.Command("/bin/sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(50 * time.Millisecond)
	var mp mapping
	for i := 0; i < 50; i++ {
		var ok bool
		// The first mapping of the executable: sleep's own text.
		if mp, ok = firstMapping(cmd.Process.Pid, "/bin/sleep", "/usr/bin/sleep"); ok {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if mp.path == "" {
		t.Fatal("no mapping of sleep")
	}
	addr := mp.start + 0x40
	want := fmt.Sprintf("%s 0x%02x", id, mp.offset+0x40)
	if got := BuildIDFrame(cmd.Process.Pid, addr); got != want {
		t.Errorf("BuildIDFrame = %q, want %q", got, want)
	}
	if got := BuildIDFrame(cmd.Process.Pid, 0x10); got != "10" {
		t.Errorf("unmapped address: %q, want \"10\"", got)
	}
}

func firstMapping(pid int, paths ...string) (mapping, bool) {
	for _, p := range paths {
		if m, ok := findPath(pid, p); ok {
			return m, true
		}
	}
	return mapping{}, false
}

// findPath is the first mapping of path in pid's maps.
func findPath(pid int, path string) (mapping, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return mapping{}, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != path {
			continue
		}
		var start, end, off uint64
		fmt.Sscanf(f[0], "%x-%x", &start, &end)
		fmt.Sscanf(f[2], "%x", &off)
		return mapping{start: start, end: end, offset: off, path: path}, true
	}
	return mapping{}, false
}
