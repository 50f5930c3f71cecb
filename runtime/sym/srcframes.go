package sym

import (
	"debug/elf"

	"github.com/gotrace/gotrace/runtime/output"
)

// Source lines and inlined calls in user stacks (bpftrace 0.26's
// show_debug_info, on by default): each frame of a module with DWARF
// line tables gets its file and line, and the calls inlined at its
// address become frames of their own before it, innermost first.

// SetDebugInfo turns source lines and inlined frames in user stacks on
// or off (config show_debug_info; off under --compat 0.17).
func (s *Symbolizer) SetDebugInfo(on bool) {
	s.mu.Lock()
	s.debugInfo = on
	s.mu.Unlock()
}

// withSourceLocked adds the source information to frames of process pid.
func (s *Symbolizer) withSourceLocked(pid int, frames []output.Frame) []output.Frame {
	if !s.debugInfo || pid <= 0 {
		return frames
	}
	p := s.procLocked(pid)
	out := make([]output.Frame, 0, len(frames))
	for i, f := range frames {
		at := f.Addr
		if i > 0 && at > 0 {
			at-- // a return address: the call is before it
		}
		m := p.find(at)
		if m == nil || m.obj == nil || f.Sym == "" {
			out = append(out, f)
			continue
		}
		vaddr, ok := m.obj.vaddrOf(at - m.start + m.pgoff)
		if !ok {
			if m.obj.typ != elf.ET_EXEC {
				out = append(out, f)
				continue
			}
			vaddr = at
		}
		l, ok := SourceAt(m.path, vaddr)
		if !ok {
			out = append(out, f)
			continue
		}
		row, ok := l.At(vaddr)
		if !ok {
			out = append(out, f)
			continue
		}
		file, line := row.File, row.Line
		for _, c := range l.InlinedAt(vaddr) {
			out = append(out, output.Frame{Addr: f.Addr, Sym: s.displayLocked(c.Func), Module: f.Module, File: file, Line: line, Inlined: true})
			file, line = c.CallFile, c.CallLine
		}
		f.File, f.Line = file, line
		out = append(out, f)
	}
	return out
}
