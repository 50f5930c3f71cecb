package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang/types"
)

// rawValue lets cilium copy per-CPU values without knowing their type.
type rawValue []byte

func (r *rawValue) UnmarshalBinary(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

func (r rawValue) MarshalBinary() ([]byte, error) { return r, nil }

// UserMaps returns the script's maps (MapSpec.User != nil), sorted by name.
func (l *Loaded) UserMaps() []*compiler.MapSpec {
	var out []*compiler.MapSpec
	for _, m := range l.Spec.Maps {
		if m.User != nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].User.Name < out[j].User.Name })
	return out
}

// mapSpecByUserName finds the map implementing the script's map name (or,
// failing that, the MapSpec of that name).
func (l *Loaded) mapSpecByUserName(name string) *compiler.MapSpec {
	for _, m := range l.Spec.Maps {
		if m.User != nil && m.User.Name == name {
			return m
		}
	}
	for _, m := range l.Spec.Maps {
		if m.Name == name {
			return m
		}
	}
	return nil
}

func isPerCPU(t ebpf.MapType) bool {
	switch t {
	case ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUCPUHash:
		return true
	}
	return false
}

// ReadMap snapshots one map, merging per-CPU values.
func (l *Loaded) ReadMap(ms *compiler.MapSpec) (*MapData, error) {
	m := l.Maps[ms.Name]
	if m == nil {
		return nil, fmt.Errorf("read map %s: not loaded", ms.Name)
	}
	md := &MapData{Spec: ms}
	perCPU := isPerCPU(ms.Type)
	ncpu := 1
	if perCPU {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return nil, fmt.Errorf("read map %s: %w", ms.Name, err)
		}
		ncpu = n
	}
	if ok, err := readBatch(m, ms, perCPU, ncpu, md); ok || err != nil {
		if err == nil {
			fromArray(ms, md)
		}
		return md, err
	}
	defer fromArray(ms, md)
	var cur []byte
	next := make([]byte, ms.KeySize)
	first := true
	for {
		var err error
		if first {
			err = m.NextKey(nil, next)
			first = false
		} else {
			err = m.NextKey(cur, next)
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read map %s: %w", ms.Name, err)
		}
		key := append([]byte(nil), next...)
		cur = key
		e := Entry{Key: key}
		if perCPU {
			vals := make([]rawValue, ncpu)
			if err := m.Lookup(key, vals); err != nil {
				if errors.Is(err, ebpf.ErrKeyNotExist) {
					continue // deleted under us
				}
				return nil, fmt.Errorf("read map %s: %w", ms.Name, err)
			}
			e.PerCPU = make([][]byte, ncpu)
			for i := range vals {
				e.PerCPU[i] = vals[i]
			}
			e.Value = mergePerCPU(ms, e.PerCPU)
		} else {
			v := make([]byte, ms.ValueSize)
			if err := m.Lookup(key, v); err != nil {
				if errors.Is(err, ebpf.ErrKeyNotExist) {
					continue
				}
				return nil, fmt.Errorf("read map %s: %w", ms.Name, err)
			}
			e.Value = v
		}
		md.Entries = append(md.Entries, e)
		// Array maps list every index; the ring of NextKey ends at the last.
	}
	return md, nil
}

// fromArray turns the slots of a key-less aggregation kept in a per-CPU
// array into the entries its hash form holds: a zero slot is no entry
// (ZeroIsAbsent), and a bucket array's u32 index becomes the hash form's
// key, a u64 0 (no user key) followed by the u64 bucket index.
func fromArray(ms *compiler.MapSpec, md *MapData) {
	if ms.ZeroIsAbsent {
		md.Entries = dropZero(md.Entries)
	}
	if !ms.BucketIndexKey {
		return
	}
	keys := make([]byte, 16*len(md.Entries))
	for i := range md.Entries {
		e := &md.Entries[i]
		k := keys[i*16 : (i+1)*16 : (i+1)*16]
		if len(e.Key) >= 4 {
			binary.LittleEndian.PutUint64(k[8:], uint64(binary.LittleEndian.Uint32(e.Key)))
		}
		e.Key = k
	}
}

