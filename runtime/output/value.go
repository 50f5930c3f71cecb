// Package output prints everything gotrace shows the user — printf text,
// print() values, maps at exit, time/cat/system/join events — byte for byte
// as bpftrace 0.17 prints it, as text or as JSON lines (-f json).
//
// Values arrive as bytes laid out per compiler/ABI.md; Decode turns them into
// a Value tree, and a Printer formats Values (resolving symbols, stacks, user
// names ... through a Symbolizer the runtime provides).
package output

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/gotrace/gotrace/lang/types"
)

// Value is a decoded value. Which fields are set depends on Kind:
//   - Int, Bool, Enum, Pointer, Kaddr, Ksym, Username, Strerror, CgroupPath:
//     Bits (sign-extended for signed types);
//   - Usym: Bits = address, Aux = pid; Stack: Bits = stack id, Aux = pid;
//   - Timestamp: Bits = format id (Spec.Events index), Aux = nsecs;
//   - Inet: Bits = family, Bytes = 16 address bytes; MacAddr: Bytes;
//   - String: Bytes up to the first NUL; Buffer: Bytes = the data;
//   - Tuple, Array, Record: Elems (Names for records).
type Value struct {
	Type  *types.Type
	Bits  uint64
	Aux   uint64
	Bytes []byte
	Elems []Value
	Names []string
}

// Kind is the value's type kind.
func (v Value) Kind() types.Kind {
	if v.Type == nil {
		return types.Invalid
	}
	return v.Type.Kind
}

// Int is the value as a signed integer.
func (v Value) Int() int64 { return int64(v.Bits) }

// Signed reports whether the integer value is signed.
func (v Value) Signed() bool { return v.Type != nil && v.Type.Signed }

// Decode turns b, laid out per compiler/ABI.md as a t, into a Value. It
// reads only the bytes t occupies; b may be longer (map values of widened
// integers are read at their declared width, see readInt).
func Decode(t *types.Type, b []byte) (Value, error) {
	if t == nil {
		return Value{}, fmt.Errorf("decode: nil type")
	}
	v := Value{Type: t}
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("decode %s: need %d bytes, have %d", t, n, len(b))
		}
		return nil
	}
	switch t.Kind {
	case types.Int, types.Bool, types.Enum, types.Pointer, types.Kaddr, types.Ksym,
		types.Username, types.Strerror, types.CgroupPath, types.Ctx, types.Probe:
		size := t.Size
		if size <= 0 {
			size = 8
		}
		if err := need(size); err != nil {
			return v, err
		}
		v.Bits = readInt(b, size, t.Signed)
	case types.Count, types.Sum, types.Min, types.Max, types.Avg, types.Stats, types.Hist, types.Lhist, types.Tseries:
		return v, fmt.Errorf("decode %s: aggregations are merged from map entries, not decoded", t)
	case types.Usym, types.Stack, types.Timestamp:
		if err := need(16); err != nil {
			return v, err
		}
		v.Bits = binary.LittleEndian.Uint64(b[0:8])
		v.Aux = binary.LittleEndian.Uint64(b[8:16])
		if t.Kind == types.Stack && t.Stack.Dwarf {
			// dw_ustack: the registers and the stack copy follow.
			if err := need(types.DwarfStackHeader); err != nil {
				return v, err
			}
			n := min(v.Bits, uint64(len(b)-types.DwarfStackHeader))
			v.Bytes = append([]byte(nil), b[16:types.DwarfStackHeader+int(n)]...)
		}
	case types.Inet:
		if err := need(24); err != nil {
			return v, err
		}
		v.Bits = binary.LittleEndian.Uint64(b[0:8])
		v.Bytes = append([]byte(nil), b[8:24]...)
	case types.MacAddr:
		if err := need(6); err != nil {
			return v, err
		}
		v.Bytes = append([]byte(nil), b[:6]...)
	case types.String:
		if err := need(t.Size); err != nil {
			return v, err
		}
		s := b[:t.Size]
		full := true
		for i, c := range s {
			if c == 0 {
				s, full = s[:i], false
				break
			}
		}
		v.Bytes = append([]byte(nil), s...)
		if full && t.Trunc {
			v.Bytes = append(v.Bytes, strTruncTrailer.Load().(string)...) // bpftrace 0.26's trailer
		}
	case types.Buffer:
		if err := need(1); err != nil {
			return v, err
		}
		n := int(b[0])
		if max := t.Size - 1; n > max && max >= 0 {
			n = max
		}
		if n > len(b)-1 {
			n = len(b) - 1
		}
		v.Bytes = append([]byte(nil), b[1:1+n]...)
	case types.Tuple, types.Record:
		if err := need(t.Size); err != nil {
			return v, err
		}
		for i, f := range t.Fields {
			if f.Offset < 0 || f.Offset > len(b) {
				return v, fmt.Errorf("decode %s: field %d at offset %d out of range", t, i, f.Offset)
			}
			e, err := Decode(f.Type, b[f.Offset:])
			if err != nil {
				return v, fmt.Errorf("field %d of %s: %w", i, t, err)
			}
			if f.BitWidth > 0 && e.Type != nil && e.Type.IsInteger() {
				e.Bits = bitfield(e.Bits, f.BitOff, f.BitWidth, f.Type.Signed)
			}
			v.Elems = append(v.Elems, e)
			v.Names = append(v.Names, f.Name)
		}
	case types.Array:
		if t.Elem == nil || t.Elem.Size <= 0 {
			return v, fmt.Errorf("decode %s: array element has no size", t)
		}
		if err := need(t.Elem.Size * t.Len); err != nil {
			return v, err
		}
		for i := 0; i < t.Len; i++ {
			e, err := Decode(t.Elem, b[i*t.Elem.Size:])
			if err != nil {
				return v, fmt.Errorf("element %d of %s: %w", i, t, err)
			}
			v.Elems = append(v.Elems, e)
		}
	default:
		return v, fmt.Errorf("decode: cannot print values of type %s", t)
	}
	return v, nil
}

// readInt reads a little-endian integer of size bytes, sign-extending it
// when signed.
func readInt(b []byte, size int, signed bool) uint64 {
	var u uint64
	switch size {
	case 1:
		u = uint64(b[0])
		if signed {
			u = uint64(int64(int8(b[0])))
		}
	case 2:
		x := binary.LittleEndian.Uint16(b)
		u = uint64(x)
		if signed {
			u = uint64(int64(int16(x)))
		}
	case 4:
		x := binary.LittleEndian.Uint32(b)
		u = uint64(x)
		if signed {
			u = uint64(int64(int32(x)))
		}
	default:
		u = binary.LittleEndian.Uint64(b)
	}
	return u
}

func bitfield(bits uint64, off, width int, signed bool) uint64 {
	v := bits >> uint(off)
	if width >= 64 {
		return v
	}
	v &= (1 << uint(width)) - 1
	if signed && v&(1<<uint(width-1)) != 0 {
		v |= ^uint64(0) << uint(width)
	}
	return v
}

// strTruncTrailer is what follows a string str() cut at max_strlen
// (config str_trunc_trailer, BPFTRACE_STR_TRUNC_TRAILER; bpftrace 0.26's
// ".." by default). Like bpftrace's config it is the process's: a run
// sets it (SetStrTruncTrailer) before its events decode.
var strTruncTrailer atomic.Value

func init() { strTruncTrailer.Store("..") }

// SetStrTruncTrailer sets what follows a truncated string.
func SetStrTruncTrailer(s string) { strTruncTrailer.Store(s) }
