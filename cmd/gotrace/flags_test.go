package main

import (
	"reflect"
	"testing"
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
			config{debug: 2, quiet: true, format: "json", buffering: "none", pid: 42, hasPid: true, file: "f.bt"}},
		{[]string{"--unsafe", "--dry-run", "-c", "ls -l", "-o", "out", "-e", "p"},
			config{unsafe: true, dryRun: true, cmd: "ls -l", output: "out", program: "p", format: "text"}},
		{[]string{"explain", "-e", "p"}, config{explain: true, program: "p", format: "text"}},
		{[]string{"-I", "/inc", "--include=x.h", "-e", "p"}, config{includeDirs: []string{"/inc"}, includes: []string{"x.h"}, program: "p", format: "text"}},
		{[]string{"--", "-weird.bt"}, config{file: "-weird.bt", format: "text"}},
		// getopt permutation: options after the script and its parameters.
		{[]string{"s.bt", "-c", "./prog", "x"}, config{file: "s.bt", cmd: "./prog", params: []string{"x"}, format: "text"}},
		{[]string{"-l", "uprobe:*", "-p", "7"}, config{list: true, listPattern: "uprobe:*", pid: 7, hasPid: true, format: "text"}},
		{[]string{"s.bt", "--", "-1"}, config{file: "s.bt", params: []string{"-1"}, format: "text"}},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.args)
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
		{[]string{"-p", "a1111", "f.bt"}, "pid 'a1111' is not a valid decimal number"},
		{[]string{"-p", "111a1", "f.bt"}, "pid '111a1' is not a valid decimal number"},
		{[]string{"-p", "not_a_pid"}, "pid 'not_a_pid' is not a valid decimal number"},
		{[]string{"-f", "xml", "-e", "p"}, "Invalid output format \"xml\"\nValid formats: 'text', 'json'"},
		{[]string{"-B", "foo", "-e", "p"}, "USAGE: -B must be either 'line', 'full', or 'none'."},
		{[]string{"-c"}, "option requires an argument -- 'c'"},
		{[]string{"-Z"}, "invalid option -- 'Z'"},
		{[]string{"--bogus"}, "unrecognized option '--bogus'"},
	}
	for _, tt := range tests {
		_, err := parseArgs(tt.args)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: got %v, want %q", tt.args, err, tt.want)
		}
	}
}
