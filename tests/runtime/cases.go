// Package runtime is gotrace's data-driven runtime suite: each case of
// testdata/runtime/*.txt (format: testdata/runtime/README.md) is a program,
// its flags, environment and workload, and the output and exit status it
// must give. TestRuntime runs every case with the real gotrace binary on
// the kernel, bounded in time, and — for the cases marked
// `//! bpftrace: 0.17` — runs bpftrace 0.17 on the same run of the
// workload and compares the two outputs.
//
// A failure names the case's file:line, the command and a diff. A missing
// capability (root, BPF, tracefs, gcc for the C helpers, bpftrace for the
// comparisons) skips through testkit, which makes it a failure in CI.
package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/chunked"
	"github.com/gotrace/gotrace/internal/testkit"
)

// Case is one script of a testdata/runtime file: what to run and what it
// must print. The file format is described in testdata/runtime/README.md.
type Case struct {
	File string
	Line int // the file's line of the case's first (not blank) line

	Name           string
	Program        string
	Compat         string   // "0.17", "0.26" or "" (the testkit default, 0.17)
	Flags          []string // before -e PROGRAM
	Args           []string // after the program (and the helper's pid)
	Env            []string // KEY=VALUE
	Workload       []string // "helper NAME ARGS..." or "command CMD..." (words)
	Exit           int
	Bpftrace       bool     // compare with bpftrace 0.17 (same workload run)
	BpftraceStderr bool     // and compare stderr too
	Norm           []string // normalizations of stdout
	Serial         bool     // not in parallel with other cases
	Needs          []string // capabilities beyond root, BPF, tracefs and the go toolchain
	EndsSelf       bool     // with a helper workload: the tracer ends by itself (no SIGINT)
	Timeout        int      // seconds; 0 is the default
	Expect         []Expect
}

// Expect is one expectation on a stream.
type Expect struct {
	Line   int    // the file's line of its section marker
	Stream string // "stdout" or "stderr"
	Mode   string // "exact", "prefix", "contains" or "lacks"
	Lines  []ExpLine
}

// ExpLine is one expected line: text (exact) or a regular expression the
// whole line must match.
type ExpLine struct {
	Text  string
	Regex bool
}

// needCaps are the capabilities a case may need beyond the default ones.
var needCaps = map[string]testkit.Capability{"btf": testkit.BTF, "sdt": testkit.SDT, "libc6-dbg": testkit.LibcDbg, "bpftrace": testkit.Bpftrace}

var knownNorms = map[string]bool{"attaching": true, "json-attached": true, "trim": true, "trim-end": true, "trim-space": true}

// All reads every case of testdata/runtime, each with its File relative
// to the repository.
func All(tb testing.TB) []Case {
	tb.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "runtime", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no case files in testdata/runtime (%v)", err)
	}
	var out []Case
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		for _, c := range ReadCases(tb, f) {
			c.File = rel
			out = append(out, c)
		}
	}
	return out
}

// PlaceholderRE matches the placeholders of a case: {helper:NAME},
// {comm:NAME}, {kaddr:SYMBOL}, {pid}, {ncpus}, {testpid}, {testcomm}.
var PlaceholderRE = regexp.MustCompile(`\{(helper|comm|kaddr):([a-z0-9_]+)\}|\{(pid|ncpus|testpid|testcomm)\}`)

// Fill replaces the placeholders of s by what value gives for each: kind
// is "helper", "comm", "kaddr", "pid", "ncpus", "testpid" or "testcomm",
// arg the helper's or the kernel symbol's name, or "".
func Fill(s string, value func(kind, arg string) string) string {
	return PlaceholderRE.ReplaceAllStringFunc(s, func(m string) string {
		sm := PlaceholderRE.FindStringSubmatch(m)
		if sm[1] != "" {
			return value(sm[1], sm[2])
		}
		return value(sm[3], "")
	})
}

