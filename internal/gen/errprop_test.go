package gen

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// ---- property (4): the same errors as bpftrace 0.17 ----

// errRun is how bpftrace 0.17 and gotrace --compat 0.17 ended on a script.
type errRun struct {
	bt, gt         testkit.Result
	btErr, gtErr   string // stderr without bpftrace's RLIMIT line, gotrace's HINT lines
	class, btFirst string
}

// withoutHintLines drops gotrace's "HINT: ..." lines (bpftrace 0.17 prints
// none; they are gotrace's own, after bpftrace's lines).
func withoutHintLines(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "HINT: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// runBoth runs text under bpftrace 0.17 and gotrace --compat 0.17 side by
// side (both at once: each is mostly start-up) and classifies the
// difference: class "" when exit status and stderr are the same bytes
// (and stdout, when they fail).
func runBoth(t *testing.T, text string) *errRun {
	t.Helper()
	gotrace := testkit.Gotrace(t)
	r := &errRun{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.bt = testkit.RunBounded(t, 15*time.Second, exec.Command("bpftrace", "-e", text))
	}()
	r.gt = testkit.RunBounded(t, 15*time.Second, exec.Command(gotrace, append(compatArgs(), "-e", text)...))
	wg.Wait()
	r.btErr, r.gtErr = cleanStderr(r.bt.Stderr), withoutHintLines(r.gt.Stderr)
	r.btFirst = firstError(r.btErr)
	r.class = classify(r)
	return r
}

var (
	quoted  = regexp.MustCompile(`'[^']*'|"[^"]*"`)
	numbers = regexp.MustCompile(`[0-9]+`)
)

// norm is a message's kind: no place, quoted names and numbers replaced.
func norm(msg string) string {
	msg = kindOf(msg)
	msg = quoted.ReplaceAllString(msg, "'X'")
	return numbers.ReplaceAllString(msg, "N")
}

// firstError is the first line holding "ERROR:" (or the first line).
func firstError(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "ERROR:") {
			return l
		}
	}
	return firstLine(stderr)
}

// firstBlock is the first diagnostic: its line, the source line and the
// marker.
func firstBlock(stderr string) string {
	ls := strings.SplitAfter(stderr, "\n")
	for i, l := range ls {
		if strings.Contains(l, "ERROR:") {
			end := i + 1
			if strings.HasPrefix(l, "stdin:") && i+3 <= len(ls) {
				end = i + 3
			}
			return strings.Join(ls[i:end], "")
		}
	}
	return ""
}

func classify(r *errRun) string {
	bt, gt := r.bt, r.gt
	switch {
	case bt.TimedOut:
		return "skip: bpftrace timed out"
	case bt.ExitCode < 0 || bt.ExitCode == 134 || strings.Contains(r.btErr, "FATAL:"):
		return "skip: bpftrace crashed: " + norm(firstLine(r.btErr))
	}
	if bt.ExitCode == gt.ExitCode && r.btErr == r.gtErr && (bt.ExitCode == 0 || bt.Stdout == gt.Stdout) {
		return ""
	}
	gFirst := firstError(r.gtErr)
	switch {
	case gt.TimedOut:
		return "gotrace timed out"
	case bt.ExitCode == 0 && gt.ExitCode != 0:
		return "gotrace refuses: " + norm(gFirst)
	case bt.ExitCode != 0 && gt.ExitCode == 0:
		return "gotrace accepts: " + norm(r.btFirst)
	case norm(r.btFirst) != norm(gFirst):
		return "first error: " + norm(r.btFirst) + " | gotrace: " + norm(gFirst)
	case r.btFirst != gFirst:
		return "place: " + norm(r.btFirst)
	case firstBlock(r.btErr) != firstBlock(r.gtErr):
		return "marker: " + norm(r.btFirst)
	case bt.ExitCode != gt.ExitCode:
		return fmt.Sprintf("exit %d, gotrace %d: %s", bt.ExitCode, gt.ExitCode, norm(r.btFirst))
	case r.btErr != r.gtErr:
		return "later lines: " + norm(r.btFirst)
	}
	return "stdout: " + norm(r.btFirst)
}

func (r *errRun) String() string {
	return fmt.Sprintf("--- bpftrace (exit %d) stderr:\n%s--- gotrace (exit %d) stderr:\n%s--- bpftrace stdout:\n%s--- gotrace stdout:\n%s",
		r.bt.ExitCode, r.btErr, r.gt.ExitCode, r.gt.Stderr, clip(r.bt.Stdout, 2000), clip(r.gt.Stdout, 2000))
}

// TestErrorsSameAsBpftrace: property (4). A generated script with one
// error injected (MutatedScript: type mismatches, builtin arguments,
// unknown names, casts, fields, attach points, syntax, unroll bounds ...)
// gives, under gotrace --compat 0.17, the exit status and stderr bytes of
// bpftrace 0.17 (gotrace's own HINT lines aside). A mutation bpftrace
// accepts runs BEGIN, which ends in exit().
func TestErrorsSameAsBpftrace(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.BTF, testkit.Bpftrace, testkit.Go)
	seed, n, dur := budget(30, time.Hour)
	deadline := time.Now().Add(dur)
	var ta tally
	fails, same := 0, 0
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		s := seed + int64(i)
		node, kind := MutatedScript(s)
		text := node.String()
		ta.total++
		r := runBoth(t, text)
		progress(t, &ta, s)
		family := strings.Fields(kind + " none")[0]
		switch {
		case r.class == "":
			same++
			if r.bt.ExitCode == 0 {
				ta.add("same (both accept): " + family)
			} else {
				ta.add("same: " + norm(r.btFirst))
			}
		case strings.HasPrefix(r.class, "skip: "):
			ta.add(r.class)
		default:
			ta.add("DIFFERENT: " + r.class)
			fails++
			if os.Getenv("GEN_NO_SHRINK") != "" || fails > 3 {
				t.Errorf("seed %d (%s): %s\n%s\n%s", s, kind, r.class, text, r)
				continue
			}
			small := Shrink(node, func(x *Node) bool { return runBoth(t, x.String()).class == r.class }, 80).String()
			rr := runBoth(t, small)
			t.Errorf("seed %d (%s): %s\nshrunk to:\n%s%s\noriginal:\n%s", s, kind, r.class, small, rr, text)
		}
	}
	ta.report(t, "errors as bpftrace 0.17")
	t.Logf("%d of %d mutated scripts the same as bpftrace 0.17", same, ta.total)
	if fails > 0 {
		t.Errorf("%d of %d mutated scripts differ from bpftrace 0.17", fails, ta.total)
	}
}
