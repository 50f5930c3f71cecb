package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Perf-event based probes (profile, interval, software, hardware): a perf
// event is opened per CPU (or on one CPU) and the program attached to it
// with a BPF link.

// onlineCPUs parses /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("list online CPUs: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// perfAttach opens one perf event per CPU of p and attaches prog to each.
func perfAttach(prog *ebpf.Program, p *Probe) ([]io.Closer, error) {
	var out []io.Closer
	for _, cpu := range p.CPUs {
		attr := unix.PerfEventAttr{
			Type:   p.PerfType,
			Config: p.PerfConfig,
			Size:   uint32(unsafeSizeofPerfAttr),
		}
		if p.Freq > 0 {
			attr.Sample = p.Freq
			attr.Bits |= unix.PerfBitFreq
		} else {
			attr.Sample = p.Period
		}
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return out, fmt.Errorf("attach %s: perf_event_open on CPU %d: %w", p.Name, cpu, err)
		}
		f := os.NewFile(uintptr(fd), p.Name)
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
		if err != nil {
			f.Close()
			return out, fmt.Errorf("attach %s on CPU %d: %w", p.Name, cpu, err)
		}
		// The link holds its own reference to the event; closing both
		// releases it.
		out = append(out, closerFunc(func() error { return errors.Join(l.Close(), f.Close()) }))
	}
	return out, nil
}

var unsafeSizeofPerfAttr = unix.PERF_ATTR_SIZE_VER5

// perfProvider attaches already-expanded perf probes.
type perfProvider struct{}

func (pp perfProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	for _, p := range probes {
		cl, err := perfAttach(prog, p)
		out = append(out, cl...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// timeUnit converts profile/interval units into a period in ns, or a
// frequency in Hz.
func timeUnit(unit string, n uint64) (period, freq uint64, err error) {
	if n == 0 {
		return 0, 0, fmt.Errorf("the rate must be greater than 0")
	}
	switch unit {
	case "hz", "":
		return 0, n, nil
	case "s":
		return n * 1_000_000_000, 0, nil
	case "ms":
		return n * 1_000_000, 0, nil
	case "us":
		return n * 1_000, 0, nil
	}
	return 0, 0, fmt.Errorf("invalid time unit %q (want hz, s, ms or us)", unit)
}
