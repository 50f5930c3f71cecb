package gen

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace"
	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/internal/testkit"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/runtime"
)

// The properties, each over generated scripts (GEN_SEED: the first seed,
// default 1; GEN_N: how many; GEN_DURATION: a time budget, e.g. 30m — the
// run stops at whichever comes first). Without them a test makes a short
// burst; with CI set, a burst of about a minute. A failure is shrunk and
// printed with its seed; add the shrunk script to testdata/corpus so that
// TestCorpus keeps checking it.

func budget(defN int, defDur time.Duration) (seed int64, n int, dur time.Duration) {
	seed, n, dur = 1, defN, defDur
	if testkit.InCI() {
		n, dur = 1<<30, time.Minute
	}
	if v, err := strconv.ParseInt(os.Getenv("GEN_SEED"), 10, 64); err == nil {
		seed = v
	}
	if v, err := strconv.Atoi(os.Getenv("GEN_N")); err == nil {
		n = v
		if os.Getenv("GEN_DURATION") == "" {
			dur = 1000 * time.Hour
		}
	}
	if v, err := time.ParseDuration(os.Getenv("GEN_DURATION")); err == nil {
		dur = v
		if os.Getenv("GEN_N") == "" {
			n = 1 << 30
		}
	}
	return seed, n, dur
}

// outcome of compiling a script: "" when it compiled; else a class of
// failure ("refused" by the checker with positioned errors is not one).
type outcome struct {
	compiled *gotrace.Compiled
	refused  string // the checker's (or compiler's) positioned message
	bad      string // a property violation: the failure's signature
	detail   string
}

// compileOne parses, checks and compiles text as gotrace does, turning a
// panic into a violation.
func compileOne(text string) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{bad: "panic", detail: fmt.Sprint(r)}
		}
	}()
	c, err := gotrace.Compile(&lang.Source{Name: "stdin", Text: text}, gotrace.Options{Compat: compat.V017})
	if err == nil {
		return outcome{compiled: c}
	}
	var d *lang.Diagnostics
	if !errors.As(err, &d) {
		return outcome{bad: "unpositioned error", detail: err.Error()}
	}
	for _, it := range d.Items {
		if it.Severity == lang.Error && !it.Span.Start.IsValid() {
			return outcome{bad: "unpositioned error", detail: err.Error()}
		}
	}
	msg := ""
	for _, it := range d.Items {
		if it.Severity == lang.Error {
			msg = firstLine(d.Format(it))
			break
		}
	}
	if c != nil && c.Checked != nil {
		// The checker accepted it and the compiler refused it, at a place.
		return outcome{refused: "compiler: " + msg}
	}
	return outcome{refused: msg}
}

var posPrefix = regexp.MustCompile(`^stdin:[0-9:-]+: `)

// kindOf is a message without its place, for counting kinds.
func kindOf(msg string) string { return posPrefix.ReplaceAllString(msg, "") }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// loadOne loads a compiled script into the verifier (the --dry-run path).
func loadOne(c *gotrace.Compiled) (bad, detail string) {
	l, err := runtime.LoadWith(c.Spec, runtime.LoadOptions{VerifyOnly: true})
	if err != nil {
		msg := err.Error()
		var ve *runtime.VerifierError
		if errors.As(err, &ve) {
			return "verifier: " + ve.Reason, msg
		}
		return "load: " + firstLine(msg), msg
	}
	l.Close()
	return "", ""
}

// signature of a script under properties (1) and (2): "" when both hold.
func compileLoadSignature(text string, load bool) (sig, detail string, refused string, compiled bool) {
	o := compileOne(text)
	if o.bad != "" {
		return o.bad, o.detail, "", false
	}
	if o.refused != "" {
		return "", "", o.refused, false
	}
	if !load {
		return "", "", "", true
	}
	bad, d := loadOne(o.compiled)
	return bad, d, "", true
}

type tally struct {
	counts map[string]int
	total  int
}

func (ta *tally) add(k string) {
	if ta.counts == nil {
		ta.counts = map[string]int{}
	}
	ta.counts[k]++
}

