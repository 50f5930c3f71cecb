package probes_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestForLoopEveryProbeType: for ($kv : @m) runs in a callback of
// bpf_for_each_map_elem, a BPF subprogram; a program with subprograms needs
// exactly one BTF function record per function, whatever the runtime adds
// in front of it (the stop switch of perf-event and uprobe programs once
// doubled the entry's). Each probe type sums the values of a two-entry map
// on every event, so the sum counts the events exactly.
func TestForLoopEveryProbeType(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	body := `@m[1] = 10; @m[2] = 20; for ($kv : @m) { @s = @s + $kv.1; }`
	getpid := testkit.Helper(t, "getpid") + " 250"
	ufunc := testkit.Helper(t, "ufunc")
	cases := []struct{ name, script, cmd, want string }{
		{"tracepoint", `tracepoint:syscalls:sys_enter_getpid /pid == cpid/ { ` + body + ` }`, getpid,
			"@m[1]: 10\n@m[2]: 20\n@s: 7500"},
		{"rawtracepoint", `rawtracepoint:sys_enter /pid == cpid && args->id == 39/ { ` + body + ` }`, getpid,
			"@m[1]: 10\n@m[2]: 20\n@s: 7500"},
		{"uprobe", `uprobe:` + ufunc + `:target { ` + body + ` }`, fmt.Sprintf("%s %d", ufunc, n),
			fmt.Sprintf("@m[1]: 10\n@m[2]: 20\n@s: %d", 30*n)},
		{"interval", `interval:ms:10 { ` + body + ` @n++; if (@n == 3) { exit(); } }`, "",
			"@m[1]: 10\n@m[2]: 20\n@n: 3\n@s: 90"},
		{"profile", `profile:hz:99 /cpu == 0/ { ` + body + ` @n++; if (@n == 3) { exit(); } }`, "",
			"@m[1]: 10\n@m[2]: 20\n@n: 3\n@s: 90"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "rawtracepoint" {
				testkit.Require(t, testkit.BTF)
			}
			args := []string{"-e", tc.script}
			if tc.cmd != "" {
				args = append(args, "-c", tc.cmd)
			}
			r := gt(t, 60*time.Second, nil, args...)
			wantMaps(t, r, tc.want)
		})
	}
}
