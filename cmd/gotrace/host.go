package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/stdlib"
)

// procPidInitIno is the inode of the initial pid namespace
// (PROC_PID_INIT_INO in the kernel's proc_ns.h).
const procPidInitIno = 0xEFFFFFFC

// host reads what code generation needs to know of this machine and of the
// tracer: the possible CPUs (ncpus) and, when gotrace runs in a pid
// namespace other than the initial one and follows bpftrace 0.26, that
// namespace (pid and tid are the ids seen from it).
func host(v compat.Version) stdlib.Host {
	var h stdlib.Host
	if b, err := os.ReadFile("/sys/devices/system/cpu/possible"); err == nil {
		h.NCPUs = countCPUs(strings.TrimSpace(string(b)))
	}
	var st unix.Stat_t
	if v.PidInTracerNS() && unix.Stat("/proc/self/ns/pid", &st) == nil && st.Ino != procPidInitIno {
		h.PidNSDev, h.PidNSIno = uint64(st.Dev), st.Ino
	}
	return h
}

// countCPUs counts the CPUs of a kernel CPU list ("0-3,8,10-11").
func countCPUs(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
