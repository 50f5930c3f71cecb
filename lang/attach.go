package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// providerAliases maps every provider spelling bpftrace accepts to the
// canonical name used in AttachPoint.Provider.
var providerAliases = map[string]string{
	"BEGIN": "BEGIN", "END": "END",
	"begin": "BEGIN", "end": "END", // bpftrace 0.24's spelling
	"tracepoint": "tracepoint", "t": "tracepoint",
	"rawtracepoint": "rawtracepoint", "rt": "rawtracepoint",
	"kprobe": "kprobe", "k": "kprobe",
	"kretprobe": "kretprobe", "kr": "kretprobe",
	"uprobe": "uprobe", "u": "uprobe",
	"uretprobe": "uretprobe", "ur": "uretprobe",
	"usdt": "usdt", "U": "usdt",
	"kfunc": "kfunc", "f": "kfunc", "fentry": "kfunc",
	"kretfunc": "kretfunc", "fr": "kretfunc", "fexit": "kretfunc",
	"profile": "profile", "p": "profile",
	"interval": "interval", "i": "interval",
	"software": "software", "s": "software",
	"hardware": "hardware", "h": "hardware",
	"watchpoint": "watchpoint", "w": "watchpoint",
	"asyncwatchpoint": "asyncwatchpoint", "aw": "asyncwatchpoint",
	"iter": "iter", "it": "iter",
	// bpftrace 0.26's benchmark and test probes (bench:NAME, test:NAME),
	// run by --mode bench / --mode test.
	"bench": "bench", "test": "test",
	// bpftrace 0.22's runtime events: self:signal:SIGUSR1 runs when the
	// tracer receives SIGUSR1.
	"self": "self",
}

// CanonicalProvider returns the canonical provider name for a spelling
// (alias or full name).
func CanonicalProvider(name string) (string, bool) {
	c, ok := providerAliases[name]
	return c, ok
}

