package probes_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestRawTracepoint: raw tracepoints with BTF-typed args by the names the
// kernel's __bpf_trace_NAME stubs give them (regs, id, ret), including a
// pointer walk through args (args->regs->orig_ax), counted exactly on N
// getpid calls.
func TestRawTracepoint(t *testing.T) {
	setup(t)
	testkit.Require(t, testkit.BTF)
	testkit.NoBPFLeaks(t)
	script := `
rawtracepoint:sys_enter /pid == cpid && args->id == 39/ { @enter = count(); @orig[args->regs->orig_ax] = count(); }
rawtracepoint:sys_exit /pid == cpid && args->regs->orig_ax == 39/ { @ret[args->ret == pid] = count(); }
`
	r := gt(t, 60*time.Second, nil, "-e", script, "-c", testkit.Helper(t, "getpid")+" 250")
	wantMaps(t, r, "@enter: 250\n@orig[39]: 250\n@ret[1]: 250")
}

// TestRawTracepointWildcardProbe: `probe` under a rawtracepoint wildcard
// names each raw tracepoint that fired (the wildcard is expanded when the
// script is compiled: raw tracepoint links carry no cookie).
func TestRawTracepointWildcardProbe(t *testing.T) {
	setup(t)
	testkit.NoBPFLeaks(t)
	r := gt(t, 60*time.Second, nil, "-e", `rawtracepoint:sys_e* /pid == cpid/ { @[probe] = count(); }`, "-c", testkit.Helper(t, "getpid")+" 100")
	got := mapLines(r.Stdout)
	if !regexp.MustCompile(`(?m)^@\[rawtracepoint:sys_enter\]: \d{3,}$`).MatchString(got) ||
		!regexp.MustCompile(`(?m)^@\[rawtracepoint:sys_exit\]: \d{3,}$`).MatchString(got) ||
		strings.Count(got, "\n") != 1 {
		t.Errorf("want one count of 100 or more for each of sys_enter and sys_exit, got:\n%s\nstderr:\n%s", got, r.Stderr)
	}
}
