package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// bpfSnapshot is the set of live BPF object IDs of each kind.
type bpfSnapshot struct {
	progs, maps, links map[uint32]bool
}

// leakSettle is how long objects may take to go after a test ends: closing
// links and programs finishes asynchronously in the kernel (RCU, work queues),
// and gotrace hands slow tracepoint/uprobe closes to a background reaper that
// outlives it (each close waits for RCU grace periods: ~25-90 ms, far more on
// a loaded machine). The check returns as soon as everything is gone.
var leakSettle = 30 * time.Second

// tracefsEventFiles hold dynamic kprobe/uprobe events created through tracefs.
var tracefsEventFiles = []string{"kprobe_events", "uprobe_events", "dynamic_events"}

// NoBPFLeaks makes the test fail if, when it ends, BPF programs, maps or
// links created during it are still alive because of this process or its
// children, or alive with no holder at all (pinned, or left attached), or if
// tracefs kprobe/uprobe events mentioning "gotrace" appeared. Objects that
// other processes on the machine created and hold are ignored: the machine
// is shared. Call it first in the test (it snapshots then). Kernel teardown
// is asynchronous (RCU, work queues), so leftovers get a few seconds to go.
func NoBPFLeaks(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	before, err := snapshotBPF()
	if err != nil {
		t.Fatalf("testkit: snapshot of BPF objects: %v", err)
	}
	beforeEvents := tracefsEvents()
	t.Cleanup(func() {
		deadline := time.Now().Add(leakSettle)
		for {
			leaks, err := bpfLeaks(before)
			if err != nil {
				t.Errorf("testkit: checking for BPF leaks: %v", err)
				return
			}
			for e := range tracefsEvents() {
				if !beforeEvents[e] && strings.Contains(strings.ToLower(e), "gotrace") {
					leaks = append(leaks, "tracefs event still defined: "+e)
				}
			}
			if len(leaks) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("testkit: %d BPF object(s) or tracefs event(s) outlived the test:\n  %s", len(leaks), strings.Join(leaks, "\n  "))
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

func snapshotBPF() (bpfSnapshot, error) {
	s := bpfSnapshot{map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}}
	for id := ebpf.ProgramID(0); ; {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return s, fmt.Errorf("next program ID: %w", err)
		}
		s.progs[uint32(next)] = true
		id = next
	}
	for id := ebpf.MapID(0); ; {
		next, err := ebpf.MapGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return s, fmt.Errorf("next map ID: %w", err)
		}
		s.maps[uint32(next)] = true
		id = next
	}
	var it link.Iterator
	for it.Next() {
		s.links[uint32(it.ID)] = true
	}
	if err := it.Err(); err != nil {
		return s, err
	}
	return s, nil
}

// fdHolders maps "prog:ID", "map:ID" and "link:ID" to the PIDs holding an fd
// for that object, from /proc/*/fdinfo.
func fdHolders() map[string][]int {
	holders := map[string][]int{}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fdinfo")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // exited, or not ours to read
		}
		for _, fd := range fds {
			// Only BPF fds are of interest: their link target says so.
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(target, "anon_inode:bpf") {
				continue
			}
			for _, key := range bpfFdInfoIDs(filepath.Join(dir, fd.Name())) {
				holders[key] = append(holders[key], pid)
			}
		}
	}
	return holders
}

// bpfFdInfoIDs reads the object IDs an fdinfo file names. A link's fdinfo
// names its link_id and its prog_id; only the link is held by the fd.
func bpfFdInfoIDs(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ids []string
	isLink := false
	prog := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "link_id":
			isLink = true
			ids = append(ids, "link:"+v)
		case "map_id":
			ids = append(ids, "map:"+v)
		case "prog_id":
			prog = "prog:" + v
		}
	}
	if prog != "" && !isLink {
		ids = append(ids, prog)
	}
	return ids
}

// ours reports whether pid is this process or one of its descendants.
func ours(pid int) bool {
	self := os.Getpid()
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == self {
			return true
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(b)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) < 2 {
			return false
		}
		pid, _ = strconv.Atoi(rest[1])
	}
	return false
}

// bpfLeaks lists objects created since before that this process (or a child)
// still holds, or that nobody holds.
func bpfLeaks(before bpfSnapshot) ([]string, error) {
	now, err := snapshotBPF()
	if err != nil {
		return nil, err
	}
	var fresh []string
	for _, k := range []struct {
		kind   string
		before map[uint32]bool
		now    map[uint32]bool
	}{{"prog", before.progs, now.progs}, {"map", before.maps, now.maps}, {"link", before.links, now.links}} {
		for id := range k.now {
			if !k.before[id] {
				fresh = append(fresh, fmt.Sprintf("%s:%d", k.kind, id))
			}
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	sort.Strings(fresh)
	holders := fdHolders()
	// Maps used by a program someone else holds are that program's, not ours.
	usedByOthers := map[string]bool{}
	for id := range now.progs {
		if !ownedElsewhere(holders[fmt.Sprintf("prog:%d", id)]) {
			continue
		}
		if p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id)); err == nil {
			if info, err := p.Info(); err == nil {
				if ids, ok := info.MapIDs(); ok {
					for _, m := range ids {
						usedByOthers[fmt.Sprintf("map:%d", m)] = true
					}
				}
			}
			p.Close()
		}
	}
	var leaks []string
	for _, key := range fresh {
		pids := holders[key]
		switch {
		case len(pids) == 0 && usedByOthers[key]:
		case len(pids) == 0:
			leaks = append(leaks, describeBPF(key)+": alive with no process holding it (pinned or left attached)")
		default:
			for _, pid := range pids {
				if ours(pid) {
					leaks = append(leaks, fmt.Sprintf("%s: still held by pid %d (this test process or its child)", describeBPF(key), pid))
					break
				}
			}
		}
	}
	return leaks, nil
}

func ownedElsewhere(pids []int) bool {
	for _, p := range pids {
		if !ours(p) {
			return true
		}
	}
	return false
}

// describeBPF names an object for a failure message, e.g. `prog 812 "gt_count"`.
func describeBPF(key string) string {
	kind, ids, _ := strings.Cut(key, ":")
	id, _ := strconv.Atoi(ids)
	name := ""
	switch kind {
	case "prog":
		if p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id)); err == nil {
			if info, err := p.Info(); err == nil {
				name = info.Name
			}
			p.Close()
		}
	case "map":
		if m, err := ebpf.NewMapFromID(ebpf.MapID(id)); err == nil {
			if info, err := m.Info(); err == nil {
				name = info.Name
			}
			m.Close()
		}
	}
	return fmt.Sprintf("%s %d %q", kind, id, name)
}

// tracefsEvents returns the lines of tracefs's dynamic event files.
func tracefsEvents() map[string]bool {
	set := map[string]bool{}
	dir, err := TracefsDir()
	if err != nil {
		return set
	}
	for _, f := range tracefsEventFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				set[f+": "+l] = true
			}
		}
	}
	return set
}

func ebpfProgramFromID(id uint32) (*ebpf.Program, error) {
	return ebpf.NewProgramFromID(ebpf.ProgramID(id))
}
