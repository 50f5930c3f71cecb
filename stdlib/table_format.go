package stdlib

import (
	"github.com/gotrace/gotrace/lang/printf"
	"github.com/gotrace/gotrace/lang/types"
	"strings"
)

// FormatVerb is one conversion of a printf/system/cat format string, as
// lang/printf scans it (the printer's scanner: the two agree).
type FormatVerb struct {
	Start, End int    // byte range of the verb in the format ("%-5lu")
	Text       string // the verb as written
	Spec       printf.Spec
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

// ParseFormat lists a format string's conversions. "%%" is a literal
// percent; a conversion bpftrace does not know, or one cut off by the end
// of the format, is literal text and takes no argument (bpftrace 0.17
// ignores it when counting arguments), and the printer prints it as
// written.
func ParseFormat(s string) []FormatVerb {
	var out []FormatVerb
	for i := 0; i < len(s); {
		pc, next, err := printf.NextPiece(s, i)
		i = next
		if err != nil || !pc.Conv {
			continue
		}
		conv := string(pc.Spec.Verb)
		if pc.Spec.RawMode != 0 {
			conv += string(pc.Spec.RawMode)
		}
		out = append(out, FormatVerb{Start: next - len(pc.Text), End: next, Text: pc.Text, Spec: pc.Spec, Conv: conv})
	}
	return out
}

// specToken017 is a conversion as bpftrace 0.17 names it in an error: as
// written, without its '%', a '-' flag, width and precision ("%-5lu" is
// "lu", as its format_string.cpp takes it).
func specToken017(text string) string {
	t := strings.TrimPrefix(text, "%")
	t = strings.TrimPrefix(t, "-")
	return strings.TrimLeft(t, "0123456789.")
}

// enumNames reports whether the checker prints enum values by name (bpftrace
// 0.26, where printf's %s takes an enum; 0.22 added it).
func enumNames(c Checker) bool {
	e, ok := c.(interface{ EnumNames() bool })
	return ok && e.EnumNames()
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
			if !t.PrintsAsText() && !(t.Kind == types.Enum && enumNames(c)) {
				got = types.KindWord(t, types.AsArg)
			}
		case "buffer":
			if t.Kind != types.Buffer {
				got = types.KindWord(t, types.AsArg)
			}
		default:
			if !t.IsInteger() || t.PrintsAsText() {
				if t.Kind != types.Pointer && t.Kind != types.Ctx {
					got = types.KindWord(t, types.AsArg)
				}
			}
		}
		if got != "" {
			conv := v.Conv
			if c.Compat().SpecifierLength() {
				conv = specToken017(v.Text)
			}
			c.Errorf(argsSpan(call), "%s: %%%s specifier expects a value of type %s (%s supplied)", fn, conv, want, got)
		}
	}
}
