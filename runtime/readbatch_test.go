package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// TestReadMapBatch: ReadMap reads hash maps with batch lookups, chunk
// after chunk, and gets every entry with its per-CPU values merged — the
// same entries the key walk (readBatch declining) finds.
func TestReadMapBatch(t *testing.T) {
	requireBPF(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	// A count() map keeps only the merged value; an internal map (no
	// User) every CPU's.
	count := &lang.MapInfo{Name: "@t", Value: &types.Type{Kind: types.Count, Size: 8}}
	for _, tc := range []struct {
		typ  ebpf.MapType
		user *lang.MapInfo
	}{{ebpf.Hash, nil}, {ebpf.PerCPUHash, nil}, {ebpf.PerCPUHash, count}} {
		typ := tc.typ
		n := 3*batchChunk + 17 // several chunks and a partial one
		ms := &compiler.MapSpec{Name: "m_t", Type: typ, KeySize: 8, ValueSize: 8, MaxEntries: uint32(n), User: tc.user}
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: typ, KeySize: 8, ValueSize: 8, MaxEntries: uint32(n)})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for k := uint64(0); k < uint64(n); k++ {
			var err error
			if typ == ebpf.PerCPUHash {
				vals := make([]uint64, ncpu)
				for c := range vals {
					vals[c] = k + uint64(c) // merged: ncpu*k + 0+1+…+(ncpu-1)
				}
				err = m.Put(k, vals)
			} else {
				err = m.Put(k, k*3)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		l := &Loaded{Spec: &compiler.Spec{Maps: []*compiler.MapSpec{ms}}, Maps: map[string]*ebpf.Map{ms.Name: m}}
		md, err := l.ReadMap(ms)
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Entries) != n {
			t.Fatalf("%v: %d entries, want %d", typ, len(md.Entries), n)
		}
		seen := map[uint64]bool{}
		for _, e := range md.Entries {
			k, v := binary.LittleEndian.Uint64(e.Key), binary.LittleEndian.Uint64(e.Value)
			want := k * 3
			if typ == ebpf.PerCPUHash {
				want = uint64(ncpu)*k + uint64(ncpu*(ncpu-1)/2)
				if wantCPU := map[bool]int{true: 0, false: ncpu}[tc.user != nil]; len(e.PerCPU) != wantCPU {
					t.Fatalf("key %d: %d per-CPU values, want %d", k, len(e.PerCPU), wantCPU)
				}
			}
			if v != want || seen[k] {
				t.Fatalf("%v: key %d = %d (seen before: %v), want %d once", typ, k, v, seen[k], want)
			}
			seen[k] = true
		}
	}
}

