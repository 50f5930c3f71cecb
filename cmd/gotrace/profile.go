//go:build pprof

package main

// A developer build, go build -tags pprof ./cmd/gotrace, writes a CPU
// profile to $GOTRACE_CPUPROFILE and a heap profile (taken at exit) to
// $GOTRACE_MEMPROFILE. The product binary has neither (runtime/pprof
// brings compress/flate and text/tabwriter and their start-up into it).

import (
	"os"
	"runtime/pprof"
)

func init() {
	var stops []func()
	if f := os.Getenv("GOTRACE_CPUPROFILE"); f != "" {
		if w, err := os.Create(f); err == nil && pprof.StartCPUProfile(w) == nil {
			stops = append(stops, func() { pprof.StopCPUProfile(); w.Close() })
		}
	}
	if f := os.Getenv("GOTRACE_MEMPROFILE"); f != "" {
		stops = append(stops, func() {
			if w, err := os.Create(f); err == nil {
				pprof.Lookup("heap").WriteTo(w, 0)
				w.Close()
			}
		})
	}
	atExit = func() {
		for _, s := range stops {
			s()
		}
	}
}
