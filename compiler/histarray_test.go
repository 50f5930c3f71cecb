package compiler

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compat"
)

// TestKeylessHistArray: a key-less hist()/lhist() is a PERCPU_ARRAY of its
// bucket slots, keyed by the u32 bucket index and read as the hash form
// (BucketIndexKey, ZeroIsAbsent), with no insert path; it stays a
// PERCPU_HASH when the script calls zero() or len() on it (a zeroed hist
// keeps its buckets, len() counts entries) and when it has keys.
func TestKeylessHistArray(t *testing.T) {
	for _, v := range []compat.Version{compat.V017, compat.V026} {
		k := "@k = hist(2, 3);"
		if v == compat.V017 {
			k = "@k = lhist(2, 0, 4870, 10);" // hist(n, k) is bpftrace 0.20's
		}
		spec := compileScriptAs(t, v, "stdin", `BEGIN { @h = hist(1); `+k+` @l = lhist(5, 0, 100, 10); @n = lhist(7, 100, 500, 100);
			@z = hist(1); zero(@z); @c = hist(1); @len = len(@c); @key[1] = hist(3); }`)
		want := map[string]struct {
			typ      ebpf.MapType
			key, max uint32
			array    bool
		}{
			"m_h":   {ebpf.PerCPUArray, 4, 65, true},
			"m_k":   {ebpf.PerCPUArray, 4, 61<<3 + 1, true},
			"m_l":   {ebpf.PerCPUArray, 4, 12, true},
			"m_n":   {ebpf.PerCPUArray, 4, 6, true},
			"m_z":   {ebpf.PerCPUHash, 16, 4096, false},
			"m_c":   {ebpf.PerCPUHash, 16, 4096, false},
			"m_key": {ebpf.PerCPUHash, 16, 4096, false},
		}
		for _, m := range spec.Maps {
			w, ok := want[m.Name]
			if !ok {
				continue
			}
			delete(want, m.Name)
			if m.Type != w.typ || m.KeySize != w.key || m.MaxEntries != w.max || m.ValueSize != 8 ||
				m.BucketIndexKey != w.array || m.ZeroIsAbsent != w.array {
				t.Errorf("%v: %s = %v key=%d max=%d BucketIndexKey=%v ZeroIsAbsent=%v, want %v key=%d max=%d array=%v",
					v, m.Name, m.Type, m.KeySize, m.MaxEntries, m.BucketIndexKey, m.ZeroIsAbsent, w.typ, w.key, w.max, w.array)
			}
		}
		for n := range want {
			t.Errorf("%v: no map %s", v, n)
		}
	}
	// Only the hash maps have an insert path.
	spec := compileScriptAs(t, compat.V026, "stdin", `BEGIN { @h = hist(1); @l = lhist(5, 0, 100, 10); @key[1] = hist(3); }`)
	updates := 0
	for _, ins := range spec.Programs[0].Insns {
		if ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnMapUpdateElem {
			updates++
		}
	}
	if updates != 1 {
		t.Errorf("%d map updates, want 1 (@key's insert)", updates)
	}
}

// TestKeylessHistArrayOutput: the array form prints what the hash form
// prints for the same events — negative, zero and the largest values,
// lhist's below-min and at-or-above-max buckets, hist(n, k), clear()
// between events, print() with a divisor, text and JSON, in both compat
// modes. The hash form is forced by a zero() the script never runs.
func TestKeylessHistArrayOutput(t *testing.T) {
	events := `@h = hist(-5); @h = hist(0); @h = hist(1); @h = hist(1); @h = hist(1000); @h = hist(0x7fffffffffffffff);
		@l = lhist(-3, 0, 100, 10); @l = lhist(0, 0, 100, 10); @l = lhist(55, 0, 100, 10); @l = lhist(100, 0, 100, 10); @l = lhist(5000, 0, 100, 10);
		@n = lhist(100, 200, 700, 100); @n = lhist(201, 200, 700, 100); @n = lhist(699, 200, 700, 100);
		@c = hist(7); clear(@c); @c = hist(9);
		@e = hist(3); clear(@e);
		@p = hist(20); print(@p, 1, 2); clear(@p); print(@p); @p = hist(40); print(@p);`
	never := `interval:s:3600 {  zero(@h); zero(@l); zero(@n); zero(@c); zero(@e); zero(@p); }`
	for _, mode := range []string{"0.17", "0.26"} {
		ev := events
		if mode == "0.26" { // hist(n, k) (bpftrace 0.20)
			ev += `@k = hist(-1, 2); @k = hist(0, 2); @k = hist(3, 2); @k = hist(100, 2); @k = hist(1 << 62, 2);`
		}
		for _, format := range []string{"text", "json"} {
			arr := gotrace(t, "--compat", mode, "-f", format, "-e", `BEGIN { `+ev+` exit(); }`)
			nv := never
			if mode == "0.26" {
				nv = strings.Replace(nv, "{", "{ zero(@k);", 1)
			}
			hash := gotrace(t, "--compat", mode, "-f", format, "-e", `BEGIN { `+ev+` exit(); } `+nv)
			// The hash form's script has one more probe.
			arr, hash = dropAttached(arr), dropAttached(hash)
			if arr != hash {
				t.Errorf("%s %s: the bucket array prints\n%s\nthe hash prints\n%s", mode, format, arr, hash)
			}
			if format == "text" {
				for _, want := range []string{"(..., 0)               1 |", "[0]                    1 |", "[1]                    2 |",
					"[4194304T, 8388608T)       1 |", "[100, ...)             2 |", "(..., 200)             1 |", "[600, 700)             1 |"} {
					if !strings.Contains(arr, "\n"+want) {
						t.Errorf("%s: no line starting %q in\n%s", mode, want, arr)
					}
				}
				if strings.Contains(arr, "@e:") {
					t.Errorf("%s: a cleared hist prints:\n%s", mode, arr)
				}
			}
		}
	}
}

func dropAttached(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "Attached ") && !strings.HasPrefix(l, "Attaching ") && !strings.Contains(l, `"attached_probes"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