// ReadCases reads the cases of path; a malformed file fails tb.
func ReadCases(tb testing.TB, path string) []Case {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := ParseCases(path, string(b))
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

// ParseCases splits text (the contents of file) into cases: chunks
// separated by lines holding only "---".
func ParseCases(file, text string) ([]Case, error) {
	var out []Case
	for _, sec := range chunked.Split(text) {
		c, err := parseCase(file, sec.Line, sec.Lines)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	seen := map[string]int{}
	for _, c := range out {
		if l, ok := seen[c.Name]; ok {
			return nil, fmt.Errorf("%s:%d: case %q already defined at line %d", file, c.Line, c.Name, l)
		}
		seen[c.Name] = c.Line
	}
	return out, nil
}

func parseCase(file string, first int, lines []string) (*Case, error) {
	c := &Case{File: file, Line: first}
	var prog []string
	var cur *Expect
	blank := true
	for k, l := range lines {
		n := first + k
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", file, n, fmt.Sprintf(format, args...))
		}
		switch {
		case strings.HasPrefix(l, "//#"):
			continue // a comment about the case
		case l == "//|" || strings.HasPrefix(l, "//| "), l == "//~" || strings.HasPrefix(l, "//~ "):
			if cur == nil {
				return nil, bad("expected output line before any //! stdout or //! stderr")
			}
			el := ExpLine{Text: strings.TrimPrefix(l[3:], " "), Regex: l[2] == '~'}
			if el.Regex {
				if _, err := regexp.Compile(el.Text); err != nil {
					return nil, bad("bad regular expression: %v", err)
				}
			}
			cur.Lines = append(cur.Lines, el)
			blank = false
			continue
		case strings.HasPrefix(l, "//!"):
			key, val, _, derr := chunked.Directive(l)
			if derr != nil {
				return nil, bad("%v", derr)
			}
			blank = false
			switch key {
			case "stdout", "stderr":
				mode := val
				if mode == "" {
					mode = "exact"
				}
				switch mode {
				case "exact", "prefix", "contains", "lacks":
				default:
					return nil, bad("%s: mode %q is not exact, prefix, contains or lacks", key, mode)
				}
				c.Expect = append(c.Expect, Expect{Line: n, Stream: key, Mode: mode})
				cur = &c.Expect[len(c.Expect)-1]
				continue
			}
			if cur != nil {
				return nil, bad("directive %q after the expected output (put it before //! stdout)", key)
			}
			if val == "" && key != "serial" {
				return nil, bad("%s needs a value", key)
			}
			var err error
			switch key {
			case "name":
				c.Name = val
			case "compat":
				if val != "0.17" && val != "0.26" {
					return nil, bad("compat %q is not 0.17 or 0.26", val)
				}
				c.Compat = val
			case "flags":
				w, e := words(val)
				c.Flags, err = append(c.Flags, w...), e
			case "args":
				w, e := words(val)
				c.Args, err = append(c.Args, w...), e
			case "env":
				if !strings.Contains(val, "=") {
					return nil, bad("env %q is not KEY=VALUE", val)
				}
				c.Env = append(c.Env, val)
			case "workload":
				c.Workload, err = words(val)
				if err == nil && (len(c.Workload) < 2 || c.Workload[0] != "helper" && c.Workload[0] != "command") {
					err = fmt.Errorf("workload %q is not \"helper NAME ARGS...\" or \"command CMD...\"", val)
				}
			case "exit":
				c.Exit, err = strconv.Atoi(val)
			case "timeout":
				c.Timeout, err = strconv.Atoi(val)
			case "bpftrace":
				f := strings.Fields(val)
				if len(f) == 0 || f[0] != "0.17" || len(f) > 2 || len(f) == 2 && f[1] != "stderr" {
					return nil, bad("bpftrace: %q (the oracle is bpftrace 0.17: //! bpftrace: 0.17 [stderr])", val)
				}
				c.Bpftrace = true
				c.BpftraceStderr = len(f) == 2
			case "normalize":
				for _, f := range strings.Fields(val) {
					if !knownNorms[f] {
						return nil, bad("unknown normalization %q", f)
					}
					c.Norm = append(c.Norm, f)
				}
			case "needs":
				for _, f := range strings.Fields(val) {
					if _, ok := needCaps[f]; !ok {
						return nil, bad("needs: unknown capability %q", f)
					}
					c.Needs = append(c.Needs, f)
				}
			case "serial":
				c.Serial = true
			case "ends":
				if val != "self" {
					return nil, bad("ends: %q (//! ends: self)", val)
				}
				c.EndsSelf = true
			default:
				return nil, bad("unknown directive %q", key)
			}
			if err != nil {
				return nil, bad("%s: %v", key, err)
			}
			continue
		}
		if cur != nil {
			if strings.TrimSpace(l) == "" {
				continue
			}
			return nil, bad("program text after the expected output: %q", l)
		}
		if strings.TrimSpace(l) != "" {
			blank = false
		}
		prog = append(prog, l)
	}
	if blank {
		return nil, nil
	}
	for len(prog) > 0 && strings.TrimSpace(prog[0]) == "" {
		prog = prog[1:]
	}
	// The case's line is its first that is not blank.
	for k := 0; k < len(lines) && strings.TrimSpace(lines[k]) == ""; k++ {
		c.Line++
	}
	for len(prog) > 0 && strings.TrimSpace(prog[len(prog)-1]) == "" {
		prog = prog[:len(prog)-1]
	}
	c.Program = strings.Join(prog, "\n")
	switch {
	case c.Name == "":
		return nil, fmt.Errorf("%s:%d: case without //! name", file, c.Line)
	case c.Program == "":
		return nil, fmt.Errorf("%s:%d: case %q has no program", file, c.Line, c.Name)
	case c.EndsSelf && (c.Workload == nil || c.Workload[0] != "helper"):
		return nil, fmt.Errorf("%s:%d: case %q: ends: self is for helper workloads (the others always end by themselves)", file, c.Line, c.Name)
	case len(c.Expect) == 0 && !c.Bpftrace:
		return nil, fmt.Errorf("%s:%d: case %q expects nothing (give //! stdout or //! stderr, or //! bpftrace: 0.17)", file, c.Line, c.Name)
	}
	return c, nil
}

// words splits s as a shell would: on blanks, with '...' and "..." quotes
// (no escapes inside '...', \" and \\ inside "...").
func words(s string) ([]string, error) {
	var out []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				w.WriteByte(ch)
			}
		case quote == '"':
			if ch == '"' {
				quote = 0
			} else if ch == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
				w.WriteByte(s[i])
			} else {
				w.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if in {
		out = append(out, w.String())
	}
	return out, nil
}

var attachingRE = regexp.MustCompile(`^Attaching \d+ probes?\.\.\.\n`)

// normalize applies the case's normalizations, in order, to s.
func normalize(norms []string, s string) string {
	for _, n := range norms {
		switch n {
		case "attaching": // the "Attaching N probes..." line
			s = attachingRE.ReplaceAllString(s, "")
		case "json-attached": // -f json's attached_probes record
			if strings.HasPrefix(s, `{"type": "attached_probes"`) {
				if i := strings.IndexByte(s, '\n'); i >= 0 {
					s = s[i+1:]
				}
			}
		case "trim":
			s = strings.Trim(s, "\n")
		case "trim-end": // one final newline
			s = strings.TrimRight(s, "\n") + "\n"
		case "trim-space":
			s = strings.TrimSpace(s)
		}
	}
	return s
}
