package compiler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/internal/testkit"
)

// load creates the spec's maps and loads every program through the kernel's
// verifier, resolving map references by name.
func load(t *testing.T, spec *Spec) *ebpf.Collection {
	t.Helper()
	testkit.Require(t, testkit.Root, testkit.BPF)
	cs := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}}
	for _, m := range spec.Maps {
		cs.Maps[m.Name] = &ebpf.MapSpec{Name: m.Name, Type: m.Type, KeySize: m.KeySize,
			ValueSize: m.ValueSize, MaxEntries: m.MaxEntries, Flags: m.Flags}
	}
	for _, p := range spec.Programs {
		cs.Programs[p.Name] = &ebpf.ProgramSpec{Name: p.Name, Type: p.Type, AttachType: p.AttachType,
			AttachTo: p.AttachTo, Instructions: p.Insns, License: p.License}
	}
	coll, err := ebpf.NewCollection(cs)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("verifier rejected the program: %+v\n%s", ve, spec.Dump())
		}
		t.Fatalf("load: %v\n%s", err, spec.Dump())
	}
	t.Cleanup(func() { coll.Close() })
	return coll
}

// run executes a BEGIN-style raw tracepoint program once with the kernel's
// test-run call.
func run(t *testing.T, coll *ebpf.Collection, name string) {
	t.Helper()
	p := coll.Programs[name]
	if p == nil {
		t.Fatalf("no program %s", name)
	}
	if _, err := p.Run(&ebpf.RunOptions{}); err != nil {
		t.Fatalf("test run %s: %v", name, err)
	}
}

// lookupU64 reads an 8-byte value (summed over CPUs for per-CPU maps).
func lookupU64(t *testing.T, coll *ebpf.Collection, spec *Spec, mapName string, key []byte) (uint64, bool) {
	t.Helper()
	m := coll.Maps[mapName]
	if m == nil {
		t.Fatalf("no map %s", mapName)
	}
	if m.Type() == ebpf.PerCPUHash || m.Type() == ebpf.PerCPUArray {
		var vals [][]byte
		if err := m.Lookup(key, &vals); err != nil {
			return 0, false
		}
		var sum uint64
		for _, v := range vals {
			sum += binary.LittleEndian.Uint64(v)
		}
		return sum, true
	}
	v := make([]byte, m.ValueSize())
	if err := m.Lookup(key, &v); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(v), true
}

func u64key(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func ident(s string) string { return fmt.Sprintf("%q", s) }
