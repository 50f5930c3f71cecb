package ktypes

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// IsFuncPattern reports whether a kfunc function name is a wildcard.
func IsFuncPattern(name string) bool { return strings.ContainsAny(name, "*?[") }

// FuncMatches lists the BTF functions a kfunc/kretfunc pattern matches, as
// (module, function) pairs sorted by function then module: module "" or
// "vmlinux" searches vmlinux, another module pattern (a glob) the split BTF
// of the modules it names. Each fentry/fexit program attaches to one BTF id,
// so a wildcard clause compiles to one program per match.
func (r *Sources) FuncMatches(module, pattern string) ([][2]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("bad function pattern %q: %w", pattern, err)
	}
	if _, err := path.Match(module, ""); err != nil {
		return nil, fmt.Errorf("bad module pattern %q: %w", module, err)
	}
	b := r.btf
	b.mu.Lock()
	defer b.mu.Unlock()
	base, err := b.load()
	if err != nil {
		return nil, err
	}
	type src struct {
		name string
		spec *btf.Spec
	}
	var srcs []src
	if module == "" || module == "vmlinux" {
		srcs = append(srcs, src{"", base})
	} else {
		mods := b.loadModules(base)
		for i, m := range mods {
			if ok, _ := path.Match(module, b.modName[i]); ok {
				srcs = append(srcs, src{b.modName[i], m})
			}
		}
	}
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, s := range srcs {
		for t, err := range s.spec.All() {
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", b.describe(), err)
			}
			fn, ok := t.(*btf.Func)
			if !ok || fn.Name == "" {
				continue
			}
			// Split module BTF iterates its base too; keep the module's own.
			if s.name != "" {
				if _, err := base.TypeID(t); err == nil {
					continue
				}
			}
			if m, _ := path.Match(pattern, fn.Name); !m {
				continue
			}
			k := [2]string{s.name, fn.Name}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][1] != out[j][1] {
			return out[i][1] < out[j][1]
		}
		return out[i][0] < out[j][0]
	})
	return out, nil
}
