// Package priv says, in one line, which privilege tracing lacks and how to
// get it: bpftrace only says that it must run as root.
package priv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Capability numbers (linux/capability.h); CAP_BPF and CAP_PERFMON since
// Linux 5.8.
const (
	capDacOverride   = 1
	capDacReadSearch = 2
	capSysAdmin      = 21
	capPerfmon       = 38
	capBPF           = 39
)

// effective returns the effective capability set, or ok false.
func effective() (caps [2]uint32, ok bool) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return caps, false
	}
	return [2]uint32{data[0].Effective, data[1].Effective}, true
}

func has(caps [2]uint32, c uint) bool { return caps[c/32]&(1<<(c%32)) != 0 }

// TracefsDirs are where tracefs is looked for.
var TracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// tracefsDenied reports whether tracefs is there but not readable by us
// (its default mode is 0700, root's).
func tracefsDenied() bool {
	for _, d := range TracefsDirs {
		_, err := os.Stat(filepath.Join(d, "available_events"))
		if err == nil {
			return false
		}
		if errors.Is(err, fs.ErrPermission) {
			return true
		}
	}
	return false
}

func self() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return "gotrace"
}

// how is the advice that ends each message.
func how(caps []string) string {
	lower := make([]string, len(caps))
	for i, c := range caps {
		lower[i] = strings.ToLower(c)
	}
	return fmt.Sprintf("run gotrace as root (sudo), or give it %s: sudo setcap %s=ep %s",
		strings.Join(caps, " + "), strings.Join(lower, ","), self())
}

// lacks says which of need uid lacks.
func lacks(need, missing []string) string {
	if len(missing) == len(need) && len(need) > 1 {
		return fmt.Sprintf("uid %d has none of them", os.Geteuid())
	}
	return fmt.Sprintf("uid %d lacks %s", os.Geteuid(), strings.Join(missing, " and "))
}

// CheckTrace reports what loading and attaching BPF programs lacks: root,
// or CAP_BPF + CAP_PERFMON (CAP_SYS_ADMIN covers both); the advice adds
// CAP_DAC_READ_SEARCH when tracefs is not readable (tracepoints need it:
// TracefsError). nil when nothing is missing.
func CheckTrace() error {
	caps, ok := effective()
	if !ok {
		return nil // cannot tell: let the kernel say
	}
	admin := has(caps, capSysAdmin)
	var missing []string
	if !admin && !has(caps, capBPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !admin && !has(caps, capPerfmon) {
		missing = append(missing, "CAP_PERFMON")
	}
	if len(missing) == 0 {
		return nil
	}
	need := []string{"CAP_BPF", "CAP_PERFMON"}
	fix := missing
	also := ""
	if !has(caps, capDacReadSearch) && !has(caps, capDacOverride) && tracefsDenied() {
		also = " (and CAP_DAC_READ_SEARCH for tracepoints)"
		fix = append(fix, "CAP_DAC_READ_SEARCH")
	}
	return fmt.Errorf("tracing needs root, or %s%s; %s: %s", strings.Join(need, " + "), also, lacks(need, missing), how(fix))
}

// TracefsError is the error for tracefs at dir existing but being
// unreadable (listing probes reads it), or nil when that is not the case.
func TracefsError(dir string) error {
	_, err := os.Stat(filepath.Join(dir, "available_events"))
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return fmt.Errorf("tracepoints are read from tracefs (%s), which only root, or CAP_DAC_READ_SEARCH, may read; uid %d lacks it: %s",
		dir, os.Geteuid(), how([]string{"CAP_DAC_READ_SEARCH"}))
}
