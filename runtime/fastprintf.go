package runtime

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// A printf per event is the hot path of many scripts (a million records a
// second is common). The general printer decodes each record into a Value
// tree and formats through strings; that costs several allocations per
// record. fastFormat handles the common case — integer and string
// arguments, text output — by compiling the format once and appending each
// record's text straight into a reused buffer. Anything else (symbols,
// stacks, %c, %p, records, JSON) takes the general path. The semantics are
// output.Printf's (C printf as bpftrace 0.17 applies it); fastprintf_test
// checks the two agree.

// fastFormat is one printf event's format, compiled.
type fastFormat struct {
	segs []fastSeg
	need int // payload bytes the arguments occupy
}

// fastSeg is literal text (verb 0) or one conversion of one argument.
type fastSeg struct {
	lit string

	output.Spec      // the conversion as output.NextPiece scans it; Verb 0 for literal text
	bits        uint // 8, 16, 32 or 64: the C argument width

	// The argument: its offset and size in the payload, and how it reads.
	off, size int
	signed    bool
	str       bool // a string argument (only with %s)
	// plain: %d, %i or %u with no flags, width or precision (the common
	// case): the digits alone, appended straight to the line.
	plain bool
}

// compileFast compiles ev's format, or returns nil when the event needs the
// general path.
func compileFast(ev *compiler.Event) *fastFormat {
	if ev.Kind != compiler.EvPrintf {
		return nil
	}
	var fields []types.Field
	if ev.Args != nil {
		if ev.Args.Kind != types.Tuple && ev.Args.Kind != types.Record {
			return nil
		}
		fields = ev.Args.Fields
	}
	f := &fastFormat{}
	if ev.Args != nil {
		f.need = ev.Args.Size
	}
	if len(fields) == 0 {
		// bpftrace 0.17 prints a format without arguments verbatim ("%%"
		// included): one literal segment.
		f.segs = append(f.segs, fastSeg{lit: ev.Format})
		return f
	}
	format := ev.Format
	var lit strings.Builder
	flushLit := func() {
		if lit.Len() > 0 {
			f.segs = append(f.segs, fastSeg{lit: lit.String()})
			lit.Reset()
		}
	}
	argi := 0
	for i := 0; i < len(format); {
		pc, next, err := output.NextPiece(format, i)
		if err != nil {
			return nil // the general path reports the error
		}
		i = next
		lit.WriteString(pc.Lit)
		if !pc.Conv {
			continue
		}
		if argi >= len(fields) {
			return nil // the general path reports the error
		}
		s := fastSeg{Spec: pc.Spec, bits: pc.Spec.Bits()}
		if s.Width < 0 || s.Width > 1<<16 || s.Prec < -1 || s.Prec > 1<<16 {
			return nil // absurd (or overflowed) padding: leave it to the general path
		}
		fd := fields[argi]
		argi++
		if fd.BitWidth != 0 || fd.DataLoc || fd.Type == nil || fd.Offset < 0 {
			return nil
		}
		t := fd.Type
		s.off = fd.Offset
		switch t.Kind {
		case types.Int, types.Bool:
			if t.Kind == types.Bool && s.Verb == 's' {
				return nil // true/false in bpftrace 0.26: the general path
			}
			switch t.Size {
			case 1, 2, 4, 8:
			default:
				return nil
			}
			s.size, s.signed = t.Size, t.Signed
		case types.String:
			if s.Verb != 's' || t.Size <= 0 || t.Trunc { // the trailer: the general path
				return nil
			}
			s.size, s.str = t.Size, true
		default:
			return nil
		}
		switch s.Verb {
		case 'd', 'i', 'u', 'x', 'X', 'o', 's':
		default:
			return nil
		}
		if s.off+s.size > f.need {
			return nil
		}
		s.plain = !s.str && (s.Verb == 'd' || s.Verb == 'i' || s.Verb == 'u') && s.Width == 0 && s.Prec < 0 &&
			!s.Minus && !s.Plus && !s.Space && !s.Zero && !s.Alt
		flushLit()
		f.segs = append(f.segs, s)
	}
	flushLit()
	return f
}

