package main

import (
	"reflect"
	"testing"
)

// TestSplitCommand: -c splits at blanks and passes quotes through, in
// both modes, as bpftrace 0.17 and 0.26.1 do.
func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"/bin/true", []string{"/bin/true"}},
		{"  sleep   1 ", []string{"sleep", "1"}},
		{"/bin/sh -c 'exec X'", []string{"/bin/sh", "-c", "'exec", "X'"}},
		{"./testprogs/syscall execve /bin/echo 'A'", []string{"./testprogs/syscall", "execve", "/bin/echo", "'A'"}},
	} {
		if got := splitCommand(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitCommand(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
