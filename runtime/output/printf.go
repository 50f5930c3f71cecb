package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/lang/printf"
	"github.com/gotrace/gotrace/lang/types"
)

// Printf writes format applied to args with C printf semantics, as bpftrace
// 0.17 passes its arguments to snprintf: integers are 64-bit in the record,
// and a conversion without a length modifier reads them as C int (32 bits;
// %hh 8, %h 16, %l %ll %j %z %t 64). %s prints any value's text; %r prints
// a buffer's text. Symbols and stacks in args print as in text output, so
// Printf resolves nothing (use Printer.Printf for those).
func Printf(w io.Writer, format string, args []Value) error {
	var sb strings.Builder
	if err := (&Printer{}).sprintf(&sb, format, args); err != nil {
		return err
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("printf: %w", err)
	}
	return nil
}

// Spec, Piece and NextPiece are lang/printf's: one scanner for the
// checker, this printer and the runtime's fast path.
type (
	Spec  = printf.Spec
	Piece = printf.Piece
)

// NextPiece is printf.NextPiece.
func NextPiece(format string, i int) (Piece, int, error) { return printf.NextPiece(format, i) }

func (p *Printer) sprintf(sb *strings.Builder, format string, args []Value) error {
	argi := 0
	for i := 0; i < len(format); {
		pc, next, err := NextPiece(format, i)
		i = next
		sb.WriteString(pc.Lit)
		if err != nil {
			// A conversion bpftrace does not know prints as written, as
			// the checker, which gave it no argument, read it.
			sb.WriteString(pc.Text)
			continue
		}
		if !pc.Conv {
			continue
		}
		if argi >= len(args) {
			return fmt.Errorf("printf: conversion %q has no argument (%d supplied)", pc.Text, len(args))
		}
		p.convert(sb, pc.Spec, args[argi])
		argi++
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// argBits is the argument as the integer snprintf reads.
func argBits(v Value) uint64 {
	switch v.Kind() {
	case types.String:
		// A string where an integer is expected: nothing sensible to do;
		// bpftrace's checker rejects it.
		return 0
	}
	return v.Bits
}

func (p *Printer) convert(sb *strings.Builder, s Spec, v Value) {
	switch s.Verb {
	case 's', 'r':
		str := p.text(v, 8)
		if v.Kind() == types.Enum && v.Type.Enumerators != nil {
			// bpftrace 0.26's %s of an enum value: the enumerator's name,
			// or the number when no enumerator has it.
			if name, ok := v.Type.Enumerators[v.Int()]; ok {
				str = name
			}
		}
		if s.RawMode != 0 {
			str = rawHex(v.Bytes, s.RawMode == 'x')
		}
		if s.Prec >= 0 && s.Prec < len(str) {
			str = str[:s.Prec]
		}
		pad(sb, s, str, false)
		return
	case 'c':
		pad(sb, s, string([]byte{byte(argBits(v))}), false)
		return
	case 'p':
		u := argBits(v)
		if u == 0 {
			pad(sb, s, "(nil)", false)
			return
		}
		digits := strconv.FormatUint(u, 16)
		if s.Prec > len(digits) {
			digits = strings.Repeat("0", s.Prec-len(digits)) + digits
		}
		sign := ""
		if s.Plus {
			sign = "+"
		} else if s.Space {
			sign = " "
		}
		padNum(sb, s, sign+"0x", digits)
		return
	}
	u := argBits(v)
	bits := s.Bits()
	if bits < 64 {
		u &= 1<<bits - 1
	}
	var prefix, digits string
	switch s.Verb {
	case 'd', 'i':
		n := int64(u)
		if bits < 64 && u&(1<<(bits-1)) != 0 {
			n = int64(u | ^uint64(0)<<bits)
		}
		if n < 0 {
			prefix = "-"
			digits = strconv.FormatUint(uint64(-n), 10)
		} else {
			if s.Plus {
				prefix = "+"
			} else if s.Space {
				prefix = " "
			}
			digits = strconv.FormatUint(uint64(n), 10)
		}
	case 'u':
		digits = strconv.FormatUint(u, 10)
	case 'x':
		digits = strconv.FormatUint(u, 16)
		if s.Alt && u != 0 {
			prefix = "0x"
		}
	case 'X':
		digits = strings.ToUpper(strconv.FormatUint(u, 16))
		if s.Alt && u != 0 {
			prefix = "0X"
		}
	case 'o':
		digits = strconv.FormatUint(u, 8)
	}
	if s.Prec >= 0 {
		if s.Prec == 0 && u == 0 {
			digits = ""
		}
		if len(digits) < s.Prec {
			digits = strings.Repeat("0", s.Prec-len(digits)) + digits
		}
	}
	if s.Verb == 'o' && s.Alt && !strings.HasPrefix(digits, "0") {
		digits = "0" + digits
	}
	padNum(sb, s, prefix, digits)
}

// pad writes str padded to the width (left-justified with '-').
func pad(sb *strings.Builder, s Spec, str string, _ bool) {
	n := s.Width - len(str)
	if n > 0 && !s.Minus {
		sb.WriteString(strings.Repeat(" ", n))
	}
	sb.WriteString(str)
	if n > 0 && s.Minus {
		sb.WriteString(strings.Repeat(" ", n))
	}
}

// padNum writes a number: zero padding goes between prefix and digits, and
// applies only without '-' and without a precision, as in C.
func padNum(sb *strings.Builder, s Spec, prefix, digits string) {
	n := s.Width - len(prefix) - len(digits)
	if n > 0 && s.Zero && !s.Minus && s.Prec < 0 {
		sb.WriteString(prefix + strings.Repeat("0", n) + digits)
		return
	}
	pad(sb, s, prefix+digits, false)
}

// rawHex spells b as bpftrace's %rx ("\x48\x65") or %rh ("48 65").
func rawHex(b []byte, escaped bool) string {
	var sb strings.Builder
	for i, c := range b {
		if escaped {
			fmt.Fprintf(&sb, "\\x%02x", c)
			continue
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}
