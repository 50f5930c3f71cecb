package sym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"syscall"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// MaxStackDepth is the kernel's default perf_event_max_stack: a stack map
// value holds at most this many u64 frames.
const MaxStackDepth = 127

// DefaultStackMapEntries is the max_entries of gotrace's stack maps: the
// distinct stacks of one kind (kernel/user, limit) each holds. A stack map
// is a hash map keyed by the stack's id, a hash of its frames
// (stdlib.StackHash), whose value is the frames: distinct stacks are kept
// until the map is full; those after are lost (-E2BIG) and counted
// (StackErrors). GOTRACE_STACK_MAP_ENTRIES overrides it at load time
// (runtime: stackMapEntries).
const DefaultStackMapEntries = 4096

// ErrNoStack is returned for a stack id the map does not hold.
var ErrNoStack = errors.New("stack not found")

// SetStackMap gives the Symbolizer the stack map name (stack_k,
// stack_u, stack_k_N, stack_u_N: types.StackInfo.MapName), from which
// stacks of that kind are read; a nil m forgets it.
func (s *Symbolizer) SetStackMap(name string, m *ebpf.Map) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == nil {
		delete(s.stacks, name)
		return
	}
	if s.stacks == nil {
		s.stacks = map[string]*ebpf.Map{}
	}
	s.stacks[name] = m
}

// SetStackMaps gives the Symbolizer the default-limit STACK_TRACE maps
// stack_k and stack_u (either may be nil); SetStackMap gives any other.
// A stack map is keyed by the u64 stack id (gotrace's, ABI.md) or, for a
// kernel STACK_TRACE map, by the u32 id bpf_get_stackid returns.
func (s *Symbolizer) SetStackMaps(k, u *ebpf.Map) {
	s.SetStackMap(types.StackInfo{}.MapName(), k)
	s.SetStackMap(types.StackInfo{User: true}.MapName(), u)
}

// StackAddrs reads the raw addresses of stack id from the map of stacks
// of kind info, innermost first, up to the first zero or info's limit.
func (s *Symbolizer) StackAddrs(info types.StackInfo, id int64) ([]uint64, error) {
	addrs, err := s.stackAddrs(info, id)
	return slices.Clone(addrs), err
}

// KernelStackAddrs is StackAddrs without the copy (output.KernelStacker):
// the caller must not change what it gets.
func (s *Symbolizer) KernelStackAddrs(info types.StackInfo, id int64) ([]uint64, error) {
	return s.stackAddrs(info, id)
}

// stackAddrs is StackAddrs; a content-keyed map's addresses are those
// kept (keepFramesLocked), not a copy.
func (s *Symbolizer) stackAddrs(info types.StackInfo, id int64) ([]uint64, error) {
	name := info.MapName()
	s.mu.Lock()
	m := s.stacks[name]
	s.mu.Unlock()
	if id < 0 {
		return nil, fmt.Errorf("%s: stack id %d: %w", name, id, stackIDError(id))
	}
	if m == nil {
		return nil, fmt.Errorf("%s: no stack map", name)
	}
	if m.Type() == ebpf.Hash {
		s.mu.Lock()
		addrs, ok := s.frames[name][uint64(id)]
		s.mu.Unlock()
		if ok {
			return limitFrames(addrs, info), nil
		}
	}
	var key any = uint64(id)
	if m.KeySize() == 4 {
		if id > 0xffffffff {
			return nil, fmt.Errorf("%s: stack id %d out of range", name, id)
		}
		key = uint32(id)
	}
	b, err := m.LookupBytes(key)
	if err != nil {
		return nil, fmt.Errorf("%s: look up stack id %d: %w", name, id, err)
	}
	if b == nil {
		return nil, fmt.Errorf("%s: stack id %d: %w", name, id, ErrNoStack)
	}
	addrs := stackValue(b)
	if m.Type() == ebpf.Hash {
		s.mu.Lock()
		s.keepFramesLocked(name, uint64(id), addrs)
		s.mu.Unlock()
	}
	return limitFrames(addrs, info), nil
}

// stackValue is the addresses of a stack map's value, up to the first 0.
func stackValue(b []byte) []uint64 {
	n := 0
	for n*8+8 <= len(b) && binary.LittleEndian.Uint64(b[n*8:]) != 0 {
		n++
	}
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	return addrs
}

