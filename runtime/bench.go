package runtime

import (
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/runtime/output"
)

// bench:NAME probes (bpftrace 0.26's --mode bench): RAW_TRACEPOINT
// programs never attached, each run repeatedly with BPF_PROG_TEST_RUN
// after BEGIN; the average time of a run is reported per probe.

type benchProbe struct {
	name string
	prog *compiler.Program
}

// Bench budget per probe: runs stop at benchIters or after benchTime.
const (
	benchIters = 1 << 20
	benchTime  = 200 * time.Millisecond
)

// RunBench runs every bench probe and returns the results in script order.
func (l *Loaded) RunBench(pl *plan) ([]output.Bench, error) {
	var out []output.Bench
	for _, b := range pl.bench {
		prog := l.Programs[b.prog.Name]
		if prog == nil {
			return nil, fmt.Errorf("bench:%s: program not loaded", b.name)
		}
		opts := &ebpf.RunOptions{Context: rawTPContext}
		var took time.Duration
		var err error
		iters := 0
		l.on(func() { // on BEGIN's thread, timed there
			start := time.Now()
			for iters < benchIters && (iters == 0 || time.Since(start) < benchTime) {
				if _, err = prog.Run(opts); err != nil {
					return
				}
				iters++
			}
			took = time.Since(start)
		})
		if err != nil {
			return nil, fmt.Errorf("bench:%s: %w", b.name, err)
		}
		out = append(out, output.Bench{Name: b.name, AvgNs: uint64(took.Nanoseconds()) / uint64(iters), Iters: uint64(iters)})
	}
	return out, nil
}
