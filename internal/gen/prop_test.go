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
		progress(t, &ta, s)
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

// progress logs the count every 500 scripts of a long run (-v).
func progress(t *testing.T, ta *tally, seed int64) {
	if testing.Verbose() && ta.total%500 == 0 {
		t.Logf("%s: %d scripts (seed %d)", time.Now().UTC().Format("15:04:05"), ta.total, seed)
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
				if d := sideBySide(t, text); !same(d) && !d.bpftraceRefused {
					t.Errorf("differs from bpftrace 0.17:\n%s", d)
				}
			}
		})
	}
}

// ---- property (3): the same bytes as bpftrace 0.17 ----

// A map of count(), sum(), min(), max() or plain integers prints sorted by
// value; bpftrace 0.17 leaves entries of equal value in its BPF hash
// table's order, which the kernel's random hash seed makes differ from run
// to run (KnownBugs, "equal values print in hash order"). sameOutput
// compares such runs of lines as sets and everything else byte for byte.
var entryLine = regexp.MustCompile(`^(@\w*)(\[.*\])?: (-?[0-9]+)$`)

// avgMaps are the maps text assigns avg() to: they print sorted by value
// too, but equal values by the key's bytes (deterministic), so their runs
// stay compared in order.
// The map starts a statement: a key holds no ';', '{' or '}' (a key with
// such a string literal is missed, which only compares its ties as a set).
var avgAssign = regexp.MustCompile(`(?:^|[;{}] )(@\w*)(\[[^;{}]*\])? = avg\(`)

func avgMaps(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range avgAssign.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// canonTies sorts each run of consecutive map lines of the same map and
// the same integer value (not of avg maps).
func canonTies(out string, avg map[string]bool) string {
	ls := strings.Split(out, "\n")
	for i := 0; i < len(ls); {
		m := entryLine.FindStringSubmatch(ls[i])
		if m == nil || avg[m[1]] {
			i++
			continue
		}
		j := i + 1
		for j < len(ls) {
			n := entryLine.FindStringSubmatch(ls[j])
			if n == nil || n[1] != m[1] || n[3] != m[3] {
				break
			}
			j++
		}
		sort.Strings(ls[i:j])
		i = j
	}
	return strings.Join(ls, "\n")
}

// sameOutput: a and b are the same output of text's script, up to the
// order of equal-valued entries bpftrace leaves to its hash table.
func sameOutput(a, b, text string) bool {
	if a == b {
		return true
	}
	avg := avgMaps(text)
	return canonTies(a, avg) == canonTies(b, avg)
}

type difference struct {
	what                 string
	bt, gt               string
	btStderr, gtStderr   string
	bpftraceRefused      bool
	bpftraceRefusedShort string
	tiesOnly             bool
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
	case !sameOutput(d.bt, d.gt, text):
		d.what = "stdout differs"
	case d.btStderr != d.gtStderr:
		d.what = "stderr differs"
	case d.bt != d.gt:
		d.tiesOnly = true // the same but for the order of equal values
	default:
		return nil
	}
	return d
}

// same: d is no difference (nil, or equal values in another order).
func same(d *difference) bool { return d == nil || d.tiesOnly }

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
		progress(t, &ta, s)
		switch {
		case d == nil:
			ta.add("same")
		case d.tiesOnly:
			ta.add("same (equal values in another order)")
		case d.bpftraceRefused:
			ta.add("bpftrace refused: " + d.bpftraceRefusedShort)
		default:
			ta.add("DIFFERENT: " + d.what)
			fails++
			if os.Getenv("GEN_NO_SHRINK") != "" {
				t.Errorf("seed %d: %s\n%s\n%s", s, d.what, text, d)
			} else if fails <= 3 {
				sigOf := func(x string) string {
					dd := sideBySide(t, x)
					if same(dd) || dd.bpftraceRefused {
						return ""
					}
					return dd.what
				}
				n := Script(s, DefaultConfig)
				small := Shrink(n, func(x *Node) bool { return sigOf(x.String()) == d.what }, 60).String()
				dd := sideBySide(t, small)
				if same(dd) {
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
