package runtime

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
)

// The `probe` builtin is an index into the probe table, Spec.Probes
// (compiler/ABI.md). The compiler knows the names of attach points that
// name one probe; wildcard attach points are named only here, once they are
// expanded against the live system: their programs read the index from the
// attach cookie, and nameProbes gives each expanded probe the index of its
// full name, appending names the table lacks.

// nameProbes completes the probe table for the plan: it renames the
// constant entry of a uprobe/usdt attach point whose target was resolved
// (a library name becomes its path, as bpftrace prints it) and sets each
// cookie-reading program's probes' cookies. It writes l.Spec.Probes only
// when something changes; the printer reads it from the Spec
// (TextPrinter.syncProbeNames).
func (l *Loaded) nameProbes(pl *plan) {
	names := l.Spec.Probes
	changed := false
	for _, g := range pl.groups {
		p := g.prog
		if p.Probe != compiler.ProbeConst || p.ProbeID < 0 || p.ProbeID >= len(names) || len(g.probes) == 0 {
			continue
		}
		if !g.ap.Provider.Type().UserMem {
			continue // the compiler's name is the name (the runtime resolves only user paths)
		}
		name := g.probes[0].Name
		for _, pr := range g.probes[1:] {
			if pr.Name != name {
				name = "" // several names: keep the attach point's
				break
			}
		}
		if name != "" && names[p.ProbeID] != name {
			names[p.ProbeID] = name
			changed = true
		}
	}
	var index map[string]int
	for _, g := range pl.groups {
		if g.prog.Probe != compiler.ProbeCookie {
			continue
		}
		if index == nil {
			index = make(map[string]int, len(names))
			for i, n := range names {
				if _, dup := index[n]; !dup {
					index[n] = i
				}
			}
		}
		for _, pr := range g.probes {
			i, ok := index[pr.Name]
			if !ok {
				i = len(names)
				names = append(names, pr.Name)
				index[pr.Name] = i
				changed = true
			}
			pr.Cookie = uint64(i)
		}
	}
	if changed {
		l.Spec.Probes = names
	}
}

// writeProbeNames fills the probe-names map, when a program reads `probe`
// as a string (compiler.MapProbeNames), from the completed probe table.
func (l *Loaded) writeProbeNames() error {
	m := l.Maps[compiler.MapProbeNames]
	if m == nil {
		return nil
	}
	for i, n := range l.Spec.Probes {
		if uint32(i) >= m.MaxEntries() {
			return fmt.Errorf("the probe names map holds %d names, the program has %d probes", m.MaxEntries(), len(l.Spec.Probes))
		}
		v := make([]byte, m.ValueSize())
		copy(v[:len(v)-1], n)
		if err := m.Update(uint32(i), v, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("write probe name %d: %w", i, err)
		}
	}
	return nil
}

// syncProbeNames hands the printer the final probe table (the runtime
// extends Spec.Probes at expand time, after the printer was made).
func (t *TextPrinter) syncProbeNames() {
	if t.Spec != nil {
		t.P.ProbeNames = t.Spec.Probes
	}
}

// perfLinkWithCookie links prog to the perf event perfFD with a BPF
// cookie (BPF_LINK_CREATE, attach type BPF_PERF_EVENT; Linux 5.15) and
// returns the link's descriptor.
func perfLinkWithCookie(prog *ebpf.Program, perfFD int, cookie uint64) (int, error) {
	// union bpf_attr's link_create: prog_fd, target_fd, attach_type,
	// flags, then perf_event.bpf_cookie. The kernel zero-fills the rest.
	attr := struct {
		progFD, targetFD, attachType, flags uint32
		cookie                              uint64
	}{uint32(prog.FD()), uint32(perfFD), unix.BPF_PERF_EVENT, 0, cookie}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return -1, fmt.Errorf("create perf link with cookie: %w", errno)
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}
