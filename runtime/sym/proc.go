package sym

import (
	"bytes"
	"cmp"
	"debug/elf"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// mapping is one file-backed executable or readable region of a process.
type mapping struct {
	start, end, pgoff uint64
	path              string  // as /proc/PID/maps names it, " (deleted)" removed
	obj               *elfObj // nil when the file could not be read as ELF
}

// procSyms is what resolving a process's addresses needs, taken while it
// lives (Snapshot) so its stacks print after it exits.
type procSyms struct {
	maps  []mapping // sorted by start
	alive bool      // the snapshot read the live process
	// perf are the symbols a JIT (node, the JVM with perf-map-agent...)
	// wrote to /tmp/perf-PID.map, sorted by address; perfPath names it.
	perf     []Symbol
	perfPath string
	refresh  time.Time // last time maps were (re)read
}

// refreshEvery bounds how often an address outside every known mapping
// (a library dlopen()ed since the snapshot, JIT code) re-reads the maps.
const refreshEvery = time.Second

// Snapshot records the memory map of process pid and reads the symbols of
// every file it maps (each binary once per run), so addresses in its
// stacks and usym() values resolve after it exits. The runtime calls it
// when it first sees a pid in an event; calling it again is cheap.
func (s *Symbolizer) Snapshot(pid int) {
	if pid <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procLocked(pid)
}

// Forget drops the snapshot of pid (a new process may reuse the number).
func (s *Symbolizer) Forget(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.procs, pid)
}

// procLocked returns pid's snapshot, taking it first if needed.
func (s *Symbolizer) procLocked(pid int) *procSyms {
	if p, ok := s.procs[pid]; ok {
		return p
	}
	p := s.readProc(pid)
	if len(s.procs) >= s.maxPIDs {
		// Drop the oldest snapshot; pids seen long ago are least likely to
		// still be printed.
		for len(s.pidOrder) > 0 && len(s.procs) >= s.maxPIDs {
			delete(s.procs, s.pidOrder[0])
			s.pidOrder = s.pidOrder[1:]
		}
	}
	s.procs[pid] = p
	s.pidOrder = append(s.pidOrder, pid)
	return p
}

// readProc reads /proc/PID/maps and the ELF files behind it. A process
// that is gone yields an empty snapshot: its addresses print as numbers,
// as bpftrace prints them.
func (s *Symbolizer) readProc(pid int) *procSyms {
	p := &procSyms{refresh: time.Now()}
	dir := s.procDir + "/" + strconv.Itoa(pid)
	data, err := os.ReadFile(dir + "/maps")
	if err != nil {
		return p
	}
	p.alive = true
	objs := map[string]*elfObj{} // per path, within this process
	tried := map[string]bool{}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		m, rng, ok := parseMapsLine(string(line))
		if !ok {
			continue
		}
		if !tried[m.path] {
			tried[m.path] = true
			if o := s.openMapped(pid, dir, rng, m); o != nil {
				objs[m.path] = o
			}
		}
		m.obj = objs[m.path]
		if m.obj != nil {
			p.maps = append(p.maps, m)
		}
	}
	p.perf, p.perfPath = readPerfMap(dir, pid)
	slices.SortFunc(p.maps, func(a, b mapping) int {
		if a.start < b.start {
			return -1
		}
		if a.start > b.start {
			return 1
		}
		return 0
	})
	return p
}

