package sym

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"github.com/gotrace/gotrace/ktypes"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Source lines and inlined calls from a binary's DWARF (its own, or a
// separate debug file's: OpenDWARF), for `uprobe:BIN@FILE:LINE[:COL]`
// statement probes and for the `func+off@file:line` and `[inlined]`
// frames bpftrace 0.26 prints in stacks.

// LineRow is one row of a line table: code from Addr on is FILE:LINE.
type LineRow struct {
	Addr   uint64
	File   string
	Line   int
	Col    int
	IsStmt bool
}

// InlineCall is one inlined call: code in [Low, High) is Func inlined into
// its caller, called from CallFile:CallLine; Depth counts the inlined
// calls around it (0: directly in a real function).
type InlineCall struct {
	Low, High uint64
	Func      string
	CallFile  string
	CallLine  int
	Depth     int
}

// DebugLines is one binary's line table and inlined calls, read once.
type DebugLines struct {
	Rows    []LineRow // by address; an end_sequence row has Line 0
	Inlines []InlineCall
}

var linesCache sync.Map // path → *linesEntry

type linesEntry struct {
	once sync.Once
	l    *DebugLines
	err  error
}

// Lines reads the line table and inlined calls of the ELF file at path
// (cached per path).
func Lines(path string) (*DebugLines, error) {
	v, _ := linesCache.LoadOrStore(path, &linesEntry{})
	e := v.(*linesEntry)
	e.once.Do(func() { e.l, e.err = readLines(path) })
	return e.l, e.err
}

// OpenDWARFData returns the DWARF of the ELF file at path, from the file
// itself or its separate debug file.
func OpenDWARFData(path string) (*dwarf.Data, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src := f
	if f.Section(".debug_info") == nil && f.Section(".zdebug_info") == nil {
		dbg, _ := ktypes.OpenDWARF(f, path, nil)
		if dbg == nil {
			return nil, fmt.Errorf("no debug information for %s", path)
		}
		defer dbg.Close()
		src = dbg
	}
	return src.DWARF()
}

func readLines(path string) (*DebugLines, error) {
	d, err := OpenDWARFData(path)
	if err != nil {
		return nil, err
	}
	out := &DebugLines{}
	if err := readUnits(d, d.Reader(), nil, out); err != nil {
		return nil, fmt.Errorf("reading the DWARF of %s: %w", path, err)
	}
	sort.SliceStable(out.Rows, func(i, j int) bool { return out.Rows[i].Addr < out.Rows[j].Addr })
	return out, nil
}

// readUnits adds the line rows and inlined calls of the units r reads to
// out: all of them, or with first set only that unit (r positioned at its
// children, as SeekPC leaves it).
func readUnits(d *dwarf.Data, r *dwarf.Reader, first *dwarf.Entry, out *DebugLines) error {
	depth := 0 // of inlined_subroutine nesting, tracked by entry children
	var stack []bool
	var files []*dwarf.LineFile // of the current unit
	unit := func(e *dwarf.Entry) {
		depth, stack = 0, stack[:0]
		files = nil
		if lr, err := d.LineReader(e); err == nil && lr != nil {
			files = lr.Files()
			var le dwarf.LineEntry
			for lr.Next(&le) == nil {
				row := LineRow{Addr: le.Address, Line: le.Line, Col: le.Column, IsStmt: le.IsStmt}
				if le.File != nil {
					row.File = le.File.Name
				}
				if le.EndSequence {
					row.Line, row.File = 0, ""
				}
				out.Rows = append(out.Rows, row)
			}
		}
		if e.Children {
			stack = append(stack, false)
		}
	}
	if first != nil {
		unit(first)
	}
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		if e.Tag == 0 {
			if n := len(stack); n > 0 {
				if stack[n-1] {
					depth--
				}
				stack = stack[:n-1]
			}
			continue
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagSkeletonUnit, dwarf.TagPartialUnit:
			if first != nil {
				return nil // the next unit
			}
			unit(e)
			continue
		case dwarf.TagInlinedSubroutine:
			name := inlineName(d, e)
			file := ""
			if fi, ok := e.Val(dwarf.AttrCallFile).(int64); ok && fi >= 0 && int(fi) < len(files) && files[fi] != nil {
				file = files[fi].Name
			}
			line, _ := e.Val(dwarf.AttrCallLine).(int64)
			if rs, err := d.Ranges(e); err == nil {
				for _, rg := range rs {
					out.Inlines = append(out.Inlines, InlineCall{Low: rg[0], High: rg[1], Func: name, CallFile: file, CallLine: int(line), Depth: depth})
				}
			}
			if e.Children {
				depth++
				stack = append(stack, true)
			}
			continue
		}
		if e.Children {
			stack = append(stack, false)
		}
	}
}

