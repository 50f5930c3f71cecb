package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/internal/chunked"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/stdlib"
)

// TestMayEmitEventsNeverMisses: over every script of the compiler's, the
// checker's valid and the examples' testdata that compiles, the command's
// guess from the text (stdlib.MayEmitEvents, which starts the ring buffer
// before parsing) says yes for each script the compiler gives a ring
// buffer; the only misses allowed are the documented ones (delete() of a
// key-less count, which the runtime clears through an event). It also
// reports how often the guess is yes for a script that has no ring.
func TestMayEmitEventsNeverMisses(t *testing.T) {
	var texts []string
	files, _ := filepath.Glob("testdata/scripts/*.bt")
	ex, _ := filepath.Glob("../examples/*.gt")
	for _, f := range append(files, ex...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	valid, _ := filepath.Glob("../lang/check/testdata/valid/*")
	for _, f := range valid {
		for _, c := range chunked.Read(t, f) {
			texts = append(texts, c.Text)
		}
	}
	r, _ := newResolver()
	compiled, rings, guessed, extra := 0, 0, 0, 0
	for _, text := range texts {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: text})
		if err != nil {
			continue
		}
		res, err := check.Check(prog, check.Options{Resolver: r, Params: []string{"42", "hello"}})
		if err != nil {
			continue
		}
		spec, err := Compile(res, Options{})
		if err != nil {
			continue
		}
		compiled++
		ring := false
		for _, m := range spec.Maps {
			ring = ring || m.Name == MapRingBuf
		}
		guess := stdlib.MayEmitEvents(text)
		if guess {
			guessed++
		}
		switch {
		case ring:
			rings++
			if !guess && !onlyDeleteClears(spec, text) {
				t.Errorf("a ring buffer the text did not announce:\n%s", text)
			}
		case guess:
			extra++
		}
	}
	if compiled < 50 || rings < 20 {
		t.Fatalf("only %d scripts compiled, %d with a ring buffer: the corpus moved?", compiled, rings)
	}
	t.Logf("%d scripts compiled, %d with a ring buffer; guessed yes %d times, %d of them without one", compiled, rings, guessed, extra)
}

// onlyDeleteClears: every event of spec clears a map and the text calls
// no clear(): delete() of a key-less count.
func onlyDeleteClears(spec *Spec, text string) bool {
	for _, e := range spec.Events {
		if e.Kind != stdlib.EvClear {
			return false
		}
	}
	return strings.Contains(text, "delete(")
}

func TestMayEmitEvents(t *testing.T) {
	for text, want := range map[string]bool{
		`tracepoint:syscalls:sys_enter_getpid { printf("%d\n", pid); }`:                    true,
		`tracepoint:syscalls:sys_enter_getpid { @[pid] = count(); }`:                       false,
		`tracepoint:syscalls:sys_enter_getpid /comm == "x"/ { @ = count(); }`:              false,
		`interval:s:1 { exit (); }`:                                                        true,
		`END { print(@x); clear(@y); }`:                                                    true,
		`BEGIN { $printf = 1; @printf[1] = 2; }`:                                           false,
		`kfunc:vfs_read { @[args.print] = count(); }`:                                      false,
		`tracepoint:syscalls:sys_enter_getpid { @ = hist(pid); } interval:s:1 { time(); }`: true,
	} {
		if got := stdlib.MayEmitEvents(text); got != want {
			t.Errorf("MayEmitEvents(%q) = %v, want %v", text, got, want)
		}
	}
}
