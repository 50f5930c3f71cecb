package sym

import (
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
		if e, ok := parseKallsymsLine(data, i, end); ok {
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
	if j == i || j+3 >= end || data[j] != ' ' || data[j+2] != ' ' || addr == 0 {
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
