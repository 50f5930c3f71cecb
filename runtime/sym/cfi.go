package sym

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Call frame information (.eh_frame, else .debug_frame) for unwinding
// user stacks of code built without frame pointers (dw_ustack): the CIE
// and FDE records gcc and clang emit for x86-64, and the CFA program
// interpreter that gives, at a code address, how to find the caller's
// frame (CFA = register + offset) and where the return address and the
// saved registers are.

// DWARF register numbers of x86-64 (System V psABI).
const (
	dwRBX = 3
	dwRBP = 6
	dwRSP = 7
	dwRA  = 16
	nRegs = 17
)

// Rule kinds for a register.
const (
	ruleUndef    = iota // not saved (the caller's value is lost)
	ruleSame            // unchanged
	ruleOffset          // saved at CFA + off
	ruleValOff          // value is CFA + off
	ruleRegister        // in register reg
	ruleExpr            // a DWARF expression (not evaluated: unwinding stops)
)

type regRule struct {
	kind int
	off  int64
	reg  int
}

// frameRow is the unwind rule at one address: CFA = reg + off (or an
// expression, cfaExpr), each register's rule.
type frameRow struct {
	cfaReg  int
	cfaOff  int64
	cfaExpr bool
	regs    [nRegs]regRule
}

type cie struct {
	codeAlign, dataAlign int64
	raReg                int
	fdeEnc               byte
	hasAug               bool // 'z': FDEs carry augmentation data
	signal               bool
	initial              []byte
}

// fde covers code [lo, hi) with its CIE and instructions.
type fde struct {
	lo, hi uint64
	cie    *cie
	insns  []byte
}

// FrameTable is one ELF file's CFI, FDEs sorted by address.
type FrameTable struct {
	fdes []fde
}

// ReadFrameTable parses the .eh_frame (or .debug_frame) of f.
func ReadFrameTable(f *elf.File) (*FrameTable, error) {
	if s := f.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS {
		data, err := s.Data()
		if err != nil {
			return nil, err
		}
		t, err := parseFrames(data, s.Addr, true)
		if err == nil && len(t.fdes) > 0 {
			return t, nil
		}
	}
	if s := f.Section(".debug_frame"); s != nil && s.Type != elf.SHT_NOBITS {
		data, err := s.Data()
		if err != nil {
			return nil, err
		}
		return parseFrames(data, 0, false)
	}
	return nil, errors.New("no .eh_frame or .debug_frame")
}

type cfiReader struct {
	b   []byte
	pos int
	err error
}

func (r *cfiReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("CFI: truncated %s at %d", what, r.pos)
	}
}

func (r *cfiReader) u8() byte {
	if r.pos >= len(r.b) {
		r.fail("byte")
		return 0
	}
	r.pos++
	return r.b[r.pos-1]
}

func (r *cfiReader) fixed(n int) uint64 {
	if r.pos+n > len(r.b) {
		r.fail("value")
		r.pos = len(r.b)
		return 0
	}
	var v uint64
	switch n {
	case 1:
		v = uint64(r.b[r.pos])
	case 2:
		v = uint64(binary.LittleEndian.Uint16(r.b[r.pos:]))
	case 4:
		v = uint64(binary.LittleEndian.Uint32(r.b[r.pos:]))
	case 8:
		v = binary.LittleEndian.Uint64(r.b[r.pos:])
	}
	r.pos += n
	return v
}

func (r *cfiReader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *cfiReader) sleb() int64 {
	var v int64
	var shift uint
	var c byte
	for {
		c = r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			break
		}
	}
	if shift < 64 && c&0x40 != 0 {
		v |= -1 << shift
	}
	return v
}

// DW_EH_PE pointer encodings.
const (
	peAbsptr  = 0x00
	peUleb    = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb    = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePcrel   = 0x10
	peDatarel = 0x30
	peOmit    = 0xff
)

