package output

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/lang/types"
)

// FrameKind says where a folded frame comes from, for the flame graph's
// colours.
type FrameKind uint8

const (
	FrameKey    FrameKind = iota // a key part that is not a stack (comm, pid, ...)
	FrameUser                    // a ustack frame
	FrameKernel                  // a kstack frame
)

// FoldedFrame is one frame of a folded stack.
type FoldedFrame struct {
	Name string
	Kind FrameKind
}

// FoldedStack is one line of folded output: frames root first, and the
// map value for them.
type FoldedStack struct {
	Frames []FoldedFrame
	Value  uint64
}

// Text is the stack as stackcollapse writes it: "root;...;leaf value".
func (s FoldedStack) Text() string {
	var sb strings.Builder
	for i, f := range s.Frames {
		if i > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(f.Name)
	}
	sb.WriteByte(' ')
	sb.WriteString(strconv.FormatUint(s.Value, 10))
	return sb.String()
}

// HasStackKey reports whether a map is keyed (also) by a kstack or ustack.
func HasStackKey(m MapData) bool {
	if m.Info == nil {
		return false
	}
	for _, k := range m.Info.KeyParts {
		if k != nil && k.Kind == types.Stack {
			return true
		}
	}
	return len(m.Info.KeyParts) == 0 && m.Info.Key != nil && m.Info.Key.Kind == types.Stack
}

// Folded returns the map's entries as folded stacks, in the order
// stackcollapse writes them (by text). The frames of a line are, from the
// root: the key parts that are not stacks, in key order; the user stack's
// frames, outermost first; then the kernel stack's (the kernel runs on
// top of the user code that entered it). A map without keys folds to its
// name. The value is the count, sum, min, max or integer value; the
// average of avg; the count of stats, hist and lhist. Entries with a value
// of zero or below are left out (a flame graph has no negative widths);
// maps of other values (strings, stacks, ...) fold to nothing, ok false.
func (p *Printer) Folded(m MapData) (stacks []FoldedStack, ok bool, err error) {
	if m.Info == nil || m.Info.Value == nil {
		return nil, false, fmt.Errorf("fold map: no map type")
	}
	vt := m.Info.Value
	switch vt.Kind {
	case types.Count, types.Sum, types.Min, types.Max, types.Avg, types.Stats, types.Hist, types.Lhist:
	default:
		if !isIntValue(vt) {
			return nil, false, nil
		}
	}
	rows, err := p.rows(m)
	if err != nil {
		return nil, true, fmt.Errorf("fold map %s: %w", m.Info.Name, err)
	}
	merged := map[string]int{}
	for _, r := range rows {
		var n int64
		switch vt.Kind {
		case types.Count:
			n = int64(r.uscalar)
		case types.Stats:
			n = r.count
		case types.Hist, types.Lhist:
			n = int64(r.uscalar)
		default:
			n = r.scalar
		}
		if n <= 0 {
			continue
		}
		frames := p.foldFrames(m, r.key)
		s := FoldedStack{Frames: frames, Value: uint64(n)}
		key := s.Text()
		key = key[:strings.LastIndexByte(key, ' ')]
		// Stacks that differ only in offsets fold to one line.
		if i, dup := merged[key]; dup {
			stacks[i].Value += s.Value
			continue
		}
		merged[key] = len(stacks)
		stacks = append(stacks, s)
	}
	sort.SliceStable(stacks, func(i, j int) bool { return stacks[i].Text() < stacks[j].Text() })
	return stacks, true, nil
}

// foldFrames lays out one key as frames, root first.
func (p *Printer) foldFrames(m MapData, parts []Value) []FoldedFrame {
	var keys, user, kernel []FoldedFrame
	for _, v := range parts {
		if v.Kind() != types.Stack {
			keys = append(keys, FoldedFrame{Name: foldName(p.keyPartText(v)), Kind: FrameKey})
			continue
		}
		fs := p.stackFrames(v)
		if v.Type.Stack.User {
			user = append(user, fs...)
		} else {
			kernel = append(kernel, fs...)
		}
	}
	frames := append(append(keys, user...), kernel...)
	if len(frames) == 0 {
		frames = []FoldedFrame{{Name: foldName(m.Info.Name), Kind: FrameKey}}
	}
	return frames
}

// stackFrames resolves a stack value to frames, outermost first: function
// names without offsets (samples in one function add up), the hex address
// when the address resolves to nothing, "[unknown]" for an unreadable
// stack, "[lost]" for one lost to a full stack map (or a collision in a
// kernel STACK_TRACE map), nothing when the probe had no stack of this kind.
func (p *Printer) stackFrames(v Value) []FoldedFrame {
	kind := FrameKernel
	if v.Type.Stack.User {
		kind = FrameUser
	}
	info := v.Type.Stack
	id := v.Int()
	switch {
	case id == -7 || id == -12 || id == -17:
		// -E2BIG (-ENOMEM): the stack map was full; -EEXIST: a
		// bpf_get_stackid hash collision.
		return []FoldedFrame{{Name: "[lost]", Kind: kind}}
	case id < 0:
		return nil // no stack of this kind (a kstack sampled in user mode)
	case p.syms == nil:
		return []FoldedFrame{{Name: "[unknown]", Kind: kind}}
	}
	frames, err := p.syms.Stack(info, id, int(v.Aux))
	if err != nil {
		return []FoldedFrame{{Name: "[unknown]", Kind: kind}}
	}
	if info.Limit > 0 && len(frames) > info.Limit {
		frames = frames[:info.Limit]
	}
	var out []FoldedFrame
	for _, f := range frames {
		if f.Addr == 0 {
			break
		}
		name := UnknownAddr(f.Addr)
		if f.Sym != "" {
			name = f.Sym
		}
		out = append(out, FoldedFrame{Name: foldName(name), Kind: kind})
	}
	// Innermost first as read: reverse to root first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// foldName keeps a frame on its line: ';' separates frames and the last
// space the count, so a frame holds no ';' or newline (spaces are fine,
// as in C++ names).
func foldName(s string) string {
	s = strings.TrimSpace(s)
	return strings.NewReplacer(";", ":", "\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// foldedMap prints a map in the folded format (-f folded), one line per
// stack; maps of values that do not fold print as text.
func (p *Printer) foldedMap(m MapData) error {
	stacks, ok, err := p.Folded(m)
	if err != nil {
		return err
	}
	if !ok {
		p.format = Text
		defer func() { p.format = Folded }()
		return p.Map(m)
	}
	var sb strings.Builder
	for _, s := range stacks {
		sb.WriteString(s.Text())
		sb.WriteByte('\n')
	}
	return p.write(sb.String())
}
