package runtime

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
)

// rawTracepointProvider attaches rawtracepoint:[MOD:]NAME. Programs of type
// RAW_TRACEPOINT use BPF_RAW_TRACEPOINT_OPEN by name; BTF-typed ones
// (TRACING with AttachTraceRawTp) attach through their load-time target.
type rawTracepointProvider struct{}

func init() { register(lang.ProbeRawTracepoint, rawTracepointProvider{}) }

func (rawTracepointProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	name := ap.Func
	if name == "" {
		return nil, fmt.Errorf("rawtracepoint needs a name: rawtracepoint:NAME")
	}
	if mod := ap.Target; mod != "" && mod != "vmlinux" && !hasWildcard(mod) {
		// rawtracepoint:MODULE:NAME: the module's BTF describes its
		// tracepoints; without it bpftrace 0.26 says so, unplaced.
		if _, err := os.Stat(filepath.Join("/sys/kernel/btf", mod)); err != nil {
			return nil, &bareError{fmt.Sprintf("No BTF found for %s:%s.", mod, name), err}
		}
	}
	all, err := tracepointNames()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, n := range all {
		c, e, _ := strings.Cut(n, ":")
		if glob(name, e) && !ktypes.NotRawTracepoint(c) {
			seen[e] = true
		}
	}
	if len(seen) == 0 {
		if hasWildcard(name) {
			return nil, fmt.Errorf("no raw tracepoints match %s", name)
		}
		return nil, fmt.Errorf("raw tracepoint not found: %s", name)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*Probe, 0, len(names))
	for _, n := range names {
		out = append(out, &Probe{Name: "rawtracepoint:" + n, Func: n})
	}
	return out, nil
}

func (rawTracepointProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	for _, p := range probes {
		var (
			l   link.Link
			err error
		)
		if prog.Type() == ebpf.Tracing {
			l, err = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceRawTp})
		} else {
			l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.Func, Program: prog})
		}
		if err != nil {
			return out, fmt.Errorf("attach %s: %w", p.Name, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// rawSyscallProvider serves a program the compiler made of syscalls
// tracepoints on the raw sys_enter or sys_exit tracepoint
// (compiler/syscalls.go): the tracepoints expand as tracepoints (names,
// counts), and Loaded.Expand gathers them into one group, attached with
// one raw tracepoint link.
type rawSyscallProvider struct{}

func (rawSyscallProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	return tracepointProvider{}.Expand(ap, env)
}

func (rawSyscallProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	if len(probes) == 0 {
		return nil, nil
	}
	raw := probes[0].Program.RawSyscall
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: raw, Program: prog})
	if err != nil {
		return nil, fmt.Errorf("attach %d syscalls tracepoints through raw tracepoint %s: %w", len(probes), raw, err)
	}
	return []io.Closer{l}, nil
}
