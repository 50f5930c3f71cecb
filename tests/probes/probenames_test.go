package probes_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestTracepointProbeNames: under a wildcard tracepoint, probe is the
// tracepoint that fired (the attach cookie of its perf link), in map keys,
// printf and JSON, next to a plain clause whose probe is a constant; the
// output is bpftrace's, byte for byte.
func TestTracepointProbeNames(t *testing.T) {
	setup(t)
	const n = 3
	cmd := fmt.Sprintf("%s %d", testkit.Helper(t, "getpid"), n)
	script := `tracepoint:syscalls:sys_enter_getpid /pid == cpid/ { @x[probe] = count(); } ` +
		`tracepoint:syscalls:sys_*_getp* /pid == cpid/ { @[probe] = count(); } ` +
		`tracepoint:syscalls:sys_exit_getp* /pid == cpid/ { printf("%s\n", probe); }`
	printed := strings.Repeat("tracepoint:syscalls:sys_exit_getpid\n", n)
	for _, tc := range []struct{ name, format, want string }{
		{"text", "text", printed + fmt.Sprintf("\n\n@[tracepoint:syscalls:sys_enter_getpid]: %[1]d\n@[tracepoint:syscalls:sys_exit_getpid]: %[1]d\n"+
			"@x[tracepoint:syscalls:sys_enter_getpid]: %[1]d\n", n)},
		{"json", "json", strings.Repeat(`{"type": "printf", "data": "tracepoint:syscalls:sys_exit_getpid\n"}`+"\n", n) +
			fmt.Sprintf("\n\n"+`{"type": "map", "data": {"@": {"tracepoint:syscalls:sys_enter_getpid": %[1]d, "tracepoint:syscalls:sys_exit_getpid": %[1]d}}}`+"\n"+
				`{"type": "map", "data": {"@x": {"tracepoint:syscalls:sys_enter_getpid": %[1]d}}}`+"\n", n)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gt(t, 60*time.Second, nil, "-f", tc.format, "-e", script, "-c", cmd)
			// The first line counts the attached tracepoints, which
			// differ between kernels.
			_, got, _ := strings.Cut(r.Stdout, "\n")
			check(t, r.ExitCode == 0 && got == tc.want, "exit %d; got:\n%s\nwant:\n%s\nstderr:\n%s", r.ExitCode, got, tc.want, r.Stderr)
		})
	}
}