// unitCache holds, per file, its DWARF and the units read so far, for
// source lines of stack frames: only the unit holding an address is
// read (a libc's debug file has thousands).
type unitCache struct {
	once  sync.Once
	d     *dwarf.Data
	mu    sync.Mutex
	units map[dwarf.Offset]*DebugLines
}

var unitCaches sync.Map // path → *unitCache

// SourceAt is the line table and inlined calls of the unit of the ELF
// file at path that holds code address vaddr; ok false without DWARF.
func SourceAt(path string, vaddr uint64) (*DebugLines, bool) {
	v, _ := unitCaches.LoadOrStore(path, &unitCache{})
	c := v.(*unitCache)
	c.once.Do(func() {
		c.d, _ = OpenDWARFData(path)
		c.units = map[dwarf.Offset]*DebugLines{}
	})
	if c.d == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.d.Reader()
	cu, err := r.SeekPC(vaddr)
	if err != nil || cu == nil {
		return nil, false
	}
	if l, ok := c.units[cu.Offset]; ok {
		return l, l != nil
	}
	l := &DebugLines{}
	if err := readUnits(c.d, r, cu, l); err != nil {
		c.units[cu.Offset] = nil
		return nil, false
	}
	sort.SliceStable(l.Rows, func(i, j int) bool { return l.Rows[i].Addr < l.Rows[j].Addr })
	c.units[cu.Offset] = l
	return l, true
}

// inlineName is the name of the function an inlined_subroutine (or an
// abstract-origin chain) stands for.
func inlineName(d *dwarf.Data, e *dwarf.Entry) string {
	for i := 0; i < 8 && e != nil; i++ {
		if n, ok := e.Val(dwarf.AttrName).(string); ok {
			return n
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			return ""
		}
		r := d.Reader()
		r.Seek(off)
		e, _ = r.Next()
	}
	return ""
}

// sameFile reports whether a line table's file name (often absolute)
// is the one a probe names: equal, or ending in /NAME.
func sameFile(table, want string) bool {
	if table == want {
		return true
	}
	want = strings.TrimPrefix(want, "./")
	return strings.HasSuffix(table, "/"+want) || filepath.Base(table) == want && !strings.Contains(want, "/")
}

// LineAddrs are the addresses where statement FILE:LINE[:COL] of the
// binary at path starts: per run of consecutive rows of that line, the
// first is_stmt row's address (one per place the compiler put it, so a
// probe there counts each execution of the line once).
func LineAddrs(path, file string, line, col int) ([]uint64, error) {
	l, err := Lines(path)
	if err != nil {
		return nil, err
	}
	var out []uint64
	seen := map[uint64]bool{}
	in := false // the previous row is of this line
	fileSeen := false
	for _, r := range l.Rows {
		match := r.Line == line && sameFile(r.File, file) && (col == 0 || r.Col == col)
		if r.Line != 0 && sameFile(r.File, file) {
			fileSeen = true
		}
		if match && r.IsStmt && !in && !seen[r.Addr] {
			seen[r.Addr] = true
			out = append(out, r.Addr)
		}
		in = match
	}
	if len(out) == 0 {
		if !fileSeen {
			return nil, fmt.Errorf("no source file %s in the debug information of %s", file, path)
		}
		if col != 0 {
			return nil, fmt.Errorf("no code for %s:%d:%d in %s", file, line, col, path)
		}
		return nil, fmt.Errorf("no code for %s:%d in %s", file, line, path)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// At is the source line of code address addr (an ELF virtual address):
// the row covering it, or ok false.
func (l *DebugLines) At(addr uint64) (LineRow, bool) {
	i := sort.Search(len(l.Rows), func(i int) bool { return l.Rows[i].Addr > addr }) - 1
	if i < 0 || l.Rows[i].Line == 0 {
		return LineRow{}, false
	}
	return l.Rows[i], true
}

// InlinedAt are the inlined calls covering addr, innermost first.
func (l *DebugLines) InlinedAt(addr uint64) []InlineCall {
	var out []InlineCall
	for _, c := range l.Inlines {
		if addr >= c.Low && addr < c.High {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Depth > out[j].Depth })
	return out
}