// ptr reads a pointer of encoding enc; base is the section's address
// (for pc-relative values).
func (r *cfiReader) ptr(enc byte, base uint64) uint64 {
	if enc == peOmit {
		return 0
	}
	at := base + uint64(r.pos)
	var v uint64
	switch enc & 0x0f {
	case peAbsptr, peUdata8, peSdata8:
		v = r.fixed(8)
	case peUleb:
		v = r.uleb()
	case peSleb:
		v = uint64(r.sleb())
	case peUdata2:
		v = r.fixed(2)
	case peSdata2:
		v = uint64(int64(int16(r.fixed(2))))
	case peUdata4:
		v = r.fixed(4)
	case peSdata4:
		v = uint64(int64(int32(r.fixed(4))))
	default:
		if r.err == nil {
			r.err = fmt.Errorf("CFI: pointer encoding 0x%x", enc)
		}
	}
	if enc&0x70 == pePcrel {
		v += at
	}
	return v
}

// parseFrames reads the CIEs and FDEs of an .eh_frame (eh: CIE pointers
// relative, augmentations) or .debug_frame section at address base.
func parseFrames(data []byte, base uint64, eh bool) (*FrameTable, error) {
	t := &FrameTable{}
	cies := map[int]*cie{}
	for off := 0; off+4 <= len(data); {
		length := uint64(binary.LittleEndian.Uint32(data[off:]))
		hdr := 4
		if length == 0xffffffff {
			if off+12 > len(data) {
				break
			}
			length, hdr = binary.LittleEndian.Uint64(data[off+4:]), 12
		}
		if length == 0 {
			if eh {
				break // the terminator
			}
			off += hdr
			continue
		}
		start, end := off+hdr, off+hdr+int(length)
		if end > len(data) || end < start {
			return t, fmt.Errorf("CFI: record at %d overruns the section", off)
		}
		r := &cfiReader{b: data[:end], pos: start}
		var id uint64
		if hdr == 12 {
			id = r.fixed(8)
		} else {
			id = r.fixed(4)
		}
		isCIE := (eh && id == 0) || (!eh && (id == 0xffffffff || id == 0xffffffffffffffff))
		if isCIE {
			c, err := parseCIE(r, eh)
			if err == nil {
				cies[off] = c
			}
		} else {
			cieOff := int(id)
			if eh {
				cieOff = start - int(id)
			}
			c, ok := cies[cieOff]
			if !ok {
				// A CIE after its FDE (legal, rare): parse it now.
				if cieOff >= 0 && cieOff+4 <= len(data) {
					l := int(binary.LittleEndian.Uint32(data[cieOff:]))
					if cieOff+4+l <= len(data) && l >= 4 {
						cr := &cfiReader{b: data[:cieOff+4+l], pos: cieOff + 8}
						if cc, err := parseCIE(cr, eh); err == nil {
							cies[cieOff], c, ok = cc, cc, true
						}
					}
				}
			}
			if ok {
				enc := c.fdeEnc
				if !eh {
					enc = peAbsptr
				}
				lo := r.ptr(enc, base)
				n := r.ptr(enc&0x0f, base)
				if eh && c.hasAug {
					al := r.uleb()
					r.pos += int(al)
				}
				if r.err == nil && r.pos <= end {
					t.fdes = append(t.fdes, fde{lo: lo, hi: lo + n, cie: c, insns: data[r.pos:end]})
				}
			}
		}
		off = end
	}
	sort.Slice(t.fdes, func(i, j int) bool { return t.fdes[i].lo < t.fdes[j].lo })
	return t, nil
}

func parseCIE(r *cfiReader, eh bool) (*cie, error) {
	c := &cie{fdeEnc: peAbsptr}
	version := r.u8()
	aug := ""
	for {
		b := r.u8()
		if b == 0 || r.err != nil {
			break
		}
		aug += string(b)
	}
	if !eh && version >= 4 {
		r.u8() // address size
		r.u8() // segment size
	}
	c.codeAlign = int64(r.uleb())
	c.dataAlign = r.sleb()
	if version == 1 {
		c.raReg = int(r.u8())
	} else {
		c.raReg = int(r.uleb())
	}
	c.hasAug = len(aug) > 0 && aug[0] == 'z'
	if c.hasAug {
		al := int(r.uleb())
		end := r.pos + al
		for _, a := range aug[1:] {
			switch a {
			case 'R':
				c.fdeEnc = r.u8()
			case 'P':
				enc := r.u8()
				r.ptr(enc&0x7f, 0) // personality routine: skipped
			case 'L':
				r.u8()
			case 'S':
				c.signal = true
			}
		}
		r.pos = end
	} else if aug != "" && aug != "eh" {
		return nil, fmt.Errorf("CFI: augmentation %q", aug)
	}
	if r.err != nil {
		return nil, r.err
	}
	c.initial = r.b[r.pos:]
	return c, nil
}