// dropZero removes the entries whose (merged) value is all zero bytes: a
// ZeroIsAbsent map's slots that hold no count.
func dropZero(es []Entry) []Entry {
	out := es[:0]
	for _, e := range es {
		for _, b := range e.Value {
			if b != 0 {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// batchChunk is how many entries one BPF_MAP_LOOKUP_BATCH call reads.
const batchChunk = 4096

// batchBytes bounds one batch's key and value buffers: a map of
// 10,000-byte string keys would otherwise allocate 80 MB a call (tens of
// milliseconds before a clear() or print() even starts).
const batchBytes = 1 << 20

// batchEntries is how many of ms's entries one batch call moves: batchChunk,
// fewer for a small map or large entries, at least 1.
func batchEntries(ms *compiler.MapSpec, ncpu int) int {
	chunk := batchChunk
	if ms.MaxEntries > 0 && int(ms.MaxEntries) < chunk {
		chunk = int(ms.MaxEntries)
	}
	if per := int(ms.KeySize) + int(ms.ValueSize)*ncpu; per > 0 && chunk*per > batchBytes {
		chunk = max(1, batchBytes/per)
	}
	return chunk
}

// readBatch reads a hash map with BPF_MAP_LOOKUP_BATCH, batchChunk
// entries a syscall, where the NextKey walk takes two syscalls per key
// (a 10⁵-key map: seconds at exit). It says false, having read nothing,
// for arrays (the walk lists their every index) and when the kernel
// refuses batch lookups, so ReadMap walks the keys instead.
func readBatch(m *ebpf.Map, ms *compiler.MapSpec, perCPU bool, ncpu int, md *MapData) (bool, error) {
	switch ms.Type {
	case ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash, ebpf.LRUCPUHash:
	case ebpf.PerCPUArray:
		// A bucket array (up to a few thousand slots): one call, not
		// two syscalls a slot.
		if !ms.BucketIndexKey {
			return false, nil
		}
	default:
		return false, nil
	}
	if ms.KeySize == 0 || ms.ValueSize == 0 {
		return false, nil
	}
	chunk := batchEntries(ms, ncpu)
	byteArr := func(n uint32) reflect.Type { return reflect.ArrayOf(int(n), reflect.TypeOf(byte(0))) }
	keys := reflect.MakeSlice(reflect.SliceOf(byteArr(ms.KeySize)), chunk, chunk)
	nv := chunk
	if perCPU {
		nv *= ncpu
	}
	vals := reflect.MakeSlice(reflect.SliceOf(byteArr(ms.ValueSize)), nv, nv)
	keysOut, valsOut := keys.Interface(), vals.Interface()
	ks, vs := int(ms.KeySize), int(ms.ValueSize)
	// The reflect slices' bytes, read in one copy per batch rather than
	// an element (and a reflect call) at a time.
	keyBytes := unsafe.Slice((*byte)(keys.UnsafePointer()), chunk*ks)
	valBytes := unsafe.Slice((*byte)(vals.UnsafePointer()), nv*vs)
	// Only tseries needs each CPU's value to print (its slots carry their
	// own epochs); the other aggregations print from the merged value.
	keepPerCPU := ms.User == nil || ms.User.Value == nil || ms.User.Value.Kind == types.Tseries
	// One pass of batch reads: each batch's keys and (merged) values are
	// packed into one buffer of its own, and the entries, whose number is
	// known only at the end, are made once, of the exact size, pointing
	// into those buffers. Appending 10⁶ entries as they come reallocates
	// (at 1.25× growth) about five times the final slice; counting them
	// first with a second pass of reads cost a fifth of the exit print.
	type batch struct {
		n   int
		buf []byte // n keys, then n values (per CPU: n*ncpu when kept)
	}
	var batches []batch
	total := 0
	var cursor ebpf.MapBatchCursor
	for {
		n, err := m.BatchLookup(&cursor, keysOut, valsOut, nil)
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			// Not supported here (or a bucket larger than a chunk):
			// the key walk reads the map instead.
			return false, nil
		}
		if n > 0 {
			vn := n * vs
			if perCPU && keepPerCPU {
				vn *= ncpu
			}
			buf := make([]byte, n*ks+vn)
			copy(buf, keyBytes[:n*ks])
			out := buf[n*ks:]
			switch {
			case perCPU && !keepPerCPU:
				cpus := make([][]byte, ncpu)
				for i := 0; i < n; i++ {
					for c := 0; c < ncpu; c++ {
						off := (i*ncpu + c) * vs
						cpus[c] = valBytes[off : off+vs]
					}
					mergePerCPUInto(ms, out[i*vs:(i+1)*vs], cpus)
				}
			default:
				copy(out, valBytes[:vn])
			}
			batches = append(batches, batch{n: n, buf: buf})
			total += n
		}
		if err != nil { // ErrKeyNotExist: the last batch
			break
		}
	}
	md.Entries = make([]Entry, total)
	var cpuIdx [][]byte
	if perCPU && keepPerCPU {
		cpuIdx = make([][]byte, total*ncpu)
	}
	j := 0
	for _, b := range batches {
		keyBuf, valBuf := b.buf[:b.n*ks], b.buf[b.n*ks:]
		for i := 0; i < b.n; i++ {
			e := &md.Entries[j]
			e.Key = keyBuf[i*ks : (i+1)*ks : (i+1)*ks]
			if perCPU && keepPerCPU {
				e.PerCPU = cpuIdx[j*ncpu : (j+1)*ncpu : (j+1)*ncpu]
				for c := 0; c < ncpu; c++ {
					off := (i*ncpu + c) * vs
					e.PerCPU[c] = valBuf[off : off+vs : off+vs]
				}
				e.Value = mergePerCPU(ms, e.PerCPU)
			} else {
				e.Value = valBuf[i*vs : (i+1)*vs : (i+1)*vs]
			}
			j++
		}
	}
	return true, nil
}

// mergePerCPU folds per-CPU values into one as compiler/ABI.md says.
func mergePerCPU(ms *compiler.MapSpec, cpus [][]byte) []byte {
	out := make([]byte, ms.ValueSize)
	mergePerCPUInto(ms, out, cpus)
	return out
}

// mergePerCPUInto is mergePerCPU into out (ValueSize zero bytes).
func mergePerCPUInto(ms *compiler.MapSpec, out []byte, cpus [][]byte) {
	kind := types.Invalid
	if ms.User != nil && ms.User.Value != nil {
		kind = ms.User.Value.Kind
	}
	le := binary.LittleEndian
	switch kind {
	case types.Min, types.Max:
		set := false
		var best int64
		for _, v := range cpus {
			if len(v) < 16 || le.Uint64(v[8:16]) == 0 {
				continue
			}
			x := int64(le.Uint64(v[0:8]))
			if !set || (kind == types.Min && x < best) || (kind == types.Max && x > best) {
				best, set = x, true
			}
		}
		if set && len(out) >= 16 {
			le.PutUint64(out[0:8], uint64(best))
			le.PutUint64(out[8:16], 1)
		}
	default:
		// count, sum, hist, lhist, avg and stats (count and sum words):
		// every 8-byte word is summed.
		for _, v := range cpus {
			for off := 0; off+8 <= len(out) && off+8 <= len(v); off += 8 {
				le.PutUint64(out[off:], le.Uint64(out[off:])+le.Uint64(v[off:]))
			}
		}
	}
}

// ClearMap deletes every entry (clear(@m)). Array maps are zeroed.
func (l *Loaded) ClearMap(ms *compiler.MapSpec) error {
	m := l.Maps[ms.Name]
	if m == nil {
		return fmt.Errorf("clear map %s: not loaded", ms.Name)
	}
	if ms.Type == ebpf.Array || ms.Type == ebpf.PerCPUArray {
		return l.ZeroMap(ms)
	}
	if u := ms.User; u != nil && len(u.KeyParts) == 0 && u.Value != nil && u.Value.Kind == types.Count {
		// bpftrace 0.17 keeps a cleared key-less count() as its zero value
		// (`@: 0`; it is an array there). Its other key-less aggregations
		// are hashes: cleared, sum/min/max/avg/stats print nothing at all,
		// as a cleared scalar, hist or tseries does.
		return l.ZeroMap(ms)
	}
	return l.DeleteAll(ms)
}

// DeleteAll removes every entry of a hash map (clear(@m) in bpftrace 0.26,
// which keeps no zero value for key-less aggregations).
func (l *Loaded) DeleteAll(ms *compiler.MapSpec) error {
	m := l.Maps[ms.Name]
	if m == nil {
		return fmt.Errorf("clear map %s: not loaded", ms.Name)
	}
	if ms.Type == ebpf.Array || ms.Type == ebpf.PerCPUArray {
		return l.ZeroMap(ms)
	}
	if deleteBatch(m, ms) {
		return nil
	}
	keys, err := mapKeys(m, ms.KeySize)
	if err != nil {
		return fmt.Errorf("clear map %s: %w", ms.Name, err)
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("clear map %s: %w", ms.Name, err)
		}
	}
	return nil
}

// deleteBatch empties a hash map with BPF_MAP_LOOKUP_AND_DELETE_BATCH,
// batchChunk entries a syscall, where the key walk and one delete a key
// take three syscalls a key (clear() of 10⁶ keys: seconds). It says false
// when the kernel refuses batch operations on it; the key walk then
// deletes what is left.
func deleteBatch(m *ebpf.Map, ms *compiler.MapSpec) bool {
	switch ms.Type {
	case ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash, ebpf.LRUCPUHash:
	default:
		return false
	}
	if ms.KeySize == 0 || ms.ValueSize == 0 {
		return false
	}
	ncpu := 1
	if isPerCPU(ms.Type) {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return false
		}
		ncpu = n
	}
	chunk := batchEntries(ms, ncpu)
	byteArr := func(n uint32) reflect.Type { return reflect.ArrayOf(int(n), reflect.TypeOf(byte(0))) }
	keys := reflect.MakeSlice(reflect.SliceOf(byteArr(ms.KeySize)), chunk, chunk).Interface()
	vals := reflect.MakeSlice(reflect.SliceOf(byteArr(ms.ValueSize)), chunk*ncpu, chunk*ncpu).Interface()
	var cursor ebpf.MapBatchCursor
	for {
		_, err := m.BatchLookupAndDelete(&cursor, keys, vals, nil)
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// ZeroMap sets every value to zero, keeping the keys (zero(@m)).
func (l *Loaded) ZeroMap(ms *compiler.MapSpec) error {
	m := l.Maps[ms.Name]
	if m == nil {
		return fmt.Errorf("zero map %s: not loaded", ms.Name)
	}
	keys, err := mapKeys(m, ms.KeySize)
	if err != nil {
		return fmt.Errorf("zero map %s: %w", ms.Name, err)
	}
	var zero any = make([]byte, ms.ValueSize)
	if isPerCPU(ms.Type) {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		vals := make([]rawValue, n)
		for i := range vals {
			vals[i] = make([]byte, ms.ValueSize)
		}
		zero = vals
	}
	for _, k := range keys {
		if err := m.Update(k, zero, ebpf.UpdateExist); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("zero map %s: %w", ms.Name, err)
		}
	}
	return nil
}

func mapKeys(m *ebpf.Map, keySize uint32) ([][]byte, error) {
	var keys [][]byte
	var cur []byte
	for {
		next := make([]byte, keySize)
		var err error
		if cur == nil {
			err = m.NextKey(nil, next)
		} else {
			err = m.NextKey(cur, next)
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return keys, nil
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, next)
		cur = next
		if len(keys) > 1<<24 {
			return nil, errors.New("map iteration does not end")
		}
	}
}

// counter reads an internal u64 counter map (ARRAY or PERCPU_ARRAY, key 0
// ... MaxEntries-1), summing all slots and CPUs. Missing maps read as 0.
func (l *Loaded) counter(name string) uint64 {
	var ms *compiler.MapSpec
	for _, m := range l.Spec.Maps {
		if m.Name == name && m.User == nil {
			ms = m
		}
	}
	if ms == nil || l.Maps[name] == nil {
		return 0
	}
	md, err := l.ReadMap(ms)
	if err != nil {
		return 0
	}
	var n uint64
	for _, e := range md.Entries {
		if len(e.Value) >= 8 {
			n += binary.LittleEndian.Uint64(e.Value)
		}
	}
	return n
}
