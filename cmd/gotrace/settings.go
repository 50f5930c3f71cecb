package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/runtime"
)

// settings are the GOTRACE_*/BPFTRACE_* environment variables, read and
// validated here, in one place, and passed down as options (nothing below
// cmd/ reads the environment).
type settings struct {
	strLen             int
	mapKeysMax         int
	maxProbes          int
	perfRBPages        int // 0: default
	stackMapEntries    int // 0: default
	catBytesMax        int
	syscallTracepoints string // "", "raw" or "perf"
}

// Limits of the settings. Each bound is one the kernel or gotrace's design
// sets, named in the error that refuses a value beyond it.
const (
	// maxStrLen: strings up to 4 KiB live in a per-CPU scratch map (whose
	// value is at most 32 KiB); longer ones (bpftrace 0.26 allows them)
	// in an array with a slot per CPU (compiler.bigScratch).
	maxStrLen = 1 << 14
	// maxMapKeys: a keyed map's capacity (the kernel's hash maps allow
	// more, but a hostile setting must not reserve unbounded memory).
	maxMapKeys = 1 << 24
	// maxProbesLimit: each probe costs at least one descriptor.
	maxProbesLimit = 1 << 20
	// maxStackMapEntries bounds each stack map.
	maxStackMapEntries = 1 << 20
	// maxCatBytes bounds one cat()'s output.
	maxCatBytes = 16 << 20
)

// lookupFunc is os.LookupEnv (tests pass a map).
type lookupFunc func(string) (string, bool)

// readSettings reads and validates every setting; the error names the
// variable, the value and the limit it breaks.
func readSettings(lookup lookupFunc) (*settings, error) {
	s := &settings{}
	var err error
	num := func(dst *int, def, max int, unit string, names ...string) {
		if err != nil {
			return
		}
		*dst = def
		name, v, ok := lookupAny(lookup, names...)
		if !ok || v == "" {
			return
		}
		n, perr := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if perr != nil || n == 0 {
			// bpftrace's words.
			err = fmt.Errorf("Env var '%s' did not contain a valid uint64_t, or was zero-valued.", name)
			return
		}
		if n > uint64(max) {
			err = fmt.Errorf("'%s' %s exceeds the maximum of %d%s.", name, v, max, unit)
			return
		}
		*dst = int(n)
	}
	num(&s.strLen, 64, maxStrLen, " bytes", "MAX_STRLEN", "STRLEN")
	num(&s.mapKeysMax, 4096, maxMapKeys, " keys", "MAX_MAP_KEYS", "MAP_KEYS_MAX")
	num(&s.maxProbes, runtime.DefaultMaxProbes, maxProbesLimit, " probes", "MAX_PROBES")
	num(&s.perfRBPages, 0, 1<<30, " pages", "PERF_RB_PAGES")
	num(&s.stackMapEntries, 0, maxStackMapEntries, " entries", "STACK_MAP_ENTRIES")
	num(&s.catBytesMax, runtime.DefaultCatMax, maxCatBytes, " bytes", "MAX_CAT_BYTES", "CAT_BYTES_MAX")
	if err != nil {
		return nil, err
	}
	if n := s.perfRBPages; n > 0 {
		name, v, _ := lookupAny(lookup, "PERF_RB_PAGES")
		if n&(n-1) != 0 {
			return nil, fmt.Errorf("'%s' %s is not a power of 2 (the ring buffer's size must be one).", name, v)
		}
		if b := runtime.RingBufBytes(n); b > runtime.MaxRingBufBytes {
			return nil, fmt.Errorf("'%s' %s asks for a %d MiB ring buffer (all CPUs), more than the maximum of %d MiB.", name, v, b>>20, runtime.MaxRingBufBytes>>20)
		}
	}
	if name, v, ok := lookupAny(lookup, "SYSCALL_TRACEPOINTS"); ok {
		switch v {
		case "", "auto":
		case "raw", "perf":
			s.syscallTracepoints = v
		default:
			return nil, fmt.Errorf("'%s' must be 'auto', 'raw' or 'perf', got '%s'.", name, v)
		}
	}
	return s, nil
}

// lookupAny returns the first of GOTRACE_<name>, BPFTRACE_<name> for each
// name (in order) that is set, with the full variable name.
func lookupAny(lookup lookupFunc, names ...string) (string, string, bool) {
	for _, n := range names {
		for _, p := range []string{"GOTRACE_", "BPFTRACE_"} {
			if v, ok := lookup(p + n); ok {
				return p + n, v, true
			}
		}
	}
	return "", "", false
}

var _ lookupFunc = os.LookupEnv