func (ta *tally) report(t *testing.T, what string) {
	keys := make([]string, 0, len(ta.counts))
	for k := range ta.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return ta.counts[keys[i]] > ta.counts[keys[j]] })
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d scripts", what, ta.total)
	for i, k := range keys {
		if i == 12 {
			fmt.Fprintf(&b, "\n  ... %d more kinds", len(keys)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %6d  %s", ta.counts[k], k)
	}
	t.Log(b.String())
}

// TestCompileAndLoad: properties (1) and (2). Every generated script the
// checker accepts compiles, or the compiler refuses it with a positioned
// error; every one that compiles loads into the kernel's verifier.
func TestCompileAndLoad(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.BTF)
	seed, n, dur := budget(300, time.Hour)
	deadline := time.Now().Add(dur)
	var ta tally
	fails := 0
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		s := seed + int64(i)
		text := Script(s, DefaultConfig).String()
		ta.total++
		sig, detail, refused, compiled := compileLoadSignature(text, true)
		switch {
		case sig != "":
			ta.add("VIOLATION " + sig)
			fails++
			if fails <= 5 {
				reportShrunk(t, s, sig, detail, func(x string) string {
					g, _, _, _ := compileLoadSignature(x, true)
					return g
				})
			}
		case refused != "":
			ta.add("refused: " + kindOf(strings.TrimPrefix(refused, "compiler: ")))
			if os.Getenv("GEN_SHOW_REFUSED") != "" {
				t.Logf("seed %d refused: %s\n%s", s, refused, text)
			}
		case compiled:
			ta.add("compiled and loaded")
		}
	}
	ta.report(t, "compile and load")
	if fails > 0 {
		t.Errorf("%d of %d scripts broke a property", fails, ta.total)
	}
}

// reportShrunk shrinks the script of seed while sigOf still gives sig,
// and fails the test with it.
func reportShrunk(t *testing.T, seed int64, sig, detail string, sigOf func(string) string) {
	t.Helper()
	n := Script(seed, DefaultConfig)
	orig := n.String()
	small := Shrink(n, func(x *Node) bool { return sigOf(x.String()) == sig }, 400).String()
	t.Errorf("seed %d: %s\n%s\nshrunk to:\n%s\noriginal:\n%s", seed, sig, clip(detail, 3000), small, orig)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// FuzzCompile: property (1) under the fuzzer: the fuzzer picks seeds (and
// so scripts); Check either refuses a script with positioned errors or the
// compiler compiles it or refuses it with a positioned error, never a
// panic or an error without a place.
func FuzzCompile(f *testing.F) {
	for _, s := range []int64{1, 2, 3, 42, 1000, 123456789} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		text := Script(seed, DefaultConfig).String()
		if o := compileOne(text); o.bad != "" {
			t.Fatalf("%s: %s\n%s", o.bad, o.detail, text)
		}
	})
}

// TestCorpus: the scripts any property ever failed on (testdata/corpus,
// shrunk) keep compiling and loading; with bpftrace there, those marked
// deterministic print the same as bpftrace 0.17.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/corpus/*.bt")
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	load := testkit.Check(testkit.Root) == nil && testkit.Check(testkit.BPF) == nil
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		t.Run(filepath.Base(f), func(t *testing.T) {
			sig, detail, refused, _ := compileLoadSignature(text, load)
			if sig != "" {
				t.Fatalf("%s: %s", sig, detail)
			}
			if refused != "" {
				t.Fatalf("refused: %s", refused)
			}
			if load && testkit.Check(testkit.Bpftrace) == nil {
				if d := sideBySide(t, text); d != nil {
					t.Errorf("differs from bpftrace 0.17:\n%s", d)
				}
			}
		})
	}
}

// ---- property (3): the same bytes as bpftrace 0.17 ----

// openDifference names the open gotrace bug that explains d, if one of
// these does; each is a difference the property found and that is not
// fixed yet (runtime/output's, outside the checker and the compiler). The
// property counts them and does not fail on them, so that it fails on
// anything new; each is to be fixed and its entry removed.
//
//   - "map order": the exit-time maps print the same lines in another
//     order (entries with equal values are ordered differently).
//   - "extra map": gotrace prints a map entry bpftrace 0.17 leaves out
//     (seen for a cleared avg()/stats() map, "count 0, average 0, total
//     0", and a max() of a negative value; evidence: seeds 300114, 34).
//   - "literal warning": bpftrace's "The literal is longer than the
//     variable string (size=N), condition will always be false" is not
//     given (seed 400526).
func openDifference(d *difference) string {
	bl, gl := strings.Split(d.bt, "\n"), strings.Split(d.gt, "\n")
	if d.btStderr == d.gtStderr {
		if len(bl) == len(gl) && sameLines(bl, gl) {
			return "map order"
		}
		if extra := subtract(gl, bl); len(extra) > 0 && len(subtract(bl, gl)) == 0 || onlyBlank(subtract(bl, gl)) {
			all := true
			for _, l := range subtract(gl, bl) {
				if !strings.HasPrefix(l, "@") {
					all = false
				}
			}
			if all {
				return "extra map"
			}
		}
	}
	if d.bt == d.gt && strings.Contains(d.btStderr, "The literal is longer than the variable string") &&
		!strings.Contains(d.gtStderr, "The literal is longer than the variable string") {
		return "literal warning"
	}
	return ""
}

