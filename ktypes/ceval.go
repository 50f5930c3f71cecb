package ktypes

import (
	"fmt"
	"strconv"
	"strings"
)

// evaluator computes C integer constant expressions: #if conditions, array
// sizes, bitfield widths and enumerator values.
type evaluator struct {
	toks []ctok
	i    int
	// ident resolves an identifier (an enumerator); nil means none.
	ident func(name string) (int64, bool)
	// typeName, when the tokens at ev.i start a type name, parses it and
	// returns its size, alignment and whether it is a signed integer.
	typeName func(ev *evaluator) (size, align int64, signed, ok bool, err error)
}

func (ev *evaluator) peek() ctok {
	if ev.i < len(ev.toks) {
		return ev.toks[ev.i]
	}
	return ctok{kind: tEOF, text: "end of expression"}
}

func (ev *evaluator) accept(s string) bool {
	if ev.peek().is(s) {
		ev.i++
		return true
	}
	return false
}

func (ev *evaluator) expr() (int64, error) {
	c, err := ev.binary(0)
	if err != nil {
		return 0, err
	}
	if ev.accept("?") {
		a, err := ev.expr()
		if err != nil {
			return 0, err
		}
		if !ev.accept(":") {
			return 0, fmt.Errorf("expected ':' in conditional expression")
		}
		b, err := ev.expr()
		if err != nil {
			return 0, err
		}
		if c != 0 {
			return a, nil
		}
		return b, nil
	}
	return c, nil
}

var binPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

func (ev *evaluator) binary(min int) (int64, error) {
	l, err := ev.unary()
	if err != nil {
		return 0, err
	}
	for {
		t := ev.peek()
		prec, ok := binPrec[t.text]
		if t.kind != tPunct || !ok || prec <= min {
			return l, nil
		}
		ev.i++
		r, err := ev.binary(prec)
		if err != nil {
			return 0, err
		}
		switch t.text {
		case "||":
			l = b2i(l != 0 || r != 0)
		case "&&":
			l = b2i(l != 0 && r != 0)
		case "|":
			l |= r
		case "^":
			l ^= r
		case "&":
			l &= r
		case "==":
			l = b2i(l == r)
		case "!=":
			l = b2i(l != r)
		case "<":
			l = b2i(l < r)
		case "<=":
			l = b2i(l <= r)
		case ">":
			l = b2i(l > r)
		case ">=":
			l = b2i(l >= r)
		case "<<":
			l <<= uint64(r) & 63
		case ">>":
			l >>= uint64(r) & 63
		case "+":
			l += r
		case "-":
			l -= r
		case "*":
			l *= r
		case "/", "%":
			if r == 0 {
				return 0, fmt.Errorf("division by zero in constant expression")
			}
			if t.text == "/" {
				l /= r
			} else {
				l %= r
			}
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (ev *evaluator) unary() (int64, error) {
	t := ev.peek()
	switch {
	case t.is("-"), t.is("+"), t.is("!"), t.is("~"):
		ev.i++
		v, err := ev.unary()
		if err != nil {
			return 0, err
		}
		switch t.text {
		case "-":
			return -v, nil
		case "!":
			return b2i(v == 0), nil
		case "~":
			return ^v, nil
		}
		return v, nil
	case t.is("sizeof"), t.is("_Alignof"), t.is("__alignof__"), t.is("alignof"):
		ev.i++
		save := ev.i
		if ev.accept("(") && ev.typeName != nil {
			size, align, _, ok, err := ev.typeName(ev)
			if err != nil {
				return 0, err
			}
			if ok {
				if !ev.accept(")") {
					return 0, fmt.Errorf("expected ')' after type name in %s", t.text)
				}
				if t.text == "sizeof" {
					return size, nil
				}
				return align, nil
			}
		}
		ev.i = save
		return 0, fmt.Errorf("%s of an expression is not supported in a constant", t.text)
	case t.is("("):
		ev.i++
		if ev.typeName != nil {
			size, _, signed, ok, err := ev.typeName(ev)
			if err != nil {
				return 0, err
			}
			if ok { // a cast
				if !ev.accept(")") {
					return 0, fmt.Errorf("expected ')' after type name in cast")
				}
				v, err := ev.unary()
				if err != nil {
					return 0, err
				}
				return truncate(v, size, signed), nil
			}
		}
		v, err := ev.expr()
		if err != nil {
			return 0, err
		}
		if !ev.accept(")") {
			return 0, fmt.Errorf("expected ')', found %q", ev.peek().text)
		}
		return v, nil
	case t.kind == tNumber:
		ev.i++
		return parseCInt(t.text)
	case t.kind == tChar:
		ev.i++
		return parseCChar(t.text)
	case t.kind == tIdent:
		ev.i++
		if ev.ident != nil {
			if v, ok := ev.ident(t.text); ok {
				return v, nil
			}
		}
		return 0, fmt.Errorf("%q is not a constant", t.text)
	}
	return 0, fmt.Errorf("unexpected %q in constant expression", t.text)
}

func truncate(v, size int64, signed bool) int64 {
	if size <= 0 || size >= 8 {
		return v
	}
	bits := uint(size * 8)
	u := uint64(v) & (1<<bits - 1)
	if signed && u&(1<<(bits-1)) != 0 {
		return int64(u) - 1<<bits
	}
	return int64(u)
}

// parseCInt parses a C integer literal with its suffixes (u, l, ll ...).
func parseCInt(s string) (int64, error) {
	t := strings.TrimRight(s, "uUlLzZ")
	base := 10
	switch {
	case strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"):
		base, t = 16, t[2:]
	case strings.HasPrefix(t, "0b") || strings.HasPrefix(t, "0B"):
		base, t = 2, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	u, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer constant %q", s)
	}
	return int64(u), nil
}

func parseCChar(s string) (int64, error) {
	body := strings.TrimSuffix(strings.TrimPrefix(s, "'"), "'")
	if body == "" {
		return 0, fmt.Errorf("empty character constant")
	}
	if body[0] != '\\' {
		return int64(body[0]), nil
	}
	if len(body) < 2 {
		return 0, fmt.Errorf("bad character constant %s", s)
	}
	switch body[1] {
	case 'n':
		return '\n', nil
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'a':
		return 7, nil
	case 'b':
		return 8, nil
	case 'f':
		return 12, nil
	case 'v':
		return 11, nil
	case 'x':
		v, err := strconv.ParseUint(body[2:], 16, 8)
		return int64(v), err
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v, err := strconv.ParseUint(body[1:], 8, 8)
		return int64(v), err
	}
	return int64(body[1]), nil
}
