package output

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/lang/types"
)

// A stack's text, as bpftrace prints a kstack/ustack: a newline, then one
// line per frame (indent spaces and sym+off in bpftrace mode; a tab, the
// hex address, sym+off and, for user stacks, the module in perf mode; the
// hex address in raw mode). Unreadable stacks print as nothing.
//
// While a map prints (Map), every stack's text is held as its lines, each
// line an index into a table of the distinct lines (stackMemo): sorting the
// map by its stacks' text and printing its rows then symbolize each stack
// once, a kernel frame's line is made once per address, and holding every
// stack of the map costs 4 bytes a frame, not its text (~0.75 KB a kernel
// stack of 20 frames) nor a string header a frame.

// KernelStacker is a Symbolizer that gives a kernel stack's addresses and
// resolves one kernel address: a map's printing then makes the line of
// each distinct address once, not once per stack that holds it.
type KernelStacker interface {
	// KernelStackAddrs is the addresses of kernel stack id, innermost
	// first, cut to info's frame limit; the caller must not change them.
	KernelStackAddrs(info types.StackInfo, id int64) ([]uint64, error)
	// KernelFrame resolves addr (Sym "" when unknown).
	KernelFrame(addr uint64) Frame
}

// lineID names a line in a stackMemo's table.
type lineID uint32

// stackMemo holds the stacks' lines made while one map prints.
type stackMemo struct {
	text    []string          // by lineID
	ids     map[string]lineID // text → lineID
	byStack map[stackTextKey][]lineID
	// byFrame is the kernel frames' lines by form, then address.
	byFrame map[frameForm]map[uint64]lineID
	// rank orders the lines by their text (rank[id]), made by ranked for
	// a sort: stacks then compare by integers.
	rank []uint32
}

func newStackMemo() *stackMemo {
	return &stackMemo{ids: map[string]lineID{}, byStack: map[stackTextKey][]lineID{}, byFrame: map[frameForm]map[uint64]lineID{}}
}

// ranked makes rank for the lines in the table: sorting the distinct
// lines once (a few 10⁴ for 10⁵ kernel stacks) rather than comparing
// their texts in every comparison of two stacks.
func (m *stackMemo) ranked() []uint32 {
	if len(m.rank) == len(m.text) {
		return m.rank
	}
	order := make([]lineID, len(m.text))
	for i := range order {
		order[i] = lineID(i)
	}
	slices.SortFunc(order, func(a, b lineID) int { return strings.Compare(m.text[a], m.text[b]) })
	m.rank = make([]uint32, len(m.text))
	for r, id := range order {
		m.rank[id] = uint32(r) // the lines are distinct: no equal ranks
	}
	return m.rank
}

// id is line l's id, added to the table when new.
func (m *stackMemo) id(l string) lineID {
	if id, ok := m.ids[l]; ok {
		return id
	}
	id := lineID(len(m.text))
	m.text = append(m.text, l)
	m.ids[l] = id
	return id
}

// stackTextKey names a stack's text within one map's printing: the same
// stack id (and, for a user stack, process) in the same form.
type stackTextKey struct {
	info   types.StackInfo
	id     int64
	pid    uint64
	indent int
}

// frameForm is a form of kernel frame lines.
type frameForm struct {
	mode   types.StackMode
	indent int
}

// stackText is stack value v's text, its frames indented by indent spaces
// in bpftrace mode.
func (p *Printer) stackText(v Value, indent int) string {
	var b strings.Builder
	p.emitStack(v, indent, func(l string) { b.WriteString(l) })
	return b.String()
}

// emitStack calls emit with each line of stack value v's text: the lines
// held for the map being printed (stackLines) when there is one, else
// made now.
func (p *Printer) emitStack(v Value, indent int, emit func(string)) {
	if m := p.stacks; m != nil && heldAsLines(&v) {
		for _, id := range p.stackLines(v, indent) {
			emit(m.text[id])
		}
		return
	}
	p.eachStackLine(v, indent, emit)
}

// heldAsLines reports whether v is a stack whose lines a map's printing
// holds (stackLines): every stack but a dw_ustack, which carries its own
// registers and stack copy rather than an id.
func heldAsLines(v *Value) bool { return v.Kind() == types.Stack && !v.Type.Stack.Dwarf }

