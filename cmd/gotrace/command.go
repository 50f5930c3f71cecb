package main

import (
	"strings"
)

// splitCommand splits -c's command into its arguments, without a shell,
// as bpftrace does: at blanks, with quotes passed through as written
// (`-c "/bin/echo 'A'"` gives echo the word 'A', quotes and all). Both
// bpftrace 0.17 and 0.26.1 do this — 0.26.1's own test
// json-output.join_delim expects the quotes in argv —; quote-aware
// splitting is an open bpftrace change (issue #5119), not a release, so
// gotrace does not do it in either mode. (bpftrace 0.17 also keeps the
// empty word between two spaces; gotrace drops it.)
func splitCommand(s string) []string { return strings.Fields(s) }
