package check

import (
	"bufio"
	"encoding/json"
	"github.com/gotrace/gotrace/internal/testkit"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

const casesPath = "../../../shared/conformance/cases/cases.jsonl"

// liveResolver asks the real layout resolver (script declarations, live
// tracefs, kernel BTF) and falls back to the fixture for what this machine
// cannot supply (uprobe test programs' structs).
type liveResolver struct {
	*ktypes.Sources
}

func (r liveResolver) Type(name string) (*types.Type, error) {
	t, err := r.Sources.Type(name)
	if err == nil {
		return t, nil
	}
	if ft, ferr := (fakeResolver{}).Type(name); ferr == nil {
		return ft, nil
	}
	return nil, err
}

func (r liveResolver) TracepointMatches(cat, event string) ([][2]string, error) {
	names, err := ktypes.Tracepoints(cat + ":" + event)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, n := range names {
		if c, e, ok := strings.Cut(n, ":"); ok {
			out = append(out, [2]string{c, e})
		}
	}
	return out, nil
}

// TestConformancePrograms parses and checks every program of the shared
// conformance cases that bpftrace 0.17 accepts (exit "zero"), with the live
// kernel's types. Cases that need a uprobe binary's debug info are listed,
// not failed.
func TestConformancePrograms(t *testing.T) {
	f, err := os.Open(casesPath)
	if err != nil {
		t.Skipf("conformance cases not available: %v", err)
	}
	defer f.Close()
	if _, err := ktypes.TracefsDir(); err != nil {
		testkit.Skipf(t, "tracefs: %v", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, ok, skipped := 0, 0, 0
	for sc.Scan() {
		var c struct {
			ID   string `json:"id"`
			Prog *string
			Cmd  string
			Exit string
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Exit != "zero" {
			continue
		}
		var progs []string
		var params, includes []string
		if c.Prog != nil {
			progs = append(progs, *c.Prog)
		} else {
			words := shellWords(c.Cmd)
			for i := 0; i < len(words); i++ {
				switch words[i] {
				case "-e":
					if i+1 < len(words) {
						progs = append(progs, words[i+1])
						for _, w := range words[i+2:] {
							if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "|&;<>") {
								break
							}
							params = append(params, w)
						}
					}
				case "--include":
					if i+1 < len(words) {
						includes = append(includes, words[i+1])
					}
				}
			}
		}
		for _, p := range progs {
			if strings.Contains(p, "$(") || placeholderRE.MatchString(p) || !strings.Contains(p, "{") {
				continue // a shell expansion or a grep pattern, not a program
			}
			if c.Prog != nil {
				// The runner passes prog through a shell in single quotes
				// with JSON-escaped backslashes.
				p = strings.ReplaceAll(p, `\\`, `\`)
			}
			n++
			prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: p})
			if err != nil {
				if why, ok := notChecker[c.ID]; ok {
					t.Logf("%s: %s", c.ID, why)
					continue
				}
				t.Errorf("%s: parse: %v", c.ID, err)
				continue
			}
			var decls []string
			for _, d := range prog.Decls {
				decls = append(decls, d.Text)
			}
			incs := append([]string(nil), includes...)
			for _, in := range prog.Includes {
				incs = append(incs, in.Path)
			}
			res := liveResolver{ktypes.New(ktypes.Options{CDecls: decls, Includes: incs})}
			_, err = Check(prog, Options{Resolver: res, Params: params, Unsafe: strings.Contains(c.Cmd, "--unsafe"), Compat: compat.V017})
			if err != nil {
				if strings.Contains(err.Error(), "Can not resolve args of u") || strings.Contains(c.ID, "dwarf.") {
					skipped++
					t.Logf("%s: needs uprobe debug info: %v", c.ID, firstLine(err.Error()))
					continue
				}
				if why, ok := notChecker[c.ID]; ok {
					t.Logf("%s: %s", c.ID, why)
					continue
				}
				t.Errorf("%s: %s\n%v", c.ID, p, err)
				continue
			}
			ok++
		}
	}
	t.Logf("conformance programs: %d checked, %d clean, %d need uprobe debug info", n, ok, skipped)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

var placeholderRE = regexp.MustCompile(`\{[A-Z_]+\}`)

// notChecker lists cases whose failure lies outside the checker, with why.
var notChecker = map[string]string{
	"call.strerror":                      "EPERM is a #define in errno.h: macro constants come from ktypes's preprocessor",
	"other.positional attachpoint probe": "BEG$1: positional parameters inside attach points are expanded by the parser",
}

// shellWords splits a POSIX shell command line (quotes and backslashes;
// enough for the case commands).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
				i++
			}
			in = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