// find returns the FDE covering addr.
func (t *FrameTable) find(addr uint64) *fde {
	i := sort.Search(len(t.fdes), func(i int) bool { return t.fdes[i].lo > addr }) - 1
	if i < 0 || addr >= t.fdes[i].hi {
		return nil
	}
	return &t.fdes[i]
}

// RowAt runs the CFA program of the FDE covering addr up to addr.
func (t *FrameTable) RowAt(addr uint64) (frameRow, error) {
	f := t.find(addr)
	if f == nil {
		return frameRow{}, fmt.Errorf("no CFI for 0x%x", addr)
	}
	var row frameRow
	for i := range row.regs {
		row.regs[i].kind = ruleSame
	}
	row.regs[dwRA].kind = ruleUndef
	// The CIE's initial instructions give the rules "restore" goes back to.
	if err := execCFA(f.cie, f.cie.initial, f.lo, ^uint64(0), &row, nil); err != nil {
		return row, err
	}
	initial := row
	if err := execCFA(f.cie, f.insns, f.lo, addr, &row, &initial); err != nil {
		return row, err
	}
	return row, nil
}

// execCFA interprets CFA instructions from location loc until the
// location passes target.
func execCFA(c *cie, insns []byte, loc, target uint64, row *frameRow, initial *frameRow) error {
	r := &cfiReader{b: insns}
	var saved []frameRow
	setReg := func(reg int, rule regRule) {
		if reg >= 0 && reg < nRegs {
			row.regs[reg] = rule
		}
	}
	restore := func(reg int) {
		if reg >= 0 && reg < nRegs && initial != nil {
			row.regs[reg] = initial.regs[reg]
		}
	}
	for r.pos < len(r.b) {
		op := r.u8()
		if r.err != nil {
			return r.err
		}
		advance := func(delta uint64) bool {
			loc += delta * uint64(c.codeAlign)
			return loc > target
		}
		switch op >> 6 {
		case 1: // DW_CFA_advance_loc
			if advance(uint64(op & 0x3f)) {
				return nil
			}
			continue
		case 2: // DW_CFA_offset
			setReg(int(op&0x3f), regRule{kind: ruleOffset, off: int64(r.uleb()) * c.dataAlign})
			continue
		case 3: // DW_CFA_restore
			restore(int(op & 0x3f))
			continue
		}
		switch op {
		case 0x00: // nop
		case 0x01: // set_loc
			loc = r.ptr(c.fdeEnc&0x0f, 0)
			if loc > target {
				return nil
			}
		case 0x02: // advance_loc1
			if advance(r.fixed(1)) {
				return nil
			}
		case 0x03:
			if advance(r.fixed(2)) {
				return nil
			}
		case 0x04:
			if advance(r.fixed(4)) {
				return nil
			}
		case 0x05: // offset_extended
			reg := int(r.uleb())
			setReg(reg, regRule{kind: ruleOffset, off: int64(r.uleb()) * c.dataAlign})
		case 0x06: // restore_extended
			restore(int(r.uleb()))
		case 0x07: // undefined
			setReg(int(r.uleb()), regRule{kind: ruleUndef})
		case 0x08: // same_value
			setReg(int(r.uleb()), regRule{kind: ruleSame})
		case 0x09: // register
			reg := int(r.uleb())
			setReg(reg, regRule{kind: ruleRegister, reg: int(r.uleb())})
		case 0x0a: // remember_state
			saved = append(saved, *row)
		case 0x0b: // restore_state
			// The whole row, CFA included, as libgcc and libunwind
			// keep it: gcc's `remember_state; def_cfa_offset 8; ret;
			// restore_state` needs the CFA back.
			if n := len(saved); n > 0 {
				*row = saved[n-1]
				saved = saved[:n-1]
			}
		case 0x0c: // def_cfa
			row.cfaReg = int(r.uleb())
			row.cfaOff = int64(r.uleb())
			row.cfaExpr = false
		case 0x0d: // def_cfa_register
			row.cfaReg = int(r.uleb())
			row.cfaExpr = false
		case 0x0e: // def_cfa_offset
			row.cfaOff = int64(r.uleb())
		case 0x0f: // def_cfa_expression
			n := r.uleb()
			r.pos += int(n)
			row.cfaExpr = true
		case 0x10: // expression
			reg := int(r.uleb())
			n := r.uleb()
			r.pos += int(n)
			setReg(reg, regRule{kind: ruleExpr})
		case 0x11: // offset_extended_sf
			reg := int(r.uleb())
			setReg(reg, regRule{kind: ruleOffset, off: r.sleb() * c.dataAlign})
		case 0x12: // def_cfa_sf
			row.cfaReg = int(r.uleb())
			row.cfaOff = r.sleb() * c.dataAlign
			row.cfaExpr = false
		case 0x13: // def_cfa_offset_sf
			row.cfaOff = r.sleb() * c.dataAlign
		case 0x14: // val_offset
			reg := int(r.uleb())
			setReg(reg, regRule{kind: ruleValOff, off: int64(r.uleb()) * c.dataAlign})
		case 0x15: // val_offset_sf
			reg := int(r.uleb())
			setReg(reg, regRule{kind: ruleValOff, off: r.sleb() * c.dataAlign})
		case 0x16: // val_expression
			reg := int(r.uleb())
			n := r.uleb()
			r.pos += int(n)
			setReg(reg, regRule{kind: ruleExpr})
		case 0x2e: // GNU_args_size
			r.uleb()
		case 0x2f: // GNU_negative_offset_extended
			reg := int(r.uleb())
			setReg(reg, regRule{kind: ruleOffset, off: -int64(r.uleb()) * c.dataAlign})
		default:
			return fmt.Errorf("CFI: unknown instruction 0x%x", op)
		}
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

// UnwindRegs are the registers an unwind step reads and restores.
type UnwindRegs struct {
	IP, SP, BP, BX uint64
	HasBP, HasBX   bool
}

// StackMem is a copy of user stack memory starting at address Base.
type StackMem struct {
	Base uint64
	Data []byte
}

func (m StackMem) read(addr uint64) (uint64, bool) {
	if addr < m.Base || addr+8 > m.Base+uint64(len(m.Data)) || addr+8 < addr {
		return 0, false
	}
	return binary.LittleEndian.Uint64(m.Data[addr-m.Base:]), true
}

// Step unwinds one frame: regs at code address pc (an address of this
// table's file; for caller frames the return address minus one) give the
// caller's registers, whose IP is the return address. ok false when the
// rules cannot be followed (no FDE, an expression, memory not copied) or
// the chain ends (return address undefined or 0).
func (t *FrameTable) Step(pc uint64, regs UnwindRegs, mem StackMem) (UnwindRegs, bool) {
	row, err := t.RowAt(pc)
	if err != nil || row.cfaExpr {
		return regs, false
	}
	var base uint64
	switch row.cfaReg {
	case dwRSP:
		base = regs.SP
	case dwRBP:
		if !regs.HasBP {
			return regs, false
		}
		base = regs.BP
	case dwRBX:
		if !regs.HasBX {
			return regs, false
		}
		base = regs.BX
	default:
		return regs, false
	}
	cfa := uint64(int64(base) + row.cfaOff)
	next := regs
	next.SP = cfa
	get := func(reg int, cur uint64, has bool) (uint64, bool, bool) {
		rule := row.regs[reg]
		switch rule.kind {
		case ruleSame:
			return cur, has, true
		case ruleUndef:
			return 0, false, true
		case ruleOffset:
			v, ok := mem.read(uint64(int64(cfa) + rule.off))
			return v, ok, true
		case ruleValOff:
			return uint64(int64(cfa) + rule.off), true, true
		}
		return 0, false, true
	}
	ra := row.regs[dwRA]
	if ra.kind != ruleOffset {
		return regs, false
	}
	ip, ok := mem.read(uint64(int64(cfa) + ra.off))
	if !ok || ip == 0 {
		return regs, false
	}
	next.IP = ip
	next.BP, next.HasBP, _ = get(dwRBP, regs.BP, regs.HasBP)
	next.BX, next.HasBX, _ = get(dwRBX, regs.BX, regs.HasBX)
	if next.SP <= regs.SP {
		return regs, false // the stack grows down: a caller's frame is above
	}
	return next, true
}
