package main

import (
	"strings"
	"testing"
)

// Every setting is validated in readSettings; a bad value is refused with
// a message naming the variable and the limit (issue 19, items 4 and 10).
func TestReadSettings(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		want  string // error substring; "" for success
		check func(*settings) bool
	}{
		{nil, "", func(s *settings) bool {
			return s.strLen == 64 && s.mapKeysMax == 4096 && s.maxProbes == 512 && s.catBytesMax == 10240 && s.perfRBPages == 0
		}},
		{map[string]string{"GOTRACE_MAP_KEYS_MAX": "7"}, "", func(s *settings) bool { return s.mapKeysMax == 7 }},
		{map[string]string{"BPFTRACE_MAP_KEYS_MAX": "9"}, "", func(s *settings) bool { return s.mapKeysMax == 9 }},
		{map[string]string{"BPFTRACE_MAX_MAP_KEYS": "11"}, "", func(s *settings) bool { return s.mapKeysMax == 11 }},
		{map[string]string{"GOTRACE_MAP_KEYS_MAX": "abc"}, "Env var 'GOTRACE_MAP_KEYS_MAX' did not contain a valid uint64_t, or was zero-valued.", nil},
		{map[string]string{"GOTRACE_MAP_KEYS_MAX": "-1"}, "'GOTRACE_MAP_KEYS_MAX' did not contain a valid uint64_t", nil},
		{map[string]string{"BPFTRACE_MAP_KEYS_MAX": "0"}, "'BPFTRACE_MAP_KEYS_MAX' did not contain a valid uint64_t", nil},
		{map[string]string{"GOTRACE_MAP_KEYS_MAX": "99999999999"}, "exceeds the maximum of 16777216 keys", nil},
		{map[string]string{"GOTRACE_STRLEN": "100000"}, "'GOTRACE_STRLEN' 100000 exceeds the maximum of 16384 bytes.", nil},
		{map[string]string{"GOTRACE_STRLEN": "200"}, "", func(s *settings) bool { return s.strLen == 200 }},
		{map[string]string{"GOTRACE_MAX_PROBES": "-1"}, "'GOTRACE_MAX_PROBES' did not contain a valid uint64_t", nil},
		{map[string]string{"GOTRACE_PERF_RB_PAGES": "3"}, "'GOTRACE_PERF_RB_PAGES' 3 is not a power of 2", nil},
		{map[string]string{"GOTRACE_PERF_RB_PAGES": "1073741824"}, "more than the maximum of 1024 MiB", nil},
		{map[string]string{"GOTRACE_PERF_RB_PAGES": "128"}, "", func(s *settings) bool { return s.perfRBPages == 128 }},
		{map[string]string{"GOTRACE_STACK_MAP_ENTRIES": "1e9"}, "'GOTRACE_STACK_MAP_ENTRIES' did not contain a valid uint64_t", nil},
		{map[string]string{"GOTRACE_STACK_MAP_ENTRIES": "1000000000"}, "exceeds the maximum of 1048576 entries", nil},
		{map[string]string{"GOTRACE_SYSCALL_TRACEPOINTS": "bogus"}, "'GOTRACE_SYSCALL_TRACEPOINTS' must be 'auto', 'raw' or 'perf', got 'bogus'", nil},
		{map[string]string{"GOTRACE_SYSCALL_TRACEPOINTS": "perf"}, "", func(s *settings) bool { return s.syscallTracepoints == "perf" }},
		{map[string]string{"BPFTRACE_CAT_BYTES_MAX": "abc"}, "Env var 'BPFTRACE_CAT_BYTES_MAX' did not contain a valid uint64_t", nil},
		{map[string]string{"BPFTRACE_CAT_BYTES_MAX": "100"}, "", func(s *settings) bool { return s.catBytesMax == 100 }},
		// GOTRACE_ wins over BPFTRACE_.
		{map[string]string{"GOTRACE_STRLEN": "80", "BPFTRACE_STRLEN": "90"}, "", func(s *settings) bool { return s.strLen == 80 }},
	} {
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		s, err := readSettings(lookup)
		switch {
		case c.want != "":
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: err = %v, want %q", c.env, err, c.want)
			}
		case err != nil:
			t.Errorf("%v: %v", c.env, err)
		case !c.check(s):
			t.Errorf("%v: settings %+v", c.env, *s)
		}
	}
}