// appendTo appends the text of one record's payload to dst. ok is false
// when the payload is too short (the general path reports it).
func (f *fastFormat) appendTo(dst, payload []byte) (out []byte, ok bool) {
	if len(payload) < f.need {
		return dst, false
	}
	var scratch [24]byte
	for i := range f.segs {
		s := &f.segs[i]
		if s.Verb == 0 {
			dst = append(dst, s.lit...)
			continue
		}
		if s.str {
			b := payload[s.off : s.off+s.size]
			for j, c := range b {
				if c == 0 {
					b = b[:j]
					break
				}
			}
			if s.Prec >= 0 && s.Prec < len(b) {
				b = b[:s.Prec]
			}
			dst = padBytes(dst, s, nil, b)
			continue
		}
		u := readUint(payload[s.off:], s.size, s.signed)
		if s.plain {
			if s.bits < 64 {
				u &= 1<<s.bits - 1
			}
			if s.Verb == 'u' {
				dst = strconv.AppendUint(dst, u, 10)
			} else {
				if s.bits < 64 && u&(1<<(s.bits-1)) != 0 {
					u |= ^uint64(0) << s.bits
				}
				dst = strconv.AppendInt(dst, int64(u), 10)
			}
			continue
		}
		if s.Verb == 's' {
			// A number's text, as the printer prints it.
			var d []byte
			if s.signed {
				d = strconv.AppendInt(scratch[:0], int64(u), 10)
			} else {
				d = strconv.AppendUint(scratch[:0], u, 10)
			}
			if s.Prec >= 0 && s.Prec < len(d) {
				d = d[:s.Prec]
			}
			dst = padBytes(dst, s, nil, d)
			continue
		}
		dst = appendInt(dst, s, u, scratch[:0])
	}
	return dst, true
}

// readUint reads a little-endian integer of size bytes, sign-extended when
// signed, as the printer's decoder does.
func readUint(b []byte, size int, signed bool) uint64 {
	switch size {
	case 1:
		if signed {
			return uint64(int64(int8(b[0])))
		}
		return uint64(b[0])
	case 2:
		x := binary.LittleEndian.Uint16(b)
		if signed {
			return uint64(int64(int16(x)))
		}
		return uint64(x)
	case 4:
		x := binary.LittleEndian.Uint32(b)
		if signed {
			return uint64(int64(int32(x)))
		}
		return uint64(x)
	}
	return binary.LittleEndian.Uint64(b)
}

// appendInt formats u as C's printf formats the conversion s of an
// argument of s.bits bits.
func appendInt(dst []byte, s *fastSeg, u uint64, scratch []byte) []byte {
	if s.bits < 64 {
		u &= 1<<s.bits - 1
	}
	var prefix []byte
	var digits []byte
	switch s.Verb {
	case 'd', 'i':
		n := int64(u)
		if s.bits < 64 && u&(1<<(s.bits-1)) != 0 {
			n = int64(u | ^uint64(0)<<s.bits)
		}
		if n < 0 {
			prefix = minusSign
			digits = strconv.AppendUint(scratch, uint64(-n), 10)
		} else {
			if s.Plus {
				prefix = plusSign
			} else if s.Space {
				prefix = spaceSign
			}
			digits = strconv.AppendUint(scratch, uint64(n), 10)
		}
	case 'u':
		digits = strconv.AppendUint(scratch, u, 10)
	case 'x', 'X':
		digits = strconv.AppendUint(scratch, u, 16)
		if s.Verb == 'X' {
			for i, c := range digits {
				if c >= 'a' && c <= 'f' {
					digits[i] = c - 'a' + 'A'
				}
			}
		}
		if s.Alt && u != 0 {
			if s.Verb == 'X' {
				prefix = hexUpper
			} else {
				prefix = hexLower
			}
		}
	case 'o':
		digits = strconv.AppendUint(scratch, u, 8)
	}
	zeros := 0 // leading zeros from the precision (and %#o)
	if s.Prec >= 0 {
		if s.Prec == 0 && u == 0 {
			digits = digits[:0]
		}
		if len(digits) < s.Prec {
			zeros = s.Prec - len(digits)
		}
	}
	if s.Verb == 'o' && s.Alt && zeros == 0 && (len(digits) == 0 || digits[0] != '0') {
		zeros = 1
	}
	n := len(prefix) + zeros + len(digits)
	pad := s.Width - n
	if pad > 0 && s.Zero && !s.Minus && s.Prec < 0 {
		// Zero padding goes between the prefix and the digits.
		dst = append(dst, prefix...)
		dst = appendRepeat(dst, '0', pad+zeros)
		return append(dst, digits...)
	}
	if pad > 0 && !s.Minus {
		dst = appendRepeat(dst, ' ', pad)
	}
	dst = append(dst, prefix...)
	dst = appendRepeat(dst, '0', zeros)
	dst = append(dst, digits...)
	if pad > 0 && s.Minus {
		dst = appendRepeat(dst, ' ', pad)
	}
	return dst
}

var (
	minusSign = []byte("-")
	plusSign  = []byte("+")
	spaceSign = []byte(" ")
	hexLower  = []byte("0x")
	hexUpper  = []byte("0X")
)

// padBytes writes prefix+b padded with spaces to the width.
func padBytes(dst []byte, s *fastSeg, prefix, b []byte) []byte {
	pad := s.Width - len(prefix) - len(b)
	if pad > 0 && !s.Minus {
		dst = appendRepeat(dst, ' ', pad)
	}
	dst = append(dst, prefix...)
	dst = append(dst, b...)
	if pad > 0 && s.Minus {
		dst = appendRepeat(dst, ' ', pad)
	}
	return dst
}

func appendRepeat(dst []byte, c byte, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, c)
	}
	return dst
}
