package compiler

import (
	"testing"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
)

// TestOnRingBuf: the hook runs once for a script that writes events (two
// printf calls), never for one that only counts.
func TestOnRingBuf(t *testing.T) {
	for text, want := range map[string]int{
		`tracepoint:syscalls:sys_enter_getpid { printf("%d\n", pid); printf("x\n"); }`: 1,
		`tracepoint:syscalls:sys_enter_getpid { @[pid] = count(); }`:                   0,
	} {
		prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		opts := check.Options{}
		if r, err := newResolver(); err == nil {
			opts.Resolver = r
		}
		res, err := check.Check(prog, opts)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		spec, err := Compile(res, Options{OnRingBuf: func() { calls++ }})
		if err != nil {
			t.Fatal(err)
		}
		hasRing := false
		for _, m := range spec.Maps {
			hasRing = hasRing || m.Name == MapRingBuf
		}
		if calls != want || hasRing != (want == 1) {
			t.Errorf("%s: OnRingBuf called %d times (ring buffer in the spec: %v), want %d", text, calls, hasRing, want)
		}
	}
}
