package compiler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/lang/check"
)

// callsHelper reports whether insns call helper fn.
func callsHelper(insns asm.Instructions, fn asm.BuiltinFunc) bool {
	for _, ins := range insns {
		if ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == fn {
			return true
		}
	}
	return false
}

// TestProbeSource: `probe` is a constant for attach points with one name,
// and the attach cookie for wildcard ones (the runtime names their
// expansions); programs that don't read `probe` do neither.
func TestProbeSource(t *testing.T) {
	const (
		open   = "tracepoint:syscalls:sys_enter_openat"
		openW  = "tracepoint:syscalls:sys_enter_open*"
		upW    = "uprobe:/bin/sh:ma*"
		up     = "uprobe:/bin/sh:main"
		usdtNP = "usdt:gotrace:loop" // no path: resolved in the -p process's files
	)
	for _, tc := range []struct {
		name, script string
		// want is each program's source, in order.
		want []ProbeSource
		// probes is Spec.Probes after compiling: wildcard patterns are
		// not names and are not in it.
		probes []string
	}{
		{"plain", open + " { @[probe] = count(); }", []ProbeSource{ProbeConst}, []string{open}},
		{"wildcard", openW + " { @[probe] = count(); }", []ProbeSource{ProbeCookie}, nil},
		{"wildcard-printf", openW + ` { printf("%s\n", probe); }`, []ProbeSource{ProbeCookie}, nil},
		{"wildcard-unused", openW + " { @ = count(); }", []ProbeSource{ProbeUnused}, nil},
		{"mixed", open + ", " + openW + " { @[probe] = count(); }", []ProbeSource{ProbeConst, ProbeCookie}, []string{open}},
		{"uprobe", up + ", " + upW + " { @[probe] = count(); }", []ProbeSource{ProbeConst, ProbeCookie}, []string{up}},
		{"usdt-no-path", usdtNP + " { @[probe] = count(); }", []ProbeSource{ProbeCookie}, nil},
		{"interval", "interval:s:1 { @[probe] = count(); }", []ProbeSource{ProbeConst}, []string{"interval:s:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := compileScript(t, "stdin", tc.script)
			if len(spec.Programs) != len(tc.want) {
				t.Fatalf("%d programs, want %d:\n%s", len(spec.Programs), len(tc.want), spec.Dump())
			}
			for i, p := range spec.Programs {
				cookie := callsHelper(p.Insns, asm.FnGetAttachCookie)
				if p.Probe != tc.want[i] || cookie != (tc.want[i] == ProbeCookie) {
					t.Errorf("program %s (%s): Probe %d, calls bpf_get_attach_cookie: %v; want Probe %d\n%s",
						p.Name, p.Attach[0].Raw, p.Probe, cookie, tc.want[i], spec.Dump())
				}
				if p.Probe == ProbeConst && (p.ProbeID < 0 || p.ProbeID >= len(spec.Probes) || spec.Probes[p.ProbeID] != p.Attach[0].Raw) {
					t.Errorf("program %s: ProbeID %d in %q, want the index of %q", p.Name, p.ProbeID, spec.Probes, p.Attach[0].Raw)
				}
			}
			if strings.Join(spec.Probes, "\n") != strings.Join(tc.probes, "\n") {
				t.Errorf("Spec.Probes %q, want %q", spec.Probes, tc.probes)
			}
			load(t, spec)
		})
	}
}

// TestProbeCookieMissingHelper: before Linux 5.15 (no attach cookies) a
// wildcard clause using `probe` fails at `probe`, naming the helper; a
// plain clause needs no cookie.
func TestProbeCookieMissingHelper(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"tracepoint:syscalls:sys_enter_open* { @[probe] = count(); }",
			"1:41: probe is not supported by this kernel: it needs the BPF helper bpf_get_attach_cookie (added in Linux 5.15)"},
		{"tracepoint:syscalls:sys_enter_openat { @[probe] = count(); }", ""},
	} {
		res := checkText(t, tc.script, check.Options{})
		_, err := Compile(res, Options{HaveHelper: func(pt ebpf.ProgramType, fn asm.BuiltinFunc) error {
			if fn == asm.FnGetAttachCookie {
				return fmt.Errorf("helper %v: %w", fn, ebpf.ErrNotSupported)
			}
			return nil
		}})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s\n got: %s\nwant: %s", tc.script, got, tc.want)
		}
	}
}
