package config

import "testing"

func TestResolvePrecedence(t *testing.T) {
	items := []Item{{Key: "max_strlen", Value: "32"}, {Key: "BPFTRACE_STACK_MODE", Value: "raw"}, {Key: "print_maps_on_exit", Value: "false"}}
	s, errs := Resolve(items, map[string]string{"BPFTRACE_STRLEN": "100", "BPFTRACE_NO_CPP_DEMANGLE": "1", "BPFTRACE_CACHE_USER_SYMBOLS": "PER_PID", "BPFTRACE_MAX_MAP_KEYS": "99"}, map[string]string{"stack_mode": "perf"})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	for _, c := range []struct {
		key, want string
		src       Source
	}{
		{"max_strlen", "100", Env},   // env over the script
		{"stack_mode", "perf", Flag}, // flag over the script
		{"print_maps_on_exit", "0", Script},
		{"cpp_demangle", "0", Env}, // BPFTRACE_NO_CPP_DEMANGLE=1 inverts
		{"max_map_keys", "99", Env},
		{"cache_user_symbols", "per_pid", Env}, // an enum's value in any case
	} {
		if got := s.Get(c.key); got != c.want || s.Source(c.key) != c.src {
			t.Errorf("%s = %q from %d, want %q from %d", c.key, got, s.Source(c.key), c.want, c.src)
		}
	}
	if s.Int("max_strlen") != 100 || s.Bool("print_maps_on_exit") {
		t.Errorf("Int/Bool: %d %v", s.Int("max_strlen"), s.Bool("print_maps_on_exit"))
	}
}

func TestResolveErrors(t *testing.T) {
	_, errs := Resolve([]Item{{Key: "nope", Value: "1"}, {Key: "missing_probes", Value: "maybe"}, {Key: "log_size", Value: "-1"}}, nil, nil)
	want := []string{
		"Unrecognized config variable: nope",
		"Invalid value for missing_probes: valid values are ignore, warn, error",
		"Invalid value for log_size: needs to be a non-negative integer",
	}
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d", len(errs), len(want))
	}
	for i, e := range errs {
		if e.Msg != want[i] {
			t.Errorf("error %d = %q, want %q", i, e.Msg, want[i])
		}
	}
}
