package lang

import "testing"

// TestParseAttachPointSelfAndUSDT: self:signal:SIGUSR1 with bpftrace
// 0.26's errors for anything else, and usdt's empty provider part (any
// provider, and an empty path with -p).
func TestParseAttachPointSelfAndUSDT(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want string // provider|target|ns|func|wildcard, or the error
	}{
		{"self:signal:SIGUSR1", "self|signal||SIGUSR1|false"},
		{"self:signal:SIGUSR2", "SIGUSR2 is not a supported signal"},
		{"self:signal:*", "* is not a supported signal"},
		{"self:timer:SIGUSR1", "timer is not a supported trigger"},
		{"self:signal", "self probe type requires 2 arguments, found 1"},
		{"usdt:./bin::*probe2", "usdt|./bin|*|*probe2|true"},
		{"usdt:./bin*::*", "usdt|./bin*|*|*|true"},
		{"usdt:./bin:tracetest:probe", "usdt|./bin|tracetest|probe|false"},
		{"usdt:./bin:tracetest:", "empty part in attach point usdt:./bin:tracetest:"},
		// With -p the path may be empty (every file the process maps), as
		// bpftrace's "usdt:::*probe2 -p PID"; without -p the runtime says
		// a probe without a binary needs one.
		{"usdt:::probe", "usdt||*|probe|true"},
		{"usdt::tracetest:probe", "usdt||tracetest|probe|false"},
		{"usdt:::", "empty part in attach point usdt:::"},
	} {
		ap, err := ParseAttachPoint(c.raw, Span{})
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			w := "false"
			if ap.Wildcard {
				w = "true"
			}
			got = ap.Provider.String() + "|" + ap.Target + "|" + ap.NS + "|" + ap.Func + "|" + w
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.raw, got, c.want)
		}
	}
}
