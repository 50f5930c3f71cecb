package lang

import (
	"bufio"
	"encoding/json"
	"github.com/gotrace/gotrace/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceDir finds ../shared/conformance beside the repository (the
// layout on developer machines and in CI).
func conformanceDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"../../shared/conformance", "../../../shared/conformance"} {
		if _, err := os.Stat(filepath.Join(d, "cases", "cases.jsonl")); err == nil {
			return d
		}
	}
	testkit.Skipf(t, "%v", "../shared/conformance not found")
	return ""
}

// dashE returns the -e program of the tracer's command line in a case's
// shell command: the words after {BIN} up to the first pipe or
// redirection, split by POSIX quoting rules.
func dashE(cmd string) (string, bool) {
	i := strings.Index(cmd, "{BIN}")
	if i < 0 {
		return "", false
	}
	var words []string
	var cur strings.Builder
	inWord := false
	s := cmd[i+len("{BIN}"):]
loop:
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[k+1:], '\'')
			if j < 0 {
				return "", false
			}
			cur.WriteString(s[k+1 : k+1+j])
			k += j + 1
			inWord = true
		case c == '"':
			k++
			for ; k < len(s) && s[k] != '"'; k++ {
				if s[k] == '\\' && k+1 < len(s) && strings.IndexByte("\"\\$`", s[k+1]) >= 0 {
					k++
				}
				cur.WriteByte(s[k])
			}
			inWord = true
		case c == '\\' && k+1 < len(s):
			k++
			cur.WriteByte(s[k])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '|' || c == '>' || c == ';' || c == '&':
			break loop
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	for k, w := range words {
		if w == "-e" && k+1 < len(words) {
			return words[k+1], true
		}
	}
	return "", false
}

// conformancePrograms returns the scripts of the conformance cases that do
// not expect a syntax error: each case's prog, or the -e program of its cmd.
func conformancePrograms(t *testing.T) map[string]string {
	dir := conformanceDir(t)
	f, err := os.Open(filepath.Join(dir, "cases", "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	progs := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c struct {
			ID     string
			Prog   *string
			Cmd    string
			Expect []struct{ Mode, Value string }
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("cases.jsonl: %v", err)
		}
		syntax := false
		for _, e := range c.Expect {
			if strings.Contains(e.Value, "syntax error") {
				syntax = true
			}
		}
		if syntax {
			continue
		}
		switch {
		case c.Prog != nil:
			progs[c.ID] = *c.Prog
		default:
			// Programs built by shell command substitution are not
			// script text here.
			if p, ok := dashE(c.Cmd); ok && !strings.Contains(c.Cmd, "$(") {
				progs[c.ID] = strings.ReplaceAll(p, "{BEFORE_PID}", "1234")
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return progs
}

func TestConformanceScriptsParse(t *testing.T) {
	progs := conformancePrograms(t)
	if len(progs) < 200 {
		t.Fatalf("only %d conformance programs found", len(progs))
	}
	for id, src := range progs {
		if _, err := Parse(&Source{Name: "stdin", Text: src}); err != nil {
			t.Errorf("%s: %v\n%s", id, err, src)
		}
	}
	t.Logf("%d conformance programs parse", len(progs))
}

func TestSubstituteParams(t *testing.T) {
	params := []string{"/bin/sh", "IN"}
	for _, c := range []struct{ raw, want string }{
		{"BEG$2", "BEGIN"},
		{"uprobe:$1:$2", "uprobe:/bin/sh:IN"},
		{"k:f$3", "k:f"},
		{"k:f$12x", "k:fx"},
		{"a$b", "a$b"},
		{"x$", "x$"},
	} {
		if got := SubstituteParams(c.raw, params); got != c.want {
			t.Errorf("%s: %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestIntLiterals checks the values of the literals bpftrace 0.17 accepts
// (checked against its output) and that each is one token.
func TestIntLiterals(t *testing.T) {
	for _, c := range []struct {
		text string
		want uint64
	}{
		{"1_000", 1000}, {"1000u", 1000}, {"1000ul", 1000}, {"1000ll", 1000}, {"1000ULL", 1000},
		{"1000L", 1000}, {"1e3", 1000}, {"1e3u", 1000}, {"1ue3", 1000}, {"0x10", 16}, {"0X1f", 31},
		{"010", 8}, {"1__0", 10}, {"007", 7}, {"0", 0}, {"0_7", 7}, {"0e3", 0}, {"1e0", 1},
		{"18446744073709551615", 1<<64 - 1}, {"1e18", 1e18},
	} {
		if n := numberLen(c.text); n != len(c.text) {
			t.Errorf("%s: scanned %d bytes", c.text, n)
		}
		v, err := ParseInt(c.text)
		if err != nil || v != c.want {
			t.Errorf("%s: %d, %v; want %d", c.text, v, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"12e3", "Coefficient part of scientific literal must be in range (0,9), got: 12"},
		{"1e20", "Exponent will overflow integer range: 20"},
		{"09", "Found trailing non-numeric characters"},
		{"99999999999999999999", "integer literal out of range: 99999999999999999999"},
		{"0x1ffffffffffffffff", "integer literal out of range: 0x1ffffffffffffffff"},
	} {
		if _, err := ParseInt(c.text); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.text, err, c.want)
		}
	}
}
