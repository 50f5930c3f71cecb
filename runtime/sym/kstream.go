package sym

import (
	"encoding/binary"
	"fmt"
	"os"
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
	var maps []*ebpf.Map
	for name, m := range s.stacks {
		if strings.HasPrefix(name, "stack_k") {
			maps = append(maps, m)
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
	for _, m := range maps {
		var id, val []byte
		it := m.Iterate()
		for it.Next(&id, &val) {
			for i := 0; i+8 <= len(val); i += 8 {
				a := binary.LittleEndian.Uint64(val[i:])
				if a == 0 {
					break
				}
				addrs = append(addrs, a)
			}
		}
		if err := it.Err(); err != nil {
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
