package main

import (
	"reflect"
	"testing"

	"github.com/gotrace/gotrace/compat"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"/bin/true", []string{"/bin/true"}},
		{"  sleep   1 ", []string{"sleep", "1"}},
		{"/bin/sh -c 'exec X'", []string{"/bin/sh", "-c", "exec X"}},
		{`sh -c "echo \"a b\" \$HOME \x"`, []string{"sh", "-c", `echo "a b" $HOME \x`}},
		{`echo a\ b 'c'"d"e ''`, []string{"echo", "a b", "cde", ""}},
		{`echo $HOME ~ * 'it''s'`, []string{"echo", "$HOME", "~", "*", "its"}},
		{`echo 'a\b'`, []string{"echo", `a\b`}},
	} {
		got, err := splitCommand(tc.in, compat.V026)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`echo 'a`, `echo "a`, `echo a\`} {
		if got, err := splitCommand(bad, compat.V026); err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error", bad, got)
		}
	}
	// bpftrace 0.17 splits at spaces and passes quotes through.
	got, _ := splitCommand("/bin/sh -c 'exec X'", compat.V017)
	if want := []string{"/bin/sh", "-c", "'exec", "X'"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0.17: %q, want %q", got, want)
	}
}
