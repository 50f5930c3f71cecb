package ktypes

import (
	"fmt"
	"strings"
)

// tokKind classifies a C token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tChar
	tPunct
)

// ctok is one C token with the place it came from, so parse errors name
// the file and line (script declarations use the file name "script").
type ctok struct {
	kind tokKind
	text string
	file string
	line int
	// bol is set on the first token of a source line (the preprocessor
	// needs it to find directives); hide carries the macro names already
	// expanded into this token (to stop recursive expansion).
	bol  bool
	hide map[string]bool
}

func (t ctok) pos() string { return fmt.Sprintf("%s:%d", t.file, t.line) }

func (t ctok) is(s string) bool { return (t.kind == tPunct || t.kind == tIdent) && t.text == s }

// puncts lists multi-character punctuators, longest first.
var puncts = []string{
	"...", "<<=", ">>=",
	"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##",
}

// stripComments removes C comments and joins continued lines, keeping
// newlines so line numbers stay right.
func stripComments(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	n := len(src)
	for i := 0; i < n; i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < n && src[i+1] == '\n':
			// Line continuation: drop it but keep the line count by
			// emitting the newline at the end of the logical line.
			i++
			b.WriteString("\x00") // placeholder replaced below
		case c == '\\' && i+2 < n && src[i+1] == '\r' && src[i+2] == '\n':
			i += 2
			b.WriteString("\x00")
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				if src[i] == '\\' && i+1 < n && src[i+1] == '\n' {
					i++
				}
				i++
			}
			i--
		case c == '/' && i+1 < n && src[i+1] == '*':
			i += 2
			b.WriteByte(' ')
			for i < n && !(src[i] == '*' && i+1 < n && src[i+1] == '/') {
				if src[i] == '\n' {
					b.WriteByte('\n')
				}
				i++
			}
			i++
		case c == '"' || c == '\'':
			q := c
			b.WriteByte(c)
			for i++; i < n && src[i] != q && src[i] != '\n'; i++ {
				if src[i] == '\\' && i+1 < n {
					b.WriteByte(src[i])
					i++
				}
				b.WriteByte(src[i])
			}
			if i < n && src[i] == q {
				b.WriteByte(q)
			} else {
				i--
			}
		default:
			b.WriteByte(c)
		}
	}
	// Move each continuation's newline to the end of its logical line.
	lines := strings.Split(b.String(), "\n")
	var out strings.Builder
	for i, l := range lines {
		k := strings.Count(l, "\x00")
		out.WriteString(strings.ReplaceAll(l, "\x00", " "))
		if i < len(lines)-1 {
			out.WriteByte('\n')
		}
		for ; k > 0; k-- {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// lexLine tokenizes one logical line (comments already removed).
func lexLine(line, file string, lineNo int) ([]ctok, error) {
	var toks []ctok
	n := len(line)
	for i := 0; i < n; {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(line[j]) {
				j++
			}
			toks = append(toks, ctok{kind: tIdent, text: line[i:j]})
			i = j
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(line[i+1])):
			j := i + 1
			for j < n && (isIdentChar(line[j]) || line[j] == '.' ||
				((line[j] == '+' || line[j] == '-') && (line[j-1] == 'e' || line[j-1] == 'E' || line[j-1] == 'p' || line[j-1] == 'P'))) {
				j++
			}
			toks = append(toks, ctok{kind: tNumber, text: line[i:j]})
			i = j
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && line[j] != c {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= n {
				return nil, fmt.Errorf("%s:%d: unterminated %s literal", file, lineNo, map[byte]string{'"': "string", '\'': "character"}[c])
			}
			k := tString
			if c == '\'' {
				k = tChar
			}
			toks = append(toks, ctok{kind: k, text: line[i : j+1]})
			i = j + 1
		default:
			p := string(c)
			for _, m := range puncts {
				if strings.HasPrefix(line[i:], m) {
					p = m
					break
				}
			}
			if !strings.ContainsRune("{}[]()<>;:,.=*&|^~!?+-/%#", rune(c)) {
				return nil, fmt.Errorf("%s:%d: unexpected character %q", file, lineNo, c)
			}
			toks = append(toks, ctok{kind: tPunct, text: p})
			i += len(p)
		}
	}
	for k := range toks {
		toks[k].file, toks[k].line = file, lineNo
	}
	if len(toks) > 0 {
		toks[0].bol = true
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
