package sym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// MaxStackDepth is the kernel's default perf_event_max_stack: a stack map
// value holds at most this many u64 frames.
const MaxStackDepth = 127

// DefaultStackMapEntries is the max_entries gotrace's stack maps should
// use. The kernel preallocates every entry (value size + a 16-byte
// header) and a power-of-two bucket array, so with 127 frames a map
// costs about 4.3 MB locked memory, against 136 MB for bpftrace's 131072
// entries. Distinct stacks that hash into a taken bucket fail with
// -EEXIST and are counted (StackErrors). GOTRACE_STACK_MAP_ENTRIES
// overrides it at load time (runtime: stackMapEntries).
const DefaultStackMapEntries = 4096

// StackMapMemory estimates the locked memory the kernel charges for a
// STACK_TRACE map (kernel/bpf/stackmap.c: preallocated elements plus
// the bucket pointer array).
func StackMapMemory(maxEntries, valueSize uint32) uint64 {
	buckets := uint64(1)
	for buckets < uint64(maxEntries) {
		buckets <<= 1
	}
	const bucketHeader = 16 // struct stack_map_bucket: freelist node, hash, nr
	return uint64(maxEntries)*(bucketHeader+uint64(valueSize)) + buckets*8
}

// ErrNoStack is returned for a stack id the map does not hold.
var ErrNoStack = errors.New("stack not found")

// SetStackMap gives the Symbolizer the STACK_TRACE map name (stack_k,
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
func (s *Symbolizer) SetStackMaps(k, u *ebpf.Map) {
	s.SetStackMap(types.StackInfo{}.MapName(), k)
	s.SetStackMap(types.StackInfo{User: true}.MapName(), u)
}

// StackAddrs reads the raw addresses of stack id from the map of stacks
// of kind info, innermost first, up to the first zero or info's limit.
func (s *Symbolizer) StackAddrs(info types.StackInfo, id int64) ([]uint64, error) {
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
	if id > 0xffffffff {
		return nil, fmt.Errorf("%s: stack id %d out of range", name, id)
	}
	b, err := m.LookupBytes(uint32(id))
	if err != nil {
		return nil, fmt.Errorf("%s: look up stack id %d: %w", name, id, err)
	}
	if b == nil {
		return nil, fmt.Errorf("%s: stack id %d: %w", name, id, ErrNoStack)
	}
	addrs := make([]uint64, 0, len(b)/8)
	for i := 0; i+8 <= len(b) && len(addrs) < info.Frames(); i += 8 {
		a := binary.LittleEndian.Uint64(b[i:])
		if a == 0 {
			break
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// Stack returns the frames of stack id, innermost first, read from the map
// of stacks of kind info and resolved in the kernel or (user stacks) in
// process pid. A negative id is bpf_get_stackid's error: it is returned as
// an error (the caller counts it with CountStackError once per event).
func (s *Symbolizer) Stack(info types.StackInfo, id int64, pid int) ([]output.Frame, error) {
	addrs, err := s.StackAddrs(info, id)
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
	case int64(syscall.ENOMEM):
		return fmt.Errorf("stack map full (%w)", syscall.ENOMEM)
	case int64(syscall.EFAULT):
		return fmt.Errorf("stack not readable (%w)", syscall.EFAULT)
	}
	return fmt.Errorf("bpf_get_stackid error %d", id)
}

// StackErrors counts stacks bpf_get_stackid could not store.
type StackErrors struct {
	Collisions uint64 // -EEXIST: another stack holds the hash bucket
	NoMemory   uint64 // -ENOMEM: the map is full
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
		w = append(w, fmt.Sprintf("WARNING: %d stack traces lost: stack map full (-ENOMEM)", e.NoMemory))
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
	case int64(syscall.ENOMEM):
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
