package runtime

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/gotrace/gotrace/ktypes"

	"golang.org/x/sys/unix"
)

// IFUNC resolution. An STT_GNU_IFUNC symbol's address is a resolver that
// the dynamic linker calls at load time; the function it returns is stored
// in the GOT slot of the library's own R_*_IRELATIVE relocation whose
// addend is the resolver (glibc calls strcmp internally through it). That
// slot is filled eagerly in every process that maps the library, so its
// value in a live process is the implementation this machine runs. Without
// cgo the resolver cannot be run here, so the slot is read from a process
// that maps the same file: -p/-c's process first, else any other.

// irelativeSlot returns the virtual address of the GOT slot the library
// fills with resolver's result, or false when there is none.
func irelativeSlot(path string, resolver uint64) (uint64, bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, false, ktypes.ELFOpenError(path, err)
	}
	defer f.Close()
	var irel uint32
	switch f.Machine {
	case elf.EM_X86_64:
		irel = uint32(elf.R_X86_64_IRELATIVE)
	case elf.EM_AARCH64:
		irel = uint32(elf.R_AARCH64_IRELATIVE)
	default:
		return 0, false, nil
	}
	if f.Class != elf.ELFCLASS64 {
		return 0, false, nil
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off := f.ByteOrder.Uint64(data[i:])
			info := f.ByteOrder.Uint64(data[i+8:])
			addend := f.ByteOrder.Uint64(data[i+16:])
			if uint32(info) == irel && addend == resolver {
				return off, true, nil
			}
		}
	}
	return 0, false, nil
}

// loadBias is the difference between path's run-time and link-time
// addresses in process pid, or false when pid does not map it.
func loadBias(pid int, path string, dev, ino uint64, firstLoad elf.ProgHeader) (uint64, bool) {
	fh, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, false
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		if n, err := strconv.ParseUint(f[4], 10, 64); err != nil || n != ino || f[3] != devString(dev) {
			continue // another file (an inode of another device, a container's libc)
		}
		if off, err := strconv.ParseUint(f[2], 16, 64); err != nil || off != firstLoad.Off&^0xfff {
			continue
		}
		if filepath.Base(f[5]) != filepath.Base(path) {
			continue
		}
		start, _, _ := strings.Cut(f[0], "-")
		a, err := strconv.ParseUint(start, 16, 64)
		if err != nil {
			continue
		}
		return a - firstLoad.Vaddr&^0xfff, true
	}
	return 0, false
}

// resolveIFUNC returns the link-time address of the implementation the
// IFUNC at resolver resolves to on this machine.
func resolveIFUNC(path string, resolver uint64, pid int) (uint64, error) {
	slot, ok, err := irelativeSlot(path, resolver)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("no IRELATIVE relocation uses it in %s", path)
	}
	f, err := elf.Open(path)
	if err != nil {
		return 0, ktypes.ELFOpenError(path, err)
	}
	var first *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			first = p
			break
		}
	}
	f.Close()
	if first == nil {
		return 0, fmt.Errorf("%s has no loadable segment", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("stat %s: no inode", path)
	}
	pids := []int{}
	if pid > 0 {
		pids = append(pids, pid)
	}
	if ents, err := os.ReadDir("/proc"); err == nil {
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil && n != pid && n != os.Getpid() {
				pids = append(pids, n)
			}
		}
	}
	for _, p := range pids {
		bias, ok := loadBias(p, path, uint64(sys.Dev), sys.Ino, first.ProgHeader)
		if !ok {
			continue
		}
		mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", p))
		if err != nil {
			continue
		}
		var b [8]byte
		_, err = mem.ReadAt(b[:], int64(bias+slot))
		mem.Close()
		if err != nil {
			continue
		}
		impl := binary.LittleEndian.Uint64(b[:]) - bias
		if _, err := ktypes.FileOffset(path, impl); err != nil {
			continue // not filled in yet, or not this file's code
		}
		return impl, nil
	}
	return 0, fmt.Errorf("no running process maps %s to read its resolution from", path)
}

// devString is dev as /proc/PID/maps prints it ("fd:01").
func devString(dev uint64) string {
	return fmt.Sprintf("%02x:%02x", unix.Major(dev), unix.Minor(dev))
}
