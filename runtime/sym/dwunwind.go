package sym

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"github.com/gotrace/gotrace/ktypes"
	"os"
	"strconv"
	"sync"

	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// dw_ustack: the program copied ip, sp, bp and the user stack above sp;
// here the stack is unwound frame by frame with the call frame
// information of the file each address is in, found through the
// process's memory map.

// maxDwarfFrames bounds an unwind (bpftrace's default stack limit).
const maxDwarfFrames = types.DefaultStackLimit

type cfiEntry struct {
	once sync.Once
	t    *FrameTable
}

var cfiCache sync.Map // file key (path, inode, mtime) → *cfiEntry

// frameTable is the CFI of the ELF file at path (opened as name), read
// once per file version.
func frameTable(name, path string) *FrameTable {
	key := path
	if fi, err := os.Stat(name); err == nil {
		if k, ok := keyOf(fi); ok {
			key += "\x00" + strconv.FormatUint(k.ino, 10) + ":" + strconv.FormatInt(k.mtime, 10)
		}
	}
	v, _ := cfiCache.LoadOrStore(key, &cfiEntry{})
	e := v.(*cfiEntry)
	e.once.Do(func() {
		f, err := elf.Open(name)
		if err != nil {
			return
		}
		defer f.Close()
		if t, err := ReadFrameTable(f); err == nil {
			e.t = t
			return
		}
		// A stripped file may keep its .debug_frame apart.
		if dbg, _ := ktypes.OpenDWARF(f, path, nil); dbg != nil {
			if t, err := ReadFrameTable(dbg); err == nil {
				e.t = t
			}
			dbg.Close()
		}
	})
	return e.t
}

// DwarfStack unwinds a dw_ustack value of process pid: regs holds ip, sp
// and bp, then the stack copied from sp (types.DwarfStackSize, after the
// length and pid). The frames are innermost first; the unwind stops at
// the first frame whose caller the CFI (or the copied stack) cannot give.
func (s *Symbolizer) DwarfStack(pid int, regs []byte) ([]output.Frame, error) {
	if len(regs) < 24 {
		return nil, errors.New("dw_ustack: short value")
	}
	r := UnwindRegs{
		IP: binary.LittleEndian.Uint64(regs[0:]),
		SP: binary.LittleEndian.Uint64(regs[8:]),
		BP: binary.LittleEndian.Uint64(regs[16:]), HasBP: true,
	}
	mem := StackMem{Base: r.SP, Data: regs[24:]}
	s.mu.Lock()
	addrs := s.unwindLocked(pid, r, mem)
	frames := make([]output.Frame, len(addrs))
	for i, a := range addrs {
		frames[i] = s.userFrameOutLocked(pid, a)
	}
	frames = s.withSourceLocked(pid, frames)
	s.mu.Unlock()
	return frames, nil
}

// unwindLocked returns the return addresses of the chain from r.
func (s *Symbolizer) unwindLocked(pid int, r UnwindRegs, mem StackMem) []uint64 {
	addrs := []uint64{r.IP}
	if pid <= 0 {
		return addrs
	}
	p := s.procLocked(pid)
	dir := s.procDir + "/" + strconv.Itoa(pid)
	for len(addrs) < maxDwarfFrames {
		pc := r.IP
		if len(addrs) > 1 {
			pc-- // a return address: the call is the instruction before it
		}
		m := p.find(pc)
		if m == nil || m.obj == nil {
			break
		}
		fileOff := pc - m.start + m.pgoff
		vaddr, ok := m.obj.vaddrOf(fileOff)
		if !ok {
			break
		}
		name := m.path
		if _, err := os.Stat(dir + "/root" + m.path); err == nil {
			name = dir + "/root" + m.path
		}
		t := frameTable(name, m.path)
		if t == nil {
			break
		}
		// The rules are in file addresses; registers are runtime ones,
		// and only differences matter to them (CFA = reg + off), so the
		// step runs at vaddr with the registers as they are.
		next, ok := t.Step(vaddr, r, mem)
		if !ok {
			break
		}
		r = next
		addrs = append(addrs, r.IP)
	}
	return addrs
}
