package lang

import "fmt"

// Pos is a place in a source file. Line and Col are 1-based; Col counts
// bytes. Offset is the 0-based byte offset.
type Pos struct {
	Offset int
	Line   int
	Col    int
	// File is the imported script (`import "file";`) the position is in;
	// nil in the script itself.
	File *Source
}

// IsValid reports whether p was set.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Span is a range of source, End exclusive (bpftrace prints it as
// LINE:COL-ENDCOL).
type Span struct {
	Start Pos
	End   Pos
}

// Join returns the smallest span covering a and b.
func Join(a, b Span) Span {
	if !a.Start.IsValid() {
		return b
	}
	if !b.Start.IsValid() {
		return a
	}
	r := a
	if b.Start.Offset < r.Start.Offset {
		r.Start = b.Start
	}
	if b.End.Offset > r.End.Offset {
		r.End = b.End
	}
	return r
}

// Source is one script: its name as diagnostics print it ("stdin" for -e)
// and its text.
type Source struct {
	Name string
	Text string

	imported bool  // read by an import: its positions name it (Pos.File)
	shifts   []int // bpftrace 0.17's column shifts (set by Parse; see ShiftColumns)
}

// Line returns the text of 1-based line n, without its newline.
func (s *Source) Line(n int) string {
	line := 1
	start := 0
	for i := 0; i < len(s.Text); i++ {
		if line == n {
			start = i
			break
		}
		if s.Text[i] == '\n' {
			line++
			if line == n {
				start = i + 1
				break
			}
		}
	}
	if line != n {
		return ""
	}
	end := start
	for end < len(s.Text) && s.Text[end] != '\n' {
		end++
	}
	return s.Text[start:end]
}

// PosAt converts a byte offset into a Pos.
func (s *Source) PosAt(off int) Pos {
	if off > len(s.Text) {
		off = len(s.Text)
	}
	line, col := 1, 1
	for i := 0; i < off; i++ {
		if s.Text[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	p := Pos{Offset: off, Line: line, Col: col}
	if s.imported {
		p.File = s
	}
	return p
}

// LexerStart moves a span's start back to where bpftrace's lexer puts it:
// its locations advance only past white space, so a node's reported start
// is the first character after the white space before it. The checker's
// errors and the compiler's helper_error places both report so; at returns
// the position of an offset in the span's source (nil: src.PosAt).
func LexerStart(src *Source, sp Span, at func(off int) Pos) Span {
	if sp.Start.File != nil {
		src, at = sp.Start.File, nil // in an imported script
	}
	if src == nil || !sp.Start.IsValid() {
		return sp
	}
	off := sp.Start.Offset
	if off > len(src.Text) {
		return sp
	}
	for off > 0 && !isSpace(src.Text[off-1]) {
		off--
	}
	if off != sp.Start.Offset {
		if at == nil {
			at = src.PosAt
		}
		sp.Start = at(off)
	}
	return sp
}


// ShiftColumns gives sp's columns as bpftrace 0.17 counts them: its lexer
// counts the character that ends a struct, union or enum type name in a
// cast, sizeof or offsetof ("*", ")" or ",") twice, so every place after
// one on the same line is a column further right, once per such type name
// (the shift offsets the lexer records, kept on the Source by Parse). The
// marker under an echoed line moves with the columns, as bpftrace's does.
func ShiftColumns(src *Source, sp Span) Span {
	if sp.Start.File != nil {
		src = sp.Start.File // in an imported script
	}
	if src == nil || len(src.shifts) == 0 {
		return sp
	}
	sp.Start = src.shiftPos(sp.Start)
	if sp.End.IsValid() {
		sp.End = src.shiftPos(sp.End)
	}
	return sp
}

func (s *Source) shiftPos(p Pos) Pos {
	if !p.IsValid() {
		return p
	}
	lineStart := p.Offset - (p.Col - 1)
	for _, sh := range s.shifts {
		if sh >= lineStart && sh < p.Offset {
			p.Col++
		}
	}
	return p
}
