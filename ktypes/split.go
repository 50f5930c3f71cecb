package ktypes

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Split DWARF (gcc/clang -gsplit-dwarf): the binary keeps skeleton units
// (line tables, addresses) and names, per unit, a .dwo file holding its
// types and functions; llvm-dwp/dwp packs those into one BINARY.dwp,
// indexed by .debug_cu_index. SplitUnits opens them as dwarf.Data, one
// per unit, with the binary's .debug_addr for their addresses.

// Attribute numbers of the GNU split-DWARF extension (DWARF 4).
const (
	attrGNUDwoName  dwarf.Attr = 0x2130
	attrGNUDwoID    dwarf.Attr = 0x2131
	attrGNUAddrBase dwarf.Attr = 0x2133
)

// skeleton is one skeleton unit of the binary.
type skeleton struct {
	dwoName, compDir string
	id               uint64 // DWO id (0 when unknown)
	addrBase         int64
}

// skeletons lists the skeleton units of d; info is the raw .debug_info
// (for the DWARF 5 unit headers' DWO ids).
func skeletons(d *dwarf.Data, info []byte) []skeleton {
	var out []skeleton
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagSkeletonUnit && e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		name, _ := e.Val(dwarf.AttrDwoName).(string)
		if name == "" {
			name, _ = e.Val(attrGNUDwoName).(string)
		}
		if name != "" {
			s := skeleton{dwoName: name}
			s.compDir, _ = e.Val(dwarf.AttrCompDir).(string)
			if v, ok := e.Val(attrGNUDwoID).(uint64); ok {
				s.id = v
			} else if id, ok := unitDwoID(info, int(e.Offset)); ok {
				s.id = id
			}
			if v, ok := e.Val(dwarf.AttrAddrBase).(int64); ok {
				s.addrBase = v
			} else if v, ok := e.Val(attrGNUAddrBase).(int64); ok {
				s.addrBase = v
			}
			out = append(out, s)
		}
		r.SkipChildren()
	}
	return out
}

// unitDwoID reads the DWO id of the DWARF 5 skeleton unit whose first
// entry is at entryOff: the header before it is length(4), version(2),
// unit type(1), address size(1), abbrev offset(4), dwo id(8).
func unitDwoID(info []byte, entryOff int) (uint64, bool) {
	h := entryOff - 20
	if h < 0 || entryOff > len(info) || binary.LittleEndian.Uint16(info[h+4:]) != 5 {
		return 0, false
	}
	if t := info[h+6]; t != 4 && t != 5 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(info[h+12:]), true
}

func sectionData(f *elf.File, name string) []byte {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		return nil
	}
	return b
}

// strOffsetsBody drops a DWARF 5 .debug_str_offsets header (length,
// version 5, padding): a split unit has no str_offsets_base, so its
// indexes count from the first offset.
func strOffsetsBody(b []byte) []byte {
	if len(b) >= 8 && binary.LittleEndian.Uint16(b[4:]) == 5 && int(binary.LittleEndian.Uint32(b))+4 <= len(b) {
		return b[8:]
	}
	return b
}