func sameLines(a, b []string) bool {
	return len(subtract(a, b)) == 0 && len(subtract(b, a)) == 0
}

// subtract is a without b's lines (as multisets).
func subtract(a, b []string) []string {
	n := map[string]int{}
	for _, l := range b {
		n[l]++
	}
	var out []string
	for _, l := range a {
		if n[l] > 0 {
			n[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

func onlyBlank(ls []string) bool {
	for _, l := range ls {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

type difference struct {
	what                 string
	bt, gt               string
	btStderr, gtStderr   string
	bpftraceRefused      bool
	bpftraceRefusedShort string
}

func (d *difference) String() string {
	return fmt.Sprintf("%s\n--- bpftrace stdout:\n%s--- gotrace stdout:\n%s--- bpftrace stderr:\n%s--- gotrace stderr:\n%s",
		d.what, d.bt, d.gt, d.btStderr, d.gtStderr)
}

// compatArgs are the flags that make gotrace behave as bpftrace 0.17.
func compatArgs() []string {
	return []string{"--compat", "0.17"}
}

// bpftraceNoise is what bpftrace 0.17 prints here that is about the
// machine, not the script (it tries to raise RLIMIT_MEMLOCK, which this
// kernel does not need).
func cleanStderr(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.Contains(l, "couldn't set RLIMIT_MEMLOCK") || l == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// sideBySide runs text under bpftrace 0.17 and gotrace and compares what
// they print; nil when the same (or when bpftrace refuses the script).
func sideBySide(t *testing.T, text string) *difference {
	t.Helper()
	bt := testkit.RunBounded(t, 10*time.Second, exec.Command("bpftrace", "-e", text))
	args := append(compatArgs(), "-e", text)
	gt := testkit.RunBounded(t, 10*time.Second, exec.Command(testkit.Gotrace(t), args...))
	d := &difference{bt: bt.Stdout, gt: gt.Stdout, btStderr: cleanStderr(bt.Stderr), gtStderr: gt.Stderr}
	if bt.TimedOut || bt.ExitCode != 0 {
		d.bpftraceRefused = true
		d.bpftraceRefusedShort = firstLine(d.btStderr)
		for _, l := range strings.Split(d.btStderr, "\n") {
			if strings.Contains(l, "ERROR:") {
				d.bpftraceRefusedShort = kindOf(l)
				break
			}
		}
		return d
	}
	switch {
	case gt.TimedOut:
		d.what = "gotrace timed out"
	case gt.ExitCode != 0:
		d.what = fmt.Sprintf("gotrace exit %d: %s", gt.ExitCode, firstLine(gt.Stderr))
	case d.bt != d.gt:
		d.what = "stdout differs"
	case d.btStderr != d.gtStderr:
		d.what = "stderr differs"
	default:
		return nil
	}
	return d
}

// TestSameAsBpftrace: property (3). Deterministic generated scripts (BEGIN
// and END only) print the same bytes, on stdout and stderr, as bpftrace
// 0.17, unless bpftrace refuses them (the documented bpftrace 0.17 bugs,
// KnownBugs, are kept out by the generator's guards).
func TestSameAsBpftrace(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.BTF, testkit.Bpftrace, testkit.Go)
	seed, n, dur := budget(40, time.Hour)
	deadline := time.Now().Add(dur)
	var ta tally
	fails := 0
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		s := seed + int64(i)
		text := Script(s, DefaultConfig).String()
		ta.total++
		d := sideBySide(t, text)
		switch {
		case d == nil:
			ta.add("same")
		case d.bpftraceRefused:
			ta.add("bpftrace refused: " + d.bpftraceRefusedShort)
		case openDifference(d) != "":
			ta.add("OPEN gotrace bug: " + openDifference(d))
		default:
			ta.add("DIFFERENT: " + d.what)
			fails++
			if os.Getenv("GEN_NO_SHRINK") != "" {
				t.Errorf("seed %d: %s\n%s\n%s", s, d.what, text, d)
			} else if fails <= 3 {
				sigOf := func(x string) string {
					dd := sideBySide(t, x)
					if dd == nil || dd.bpftraceRefused {
						return ""
					}
					return dd.what
				}
				n := Script(s, DefaultConfig)
				small := Shrink(n, func(x *Node) bool { return sigOf(x.String()) == d.what }, 60).String()
				dd := sideBySide(t, small)
				if dd == nil {
					dd = d
				}
				t.Errorf("seed %d: %s\nshrunk to:\n%s\n%s", s, d.what, small, dd)
			}
		}
	}
	ta.report(t, "same as bpftrace 0.17")
	if fails > 0 {
		t.Errorf("%d of %d scripts print differently from bpftrace 0.17", fails, ta.total)
	}
}
