package lang

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Severity of a diagnostic.
type Severity uint8

const (
	Error Severity = iota
	Warning
)

// Diagnostic is one message about a place in a script.
type Diagnostic struct {
	Severity Severity
	Span     Span // zero Span: the message has no place (printed as "ERROR: msg")
	Msg      string
	Hint     string // printed after the marker line, as "HINT: ..."
}

// Diagnostics is a list of diagnostics about one source; it is an error.
type Diagnostics struct {
	Src   *Source
	Items []Diagnostic
}

// Add appends a diagnostic.
func (d *Diagnostics) Add(sev Severity, sp Span, hint, format string, args ...any) {
	d.Items = append(d.Items, Diagnostic{Severity: sev, Span: sp, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// Errorf appends an error at sp.
func (d *Diagnostics) Errorf(sp Span, format string, args ...any) {
	d.Add(Error, sp, "", format, args...)
}

// HasErrors reports whether any diagnostic is an error.
func (d *Diagnostics) HasErrors() bool {
	if d == nil {
		return false
	}
	for _, it := range d.Items {
		if it.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns d as an error if it holds any error, else nil.
func (d *Diagnostics) Err() error {
	if d.HasErrors() {
		return d
	}
	return nil
}

// Sort orders the diagnostics by position, keeping the order of equal ones.
func (d *Diagnostics) Sort() {
	sort.SliceStable(d.Items, func(i, j int) bool {
		return d.Items[i].Span.Start.Offset < d.Items[j].Span.Start.Offset
	})
}

func (d *Diagnostics) Error() string {
	var b strings.Builder
	for i, it := range d.Items {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(d.Format(it))
	}
	return b.String()
}

// Format renders one diagnostic in bpftrace's form:
//
//	stdin:1:14-17: ERROR: Unknown function: foo
//	BEGIN { @x = foo(1); }
//	             ~~~
//	HINT: did you mean ...?
//
// The marker is one "~" per character of the place, as bpftrace prints it.
func (d *Diagnostics) Format(it Diagnostic) string {
	sev := "ERROR"
	if it.Severity == Warning {
		sev = "WARNING"
	}
	var b strings.Builder
	name := "stdin"
	src := d.Src
	sp := it.Span
	if sp.Start.File != nil {
		// In an imported script.
		src = sp.Start.File
	}
	if src != nil && src.Name != "" {
		name = src.Name
	}
	if !sp.Start.IsValid() || src == nil {
		fmt.Fprintf(&b, "%s: %s", sev, it.Msg)
		if it.Hint != "" {
			fmt.Fprintf(&b, "\nHINT: %s", it.Hint)
		}
		return b.String()
	}
	end := sp.End
	if !end.IsValid() || end.Offset < sp.Start.Offset {
		// A point: mark one character.
		end = sp.Start
		end.Col++
		end.Offset++
	}
	if end.Line == sp.Start.Line {
		// bpftrace always prints a range, even for one character.
		fmt.Fprintf(&b, "%s:%d:%d-%d: %s: %s", name, sp.Start.Line, sp.Start.Col, end.Col, sev, it.Msg)
	} else {
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s", name, sp.Start.Line, sp.Start.Col, sev, it.Msg)
	}
	line := src.Line(sp.Start.Line)
	first := sp.Start.Col - 1
	last := len(line)
	if end.Line == sp.Start.Line {
		last = end.Col - 1
	}
	// A very long line (a generated one-line script) is echoed as a
	// window around the marker, "..." standing for what is cut off.
	lo, hi := 0, len(line)
	if len(line) > maxEchoLine {
		lo, hi = echoWindow(line, first)
		if first > hi {
			first = hi
		}
		if last > hi && hi < len(line) {
			last = hi
		}
	}
	// As bpftrace, a tab of the echoed line shows as 4 spaces, and the
	// marker counts it as 4 columns.
	b.WriteString("\n")
	if lo > 0 {
		b.WriteString(echoCut)
	}
	b.WriteString(strings.ReplaceAll(line[lo:hi], "\t", tabSpaces))
	if hi < len(line) {
		b.WriteString(echoCut)
	}
	b.WriteString("\n")
	if lo > 0 {
		b.WriteString(strings.Repeat(" ", len(echoCut)))
	}
	for i := lo; i < first && i < len(line); i++ {
		if line[i] == '\t' {
			b.WriteString(tabSpaces)
		} else {
			b.WriteByte(' ')
		}
	}
	for i := first; i < last; i++ {
		if i < len(line) && line[i] == '\t' {
			b.WriteString("~~~~")
		} else {
			b.WriteByte('~')
		}
	}
	if it.Hint != "" {
		fmt.Fprintf(&b, "\nHINT: %s", it.Hint)
	}
	return b.String()
}

// maxEchoLine is the longest source line a diagnostic echoes whole, as
// bpftrace echoes every line (so its output and gotrace's agree byte for
// byte on any real script); of a longer one (a generated one-line
// script) it shows echoWidth bytes around the marker's start.
const (
	maxEchoLine = 4096
	echoWidth   = 160
	echoBefore  = 60
	echoCut     = "..."
)

// echoWindow is the part [lo, hi) of a long line that a diagnostic
// marking column index col shows: echoBefore bytes before col and the
// rest of echoWidth after it, moved inside the line and to whole UTF-8
// characters.
func echoWindow(line string, col int) (lo, hi int) {
	lo = col - echoBefore
	if lo < 0 {
		lo = 0
	}
	hi = lo + echoWidth
	if hi > len(line) {
		hi = len(line)
		if lo = hi - echoWidth; lo < 0 {
			lo = 0
		}
	}
	// A character is at most utf8.UTFMax bytes (of text that is not
	// UTF-8, cut anywhere).
	for i := 1; i < utf8.UTFMax && lo > 0 && lo < hi && !utf8.RuneStart(line[lo]); i++ {
		lo++
	}
	for i := 1; i < utf8.UTFMax && hi < len(line) && hi > lo && !utf8.RuneStart(line[hi]); i++ {
		hi--
	}
	return lo, hi
}

// tabSpaces is what bpftrace shows a tab of a source line as.
const tabSpaces = "    "
