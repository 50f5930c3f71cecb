package gotrace

import (
	"testing"

	cfg "github.com/gotrace/gotrace/config"
)

// TestSymOptionsDemangle: cpp_demangle, from the script's config block or
// BPFTRACE_NO_CPP_DEMANGLE, reaches the symbolizer.
func TestSymOptionsDemangle(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		items []cfg.Item
		want  bool
	}{
		{nil, nil, false},
		{map[string]string{"BPFTRACE_NO_CPP_DEMANGLE": "1"}, nil, true},
		{map[string]string{"BPFTRACE_NO_CPP_DEMANGLE": "0"}, nil, false},
		{nil, []cfg.Item{{Key: "cpp_demangle", Value: "0"}}, true},
	} {
		s, errs := cfg.Resolve(c.items, c.env, nil)
		if len(errs) > 0 {
			t.Fatalf("%v %v: %v", c.env, c.items, errs[0])
		}
		if got := symOptions(s).NoDemangle; got != c.want {
			t.Errorf("env %v, config %v: NoDemangle = %v, want %v", c.env, c.items, got, c.want)
		}
	}
	if symOptions(nil).NoDemangle {
		t.Error("no settings: NoDemangle = true")
	}
}
