package main

import (
	"reflect"
	"testing"

	"github.com/gotrace/gotrace/compat"
)

// TestSplitCommand: -c splits at blanks and passes quotes through, in
// both modes, as bpftrace 0.17 and 0.26.1 do.
func TestSplitCommand(t *testing.T) {
	for _, v := range []compat.Version{compat.V017, compat.V026} {
		for _, tc := range []struct {
			in   string
			want []string
		}{
			{"/bin/true", []string{"/bin/true"}},
			{"  sleep   1 ", []string{"sleep", "1"}},
			{"/bin/sh -c 'exec X'", []string{"/bin/sh", "-c", "'exec", "X'"}},
			{"./testprogs/syscall execve /bin/echo 'A'", []string{"./testprogs/syscall", "execve", "/bin/echo", "'A'"}},
		} {
			got, err := splitCommand(tc.in, v)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%v: splitCommand(%q) = %q, %v; want %q", v, tc.in, got, err, tc.want)
			}
		}
	}
}
