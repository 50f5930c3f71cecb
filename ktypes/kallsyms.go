package ktypes

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Kallsyms is an index of /proc/kallsyms. The file's bytes are kept whole
// and entries point into them, so loading allocates a handful of large
// slices rather than a string per line.
type Kallsyms struct {
	data []byte
	// code are the entries ksym()/kstack resolve against, sorted by address
	// (stable, so the first of several aliases in file order comes first).
	// Data symbols (b, d, r and their global forms) are left out, as bcc
	// does: an address in a stack is code.
	code []kent
	// all are every entry in file order, for KernelAddr (kaddr() takes the
	// first line whose name matches, whatever its type).
	all []kent
}

// kent is one kallsyms line: the address, the name and the module
// ("" for the core kernel) as offsets into Kallsyms.data.
type kent struct {
	addr uint64
	name uint32
	mod  uint32
	nlen uint16
	mlen uint16
	typ  byte
}

// LoadKallsyms reads and indexes path (normally /proc/kallsyms).
func LoadKallsyms(path string) (*Kallsyms, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kernel symbols: %w", err)
	}
	defer f.Close()
	// procfs reports size 0; start big so the ~10 MB of a typical kernel
	// is read with few reallocations.
	buf := make([]byte, 0, 16<<20)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("kernel symbols: read %s: %w", path, err)
		}
		if n == 0 {
			break
		}
	}
	return ParseKallsyms(buf), nil
}

// ParseKallsyms indexes kallsyms text ("ADDR TYPE NAME[\t[MODULE]]" lines).
// Lines it cannot read and zero addresses (kptr_restrict hides them) are
// skipped. data is kept, not copied.
func ParseKallsyms(data []byte) *Kallsyms {
	k := &Kallsyms{data: data}
	// A line is at least ~20 bytes; size the slices once.
	est := len(data)/40 + 16
	k.all = make([]kent, 0, est)
	sorted := true
	var last uint64
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += i
		}
		if e, ok := parseKallsymsLine(data, i, end); ok && e.addr != 0 {
			k.all = append(k.all, e)
			if !isDataType(e.typ) {
				if e.addr < last {
					sorted = false
				}
				last = e.addr
			}
		}
		i = end + 1
	}
	k.code = make([]kent, 0, len(k.all))
	for _, e := range k.all {
		if !isDataType(e.typ) {
			k.code = append(k.code, e)
		}
	}
	if !sorted {
		k.code = sortKents(k.code)
	}
	return k
}

// sortKents sorts by address, stably. The core kernel's symbols come
// sorted; module, BPF and trampoline symbols follow in their own order. So
// only the tail after the sorted prefix is sorted, then merged in.
func sortKents(es []kent) []kent {
	byAddr := func(a, b kent) int { return cmp.Compare(a.addr, b.addr) }
	p := 1
	for p < len(es) && es[p-1].addr <= es[p].addr {
		p++
	}
	if p >= len(es) {
		return es
	}
	head, tail := es[:p], slices.Clone(es[p:])
	slices.SortStableFunc(tail, byAddr)
	out := make([]kent, 0, len(es))
	for len(head) > 0 && len(tail) > 0 {
		if tail[0].addr < head[0].addr {
			out, tail = append(out, tail[0]), tail[1:]
		} else {
			out, head = append(out, head[0]), head[1:]
		}
	}
	out = append(out, head...)
	return append(out, tail...)
}

// parseKallsymsLine reads the line data[i:end]; a zero address (hidden by
// kptr_restrict) is read as 0, for the callers that resolve addresses to
// skip.
func parseKallsymsLine(data []byte, i, end int) (kent, bool) {
	var addr uint64
	j := i
	for ; j < end; j++ {
		c := data[j]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			goto hexDone
		}
		addr = addr<<4 | uint64(d)
	}
hexDone:
	// "ADDR T NAME": j at the space after the address.
	if j == i || j+3 >= end || data[j] != ' ' || data[j+2] != ' ' {
		return kent{}, false
	}
	typ := data[j+1]
	ns := j + 3
	ne := end
	if t := bytes.IndexByte(data[ns:end], '\t'); t >= 0 {
		ne = ns + t
	}
	if ne == ns || ne-ns > 0xffff || ns > 0xffffffff {
		return kent{}, false
	}
	e := kent{addr: addr, name: uint32(ns), nlen: uint16(ne - ns), typ: typ}
	// Module symbols end in "\t[module]".
	if ne < end {
		if ms := bytes.IndexByte(data[ne:end], '['); ms >= 0 {
			ms += ne + 1
			if me := bytes.IndexByte(data[ms:end], ']'); me > 0 && me <= 0xffff {
				e.mod, e.mlen = uint32(ms), uint16(me)
			}
		}
	}
	return e, true
}

func isDataType(t byte) bool {
	switch t {
	case 'b', 'B', 'd', 'D', 'r', 'R':
		return true
	}
	return false
}

func (k *Kallsyms) name(e kent) string {
	return string(k.data[e.name : e.name+uint32(e.nlen)])
}

// Len is the number of symbols addresses resolve against.
func (k *Kallsyms) Len() int { return len(k.code) }

