package runtime

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
)

// timerProvider: profile:hz:N / profile:s|ms|us:N, a cpu-clock sampling
// event on every online CPU; interval:s|ms|us|hz:N, a cpu-clock event on
// one CPU, so the program runs once per interval system-wide.
type timerProvider struct{ kind lang.ProbeKind }

func init() {
	register(lang.ProbeProfile, timerProvider{lang.ProbeProfile})
	register(lang.ProbeInterval, timerProvider{lang.ProbeInterval})
}

func (t timerProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	period, freq, err := timeUnit(ap.Unit, ap.Freq)
	if err != nil {
		return nil, err
	}
	interval := t.kind == lang.ProbeInterval
	if interval && freq > 0 {
		// A fixed period, not the kernel's adaptive frequency mode.
		period, freq = 1_000_000_000/freq, 0
		if period == 0 {
			period = 1
		}
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	if interval {
		cpus = cpus[:1]
	}
	unit := ap.Unit
	if unit == "" {
		unit = "hz"
	}
	return []*Probe{{
		Name: fmt.Sprintf("%s:%s:%d", t.kind, unit, ap.Freq), PerfType: unix.PERF_TYPE_SOFTWARE,
		PerfConfig: unix.PERF_COUNT_SW_CPU_CLOCK, Period: period, Freq: freq, CPUs: cpus,
	}}, nil
}

func (timerProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	return perfProvider{}.Attach(prog, probes, env)
}
