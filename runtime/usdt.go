package runtime

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gotrace/gotrace/ktypes"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/lang"
)

// usdtProvider attaches usdt:PATH:[PROVIDER:]NAME (wildcards in both) and
// usdt:[PROVIDER:]NAME with -p (every file mapped into the process).
type usdtProvider struct{}

func init() { register(lang.ProbeUSDT, usdtProvider{}) }

func (usdtProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	target, provider, name := ap.Target, ap.NS, ap.Func
	if env.Command != "" {
		// -c: probes without a path are the command's; usdt:X:NAME is
		// usdt:LIB:NAME when X is a binary or library, else
		// usdt:PROVIDER:NAME of the command.
		if target != "" && provider == "" && !strings.Contains(target, "/") {
			if _, err := ktypes.ResolveBinary(target, 0); hasWildcard(target) || err != nil {
				target, provider = "", target
			}
		}
		if target == "" {
			target = env.Command
		}
	} else if env.lookupPID() <= 0 && target != "" && provider == "" && !strings.Contains(target, "/") && !hasWildcard(target) {
		// usdt:PROVIDER:NAME without -p is ambiguous with usdt:LIB:NAME;
		// a target that resolves as a binary wins.
		if _, err := ktypes.ResolveBinary(target, 0); err != nil {
			return nil, fmt.Errorf("usdt: %s is neither a binary nor a library (a probe without a path needs -p PID)", target)
		}
	}
	if target != "" && provider == "" && env.lookupPID() > 0 {
		if _, err := ktypes.ResolveBinary(target, env.lookupPID()); err != nil {
			// usdt:PROVIDER:NAME with -p.
			target, provider = "", target
		}
	}
	probes, err := ktypes.USDTProbes(target, env.lookupPID())
	if err != nil {
		return nil, err
	}
	var out []*Probe
	for _, p := range probes {
		if provider != "" && !glob(provider, p.Provider) || !glob(name, p.Name) {
			continue
		}
		for _, loc := range p.Locations {
			out = append(out, &Probe{
				Name:   fmt.Sprintf("usdt:%s:%s:%s", p.Shown, p.Provider, p.Name),
				Target: p.Path, Func: p.Provider + ":" + p.Name,
				Addr: loc.FileOffset, RefCtr: p.SemaphoreOffset,
			})
		}
	}
	// Attach in the notes' order, each file's probes by address, as
	// bpftrace does (it reads the notes in order): with a wildcard the
	// first probe to fire is then the one bpftrace's would be.
	rank := map[string]int{}
	for _, p := range out {
		if _, ok := rank[p.Target]; !ok {
			rank[p.Target] = len(rank)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank[out[i].Target], rank[out[j].Target]; ri != rj {
			return ri < rj
		}
		return out[i].Addr < out[j].Addr
	})
	if len(out) == 0 {
		where := target
		if where == "" {
			where = fmt.Sprintf("pid %d", env.PID)
		}
		spec := name
		if provider != "" {
			spec = provider + ":" + name
		}
		return nil, &noMatchError{fmt.Errorf("no USDT probe %s in %s", spec, where)}
	}
	return out, nil
}

func (usdtProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	exes := map[string]*link.Executable{}
	for _, p := range probes {
		ex := exes[p.Target]
		if ex == nil {
			var err error
			if ex, err = link.OpenExecutable(p.Target); err != nil {
				return out, fmt.Errorf("open %s: %w", p.Target, err)
			}
			exes[p.Target] = ex
		}
		opts := &link.UprobeOptions{Address: p.Addr, RefCtrOffset: p.RefCtr, PID: env.PID, TraceFSPrefix: "gotrace", Cookie: p.Cookie}
		l, err := ex.Uprobe(p.Func, prog, opts)
		if err != nil {
			return out, fmt.Errorf("attach %s: %w", p.Name, err)
		}
		out = append(out, l)
	}
	return out, nil
}
