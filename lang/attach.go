package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// SelfSignals are the signals a self:signal: probe can name.
var SelfSignals = []string{"SIGUSR1"}

// HasParams reports whether an attach point's raw text holds positional
// parameters ($1, $#): then the parser leaves its fields empty (Provider
// "") and the checker calls ParseAttachPoint again on the substituted text.
func HasParams(raw string) bool {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] == '$' && (raw[i+1] == '#' || raw[i+1] >= '0' && raw[i+1] <= '9') {
			return true
		}
	}
	return false
}

// SubstituteParams replaces the positional parameters $1..$N in an attach
// point's raw text by their values (a missing one by nothing, as
// bpftrace does).
func SubstituteParams(raw string, params []string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] != '$' || i+1 >= len(raw) || raw[i+1] < '0' || raw[i+1] > '9' {
			b.WriteByte(raw[i])
			continue
		}
		j := i + 1
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(raw[i+1 : j]); err == nil && n >= 1 && n <= len(params) {
			b.WriteString(params[n-1])
		}
		i = j - 1
	}
	return b.String()
}

// splitAttach splits on ':' outside double quotes, removing the quotes.
func splitAttach(raw string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	inq := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			inq = !inq
		case c == '\\' && inq && i+1 < len(raw):
			i++
			cur.WriteByte(raw[i])
		case c == ':' && !inq:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if inq {
		return nil, fmt.Errorf("unterminated string in attach point %s", raw)
	}
	return append(parts, cur.String()), nil
}

// SplitProbeName splits a named probe's `name=` (bpftrace 0.25) off its
// attach point: ("", raw) when raw has no name.
func SplitProbeName(raw string) (name, rest string) {
	i := strings.IndexByte(raw, '=')
	if i <= 0 || strings.ContainsAny(raw[:i], ":\"") {
		return "", raw
	}
	for j := 0; j < i; j++ {
		if c := raw[j]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return "", raw
		}
	}
	return raw[:i], raw[i+1:]
}

func isWild(s string) bool { return strings.ContainsAny(s, "*?[{") }

// ParseAttachPoint splits one probe specification into its fields (see
// AttachPoint). Errors name the attach point.
func ParseAttachPoint(raw string, sp Span) (*AttachPoint, error) {
	name, raw := SplitProbeName(raw)
	ap := &AttachPoint{Loc: Loc(sp), Raw: raw, Name: name}
	if HasParams(raw) {
		return ap, nil
	}
	parts, err := splitAttach(raw)
	if err != nil {
		return nil, err
	}
	kind, ok := LookupProbeKind(parts[0])
	if !ok {
		if len(parts) == 1 {
			return nil, fmt.Errorf("invalid attach point: %s (expected provider:target, BEGIN or END)", raw)
		}
		return nil, &HintError{Msg: "invalid provider name: " + parts[0], Hint: Suggest(parts[0], fullSpellings())}
	}
	ap.Provider = kind
	for _, a := range parts[1:] {
		if isWild(a) {
			ap.Wildcard = true
		}
	}
	t := kind.Type()
	if err := t.parse(&apParser{ap: ap, args: parts[1:], prov: t.Name}); err != nil {
		return nil, err
	}
	return ap, nil
}

// sourceLine recognizes a statement probe: bpftrace 0.26's
// `BIN@FILE:LINE[:COL]` and the `BIN:FILE.c:LINE` spelling (a source file
// name with an extension, then a line number), setting Target, SrcFile,
// Line and Col.
func sourceLine(ap *AttachPoint, args []string) (bool, error) {
	num := func(s string) (int, bool) {
		v, err := strconv.Atoi(s)
		return v, err == nil && v > 0
	}
	var bin, file string
	var rest []string
	if at := strings.LastIndexByte(args[0], '@'); at > 0 && len(args) >= 2 {
		bin, file, rest = args[0][:at], args[0][at+1:], args[1:]
	} else if len(args) == 3 && strings.Contains(args[1], ".") && !strings.ContainsAny(args[1], "/*?") {
		if _, ok := num(args[2]); !ok {
			return false, nil
		}
		bin, file, rest = args[0], args[1], args[2:]
	} else {
		return false, nil
	}
	if ap.Provider == ProbeUretprobe {
		return true, fmt.Errorf("a source location names a statement, where only uprobe attaches (not uretprobe): %s", ap.Raw)
	}
	if file == "" || len(rest) > 2 {
		return true, fmt.Errorf("invalid source location in %s (expected BIN@FILE:LINE[:COL])", ap.Raw)
	}
	line, ok := num(rest[0])
	if !ok {
		return true, fmt.Errorf("invalid line number %s in %s", rest[0], ap.Raw)
	}
	col := 0
	if len(rest) == 2 {
		if col, ok = num(rest[1]); !ok {
			return true, fmt.Errorf("invalid column number %s in %s", rest[1], ap.Raw)
		}
	}
	ap.Target, ap.SrcFile, ap.Line, ap.Col = bin, file, line, col
	return true, nil
}

// funcOffset sets Func and Offset from `name[+off]`.
func funcOffset(ap *AttachPoint, s string) error {
	name, off, ok := strings.Cut(s, "+")
	ap.Func = name
	if !ok {
		return nil
	}
	v, err := strconv.ParseInt(off, 0, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid offset %s in %s", off, ap.Raw)
	}
	ap.Offset = v
	return nil
}

// splitRate splits `99`, `1s`, `100ms` into unit and number.
func splitRate(s string) (unit, num string) {
	for _, u := range []string{"hz", "ms", "us", "ns", "s", "m"} {
		if strings.HasSuffix(s, u) && len(s) > len(u) && s[len(s)-len(u)-1] >= '0' && s[len(s)-len(u)-1] <= '9' {
			return u, s[:len(s)-len(u)]
		}
	}
	return "", s
}
