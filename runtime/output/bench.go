package output

import (
	"fmt"
	"strings"
)

// Bench is the result of one bench:NAME probe (--mode bench).
type Bench struct {
	Name  string
	AvgNs uint64 // average time of a run, in nanoseconds
	Iters uint64
}

// Benchmarks prints bench results as bpftrace 0.26 does: a table of name,
// average time and iterations (text), or one benchmark_result record (JSON).
func (p *Printer) Benchmarks(res []Bench) error {
	if p.format == JSON {
		parts := make([]string, len(res))
		for i, b := range res {
			parts[i] = fmt.Sprintf(`"%s": {"average": %d, "iters": %d}`, jsonEscape(b.Name), b.AvgNs, b.Iters)
		}
		return p.write(`{"type": "benchmark_result", "data": {` + strings.Join(parts, ", ") + "}}\n")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-40s %-14s %s\n", "Benchmark", "Time(ns)", "Iterations")
	sb.WriteString(strings.Repeat("-", 66) + "\n")
	for _, b := range res {
		fmt.Fprintf(&sb, "%-40s %-14d %d\n", b.Name, b.AvgNs, b.Iters)
	}
	return p.write(sb.String())
}
