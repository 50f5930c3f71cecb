package sym

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/ktypes"
)

// PrepareKernelStacks resolves, in one streaming pass over kallsyms, every
// address held in the kernel stack maps, unless the kallsyms index is
// already loaded. Printing the maps at exit then needs neither the index
// (~10 MB) nor its build time; an address it did not see (a stack added
// since) still loads the index.
func (s *Symbolizer) PrepareKernelStacks() error {
	s.mu.Lock()
	maps := map[string]*ebpf.Map{}
	for name, m := range s.stacks {
		if strings.HasPrefix(name, "stack_k") {
			maps[name] = m
		}
	}
	s.mu.Unlock()
	if len(maps) == 0 {
		return nil
	}
	s.kmu.Lock()
	loaded := s.ksyms != nil || s.kErr != nil
	s.kmu.Unlock()
	if loaded {
		return nil
	}
	var addrs []uint64
	compacted := 0 // addrs[:compacted] is sorted and has no repeats
	for name, m := range maps {
		err := s.readStacks(name, m, func(frames []uint64) {
			if len(addrs)+len(frames) > cap(addrs) && len(addrs) >= 2*compacted+4096 {
				// Stacks share most of their frames: the addresses
				// kept sorted and distinct before the slice grows,
				// not every frame of every stack (3·10⁶ for 1.5·10⁵
				// stacks, ~80 MB allocated as the slice doubled).
				slices.Sort(addrs)
				addrs = slices.Compact(addrs)
				compacted = len(addrs)
			}
			addrs = append(addrs, frames...)
		})
		if err != nil {
			return fmt.Errorf("read kernel stacks: %w", err)
		}
	}
	return s.prepareKernel(addrs)
}

// prepareKernel resolves addrs in one streaming pass over kallsyms for
// KernelFrame, without loading the index.
func (s *Symbolizer) prepareKernel(addrs []uint64) error {
	if len(addrs) == 0 {
		return nil
	}
	f, err := os.Open(s.opts.Kallsyms)
	if err != nil {
		return fmt.Errorf("kernel symbols: %w", err)
	}
	defer f.Close()
	res, err := ktypes.ResolveKallsyms(f, addrs)
	if err != nil {
		return err
	}
	s.kmu.Lock()
	s.kcache = res
	s.kmu.Unlock()
	return nil
}

// cachedKernel looks addr up in what PrepareKernelStacks resolved.
// An address it did not resolve is asked of the index.
func (s *Symbolizer) cachedKernel(addr uint64) (ktypes.KernelSym, bool) {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	r, ok := s.kcache[addr]
	return r, ok
}

// readStacks reads every stack of stack map m (named name), calling f with
// each one's addresses. A content-keyed (hash) map is read with batch
// lookups, a few thousand stacks a call, and its stacks are kept for
// StackAddrs, which then needs no lookup of its own; a STACK_TRACE map is
// walked key by key.
func (s *Symbolizer) readStacks(name string, m *ebpf.Map, f func([]uint64)) error {
	if m.Type() == ebpf.Hash && m.KeySize() == 8 {
		ok, err := s.readStacksBatch(name, m, f)
		if ok || err != nil {
			return err
		}
	}
	var id, val []byte
	it := m.Iterate()
	for it.Next(&id, &val) {
		f(stackValue(val))
	}
	return it.Err()
}

// stackBatch is how many stacks one batch lookup reads.
const stackBatch = 4096

// readStacksBatch is readStacks by batch lookups; false when the kernel
// refuses them (nothing read).
func (s *Symbolizer) readStacksBatch(name string, m *ebpf.Map, f func([]uint64)) (bool, error) {
	vs := int(m.ValueSize())
	if vs == 0 || vs%8 != 0 {
		return false, nil
	}
	keys := make([]uint64, stackBatch)
	// One array of vs bytes per key, as batch lookups want their values.
	vals := reflect.MakeSlice(reflect.SliceOf(reflect.ArrayOf(vs, reflect.TypeOf(byte(0)))), stackBatch, stackBatch)
	var cursor ebpf.MapBatchCursor
	for first := true; ; first = false {
		n, err := m.BatchLookup(&cursor, keys, vals.Interface(), nil)
		done := errors.Is(err, ebpf.ErrKeyNotExist)
		if err != nil && !done {
			if first && errors.Is(err, ebpf.ErrNotSupported) {
				return false, nil
			}
			return true, err
		}
		s.mu.Lock()
		for i := 0; i < n; i++ {
			addrs := stackValue(vals.Index(i).Bytes())
			s.keepFramesLocked(name, keys[i], addrs)
			f(addrs)
		}
		s.mu.Unlock()
		if done {
			return true, nil
		}
	}
}