// limitFrames is addrs cut to info's frame limit.
func limitFrames(addrs []uint64, info types.StackInfo) []uint64 {
	if n := info.Frames(); len(addrs) > n {
		addrs = addrs[:n:n]
	}
	return addrs
}

// keepFramesLocked remembers the addresses of stack id of map name.
func (s *Symbolizer) keepFramesLocked(name string, id uint64, addrs []uint64) {
	if s.frames == nil {
		s.frames = map[string]map[uint64][]uint64{}
	}
	byID := s.frames[name]
	if byID == nil {
		byID = map[uint64][]uint64{}
		s.frames[name] = byID
	}
	byID[id] = addrs
}

// Stack returns the frames of stack id, innermost first, read from the map
// of stacks of kind info and resolved in the kernel or (user stacks) in
// process pid. A negative id is the error of storing the stack: it is returned as
// an error (the caller counts it with CountStackError once per event).
func (s *Symbolizer) Stack(info types.StackInfo, id int64, pid int) ([]output.Frame, error) {
	addrs, err := s.stackAddrs(info, id)
	if err != nil {
		return nil, err
	}
	frames := make([]output.Frame, len(addrs))
	if !info.User {
		for i, a := range addrs {
			frames[i] = s.KernelFrame(a)
		}
		return frames, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range addrs {
		frames[i] = s.userFrameOutLocked(pid, a)
	}
	return s.withSourceLocked(pid, frames), nil
}

func stackIDError(id int64) error {
	switch -id {
	case int64(syscall.EEXIST):
		return fmt.Errorf("stack hash collision (%w)", syscall.EEXIST)
	case int64(syscall.E2BIG):
		return fmt.Errorf("stack map full (%w)", syscall.E2BIG)
	case int64(syscall.ENOMEM):
		return fmt.Errorf("stack map full (%w)", syscall.ENOMEM)
	case int64(syscall.EFAULT):
		return fmt.Errorf("stack not readable (%w)", syscall.EFAULT)
	}
	return fmt.Errorf("bpf_get_stackid error %d", id)
}

// StackErrors counts stacks that could not be stored.
type StackErrors struct {
	Collisions uint64 // -EEXIST: another stack holds the hash bucket (bpf_get_stackid)
	NoMemory   uint64 // -E2BIG or -ENOMEM: the map is full
	Fault      uint64 // -EFAULT: the stack could not be walked
	Other      uint64
}

// Total is the number of lost stacks.
func (e StackErrors) Total() uint64 { return e.Collisions + e.NoMemory + e.Fault + e.Other }

// Warnings are the lines to print at exit, one per kind of loss (kinds
// with no losses left out).
func (e StackErrors) Warnings() []string {
	var w []string
	if e.Collisions > 0 {
		w = append(w, fmt.Sprintf("WARNING: %d stack traces lost to hash collisions in the stack map (-EEXIST)", e.Collisions))
	}
	if e.NoMemory > 0 {
		w = append(w, fmt.Sprintf("WARNING: %d stack traces lost: stack map full (raise GOTRACE_STACK_MAP_ENTRIES, default %d)", e.NoMemory, DefaultStackMapEntries))
	}
	// -EFAULT is not a loss: the context has no such stack (a kstack in a
	// uprobe), which prints as an empty stack, as bpftrace prints it.
	if e.Other > 0 {
		w = append(w, fmt.Sprintf("WARNING: %d stack traces lost to other errors", e.Other))
	}
	return w
}

// CountStackError records n events whose stack id is the negative error
// id (non-negative ids are ignored), so the runtime can report losses at
// exit: per event, or per map entry with the entry's count.
func (s *Symbolizer) CountStackError(id int64, n uint64) {
	if id >= 0 || n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch -id {
	case int64(syscall.EEXIST):
		s.stackErrs.Collisions += n
	case int64(syscall.E2BIG), int64(syscall.ENOMEM):
		s.stackErrs.NoMemory += n
	case int64(syscall.EFAULT):
		s.stackErrs.Fault += n
	default:
		s.stackErrs.Other += n
	}
}

// StackErrors returns the losses counted so far.
func (s *Symbolizer) StackErrors() StackErrors {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stackErrs
}

// StackWarnings are StackErrors().Warnings(): the lines the runtime prints
// on stderr at exit.
func (s *Symbolizer) StackWarnings() []string { return s.StackErrors().Warnings() }