// Providers lists the canonical provider names.
var Providers = []string{"BEGIN", "END", "tracepoint", "rawtracepoint", "kprobe", "kretprobe",
	"uprobe", "uretprobe", "usdt", "kfunc", "kretfunc", "profile", "interval", "software",
	"hardware", "watchpoint", "asyncwatchpoint", "iter", "bench", "test", "self"}

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
	prov, ok := providerAliases[parts[0]]
	if !ok {
		// Provider names are case-insensitive since bpftrace 0.24
		// (`Tracepoint:`, `BEGIN`/`begin`); the exact spelling wins, as
		// `U` (usdt) and `u` (uprobe) differ only in case.
		prov, ok = providerAliases[strings.ToLower(parts[0])]
	}
	if !ok {
		if len(parts) == 1 {
			return nil, fmt.Errorf("invalid attach point: %s (expected provider:target, BEGIN or END)", raw)
		}
		names := make([]string, 0, len(providerAliases))
		for n := range providerAliases {
			if len(n) > 2 { // full names, not one- or two-letter aliases
				names = append(names, n)
			}
		}
		return nil, &HintError{Msg: "invalid provider name: " + parts[0], Hint: Suggest(parts[0], names)}
	}
	ap.Provider = prov
	args := parts[1:]
	n := len(args)
	need := func(lo, hi int) error {
		if n < lo || n > hi {
			if lo == hi {
				return fmt.Errorf("%s probe type requires %d arguments, found %d in %s", prov, lo, n, raw)
			}
			return fmt.Errorf("%s probe type requires %d to %d arguments, found %d in %s", prov, lo, hi, n, raw)
		}
		for _, a := range args {
			if a == "" {
				return fmt.Errorf("empty part in attach point %s", raw)
			}
		}
		return nil
	}
	for _, a := range args {
		if isWild(a) {
			ap.Wildcard = true
		}
	}
	switch prov {
	case "BEGIN", "END":
		if n != 0 {
			return nil, fmt.Errorf("%s takes no arguments: %s", prov, raw)
		}
	case "tracepoint":
		if err := need(2, 2); err != nil {
			return nil, err
		}
		ap.Target, ap.Func = args[0], args[1]
	case "rawtracepoint", "kfunc", "kretfunc":
		if err := need(1, 2); err != nil {
			return nil, err
		}
		if n == 2 {
			ap.Target = args[0]
		}
		ap.Func = args[n-1]
	case "kprobe", "kretprobe":
		if err := need(1, 2); err != nil {
			return nil, err
		}
		if n == 2 {
			ap.Target = args[0]
		}
		if err := funcOffset(ap, args[n-1]); err != nil {
			return nil, err
		}
	case "uprobe", "uretprobe":
		if err := need(1, 3); err != nil {
			return nil, err
		}
		if ok, err := sourceLine(ap, args); ok || err != nil {
			return ap, err
		}
		switch n {
		case 1:
			return ap, funcOffset(ap, args[0])
		case 3:
			ap.Target, ap.Lang, ap.Func = args[0], args[1], args[2]
			return ap, nil
		}
		ap.Target = args[0]
		last := args[1]
		if len(last) > 0 && last[0] >= '0' && last[0] <= '9' {
			v, err := strconv.ParseUint(last, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("invalid address %s in %s", last, raw)
			}
			ap.Address, ap.HasAddr = v, true
			return ap, nil
		}
		if err := funcOffset(ap, last); err != nil {
			return nil, err
		}
	case "usdt":
		if n == 3 && args[1] == "" && args[0] != "" && args[2] != "" {
			// usdt:PATH::NAME: an empty provider part matches any
			// provider, as bpftrace 0.26.
			args[1] = "*"
			ap.Wildcard = true
		}
		if err := need(1, 3); err != nil {
			return nil, err
		}
		switch n {
		case 1:
			ap.Func = args[0]
		case 2:
			ap.Target, ap.Func = args[0], args[1]
		case 3:
			ap.Target, ap.NS, ap.Func = args[0], args[1], args[2]
		}
	case "profile", "interval":
		if err := need(1, 2); err != nil {
			return nil, err
		}
		if n == 1 {
			unit, num := splitRate(args[0])
			if unit == "" {
				if prov == "interval" {
					return nil, fmt.Errorf("interval probe needs a unit (s, ms, us, hz): %s", raw)
				}
				unit = "hz"
			}
			ap.Unit = unit
			v, err := ParseInt(num)
			if err != nil {
				return nil, fmt.Errorf("invalid rate of %s probe: %s", prov, raw)
			}
			ap.Freq = v
			return ap, nil
		}
		ap.Unit = args[0]
		switch ap.Unit {
		case "hz", "s", "ms", "us", "ns", "m":
		default:
			return nil, fmt.Errorf("invalid unit %q of %s probe: %s (expected hz, s, ms or us)", ap.Unit, prov, raw)
		}
		v, err := ParseInt(args[1])
		if err != nil {
			return nil, fmt.Errorf("invalid rate of %s probe: %s", prov, raw)
		}
		ap.Freq = v
	case "software", "hardware":
		if err := need(1, 2); err != nil {
			return nil, err
		}
		ap.Func = args[0]
		if n == 2 {
			v, err := ParseInt(args[1])
			if err != nil {
				return nil, fmt.Errorf("invalid count of %s probe: %s", prov, raw)
			}
			ap.Freq = v
		}
	case "watchpoint", "asyncwatchpoint":
		if err := need(3, 3); err != nil {
			return nil, err
		}
		a, err := strconv.ParseUint(args[0], 0, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid address %s in %s", args[0], raw)
		}
		ln, err := strconv.ParseUint(args[1], 0, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid length %s in %s", args[1], raw)
		}
		ap.Address, ap.HasAddr, ap.Len, ap.Mode = a, true, ln, args[2]
	case "bench", "test":
		if err := need(1, 1); err != nil {
			return nil, err
		}
		ap.Func = args[0]
	case "self":
		// self:signal:SIGUSR1, bpftrace's messages for anything else.
		if n != 2 {
			return nil, fmt.Errorf("self probe type requires 2 arguments, found %d", n)
		}
		if args[0] != "signal" {
			return nil, fmt.Errorf("%s is not a supported trigger", args[0])
		}
		ok := false
		for _, sig := range SelfSignals {
			ok = ok || args[1] == sig
		}
		if !ok {
			return nil, fmt.Errorf("%s is not a supported signal", args[1])
		}
		ap.Target, ap.Func, ap.Wildcard = args[0], args[1], false
	case "iter":
		if err := need(1, 2); err != nil {
			return nil, err
		}
		ap.Func = args[0]
		if n == 2 {
			ap.Target = args[1]
		}
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
	if ap.Provider == "uretprobe" {
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
