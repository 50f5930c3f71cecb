package output

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gotrace/gotrace/ktypes"
)

// buildIDSize is the kernel's BPF_BUILD_ID_SIZE: a shorter build ID is
// printed zero-padded to it, as the kernel's bpf_stack_build_id holds it.
const buildIDSize = 20

// BuildIDFrame prints one frame of a ustack(build_id) as bpftrace 0.26
// does: the build ID of the file mapped at addr in process pid (hex) and
// the address's offset in that file ("ID 0xOFF"); the address in hex when
// the file or its build ID is unknown. The kernel computes the same
// (BPF_F_USER_BUILD_ID); gotrace reads /proc/PID/maps when printing.
func BuildIDFrame(pid int, addr uint64) string {
	if m, ok := mappingOf(pid, addr); ok {
		if id := fileBuildID(m.path); id != "" {
			return fmt.Sprintf("%s 0x%02x", id, addr-m.start+m.offset)
		}
	}
	return strconv.FormatUint(addr, 16)
}

type mapping struct {
	start, end, offset uint64
	path               string
}

// mappingOf finds the file mapping of pid that holds addr.
func mappingOf(pid int, addr uint64) (mapping, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return mapping{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || addr < start || addr >= end {
			continue
		}
		return mapping{start: start, end: end, offset: off, path: fields[5]}, true
	}
	return mapping{}, false
}

var buildIDs sync.Map // path → hex build ID ("" when none)

// fileBuildID is the GNU build ID of the ELF file at path, zero-padded to
// buildIDSize bytes, in hex; "" without one.
func fileBuildID(path string) string {
	if v, ok := buildIDs.Load(path); ok {
		return v.(string)
	}
	id := ""
	if ef, err := elf.Open(path); err == nil {
		id = noteBuildID(ef)
		ef.Close()
	}
	buildIDs.Store(path, id)
	return id
}

// noteBuildID is the file's GNU build ID (ktypes.BuildID) zero-padded to
// the kernel's 20 bytes, or "" if it is longer than that.
func noteBuildID(ef *elf.File) string {
	id := ktypes.BuildID(ef)
	if id == "" || len(id) > 2*buildIDSize {
		return ""
	}
	return id + strings.Repeat("0", 2*buildIDSize-len(id))
}
