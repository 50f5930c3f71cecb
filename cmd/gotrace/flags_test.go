package main

import (
	"reflect"
	"testing"

	"github.com/gotrace/gotrace/compat"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want config
	}{
		{[]string{"-e", "BEGIN{}"}, config{program: "BEGIN{}", format: "text"}},
		{[]string{"-e", "BEGIN{}", "a", "2"}, config{program: "BEGIN{}", format: "text", params: []string{"a", "2"}}},
		{[]string{"script.bt", "x"}, config{file: "script.bt", format: "text", params: []string{"x"}}},
		{[]string{"-"}, config{file: "-", format: "text"}},
		{[]string{"-lv", "tracepoint:syscalls:*"}, config{list: true, verbose: true, listPattern: "tracepoint:syscalls:*", format: "text"}},
		{[]string{"-l"}, config{list: true, format: "text"}},
		{[]string{"-dd", "-q", "-fjson", "-B", "none", "-p", "42", "f.bt"},
			config{debug: 2, quiet: true, format: "json", buffering: "none", pid: 42, pidStr: "42", hasPid: true, file: "f.bt"}},
		{[]string{"--unsafe", "--dry-run", "-c", "ls -l", "-o", "out", "-e", "p"},
			config{unsafe: true, dryRun: true, cmd: "ls -l", output: "out", program: "p", format: "text"}},
		{[]string{"explain", "-e", "p"}, config{explain: true, program: "p", format: "text"}},
		{[]string{"-I", "/inc", "--include=x.h", "-e", "p"}, config{includeDirs: []string{"/inc"}, includes: []string{"x.h"}, program: "p", format: "text"}},
		{[]string{"--", "-weird.bt"}, config{file: "-weird.bt", format: "text"}},
		// getopt permutation: options after the script and its parameters.
		{[]string{"s.bt", "-c", "./prog", "x"}, config{file: "s.bt", cmd: "./prog", params: []string{"x"}, format: "text"}},
		{[]string{"-l", "uprobe:*", "-p", "7"}, config{list: true, listPattern: "uprobe:*", pid: 7, pidStr: "7", hasPid: true, format: "text"}},
		// bpftrace 0.26's long options, modes and named program options.
		{[]string{"--pid", "9", "--output=o", "--quiet", "--verbose", "-e", "p"},
			config{pid: 9, pidStr: "9", hasPid: true, output: "o", quiet: true, verbose: true, program: "p", format: "text"}},
		{[]string{"--mode", "bench", "--probe-filter", ":200", "--traceable-functions", "/dev/null", "-e", "p"},
			config{mode: "bench", probeFilter: ":200", traceable: "/dev/null", program: "p", format: "text"}},
		{[]string{"--test", "--debuginfo=a:b", "--debuginfo", "c", "--no-feature", "uprobe_multi,kprobe_multi", "-e", "p"},
			config{mode: "test", debuginfo: []string{"a", "b", "c"}, noFeature: []string{"uprobe_multi", "kprobe_multi"}, program: "p", format: "text"}},
		{[]string{"-e", "p", "x", "--", "--aa=1", "--bb", "y"},
			config{program: "p", params: []string{"x", "y"}, namedParams: []string{"aa=1", "bb"}, format: "text"}},
		{[]string{"-d", "ast,types", "-e", "p"}, config{debug: 1, debugStages: []string{"ast", "types"}, program: "p", format: "text"}},
		{[]string{"-e", "one", "-e", "two"}, config{program: "two", format: "text"}},
		{[]string{"s.bt", "--", "-1"}, config{file: "s.bt", params: []string{"-1"}, format: "text"}},
		// Flame graphs.
		{[]string{"-f", "folded", "--flamegraph", "out.svg", "-e", "p"}, config{format: "folded", flamegraph: "out.svg", program: "p"}},
		{[]string{"--flamegraph=o.svg", "s.bt"}, config{format: "text", flamegraph: "o.svg", file: "s.bt"}},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.args)
		if err == nil {
			err = checkPid(got)
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tt.args, *got, tt.want)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// bpftrace 0.26's messages (and 0.17's under --compat 0.17).
		{[]string{"-p", "a1111", "f.bt"}, "Failed to parse pid: invalid integer: a1111"},
		{[]string{"-p", "111a1", "f.bt"}, "Failed to parse pid: invalid trailing bytes: 111a1"},
		{[]string{"--pid", "not_a_pid"}, "Failed to parse pid: invalid integer: not_a_pid"},
		{[]string{"-p", "4194305"}, "Failed to parse pid: pid '4194305' out of valid pid range [1,4194304]"},
		{[]string{"--compat", "0.17", "-p", "a1111", "f.bt"}, "pid 'a1111' is not a valid decimal number"},
		{[]string{"--compat", "0.17", "-p", "111a1", "f.bt"}, "pid '111a1' is not a valid decimal number"},
		{[]string{"--compat", "0.17", "-p", "-5"}, "pid '-5' out of valid pid range [1,4194304]"},
		{[]string{"--mode", "x", "-e", "p"}, "USAGE: --mode can only be 'codegen', 'compiler-bench', 'bench', 'test' or 'format'."},
		{[]string{"--mode", "test", "--bench", "-e", "p"}, "USAGE: --bench conflicts with existing --mode"},
		{[]string{"--no-feature", "x", "-e", "p"}, "USAGE: --no-feature can only have values 'kprobe_multi,kprobe_session,uprobe_multi'."},
		{[]string{"-d", "ast,bogus", "-e", "p"}, "USAGE: invalid option for -d: bogus"},
		{[]string{"--compat", "0.17", "-p", "not_a_pid"}, "pid 'not_a_pid' is not a valid decimal number"},
		{[]string{"--compat", "0.17", "-p", "0", "f.bt"}, "pid '0' out of valid pid range [1,4194304]"},
		{[]string{"--compat", "0.17", "-p", "-1", "f.bt"}, "pid '-1' out of valid pid range [1,4194304]"},
		{[]string{"--compat", "0.17", "-p", "4194305", "f.bt"}, "pid '4194305' out of valid pid range [1,4194304]"},
		{[]string{"--compat", "0.17", "-p", "4294967296", "f.bt"}, "pid '4294967296' out of valid pid range [1,4194304]"},
		{[]string{"--compat", "0.17", "-p", "99999999999999999999", "f.bt"}, "pid '99999999999999999999' outside of integer range"},
		{[]string{"--compat", "0.17", "-p", "1 ", "f.bt"}, "pid '1 ' is not a valid decimal number"},
		{[]string{"--compat", "0.17", "-p", "0x10", "f.bt"}, "pid '0x10' is not a valid decimal number"},
		{[]string{"--compat", "0.17", "-p", "+-1", "f.bt"}, "pid '+-1' is not a valid decimal number"},
		{[]string{"-f", "xml", "-e", "p"}, "Invalid output format \"xml\"\nValid formats: 'text', 'json', 'folded'"},
		{[]string{"-B", "foo", "-e", "p"}, "USAGE: -B must be either 'line', 'full', or 'none'."},
		{[]string{"-c"}, "option requires an argument -- 'c'"},
		{[]string{"-Z"}, "invalid option -- 'Z'"},
		{[]string{"--bogus"}, "unrecognized option '--bogus'"},
	}
	for _, tt := range tests {
		c, err := parseArgs(tt.args)
		if err == nil {
			err = checkPid(c)
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: got %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestCompat: bpftrace 0.26 is the default; --compat or GOTRACE_COMPAT
// selects 0.17, the flag winning over the variable; bad values are errors.
func TestCompat(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cases := []struct {
		args []string
		env  map[string]string
		want compat.Version
		err  string
	}{
		{args: []string{"-e", "p"}, want: compat.V026},
		{args: []string{"--compat", "0.17", "-e", "p"}, want: compat.V017},
		{args: []string{"--compat=0.26", "-e", "p"}, env: map[string]string{"GOTRACE_COMPAT": "0.17"}, want: compat.V026},
		{args: []string{"-e", "p"}, env: map[string]string{"GOTRACE_COMPAT": "0.17"}, want: compat.V017},
		{args: []string{"--compat", "0.19", "-e", "p"}, err: "invalid compat version '0.19': expected 0.17 or 0.26"},
		{args: []string{"-e", "p"}, env: map[string]string{"GOTRACE_COMPAT": "x"}, err: "env var GOTRACE_COMPAT: invalid compat version 'x': expected 0.17 or 0.26"},
	}
	for _, c := range cases {
		cfg, err := parseArgs(c.args)
		if err == nil {
			err = compatFromEnv(cfg, env(c.env))
		}
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q %v: err = %v, want %q", c.args, c.env, err, c.err)
			}
			continue
		}
		if err != nil || cfg.compat != c.want {
			t.Errorf("%q %v: compat = %v (err %v), want %v", c.args, c.env, cfg.compat, err, c.want)
		}
	}
}
