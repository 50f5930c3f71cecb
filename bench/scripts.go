package main

import (
	"fmt"
	"strings"
)

// Script is one canonical benchmark script and the workload it runs against.
type Script struct {
	Name     string
	Text     string
	Workload *Workload // nil: no workload (the script exits or only attaches)
	// Printf scripts print one line "E <tid>" per event: delivered events
	// are the lines with the workload's tid, generated ones Workload.Ops.
	Printf bool
	// AnyTID: every "E" line is delivered, whatever tid it names (a
	// workload of several processes; the script's comm filter keeps
	// others out).
	AnyTID bool
	// SelfExit scripts end by themselves (BEGIN { exit(); }): measured as
	// wall time from start to exit.
	SelfExit bool
	// RoundsStartup: the start-up row comes from the rounds, without
	// start-up-only runs (startupRuns): the detach run, whose every
	// bpftrace exit takes ~25 s.
	RoundsStartup bool
	// Env is added to the tool's environment (map and probe limits of
	// the scale curves).
	Env []string
	// PerTool, when set, gives a tool's extra command-line arguments
	// (before -e) and its script text in place of Text (the metrics
	// curve: gotrace --metrics, bpftrace a print(@) the harness triggers).
	PerTool func(tool string) (args []string, text string)
	// During, when set, runs after the workload and before SIGINT with
	// the tracer's pid and a reader of the "@[" lines received so far; it
	// fills in the sample's scrape fields.
	During func(tool string, pid int, mapLines func() int64, s *Sample) error
}

func allScripts(w map[string]*Workload) []*Script {
	return []*Script{
		{Name: "count", Workload: w["getpid"],
			Text: `tracepoint:syscalls:sys_enter_getpid { @[pid] = count(); }`},
		{Name: "hist", Workload: w["reads"],
			Text: `tracepoint:syscalls:sys_exit_read { @ = hist(args->ret); }`},
		{Name: "comm-filter", Workload: w["getpid"],
			Text: fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @ = count(); }`, w["getpid"].Comm())},
		{Name: "printf", Workload: w["getpid"], Printf: true,
			Text: fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { printf("E %%d\n", tid); }`, w["getpid"].Comm())},
		{Name: "profile-kstack", Workload: w["getpid-long"],
			Text: `profile:hz:999 { @[kstack] = count(); }`},
		{Name: "uprobe", Workload: w["ufunc"],
			Text: fmt.Sprintf(`uprobe:%s:target { @ = count(); }`, w["ufunc"].Path)},
		{Name: "openat-str", Workload: w["openat"],
			Text: `tracepoint:syscalls:sys_enter_openat { @[comm, str(args->filename)] = count(); }`},
		{Name: "begin-exit", SelfExit: true,
			Text: `BEGIN { exit(); }`},
		{Name: "detach-sys_enter", RoundsStartup: true, // hundreds of tracepoints: attach and detach time
			Text: `tracepoint:syscalls:sys_enter_* { @ = count(); }`},
	}
}

// selectScripts applies -only, and leaves the slow detach run out of smoke runs.
func selectScripts(all []*Script, only string, smoke bool) []*Script {
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var out []*Script
	for _, s := range all {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		if len(want) == 0 && smoke && s.Name == "detach-sys_enter" {
			continue
		}
		out = append(out, s)
	}
	return out
}