// TestReadMapZeroIsAbsent: a ZeroIsAbsent map (a key-less count() in
// 0.26 mode, kept in a per-CPU array) reads as empty while its slot is
// zero on every CPU, and as its one entry once any CPU counted.
func TestReadMapZeroIsAbsent(t *testing.T) {
	requireBPF(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ms := &compiler.MapSpec{Name: "m_", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1, ZeroIsAbsent: true}
	l := &Loaded{Spec: &compiler.Spec{Maps: []*compiler.MapSpec{ms}}, Maps: map[string]*ebpf.Map{ms.Name: m}}
	md, err := l.ReadMap(ms)
	if err != nil || len(md.Entries) != 0 {
		t.Fatalf("zero slot: %d entries (%v), want none", len(md.Entries), err)
	}
	vals := make([]uint64, ncpu)
	vals[ncpu-1] = 5
	if err := m.Put(uint32(0), vals); err != nil {
		t.Fatal(err)
	}
	md, err = l.ReadMap(ms)
	if err != nil || len(md.Entries) != 1 || binary.LittleEndian.Uint64(md.Entries[0].Value) != 5 {
		t.Fatalf("counted slot: %+v (%v), want one entry of 5", md, err)
	}
	ms.ZeroIsAbsent = false
	if err := m.Put(uint32(0), make([]uint64, ncpu)); err != nil {
		t.Fatal(err)
	}
	if md, err = l.ReadMap(ms); err != nil || len(md.Entries) != 1 {
		t.Fatalf("0.17 array: %d entries (%v), want its slot", len(md.Entries), err)
	}
}

// TestReadMapBucketArray: a key-less hist kept in a per-CPU array of its
// buckets (BucketIndexKey) reads as the entries of its hash form, with the
// same per-CPU values in the same buckets: the hit buckets only, each
// keyed (u64 0, u64 bucket), the CPUs merged; clear() empties it.
func TestReadMapBucketArray(t *testing.T) {
	requireBPF(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	const nb = 65
	arr, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: nb})
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Close()
	hash, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUHash, KeySize: 16, ValueSize: 8, MaxEntries: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer hash.Close()
	user := &lang.MapInfo{Name: "@h", Value: types.Agg(types.Hist, false)}
	as := &compiler.MapSpec{Name: "m_h", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: nb, PerCPU: true, User: user, ZeroIsAbsent: true, BucketIndexKey: true}
	hs := &compiler.MapSpec{Name: "m_hh", Type: ebpf.PerCPUHash, KeySize: 16, ValueSize: 8, MaxEntries: 4096, PerCPU: true, User: user}
	l := &Loaded{Spec: &compiler.Spec{Maps: []*compiler.MapSpec{as, hs}}, Maps: map[string]*ebpf.Map{as.Name: arr, hs.Name: hash}}
	// Buckets 0 (< 0), 1 (0), 2 ([1]), 40 and the last, hit on various CPUs.
	for i, b := range []uint32{0, 1, 2, 40, nb - 1} {
		vals := make([]uint64, ncpu)
		vals[i%ncpu] = uint64(i + 1)
		vals[ncpu-1] += 10
		key := make([]byte, 16)
		binary.LittleEndian.PutUint64(key[8:], uint64(b))
		if err := arr.Put(b, vals); err != nil {
			t.Fatal(err)
		}
		if err := hash.Put(key, vals); err != nil {
			t.Fatal(err)
		}
	}
	read := func(ms *compiler.MapSpec) map[string]string {
		md, err := l.ReadMap(ms)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range md.Entries {
			out[fmt.Sprintf("%x", e.Key)] = fmt.Sprintf("%x %x", e.Value, e.PerCPU)
		}
		return out
	}
	got, want := read(as), read(hs)
	if len(want) != 5 || !reflect.DeepEqual(got, want) {
		t.Fatalf("bucket array reads\n%v\nhash reads\n%v", got, want)
	}
	if err := l.ClearMap(as); err != nil {
		t.Fatal(err)
	}
	if got := read(as); len(got) != 0 {
		t.Errorf("cleared bucket array reads %v, want nothing", got)
	}
}

// TestDeleteAllBatch: clear() of a hash map of several batches deletes
// every entry (BPF_MAP_LOOKUP_AND_DELETE_BATCH, the key walk as fallback).
func TestDeleteAllBatch(t *testing.T) {
	requireBPF(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []ebpf.MapType{ebpf.Hash, ebpf.PerCPUHash} {
		n := 2*batchChunk + 5
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: typ, KeySize: 8, ValueSize: 8, MaxEntries: uint32(n)})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for k := uint64(0); k < uint64(n); k++ {
			var v any = k
			if typ == ebpf.PerCPUHash {
				v = make([]uint64, ncpu)
			}
			if err := m.Put(k, v); err != nil {
				t.Fatal(err)
			}
		}
		ms := &compiler.MapSpec{Name: "m_d", Type: typ, KeySize: 8, ValueSize: 8, MaxEntries: uint32(n)}
		l := &Loaded{Spec: &compiler.Spec{Maps: []*compiler.MapSpec{ms}}, Maps: map[string]*ebpf.Map{ms.Name: m}}
		if err := l.DeleteAll(ms); err != nil {
			t.Fatal(err)
		}
		var k uint64
		if err := m.NextKey(nil, &k); !errors.Is(err, ebpf.ErrKeyNotExist) {
			t.Errorf("%v: a key is left after DeleteAll (%v)", typ, err)
		}
	}
}
