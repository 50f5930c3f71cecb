package deploy_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// parseYAML reads the block-style YAML subset Kubernetes manifests are
// written in: documents split by "---", mappings, sequences ("- "), flow
// sequences of scalars ([a, "b"]), literal blocks ("|"), quoted and plain
// scalars (true/false and numbers as JSON has them), "#" comments. What
// it does not know is an error, not a guess: the manifest must stay in
// this subset for the offline check to mean anything.
func parseYAML(text string) ([]any, error) {
	var docs []any
	var cur []string
	flush := func() error {
		y := &yamlParser{}
		for _, l := range cur {
			y.lines = append(y.lines, l)
		}
		if y.skipBlank(); y.i >= len(y.lines) {
			cur = nil
			return nil
		}
		v, err := y.node(y.indent(y.i))
		if err != nil {
			return err
		}
		if y.skipBlank(); y.i < len(y.lines) {
			return fmt.Errorf("line %q: unexpected indentation", y.lines[y.i])
		}
		docs = append(docs, v)
		cur = nil
		return nil
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, " ") == "---" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, l)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return docs, nil
}

type yamlParser struct {
	lines []string
	i     int
}

// content is line i without indentation and comment.
func (y *yamlParser) content(i int) string {
	l := strings.TrimLeft(y.lines[i], " ")
	inQuote := byte(0)
	for j := 0; j < len(l); j++ {
		switch c := l[j]; {
		case inQuote != 0:
			if c == '\\' && inQuote == '"' {
				j++
			} else if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '#' && (j == 0 || l[j-1] == ' '):
			return strings.TrimRight(l[:j], " ")
		}
	}
	return strings.TrimRight(l, " ")
}

func (y *yamlParser) indent(i int) int {
	return len(y.lines[i]) - len(strings.TrimLeft(y.lines[i], " "))
}

func (y *yamlParser) skipBlank() {
	for y.i < len(y.lines) && y.content(y.i) == "" {
		y.i++
	}
}

func isSeqItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

// node parses the mapping or sequence whose lines start at column ind.
func (y *yamlParser) node(ind int) (any, error) {
	y.skipBlank()
	if isSeqItem(y.content(y.i)) {
		return y.seq(ind)
	}
	return y.mapping(ind)
}

func (y *yamlParser) seq(ind int) (any, error) {
	var out []any
	for y.skipBlank(); y.i < len(y.lines) && y.indent(y.i) == ind && isSeqItem(y.content(y.i)); y.skipBlank() {
		rest := strings.TrimPrefix(strings.TrimPrefix(y.content(y.i), "-"), " ")
		if rest == "" {
			y.i++
			y.skipBlank()
			if y.i >= len(y.lines) || y.indent(y.i) <= ind {
				out = append(out, nil)
				continue
			}
			v, err := y.node(y.indent(y.i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		if _, _, isKey := splitKey(rest); isKey {
			// "- key: v" starts a mapping at the key's column: rewrite the
			// line as that mapping's first line.
			col := ind + len(y.content(y.i)) - len(rest)
			y.lines[y.i] = strings.Repeat(" ", col) + strings.TrimLeft(y.lines[y.i], " ")[len(y.content(y.i))-len(rest):]
			v, err := y.mapping(col)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		v, err := scalar(rest)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		y.i++
	}
	return out, nil
}

// splitKey splits "key: value" (or "key:"); isKey is false for a scalar.
func splitKey(s string) (key, rest string, isKey bool) {
	if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "[") {
		return "", "", false
	}
	if k, r, ok := strings.Cut(s, ": "); ok {
		return k, strings.TrimSpace(r), true
	}
	if strings.HasSuffix(s, ":") {
		return strings.TrimSuffix(s, ":"), "", true
	}
	return "", "", false
}

func (y *yamlParser) mapping(ind int) (any, error) {
	out := map[string]any{}
	for y.skipBlank(); y.i < len(y.lines) && y.indent(y.i) == ind && !isSeqItem(y.content(y.i)); y.skipBlank() {
		line := y.content(y.i)
		key, rest, ok := splitKey(line)
		if !ok {
			return nil, fmt.Errorf("line %q: want key: value", line)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %q: key %s given twice", line, key)
		}
		y.i++
		switch {
		case rest == "|" || rest == "|-":
			out[key] = y.literal(ind, rest == "|-")
		case rest != "":
			v, err := scalar(rest)
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", line, err)
			}
			out[key] = v
		default:
			y.skipBlank()
			switch {
			case y.i < len(y.lines) && y.indent(y.i) > ind:
				v, err := y.node(y.indent(y.i))
				if err != nil {
					return nil, err
				}
				out[key] = v
			case y.i < len(y.lines) && y.indent(y.i) == ind && isSeqItem(y.content(y.i)):
				v, err := y.seq(ind)
				if err != nil {
					return nil, err
				}
				out[key] = v
			default:
				out[key] = nil
			}
		}
	}
	return out, nil
}

// literal reads a "|" block: the lines indented more than the key, less
// their common indentation, each ending in a newline (one at the end kept
// for "|", none for "|-").
func (y *yamlParser) literal(ind int, strip bool) string {
	var lines []string
	block := -1
	for ; y.i < len(y.lines); y.i++ {
		l := y.lines[y.i]
		if strings.TrimSpace(l) == "" {
			lines = append(lines, "")
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if n <= ind {
			break
		}
		if block < 0 {
			block = n
		}
		lines = append(lines, l[min(block, n):])
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	s := strings.Join(lines, "\n")
	if !strip {
		s += "\n"
	}
	return s
}

// scalar is a plain, quoted or flow-sequence value.
func scalar(s string) (any, error) {
	switch {
	case strings.HasPrefix(s, "["):
		if !strings.HasSuffix(s, "]") {
			return nil, fmt.Errorf("flow sequence %q does not end on its line", s)
		}
		var out []any
		inner := strings.TrimSpace(s[1 : len(s)-1])
		if inner == "" {
			return []any{}, nil
		}
		for _, part := range splitFlow(inner) {
			v, err := scalar(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case strings.HasPrefix(s, `"`):
		var v string
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("quoted scalar %s: %w", s, err)
		}
		return v, nil
	case strings.HasPrefix(s, "'"):
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return nil, fmt.Errorf("quoted scalar %s", s)
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	case strings.HasPrefix(s, "{") || strings.HasPrefix(s, "&") || strings.HasPrefix(s, "*") || strings.HasPrefix(s, "!") || s == ">":
		return nil, fmt.Errorf("%q: outside the YAML subset read here", s)
	case s == "true" || s == "false":
		return s == "true", nil
	case s == "null" || s == "~":
		return nil, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXoOeE_") {
		return f, nil
	}
	return s, nil
}

// splitFlow splits a flow sequence's items at commas outside quotes.
func splitFlow(s string) []string {
	var parts []string
	start, inQuote := 0, byte(0)
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch {
		case inQuote != 0:
			if c == '\\' && inQuote == '"' {
				j++
			} else if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == ',':
			parts = append(parts, s[start:j])
			start = j + 1
		}
	}
	return append(parts, s[start:])
}