// newSplitData makes a dwarf.Data of one split unit's sections; addr is
// the binary's .debug_addr from the unit's skeleton's addr_base.
func newSplitData(abbrev, info, str, strOff, addr []byte) (*dwarf.Data, error) {
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, str)
	if err != nil {
		return nil, err
	}
	if len(strOff) > 0 {
		if err := d.AddSection(".debug_str_offsets", strOffsetsBody(strOff)); err != nil {
			return nil, err
		}
	}
	if len(addr) > 0 {
		if err := d.AddSection(".debug_addr", addr); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// SplitUnits opens the split DWARF of the binary f at path, whose
// skeleton DWARF is d: the units of BINARY.dwp, else each skeleton's .dwo
// (by its name, from its compilation directory or the binary's). nil
// when the binary has no skeleton units.
func SplitUnits(f *elf.File, path string, d *dwarf.Data) ([]*dwarf.Data, error) {
	skels := skeletons(d, sectionData(f, ".debug_info"))
	if len(skels) == 0 {
		return nil, nil
	}
	addr := sectionData(f, ".debug_addr")
	addrFrom := func(base int64) []byte {
		if base < 0 || int(base) > len(addr) {
			return nil
		}
		return addr[base:]
	}
	if units, err := dwpUnits(path+".dwp", skels, addrFrom); err == nil {
		return units, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []*dwarf.Data
	var firstErr error
	for _, s := range skels {
		cands := []string{s.dwoName}
		if !filepath.IsAbs(s.dwoName) {
			cands = []string{filepath.Join(s.compDir, s.dwoName), filepath.Join(filepath.Dir(path), s.dwoName),
				filepath.Join(filepath.Dir(path), filepath.Base(s.dwoName))}
		}
		var u *dwarf.Data
		for _, c := range cands {
			df, err := elf.Open(c)
			if err != nil {
				continue
			}
			u, err = newSplitData(sectionData(df, ".debug_abbrev.dwo"), sectionData(df, ".debug_info.dwo"),
				sectionData(df, ".debug_str.dwo"), sectionData(df, ".debug_str_offsets.dwo"), addrFrom(s.addrBase))
			df.Close()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", c, err)
			}
			if u != nil {
				break
			}
		}
		if u != nil {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, fmt.Errorf("%s: split DWARF: none of its .dwo files (%s...) and no %s.dwp", path, skels[0].dwoName, filepath.Base(path))
	}
	return out, nil
}

// DWARF package section ids (DWARF 5 7.3.5; version 2 GNU ids differ).
const (
	dwSectInfo       = 1
	dwSectAbbrev     = 3
	dwSectStrOffsets = 6
)

// dwpUnits opens the units of the DWARF package at path, each matched
// with its skeleton by DWO id (a package of one unit with one skeleton
// needs no match).
func dwpUnits(path string, skels []skeleton, addrFrom func(int64) []byte) ([]*dwarf.Data, error) {
	df, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer df.Close()
	info, abbrev := sectionData(df, ".debug_info.dwo"), sectionData(df, ".debug_abbrev.dwo")
	str, strOff := sectionData(df, ".debug_str.dwo"), sectionData(df, ".debug_str_offsets.dwo")
	idx := sectionData(df, ".debug_cu_index")
	if info == nil || abbrev == nil || len(idx) < 16 {
		return nil, fmt.Errorf("%s: not a DWARF package (.debug_info.dwo, .debug_abbrev.dwo, .debug_cu_index)", path)
	}
	le := binary.LittleEndian
	version := le.Uint32(idx)
	ncols, nunits, nslots := int(le.Uint32(idx[4:])), int(le.Uint32(idx[8:])), int(le.Uint32(idx[12:]))
	hashOff := 16
	rowsOff := hashOff + 8*nslots
	colsOff := rowsOff + 4*nslots
	offsOff := colsOff + 4*ncols
	sizesOff := offsOff + 4*nunits*ncols
	if ncols <= 0 || sizesOff+4*nunits*ncols > len(idx) {
		return nil, fmt.Errorf("%s: malformed .debug_cu_index", path)
	}
	infoID, abbrevID, strOffID := uint32(dwSectInfo), uint32(dwSectAbbrev), uint32(dwSectStrOffsets)
	if version == 2 { // the GNU extension's ids
		strOffID = 6
	}
	var out []*dwarf.Data
	for slot := 0; slot < nslots; slot++ {
		row := int(le.Uint32(idx[rowsOff+4*slot:]))
		if row == 0 || row > nunits {
			continue
		}
		sig := le.Uint64(idx[hashOff+8*slot:])
		contrib := map[uint32][2]int{}
		for c := 0; c < ncols; c++ {
			id := le.Uint32(idx[colsOff+4*c:])
			o := int(le.Uint32(idx[offsOff+4*((row-1)*ncols+c):]))
			n := int(le.Uint32(idx[sizesOff+4*((row-1)*ncols+c):]))
			contrib[id] = [2]int{o, n}
		}
		part := func(b []byte, id uint32) []byte {
			c, ok := contrib[id]
			if !ok {
				return b
			}
			if c[0] < 0 || c[0]+c[1] > len(b) {
				return nil
			}
			return b[c[0] : c[0]+c[1]]
		}
		var skel *skeleton
		for i := range skels {
			if skels[i].id == sig || (len(skels) == 1 && nunits == 1) {
				skel = &skels[i]
			}
		}
		var addr []byte
		if skel != nil {
			addr = addrFrom(skel.addrBase)
		}
		u, err := newSplitData(part(abbrev, abbrevID), part(info, infoID), str, part(strOff, strOffID), addr)
		if err != nil {
			return nil, fmt.Errorf("%s: unit %#x: %w", path, sig, err)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no units in .debug_cu_index", path)
	}
	return out, nil
}
