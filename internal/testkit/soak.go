package testkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Residue is what a run may leave behind, counted at one moment: BPF
// objects by ID, tracefs dynamic events, processes, and perf-event
// descriptors of the processes of one binary. Snapshot before a run,
// then Leftovers after it.
type Residue struct {
	bpf    bpfSnapshot
	events map[string]bool
	procs  map[int]bool
}

// Snapshot records the machine's BPF objects, tracefs events and
// processes now.
func Snapshot() (*Residue, error) {
	b, err := snapshotBPF()
	if err != nil {
		return nil, err
	}
	return &Residue{bpf: b, events: tracefsEvents(), procs: processes()}, nil
}

func processes() map[int]bool {
	set := map[int]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			set[pid] = true
		}
	}
	return set
}

// suspect reports whether process pid belongs to the run: this test
// process's descendant, or a process of one of the binaries (the tracer,
// whose detached reaper is re-parented to init, and the helpers it traced).
func suspect(pid int, exes []string) bool {
	if pid == os.Getpid() {
		return false
	}
	if ours(pid) {
		return true
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	for _, e := range exes {
		if exe == e {
			return true
		}
	}
	return false
}

// perfFDs counts the perf-event descriptors pid holds.
func perfFDs(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	n := 0
	for _, fd := range fds {
		if t, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && t == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

// Leftovers waits up to settle for the run's residue to go and returns
// what is still there: BPF objects created since the snapshot that a
// process of the run holds or nobody holds, tracefs events new since the
// snapshot that mention one of marks, and new processes of the run (with
// their perf-event descriptors). exes are the run's binaries (absolute
// paths). It returns how long the residue took to go.
func (r *Residue) Leftovers(settle time.Duration, exes []string, marks []string) ([]string, time.Duration) {
	start := time.Now()
	for {
		leaks := r.leftovers(exes, marks)
		if len(leaks) == 0 || time.Since(start) > settle {
			return leaks, time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *Residue) leftovers(exes, marks []string) []string {
	var out []string
	now, err := snapshotBPF()
	if err != nil {
		return []string{"snapshot: " + err.Error()}
	}
	fresh := false
	for _, k := range []struct{ before, now map[uint32]bool }{{r.bpf.progs, now.progs}, {r.bpf.maps, now.maps}, {r.bpf.links, now.links}} {
		for id := range k.now {
			if !k.before[id] {
				fresh = true
			}
		}
	}
	if fresh {
		holders := fdHolders()
		for _, kind := range []struct {
			name        string
			before, now map[uint32]bool
		}{{"prog", r.bpf.progs, now.progs}, {"map", r.bpf.maps, now.maps}, {"link", r.bpf.links, now.links}} {
			for id := range kind.now {
				if kind.before[id] {
					continue
				}
				key := fmt.Sprintf("%s:%d", kind.name, id)
				pids := holders[key]
				if len(pids) == 0 {
					// A program or map nobody holds: still referenced by
					// an attachment (perf event, link) or pinned. Maps of
					// other users' programs are theirs.
					if kind.name != "map" || !usedByForeignProg(now, holders, id, exes) {
						out = append(out, describeBPF(key)+": alive, held by no process")
					}
					continue
				}
				for _, pid := range pids {
					if suspect(pid, exes) {
						out = append(out, fmt.Sprintf("%s: held by pid %d", describeBPF(key), pid))
						break
					}
				}
			}
		}
	}
	for e := range tracefsEvents() {
		if r.events[e] {
			continue
		}
		for _, m := range marks {
			if strings.Contains(e, m) {
				out = append(out, "tracefs event: "+e)
				break
			}
		}
	}
	for pid := range processes() {
		if r.procs[pid] || !suspect(pid, exes) {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if len(cmd) == 0 {
			continue // exited (or a zombie being reaped)
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if s := string(st); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
			continue
		}
		out = append(out, fmt.Sprintf("process %d (%s) with %d perf fds", pid, bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '}), perfFDs(pid)))
	}
	sort.Strings(out)
	return out
}

// usedByForeignProg reports whether map id belongs to a program that a
// process outside the run holds.
func usedByForeignProg(now bpfSnapshot, holders map[string][]int, id uint32, exes []string) bool {
	for prog := range now.progs {
		for _, h := range holders[fmt.Sprintf("prog:%d", prog)] {
			if !suspect(h, exes) {
				if progUsesMap(prog, id) {
					return true
				}
				break
			}
		}
	}
	return false
}

func progUsesMap(prog, m uint32) bool {
	p, err := ebpfProgramFromID(prog)
	if err != nil {
		return false
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return false
	}
	ids, _ := info.MapIDs()
	for _, x := range ids {
		if uint32(x) == m {
			return true
		}
	}
	return false
}
