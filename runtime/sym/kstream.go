package sym

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
)

// kres is one address resolved by ResolveKallsyms.
type kres struct {
	base         uint64 // the symbol's address
	name, module string
}

// ResolveKallsyms resolves addrs against kallsyms text read from r in one
// pass, keeping only the answers: what Kallsyms.Lookup would return for
// each address (the nearest preceding code symbol, the first of its
// aliases), without holding the file or an index of it. The core kernel's
// symbols come sorted by address and are merged with the sorted addresses
// as they stream by; symbols after the first one out of order (modules, BPF
// programs, trampolines: a few thousand at most) are kept and searched at
// the end.
func ResolveKallsyms(r io.Reader, addrs []uint64) (map[uint64]kres, error) {
	want := slices.Clone(addrs)
	slices.Sort(want)
	want = slices.Compact(want)
	best := make([]kres, len(want))
	found := make([]bool, len(want))

	br := bufio.NewReaderSize(r, 256<<10)
	var (
		k        int // next address in want not yet past the symbols seen
		prev     kres
		havePrev bool
		prevStr  bool // prev.name/module hold copies (prevN/prevM are scratch)
		prevN    []byte
		prevM    []byte
		sorted   = true
		tail     []kres
	)
	// settle gives prev to every wanted address below limit.
	settle := func(limit uint64, all bool) {
		for k < len(want) && (all || want[k] < limit) {
			if havePrev && want[k] >= prev.base {
				if !prevStr {
					prev.name, prev.module = string(prevN), string(prevM)
					prevStr = true
				}
				best[k], found[k] = prev, true
			}
			k++
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer is not kallsyms: skip it.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 {
			end := len(line)
			if line[end-1] == '\n' {
				end--
			}
			if e, ok := parseKallsymsLine(line, 0, end); ok && !isDataType(e.typ) {
				name := line[e.name : e.name+uint32(e.nlen)]
				mod := line[e.mod : e.mod+uint32(e.mlen)]
				switch {
				case !sorted:
					tail = append(tail, kres{base: e.addr, name: string(name), module: string(mod)})
				case havePrev && e.addr < prev.base:
					// Out of order: the sorted part ends here. Addresses
					// above the last sorted symbol take it, unless a tail
					// symbol is nearer.
					settle(0, true)
					sorted = false
					tail = append(tail, kres{base: e.addr, name: string(name), module: string(mod)})
				case havePrev && e.addr == prev.base:
					// An alias: the first one at an address is printed.
				default:
					settle(e.addr, false)
					prev = kres{base: e.addr}
					prevN, prevM = append(prevN[:0], name...), append(prevM[:0], mod...)
					havePrev, prevStr = true, false
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("kernel symbols: %w", err)
		}
	}
	if sorted {
		settle(0, true)
	}
	if len(tail) > 0 {
		slices.SortStableFunc(tail, func(a, b kres) int { return cmp.Compare(a.base, b.base) })
		for i, a := range want {
			j, _ := slices.BinarySearchFunc(tail, a+1, func(t kres, x uint64) int {
				if t.base < x {
					return -1
				}
				return 1
			})
			// tail[j-1] is the last tail symbol <= a; step back to the
			// first alias at its address.
			if j == 0 {
				continue
			}
			j--
			for j > 0 && tail[j-1].base == tail[j].base {
				j--
			}
			if !found[i] || tail[j].base > best[i].base {
				best[i], found[i] = tail[j], true
			}
		}
	}
	out := make(map[uint64]kres, len(want))
	for i, a := range want {
		if found[i] {
			out[a] = best[i]
		}
	}
	return out, nil
}

// PrepareKernelStacks resolves, in one streaming pass over kallsyms, every
// address held in the kernel STACK_TRACE maps, unless the kallsyms index is
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
		var id uint32
		var val []byte
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
	res, err := ResolveKallsyms(f, addrs)
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
func (s *Symbolizer) cachedKernel(addr uint64) (kres, bool) {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	r, ok := s.kcache[addr]
	return r, ok
}
