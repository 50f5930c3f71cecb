// Package emitguess guesses, from a script's text alone, whether it will
// write to the event ring buffer. It imports nothing, so that the command's
// first init (cmd/gotrace/internal/early) can use it while the rest of the
// process starts; stdlib.MayEmitEvents is the same guess over the builtin
// table, whose rows are the source of Names (TestEmitGuessNames).
package emitguess

// Names are the builtins whose code writes to the ring buffer: the rows of
// the stdlib table that name bpf_ringbuf_output.
var Names = []string{"assert", "cat", "clear", "errorf", "exit", "print", "printf", "system", "time", "warnf", "zero"}

// MayEmit guesses with Names.
func MayEmit(src string) bool {
	return Scan(src, func(name string) bool {
		for _, n := range Names {
			if n == name {
				return true
			}
		}
		return false
	})
}

// Scan reports whether src calls (a name followed by "(") a builtin that
// emits says writes events. It only needs to be cheap and to miss rarely:
// strings and comments are not skipped (a false guess costs a ring made and
// closed in the background), and a miss (delete() of a key-less count,
// -k's failure reports) only means the ring is made when compiling first
// needs it.
func Scan(src string, emits func(name string) bool) bool {
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
