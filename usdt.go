package gotrace

import (
	"fmt"
	"path"

	"github.com/gotrace/gotrace/runtime"
	"github.com/gotrace/gotrace/stdlib"
)

// usdtSites gives the compiler the sites and decoded argument specs of the
// usdt probes an attach point names (runtime.USDTProbes reads the notes),
// so argN reads are generated at compile time.
func usdtSites(pid int) func(target, provider, name string) ([]stdlib.USDTSite, error) {
	return func(target, provider, name string) ([]stdlib.USDTSite, error) {
		probes, err := runtime.USDTProbes(target, pid)
		if err != nil && provider == "" && pid > 0 {
			// usdt:PROVIDER:NAME with -p: the target is the provider.
			target, provider = "", target
			probes, err = runtime.USDTProbes("", pid)
		}
		if err != nil {
			return nil, err
		}
		var sites []stdlib.USDTSite
		for _, p := range probes {
			if provider != "" && !match(provider, p.Provider) || !match(name, p.Name) {
				continue
			}
			for _, loc := range p.Locations {
				s := stdlib.USDTSite{PC: loc.PC}
				for _, a := range loc.Args {
					s.Args = append(s.Args, usdtArg(a))
				}
				sites = append(sites, s)
			}
		}
		if len(sites) == 0 {
			return nil, fmt.Errorf("no USDT probe %s:%s in %s", provider, name, target)
		}
		return sites, nil
	}
}

func match(pattern, s string) bool {
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}

func usdtArg(a runtime.USDTArg) stdlib.USDTArg {
	out := stdlib.USDTArg{Size: a.Size, Signed: a.Signed, Value: a.Value, Offset: a.Offset,
		RegOffset: -1, IndexOffset: -1, Scale: a.Scale}
	switch a.Kind {
	case runtime.USDTConst:
		out.Kind = stdlib.USDTConst
	case runtime.USDTReg:
		out.Kind = stdlib.USDTReg
	default:
		out.Kind = stdlib.USDTMem
	}
	switch {
	case a.Reg == "ip":
		out.IPRelative = true
	case a.Reg != "":
		out.RegOffset = a.RegOffset
	}
	if a.Index != "" {
		out.IndexOffset = a.IndexOffset
	}
	return out
}
