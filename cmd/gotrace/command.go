package main

import (
	"errors"
	"strings"

	"github.com/gotrace/gotrace/compat"
)

// splitCommand splits -c's command into its arguments, without a shell.
// bpftrace 0.17 splits at spaces only (quotes are passed through, so
// `-c "sh -c 'exec X'"` gives sh the words 'exec and X'); gotrace splits
// at runs of blanks there. From 0.26 on, as bpftrace's quote-aware
// splitting does, single and double quotes group words and are removed,
// a backslash escapes the next character (inside double quotes only ",
// \, $, ` and a newline), nothing is expanded ($VAR, *, ~ stay as
// written), and an unclosed quote or a trailing backslash is an error.
func splitCommand(s string, v compat.Version) ([]string, error) {
	if v.Legacy() {
		return strings.Fields(s), nil
	}
	var (
		out   []string
		word  strings.Builder
		inArg bool // a word has begun (an empty "" is a word)
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inArg {
				out = append(out, word.String())
				word.Reset()
				inArg = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("the command ends with a backslash")
			}
			i++
			word.WriteByte(s[i])
			inArg = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("the command has an unclosed single quote")
			}
			word.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inArg = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				word.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("the command has an unclosed double quote")
			}
			inArg = true
		default:
			word.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		out = append(out, word.String())
	}
	return out, nil
}
