package stdlib

import "slices"

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
func MayEmitEvents(src string) bool {
	for i := 0; i < len(src); {
		c := src[i]
		if !identStart(c) {
			i++
			continue
		}
		start := i
		for i < len(src) && (identStart(src[i]) || src[i] >= '0' && src[i] <= '9') {
			i++
		}
		if start > 0 && (src[start-1] == '$' || src[start-1] == '@' || src[start-1] == '.') {
			continue
		}
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
			j++
		}
		if j < len(src) && src[j] == '(' && emits(src[start:i]) {
			return true
		}
	}
	return false
}

func identStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// emits reports whether builtin name's code writes to the ring buffer.
func emits(name string) bool {
	b, ok := table()[name]
	return ok && slices.Contains(b.Helpers, "bpf_ringbuf_output")
}
