package stdlib

import (
	"slices"

	"github.com/gotrace/gotrace/stdlib/emitguess"
)

// MayEmitEvents guesses, from a script's text alone, whether its programs
// will write to the event ring buffer: whether it calls (a name followed by
// "(") a builtin whose row names bpf_ringbuf_output. The command uses it to
// start making the ring before the script is even parsed (creating the
// default 4 MiB ring takes the kernel 1-2 ms, longer than parsing, checking
// and compiling a typical script), so it only needs to be cheap and to miss
// rarely: strings and comments are not skipped (a false guess costs a ring
// made and closed in the background), and a miss (delete() of a key-less
// count, -k's failure reports) only means the ring is made when compiling
// first needs it, as without the guess.
func MayEmitEvents(src string) bool { return emitguess.Scan(src, emits) }

// emits reports whether builtin name's code writes to the ring buffer.
func emits(name string) bool {
	b, ok := table()[name]
	return ok && slices.Contains(b.Helpers, "bpf_ringbuf_output")
}
