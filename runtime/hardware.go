package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/lang"
)

// hardwareProvider: hardware:EVENT[:COUNT], CPU performance counters on
// every online CPU. Virtual machines often have none; that is reported up
// front, before anything is attached.
type hardwareProvider struct{}

func init() { register(lang.ProbeHardware, hardwareProvider{}) }

func (hardwareProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	probes, err := expandPerfEvents(lang.ProbeHardware.String(), hardwareEvents, unix.PERF_TYPE_HARDWARE, ap)
	if err != nil {
		return nil, err
	}
	if err := haveHardwarePMU(probes[0]); err != nil {
		return nil, err
	}
	return probes, nil
}

// haveHardwarePMU opens (and closes) the first event on one CPU, so a
// machine without counters gets one clear error.
func haveHardwarePMU(p *Probe) error {
	attr := unix.PerfEventAttr{Type: p.PerfType, Config: p.PerfConfig, Size: uint32(unsafeSizeofPerfAttr), Sample: p.Period}
	attr.Bits |= unix.PerfBitDisabled
	fd, err := unix.PerfEventOpen(&attr, -1, p.CPUs[0], -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV) {
			hint := ""
			if _, serr := os.Stat("/sys/bus/event_source/devices/cpu"); serr != nil {
				hint = "; no 'cpu' PMU in /sys/bus/event_source/devices (a VM without PMU passthrough?)"
			}
			return fmt.Errorf("this machine has no hardware performance counter for %s (perf_event_open: %v%s)", p.Func, err, hint)
		}
		return fmt.Errorf("open hardware event %s: %w", p.Func, err)
	}
	unix.Close(fd)
	return nil
}

func (hardwareProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	return perfProvider{}.Attach(prog, probes, env)
}