// parseMapsLine reads "start-end perms offset dev inode   path". Only
// file-backed mappings and the vDSO are kept; rng is "start-end" as
// /proc/PID/map_files names the mapping.
func parseMapsLine(line string) (m mapping, rng string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 6 {
		return m, "", false
	}
	rng = f[0]
	lo, hi, found := strings.Cut(rng, "-")
	if !found {
		return m, "", false
	}
	var err1, err2, err3 error
	m.start, err1 = strconv.ParseUint(lo, 16, 64)
	m.end, err2 = strconv.ParseUint(hi, 16, 64)
	m.pgoff, err3 = strconv.ParseUint(f[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return m, "", false
	}
	// The path is the rest of the line after the inode: it may hold spaces.
	rest := line
	for i := 0; i < 5; i++ {
		rest = strings.TrimLeft(rest, " \t")
		if j := strings.IndexAny(rest, " \t"); j >= 0 {
			rest = rest[j:]
		}
	}
	path := strings.TrimLeft(rest, " \t")
	path = strings.TrimSuffix(path, " (deleted)")
	if !strings.HasPrefix(path, "/") && path != "[vdso]" {
		return m, "", false
	}
	m.path = path
	return m, rng, true
}

// openMapped reads the ELF file behind mapping m of pid. The file is
// opened through /proc/PID/map_files first: that is the very file mapped,
// even if it was deleted or replaced on disk since; then through the
// process's root (its mount namespace); then by path.
func (s *Symbolizer) openMapped(pid int, dir, rng string, m mapping) *elfObj {
	if m.path == "[vdso]" {
		return s.vdso(dir, m)
	}
	if strings.HasPrefix(m.path, "/dev/") {
		return nil // device memory: opening it could have side effects
	}
	for _, name := range []string{dir + "/map_files/" + rng, dir + "/root" + m.path, m.path} {
		if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		o, err := openObj(f, m.path)
		f.Close()
		if err == nil {
			return o
		}
		// Not ELF (a font, a locale archive): no other name will do better.
		return nil
	}
	return nil
}

// vdso parses the kernel's vDSO image out of the process's memory. It is
// the same for every process, so it is read once.
func (s *Symbolizer) vdso(dir string, m mapping) *elfObj {
	if s.vdsoObj != nil || s.vdsoTried {
		return s.vdsoObj
	}
	s.vdsoTried = true
	f, err := os.Open(dir + "/mem")
	if err != nil {
		return nil
	}
	defer f.Close()
	size := m.end - m.start
	if size == 0 || size > 1<<20 {
		return nil
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, int64(m.start)); err != nil {
		return nil
	}
	o, err := parseELF(bytes.NewReader(buf), "[vdso]")
	if err != nil {
		return nil
	}
	s.vdsoObj = o
	return o
}

// userFrameLocked resolves addr in process pid.
func (s *Symbolizer) userFrameLocked(pid int, addr uint64) (sym *Symbol, off uint64, module string) {
	if pid <= 0 {
		return nil, 0, ""
	}
	p := s.procLocked(pid)
	m := p.find(addr)
	if m == nil && p.alive && time.Since(p.refresh) >= refreshEvery {
		// Maybe mapped since the snapshot: re-read, keeping the old
		// snapshot if the process is gone by now.
		if np := s.readProc(pid); np.alive {
			s.procs[pid] = np
			p = np
			m = p.find(addr)
		} else {
			p.refresh = time.Now()
		}
	}
	if m == nil {
		if sm, ok := lookupSorted(p.perf, addr); ok {
			return sm, addr - sm.Addr, p.perfPath
		}
		if !p.alive || len(p.maps) == 0 {
			// Gone before its map was read (a zombie's map is empty): a
			// probed non-PIE program's addresses are its ELF file's.
			if sm, off, module, ok := s.programFrameLocked(addr); ok {
				return sm, off, module
			}
		}
		return nil, 0, ""
	}
	fileOff := addr - m.start + m.pgoff
	vaddr, ok := m.obj.vaddrOf(fileOff)
	if !ok {
		if m.obj.typ == elf.ET_EXEC {
			vaddr = addr
		} else {
			vaddr = fileOff
		}
	}
	sm, ok := m.obj.lookup(vaddr)
	if !ok {
		return nil, 0, m.path
	}
	return sm, vaddr - sm.Addr, m.path
}

func (p *procSyms) find(addr uint64) *mapping {
	i, _ := slices.BinarySearchFunc(p.maps, addr, func(m mapping, a uint64) int {
		if m.start <= a {
			return -1
		}
		return 1
	})
	// i is the first mapping starting above addr.
	if i == 0 {
		return nil
	}
	if m := &p.maps[i-1]; addr < m.end {
		return m
	}
	return nil
}

func (p *procSyms) String() string {
	var sb strings.Builder
	for _, m := range p.maps {
		fmt.Fprintf(&sb, "%x-%x %x %s\n", m.start, m.end, m.pgoff, m.path)
	}
	return sb.String()
}

// readPerfMap reads the JIT symbol file of pid: "START SIZE NAME" lines
// (hex numbers), in the process's own /tmp and under its own pid number
// when it runs in a pid namespace.
func readPerfMap(dir string, pid int) ([]Symbol, string) {
	nspid := strconv.Itoa(pid)
	if status, err := os.ReadFile(dir + "/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					nspid = f[len(f)-1]
				}
			}
		}
	}
	name := "/tmp/perf-" + nspid + ".map"
	data, err := os.ReadFile(dir + "/root" + name)
	if err != nil {
		return nil, ""
	}
	var syms []Symbol
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			continue
		}
		start, err1 := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err1 != nil || err2 != nil || f[2] == "" {
			continue
		}
		syms = append(syms, Symbol{Name: f[2], Addr: start, Size: size, Type: SymFunc})
	}
	// Later lines win for re-JITted code at the same address: sort stably
	// and keep the last of equal addresses.
	slices.SortStableFunc(syms, func(a, b Symbol) int { return cmp.Compare(a.Addr, b.Addr) })
	out := syms[:0]
	for i, sm := range syms {
		if i+1 < len(syms) && syms[i+1].Addr == sm.Addr {
			continue
		}
		out = append(out, sm)
	}
	return out, "/tmp/perf-" + strconv.Itoa(pid) + ".map"
}

// AddProgram registers an executable the tracer probes (a uprobe's
// binary). Addresses of a process that is gone before its memory map
// could be read (a short-lived program, traced to its exit) resolve
// against it when it is a fixed-address (non-PIE) executable, whose code
// runs at the addresses its ELF file gives: there the answer needs no
// memory map. PIE executables and libraries load at a base only the map
// knows; their addresses stay numbers, as bpftrace prints them. The file
// is read only when such an address needs it.
func (s *Symbolizer) AddProgram(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.programs {
		if p.path == path {
			return
		}
	}
	s.programs = append(s.programs, program{path: path})
}

// programFrameLocked resolves addr in the fixed-address executables
// AddProgram registered: the one whose executable PT_LOAD segment holds
// it.
func (s *Symbolizer) programFrameLocked(addr uint64) (sym *Symbol, off uint64, module string, ok bool) {
	for i := range s.programs {
		p := &s.programs[i]
		if !p.read {
			p.read = true
			if f, err := os.Open(p.path); err == nil {
				if o, err := openObj(f, p.path); err == nil && o.typ == elf.ET_EXEC {
					p.obj = o
				}
				f.Close()
			}
		}
		if p.obj == nil {
			continue
		}
		for _, l := range p.obj.loads {
			if l.Flags&elf.PF_X == 0 || addr < l.Vaddr || addr >= l.Vaddr+l.Memsz {
				continue
			}
			if sm, found := p.obj.lookup(addr); found {
				return sm, addr - sm.Addr, p.path, true
			}
			return nil, 0, p.path, true
		}
	}
	return nil, 0, "", false
}

// program is a probed executable (AddProgram); obj is set once read when
// it is a fixed-address one.
type program struct {
	path string
	read bool
	obj  *elfObj
}
