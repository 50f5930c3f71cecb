// Package printf is the one scanner of printf-style format strings
// (printf, system, cat, debugf): the checker counts and types a format's
// conversions with it, and the printer and the runtime's fast path format
// with it, so they agree on every format. It imports nothing of gotrace.
package printf

import (
	"fmt"
	"strings"
)

// Spec is one parsed printf conversion specification: %[flags][width]
// [.prec][length]verb. The general printer and the runtime's per-event fast
// path both read formats through NextPiece, so they agree on the syntax.
type Spec struct {
	Minus, Plus, Space, Zero, Alt bool
	Width                         int
	Prec                          int    // -1 when absent
	Length                        string // "", "hh", "h", "l", "ll", "j", "z", "t" or "L"
	Verb                          byte
	RawMode                       byte // 'x' or 'h' after %r
}

// Bits is the width in bits of the C argument the conversion reads: 32
// without a length modifier, %hh 8, %h 16, the others 64.
func (s *Spec) Bits() uint {
	switch s.Length {
	case "":
		return 32
	case "hh":
		return 8
	case "h":
		return 16
	}
	return 64
}

// Piece is one step through a printf format: literal text, then at most
// one conversion.
type Piece struct {
	Lit  string // printed as is ("%%" contributes one '%', a lone trailing '%' itself)
	Conv bool   // a conversion follows Lit
	Spec Spec   // the conversion, when Conv
	Text string // the conversion as written (e.g. "%-08lx"), for messages
}

// lengths are the C length modifiers, longest first.
var lengths = [...]string{"hh", "ll", "h", "l", "j", "z", "t", "L"}

// NextPiece scans format from byte offset i and returns the next piece and
// the offset after it; scanning is done when the offset reaches
// len(format). All strings it returns are slices of format, so scanning
// allocates nothing. An incomplete or unsupported conversion is an error;
// the piece then holds the text before it (Lit) and the conversion as
// written (Text), which the checker and the printer both take as literal
// text.
func NextPiece(format string, i int) (Piece, int, error) {
	var pc Piece
	litStart := i
	for i < len(format) && format[i] != '%' {
		i++
	}
	if i+1 >= len(format) {
		// The end, or a lone trailing % which prints as is (glibc does
		// the same).
		pc.Lit = format[litStart:]
		return pc, len(format), nil
	}
	if format[i+1] == '%' {
		pc.Lit = format[litStart : i+1]
		return pc, i + 2, nil
	}
	pc.Lit = format[litStart:i]
	start := i
	i++
	s := Spec{Prec: -1}
flags:
	for ; i < len(format); i++ {
		switch format[i] {
		case '-':
			s.Minus = true
		case '+':
			s.Plus = true
		case ' ':
			s.Space = true
		case '0':
			s.Zero = true
		case '#':
			s.Alt = true
		default:
			break flags
		}
	}
	for ; i < len(format) && isDigit(format[i]); i++ {
		s.Width = s.Width*10 + int(format[i]-'0')
	}
	if i < len(format) && format[i] == '.' {
		i++
		s.Prec = 0
		for ; i < len(format) && isDigit(format[i]); i++ {
			s.Prec = s.Prec*10 + int(format[i]-'0')
		}
	}
	for _, l := range lengths {
		if strings.HasPrefix(format[i:], l) {
			s.Length = l
			i += len(l)
			break
		}
	}
	if i >= len(format) {
		pc.Text = format[start:]
		return pc, i, fmt.Errorf("printf: incomplete conversion %q at the end of the format", format[start:])
	}
	s.Verb = format[i]
	i++
	if s.Verb == 'r' && i < len(format) && (format[i] == 'x' || format[i] == 'h') {
		// %rx: every byte as \xNN; %rh: every byte as hex, space-separated.
		s.RawMode = format[i]
		i++
	}
	if !strings.ContainsRune("diuxXocspr", rune(s.Verb)) {
		pc.Text = format[start:i]
		return pc, i, fmt.Errorf("printf: unsupported conversion %q", format[start:i])
	}
	pc.Conv, pc.Spec, pc.Text = true, s, format[start:i]
	return pc, i, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
