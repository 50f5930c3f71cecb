package stdlib

import (
	"strings"

	"github.com/gotrace/gotrace/lang/types"
)

// FormatVerb is one conversion of a printf/system/cat format string.
type FormatVerb struct {
	Start, End int    // byte range of the verb in the format ("%-5lu")
	Flags      string // any of "-+ #0"
	Width      string // digits or ""
	Prec       string // digits after '.', or "" (HasPrec tells "%.s")
	HasPrec    bool
	Length     string // "hh" "h" "l" "ll" "j" "z" "t" or ""
	Conv       string // "d" "i" "u" "o" "x" "X" "c" "p" "s" "r" "rx" "rh"
}

// ArgClass is what a verb accepts.
func (v FormatVerb) ArgClass() string {
	switch v.Conv {
	case "s":
		return "string"
	case "r", "rx", "rh":
		return "buffer"
	}
	return "integer"
}

// ParseFormat splits a format string into its conversions. "%%" is a
// literal percent; a '%' not followed by a conversion bpftrace knows is
// literal text too (bpftrace 0.17 ignores it when counting arguments).
func ParseFormat(s string) []FormatVerb {
	var out []FormatVerb
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			i++
			continue
		}
		j := i + 1
		v := FormatVerb{Start: i}
		for j < len(s) && strings.IndexByte("-+ #0", s[j]) >= 0 {
			j++
		}
		v.Flags = s[i+1 : j]
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		v.Width = s[k:j]
		if j < len(s) && s[j] == '.' {
			v.HasPrec = true
			j++
			k = j
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			v.Prec = s[k:j]
		}
		for _, l := range []string{"hh", "ll", "h", "l", "j", "z", "t"} {
			if strings.HasPrefix(s[j:], l) {
				v.Length = l
				j += len(l)
				break
			}
		}
		if j >= len(s) {
			break
		}
		switch c := s[j]; c {
		case 'd', 'i', 'u', 'o', 'x', 'X', 'c', 'p', 's':
			v.Conv = string(c)
			j++
		case 'r':
			v.Conv = "r"
			j++
			if j < len(s) && (s[j] == 'x' || s[j] == 'h') {
				v.Conv += string(s[j])
				j++
			}
		default:
			continue
		}
		v.End = j
		out = append(out, v)
		i = j - 1
	}
	return out
}

// printsAsString reports whether values of t print as text (%s).
func printsAsString(t *types.Type) bool {
	switch t.Kind {
	case types.String, types.Ksym, types.Usym, types.Probe, types.Username, types.Stack,
		types.Inet, types.Timestamp, types.MacAddr, types.CgroupPath, types.Strerror:
		return true
	}
	return false
}

// checkFormat validates call.Args[first:] against the format in
// call.Args[first-1] with bpftrace's messages, prefixed by fn ("printf").
func checkFormat(c Checker, call *Call, fn string, first int) {
	fmtStr, ok := wantStrLit(c, call, first-1)
	if !ok {
		return
	}
	verbs := ParseFormat(fmtStr)
	args := call.Args[first:]
	if len(args) < len(verbs) {
		c.Errorf(argsSpan(call), "%s: Not enough arguments for format string (%d supplied, %d expected)", fn, len(args), len(verbs))
		return
	}
	if len(args) > len(verbs) {
		c.Errorf(argsSpan(call), "%s: Too many arguments for format string (%d supplied, %d expected)", fn, len(args), len(verbs))
		return
	}
	for i, v := range verbs {
		t := args[i].Type()
		if invalid(t) {
			// The argument's own error was reported; bpftrace's "none
			// supplied" would be a follow-on error.
			continue
		}
		want := v.ArgClass()
		got := ""
		switch want {
		case "string":
			// bpftrace 0.26 prints an enum value's name with %s.
			if !printsAsString(t) && !(t.Kind == types.Enum && !c.Compat().Legacy()) {
				got = KindOfValue(t)
			}
		case "buffer":
			if t.Kind != types.Buffer {
				got = KindOfValue(t)
			}
		default:
			if !t.IsInteger() || printsAsString(t) {
				if t.Kind != types.Pointer && t.Kind != types.Ctx {
					got = KindOfValue(t)
				}
			}
		}
		if got != "" {
			c.Errorf(argsSpan(call), "%s: %%%s specifier expects a value of type %s (%s supplied)", fn, v.Conv, want, got)
		}
	}
}
