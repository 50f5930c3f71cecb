package runtime

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
)

// perfEventDef is one named software or hardware event with bpftrace's
// aliases and default sample count.
type perfEventDef struct {
	name     string
	alias    string
	config   uint64
	defCount uint64
}

var softwareEvents = []perfEventDef{
	{"alignment-faults", "", unix.PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
	{"bpf-output", "", unix.PERF_COUNT_SW_BPF_OUTPUT, 1},
	{"context-switches", "cs", unix.PERF_COUNT_SW_CONTEXT_SWITCHES, 1000},
	{"cpu-clock", "cpu", unix.PERF_COUNT_SW_CPU_CLOCK, 1000000},
	{"cpu-migrations", "", unix.PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"dummy", "", unix.PERF_COUNT_SW_DUMMY, 1},
	{"emulation-faults", "", unix.PERF_COUNT_SW_EMULATION_FAULTS, 1},
	{"major-faults", "", unix.PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
	{"minor-faults", "", unix.PERF_COUNT_SW_PAGE_FAULTS_MIN, 100},
	{"page-faults", "faults", unix.PERF_COUNT_SW_PAGE_FAULTS, 100},
	{"task-clock", "", unix.PERF_COUNT_SW_TASK_CLOCK, 1000000},
}

var hardwareEvents = []perfEventDef{
	{"backend-stalls", "", unix.PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000},
	{"branch-instructions", "branches", unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000},
	{"branch-misses", "", unix.PERF_COUNT_HW_BRANCH_MISSES, 100000},
	{"bus-cycles", "", unix.PERF_COUNT_HW_BUS_CYCLES, 100000},
	{"cache-misses", "", unix.PERF_COUNT_HW_CACHE_MISSES, 1000000},
	{"cache-references", "", unix.PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
	{"cpu-cycles", "cycles", unix.PERF_COUNT_HW_CPU_CYCLES, 1000000},
	{"frontend-stalls", "", unix.PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000},
	{"instructions", "", unix.PERF_COUNT_HW_INSTRUCTIONS, 1000000},
	{"ref-cycles", "", unix.PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
}

// expandPerfEvents matches ap.Func (which may be a wildcard) against defs.
func expandPerfEvents(kind string, defs []perfEventDef, typ uint32, ap *lang.AttachPoint) ([]*Probe, error) {
	if ap.Func == "" {
		return nil, fmt.Errorf("%s needs an event name: %s:EVENT[:COUNT]", kind, kind)
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	var out []*Probe
	for _, d := range defs {
		if !glob(ap.Func, d.name) && (d.alias == "" || !glob(ap.Func, d.alias)) {
			continue
		}
		count := ap.Freq
		if count == 0 {
			count = d.defCount
		}
		name := ap.Func
		if hasWildcard(name) {
			name = d.name
		}
		out = append(out, &Probe{
			Name: fmt.Sprintf("%s:%s:%d", kind, name, count), Func: d.name,
			PerfType: typ, PerfConfig: d.config, Period: count, CPUs: cpus,
		})
	}
	if len(out) == 0 {
		var names []string
		for _, d := range defs {
			names = append(names, d.name)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown %s event %q (known: %s)", kind, ap.Func, strings.Join(names, ", "))
	}
	return out, nil
}

// softwareProvider: software:EVENT[:COUNT] on every online CPU.
type softwareProvider struct{}

func init() { register(lang.ProbeSoftware, softwareProvider{}) }

func (softwareProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	return expandPerfEvents(lang.ProbeSoftware.String(), softwareEvents, unix.PERF_TYPE_SOFTWARE, ap)
}

func (softwareProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	return perfProvider{}.Attach(prog, probes, env)
}