// stackLines is a stack's text as its lines (the first the leading "\n"),
// made once per map printed (p.stacks is not nil, heldAsLines(v)); nil
// for an unreadable stack.
func (p *Printer) stackLines(v Value, indent int) []lineID {
	m := p.stacks
	info := v.Type.Stack
	k := stackTextKey{info: info, id: v.Int(), pid: v.Aux, indent: indent}
	if ids, ok := m.byStack[k]; ok {
		return ids
	}
	var ids []lineID
	if ks, ok := p.syms.(KernelStacker); ok && !info.User && info.Mode != types.StackBuildID && k.id >= 0 {
		ids = p.kernelStackLines(ks, m, v, indent)
	} else {
		p.eachStackLine(v, indent, func(l string) { ids = append(ids, m.id(l)) })
	}
	m.byStack[k] = ids
	return ids
}

// kernelStackLines is stackLines for a kernel stack, each frame's line
// made once per address.
func (p *Printer) kernelStackLines(ks KernelStacker, m *stackMemo, v Value, indent int) []lineID {
	info := v.Type.Stack
	addrs, err := ks.KernelStackAddrs(info, v.Int())
	if err != nil {
		return nil
	}
	if info.Limit > 0 && len(addrs) > info.Limit {
		addrs = addrs[:info.Limit]
	}
	ids := make([]lineID, 1, len(addrs)+1)
	ids[0] = m.id("\n")
	pad := strings.Repeat(" ", indent)
	form := frameForm{mode: info.Mode, indent: indent}
	byAddr := m.byFrame[form]
	if byAddr == nil {
		byAddr = map[uint64]lineID{}
		m.byFrame[form] = byAddr
	}
	for _, a := range addrs {
		if a == 0 {
			break
		}
		id, ok := byAddr[a]
		if !ok {
			id = m.id(p.frameLine(info, pad, ks.KernelFrame(a), 0))
			byAddr[a] = id
		}
		ids = append(ids, id)
	}
	return ids
}

// compareLines orders two stacks' lines as their joined texts, given the
// lines' ranks (stackMemo.ranked): every line ends in its only newline,
// so no line is a proper prefix of another and the first that differs
// decides.
func compareLines(a, b []lineID, rank []uint32) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return cmp.Compare(rank[a[i]], rank[b[i]])
		}
	}
	return cmp.Compare(len(a), len(b))
}

// eachStackLine calls emit with each line of stack value v's text: none
// for an unreadable stack.
func (p *Printer) eachStackLine(v Value, indent int, emit func(string)) {
	info := v.Type.Stack
	id := v.Int()
	if p.syms == nil || id < 0 {
		return
	}
	var frames []Frame
	var err error
	if info.Dwarf {
		ds, ok := p.syms.(DwarfStacker)
		if !ok {
			return
		}
		frames, err = ds.DwarfStack(int(v.Aux), v.Bytes)
	} else {
		frames, err = p.syms.Stack(info, id, int(v.Aux))
	}
	if err != nil {
		return
	}
	if info.Limit > 0 && len(frames) > info.Limit {
		frames = frames[:info.Limit]
	}
	emit("\n")
	pad := strings.Repeat(" ", indent)
	for _, f := range frames {
		if f.Addr == 0 {
			break
		}
		if l := p.frameLine(info, pad, f, int(v.Aux)); l != "" {
			emit(l)
		}
	}
}

// frameLine is frame f's line in a stack of kind info (pad: the indent of
// bpftrace mode), of process pid for a user stack; "" for an inlined
// frame in the forms that list addresses only.
func (p *Printer) frameLine(info types.StackInfo, pad string, f Frame, pid int) string {
	sym := UnknownAddr(f.Addr)
	if f.Sym != "" {
		sym = f.Sym + "+" + strconv.FormatUint(f.Offset, 10)
	}
	if f.Inlined {
		// bpftrace 0.26: "[inlined] fn@file:line", in perf mode
		// "addr fn (inlined)"; raw and build_id modes list addresses.
		switch info.Mode {
		case types.StackPerf:
			return "\t" + strconv.FormatUint(f.Addr, 16) + " " + f.Sym + " (inlined)\n"
		case types.StackRaw, types.StackBuildID:
			return ""
		default:
			return pad + "[inlined] " + f.Sym + sourceSuffix(f) + "\n"
		}
	}
	switch info.Mode {
	case types.StackBuildID:
		return BuildIDFrame(pid, f.Addr) + "\n"
	case types.StackPerf:
		l := "\t" + strconv.FormatUint(f.Addr, 16) + " " + sym
		if info.User {
			mod := f.Module
			if mod == "" {
				mod = "[unknown]"
			}
			l += " (" + mod + ")"
		}
		return l + "\n"
	case types.StackRaw:
		return strconv.FormatUint(f.Addr, 16) + "\n"
	default:
		return pad + sym + sourceSuffix(f) + "\n"
	}
}
