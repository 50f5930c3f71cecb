// Package compat names the bpftrace release whose behaviour gotrace follows.
//
// gotrace's syntax is the union of bpftrace 0.17's and bpftrace 0.26.1's;
// where the two releases behave differently (printed text, exit rules,
// types), gotrace behaves as bpftrace 0.26.1 by default and as bpftrace
// 0.17 with `--compat 0.17` (or GOTRACE_COMPAT=0.17, read by cmd/gotrace
// only). Every stage that differs takes a Version in its options and asks
// it one of the named questions below, so that grepping for a method
// finds every place a behaviour changes. The README keeps the table of
// these differences, each with the bpftrace version that changed it.
package compat

import "fmt"

// Version is a bpftrace release gotrace can follow. The zero value is
// today's bpftrace (0.26.1).
type Version int

const (
	V026 Version = iota // bpftrace 0.26.1 (default)
	V017                // bpftrace 0.17, as Debian 12 ships it
)

// Default is the version followed when nothing is asked for.
const Default = V026

// Parse reads a --compat value: "0.17" (also "0.17.0", "v0.17"), "0.26"
// (also "0.26.1", "latest", "") .
func Parse(s string) (Version, error) {
	switch s {
	case "", "0.26", "0.26.1", "v0.26", "v0.26.1", "latest":
		return V026, nil
	case "0.17", "0.17.0", "v0.17", "v0.17.0":
		return V017, nil
	}
	return 0, fmt.Errorf("invalid compat version '%s': expected 0.17 or 0.26", s)
}

func (v Version) String() string {
	if v == V017 {
		return "0.17"
	}
	return "0.26"
}

// Legacy reports whether gotrace follows bpftrace 0.17.
func (v Version) Legacy() bool { return v == V017 }

// AttachedAfter: bpftrace 0.26 prints "Attached N probes" on stderr once
// the probes are attached; 0.17 prints "Attaching N probes..." on stdout
// before attaching (changed in bpftrace 0.24).
func (v Version) AttachedAfter() bool { return v != V017 }

// ExitAfterBeginEnd: in bpftrace 0.26 a program whose only probes are
// BEGIN/END (and so can never fire again) exits after BEGIN; 0.17 waits
// for Ctrl-C (changed in bpftrace 0.24).
func (v Version) ExitAfterBeginEnd() bool { return v != V017 }

// HistHeaderSpace: bpftrace 0.17 prints a hist/lhist map's header as
// "@name: " (a trailing space); 0.26 as "@name:" (changed in bpftrace 0.24).
func (v Version) HistHeaderSpace() bool { return v == V017 }

// PidInTracerNS: in bpftrace 0.26 pid and tid are the ids in the tracer's
// pid namespace (pid(init) in the initial one); in 0.17 always in the
// initial namespace (changed in bpftrace 0.22, its PR #3428).
func (v Version) PidInTracerNS() bool { return v != V017 }

// NsecsBoot: bpftrace 0.26's nsecs is CLOCK_BOOTTIME (bpf_ktime_get_boot_ns,
// nsecs(monotonic) the old clock); 0.17's is CLOCK_MONOTONIC
// (bpf_ktime_get_ns); bpftrace 0.26's documentation says "defaults to boot".
func (v Version) NsecsBoot() bool { return v != V017 }

// PidParseMessages: bpftrace 0.26 reports a bad -p as "Failed to parse pid:
// invalid integer: X" / "invalid trailing bytes: X" and "Pid out of range:
// N"; 0.17 as "pid 'X' is not a valid decimal number" and "pid 'X' out of
// valid pid range [1,4194304]".
func (v Version) PidParseMessages() bool { return v != V017 }

// UnsafeIsUnsafe: bpftrace 0.26 refuses an unsafe function without --unsafe
// as "F() is unsafe. To use you need the --unsafe flag"; 0.17 as "F() is
// an unsafe function being used in safe mode".
func (v Version) UnsafeIsUnsafe() bool { return v != V017 }