// Lookup finds the code symbol at or below addr: its name, addr's offset
// from it and its module ("" for the core kernel). Like bcc, the nearest
// preceding symbol is taken whatever its extent (kallsyms has no sizes).
func (k *Kallsyms) Lookup(addr uint64) (name string, off uint64, module string, ok bool) {
	i, _ := slices.BinarySearchFunc(k.code, addr, func(e kent, a uint64) int {
		switch {
		case e.addr < a:
			return -1
		case e.addr > a:
			return 1
		}
		return 0
	})
	// i is the first entry >= addr; step onto the last one <= addr, then
	// back to the first alias at that address.
	if i == len(k.code) || k.code[i].addr != addr {
		if i == 0 {
			return "", 0, "", false
		}
		i--
		for i > 0 && k.code[i-1].addr == k.code[i].addr {
			i--
		}
	}
	e := k.code[i]
	if e.mlen > 0 {
		module = string(k.data[e.mod : e.mod+uint32(e.mlen)])
	}
	return k.name(e), addr - e.addr, module, true
}

// Addr is the address of the first symbol named name, of any type (as
// bpftrace's kaddr()). "module:name" restricts the search to one module.
func (k *Kallsyms) Addr(name string) (uint64, bool) {
	mod := ""
	if i := strings.IndexByte(name, ':'); i > 0 {
		mod, name = name[:i], name[i+1:]
	}
	for _, e := range k.all {
		if int(e.nlen) != len(name) || string(k.data[e.name:e.name+uint32(e.nlen)]) != name {
			continue
		}
		if mod != "" && string(k.data[e.mod:e.mod+uint32(e.mlen)]) != mod {
			continue
		}
		return e.addr, true
	}
	return 0, false
}

// KallsymsText calls fn with the name and module ("" for the core kernel)
// of every text symbol (type t or T) in kallsyms text read from r, in file
// order, whatever its address: the names of a kernel function listing
// (kptr_restrict zeroes the addresses of a reader without CAP_SYSLOG, not
// the names, so ParseKallsyms's index, which skips zero addresses, would
// be empty).
func KallsymsText(r io.Reader, fn func(name, module string)) error {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer is not kallsyms: skip it.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		end := len(line)
		if end > 0 && line[end-1] == '\n' {
			end--
		}
		if e, ok := parseKallsymsLine(line, 0, end); ok && (e.typ == 't' || e.typ == 'T') {
			fn(string(line[e.name:e.name+uint32(e.nlen)]), string(line[e.mod:e.mod+uint32(e.mlen)]))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("kernel symbols: %w", err)
		}
	}
}

// KernelSym is one address resolved by ResolveKallsyms.
type KernelSym struct {
	Base         uint64 // the symbol's address
	Name, Module string
}

// ResolveKallsyms resolves addrs against kallsyms text read from r in one
// pass, keeping only the answers: what Kallsyms.Lookup would return for
// each address (the nearest preceding code symbol, the first of its
// aliases), without holding the file or an index of it. The core kernel's
// symbols come sorted by address and are merged with the sorted addresses
// as they stream by; symbols after the first one out of order (modules, BPF
// programs, trampolines: a few thousand at most) are kept and searched at
// the end.
func ResolveKallsyms(r io.Reader, addrs []uint64) (map[uint64]KernelSym, error) {
	want := slices.Clone(addrs)
	slices.Sort(want)
	want = slices.Compact(want)
	best := make([]KernelSym, len(want))
	found := make([]bool, len(want))

	br := bufio.NewReaderSize(r, 256<<10)
	var (
		k        int // next address in want not yet past the symbols seen
		prev     KernelSym
		havePrev bool
		prevStr  bool // prev.name/module hold copies (prevN/prevM are scratch)
		prevN    []byte
		prevM    []byte
		sorted   = true
		tail     []KernelSym
	)
	// settle gives prev to every wanted address below limit.
	settle := func(limit uint64, all bool) {
		for k < len(want) && (all || want[k] < limit) {
			if havePrev && want[k] >= prev.Base {
				if !prevStr {
					prev.Name, prev.Module = string(prevN), string(prevM)
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
			if e, ok := parseKallsymsLine(line, 0, end); ok && e.addr != 0 && !isDataType(e.typ) {
				name := line[e.name : e.name+uint32(e.nlen)]
				mod := line[e.mod : e.mod+uint32(e.mlen)]
				switch {
				case !sorted:
					tail = append(tail, KernelSym{Base: e.addr, Name: string(name), Module: string(mod)})
				case havePrev && e.addr < prev.Base:
					// Out of order: the sorted part ends here. Addresses
					// above the last sorted symbol take it, unless a tail
					// symbol is nearer.
					settle(0, true)
					sorted = false
					tail = append(tail, KernelSym{Base: e.addr, Name: string(name), Module: string(mod)})
				case havePrev && e.addr == prev.Base:
					// An alias: the first one at an address is printed.
				default:
					settle(e.addr, false)
					prev = KernelSym{Base: e.addr}
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
		slices.SortStableFunc(tail, func(a, b KernelSym) int { return cmp.Compare(a.Base, b.Base) })
		for i, a := range want {
			j, _ := slices.BinarySearchFunc(tail, a+1, func(t KernelSym, x uint64) int {
				if t.Base < x {
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
			for j > 0 && tail[j-1].Base == tail[j].Base {
				j--
			}
			if !found[i] || tail[j].Base > best[i].Base {
				best[i], found[i] = tail[j], true
			}
		}
	}
	out := make(map[uint64]KernelSym, len(want))
	for i, a := range want {
		if found[i] {
			out[a] = best[i]
		}
	}
	return out, nil
}
