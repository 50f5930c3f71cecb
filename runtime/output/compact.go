package output

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// The compact path prints a map without building its rows first: a row
// (232 bytes, its key parts decoded, the formatted element kept until the
// map is joined) for each of 10⁶ entries held about 330 MB while a map
// printed. It sorts an index of 24-byte slots (the entry's position and
// its sort value) in the order rows() gives, comparing the keys' raw
// bytes, and builds each row only when it is written.

// slot is one entry (or, for hist/lhist, one user key's first entry) of
// the sorted index: i is its position in the entries, v its sort value
// (count, sum, min, max, integer value or average; hist total).
type slot struct {
	i uint32
	n uint32 // hist/lhist: the user key's entries, from i in order
	v uint64
	// k is a key of one integer part, read once: the sort then compares
	// slots without reaching into the entries.
	k uint64
}

// keyField is one key part the compact path compares from raw bytes: an
// integer of size bytes (compared as bpftrace's sort_by_key does, the
// sign-extended value as unsigned) or a string of size bytes up to its
// first NUL.
type keyField struct {
	off, size int
	signed    bool
	str       bool
}

// compact is a map sorted by the compact path.
type compact struct {
	n   int
	row func(i int) (*row, error)
}

// compactKey says how the compact path compares info's keys, or false
// when some part compares by its text (stacks, symbols, tuples and
// records as one part ...) and only the decoded rows can sort them.
func compactKey(info *lang.MapInfo) ([]keyField, bool) {
	if info.Key == nil {
		return nil, true
	}
	field := func(t *types.Type, off int) (keyField, bool) {
		switch t.Kind {
		case types.String:
			return keyField{off: off, size: t.Size, str: true}, t.Size > 0
		case types.Int, types.Bool, types.Enum, types.Kaddr, types.Ksym,
			types.Username, types.Strerror, types.CgroupPath:
			size := t.Size
			if size <= 0 {
				size = 8
			}
			switch size {
			case 1, 2, 4, 8:
				return keyField{off: off, size: size, signed: t.Signed}, true
			}
		}
		return keyField{}, false
	}
	if len(info.KeyParts) > 1 && info.Key.Kind == types.Tuple {
		fs := make([]keyField, 0, len(info.Key.Fields))
		for _, f := range info.Key.Fields {
			if f.BitWidth > 0 || f.Offset < 0 {
				return nil, false
			}
			kf, ok := field(f.Type, f.Offset)
			if !ok {
				return nil, false
			}
			fs = append(fs, kf)
		}
		return fs, true
	}
	kf, ok := field(info.Key, 0)
	if !ok {
		return nil, false
	}
	return []keyField{kf}, true
}

// keySize is the bytes the key fields read.
func keySize(fs []keyField) int {
	n := 0
	for _, f := range fs {
		n = max(n, f.off+f.size)
	}
	return n
}

// compareKeys is sortByKey's order of two raw keys.
func compareKeys(fs []keyField, a, b []byte) int {
	for _, f := range fs {
		x, y := a[f.off:f.off+f.size], b[f.off:f.off+f.size]
		if f.str {
			if i := bytes.IndexByte(x, 0); i >= 0 {
				x = x[:i]
			}
			if i := bytes.IndexByte(y, 0); i >= 0 {
				y = y[:i]
			}
			if c := bytes.Compare(x, y); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(readInt(x, f.size, f.signed), readInt(y, f.size, f.signed)); c != 0 {
			return c
		}
	}
	return 0
}

// compactRows sorts m's entries by the compact path, or says false for
// the maps it leaves to rows() (tseries, keys compared by their text,
// entries that do not decode: rows() reports their error).
func (p *Printer) compactRows(m MapData) (compact, bool) {
	vt := m.Info.Value
	switch vt.Kind {
	case types.Tseries:
		return compact{}, false
	case types.Hist, types.Lhist:
		return p.compactHist(m)
	}
	if len(m.Entries) >= 1<<32-1 {
		return compact{}, false
	}
	byRaw := vt.Kind == types.Avg || vt.Kind == types.Stats
	fs, ok := compactKey(m.Info)
	if !ok && !byRaw {
		return compact{}, false
	}
	need := keySize(fs)
	if m.Info.Key != nil {
		need = max(need, m.Info.Key.Size)
	}
	intKey := ok && len(fs) == 1 && !fs[0].str
	idx := make([]slot, len(m.Entries))
	for i, e := range m.Entries {
		if len(e.Key) < need {
			return compact{}, false
		}
		if !ok {
			// Avg/stats sort by raw bytes; their keys must still decode.
			if _, err := keyParts(m.Info, e.Key); err != nil {
				return compact{}, false
			}
		}
		var v uint64
		switch vt.Kind {
		case types.Count, types.Sum:
			u, err := sumU64(e)
			if err != nil {
				return compact{}, false
			}
			v = u
		case types.Min, types.Max:
			s, err := minMax(e, vt.Kind == types.Min)
			if err != nil {
				return compact{}, false
			}
			v = uint64(s)
		case types.Avg, types.Stats:
			c, t, err := sumPairs(e)
			if err != nil {
				return compact{}, false
			}
			v = uint64(avgOf(row{count: c, total: t}))
		default:
			val := e.Value
			if val == nil && len(e.PerCPU) > 0 {
				val = e.PerCPU[0]
			}
			if !isIntValue(vt) {
				// Sorted by key only; the value must decode when printed.
				if _, err := Decode(vt, val); err != nil {
					return compact{}, false
				}
				break
			}
			d, err := Decode(vt, val)
			if err != nil {
				return compact{}, false
			}
			v = d.Bits
		}
		idx[i] = slot{i: uint32(i), v: v}
		if intKey {
			idx[i].k = readInt(e.Key[fs[0].off:], fs[0].size, fs[0].signed)
		}
	}
	es := m.Entries
	byIndex := func(a, b slot) int { return cmp.Compare(a.i, b.i) }
	byKey := func(a, b slot) int { return compareKeys(fs, es[a.i].Key, es[b.i].Key) }
	if intKey {
		byKey = func(a, b slot) int { return cmp.Compare(a.k, b.k) }
	}
	var order func(a, b slot) int
	switch {
	case byRaw:
		order = func(a, b slot) int {
			if c := cmp.Compare(int64(a.v), int64(b.v)); c != 0 {
				return c
			}
			if c := bytes.Compare(es[a.i].Key, es[b.i].Key); c != 0 {
				return c
			}
			return byIndex(a, b)
		}
	case vt.Kind == types.Count || (vt.Kind == types.Sum && !vt.Signed) || (isIntValue(vt) && !vt.Signed):
		order = func(a, b slot) int {
			if c := cmp.Compare(a.v, b.v); c != 0 {
				return c
			}
			if c := byKey(a, b); c != 0 {
				return c
			}
			return byIndex(a, b)
		}
	case vt.Kind == types.Sum || vt.Kind == types.Min || vt.Kind == types.Max || isIntValue(vt):
		order = func(a, b slot) int {
			if c := cmp.Compare(int64(a.v), int64(b.v)); c != 0 {
				return c
			}
			if c := byKey(a, b); c != 0 {
				return c
			}
			return byIndex(a, b)
		}
	default:
		order = func(a, b slot) int {
			if c := byKey(a, b); c != 0 {
				return c
			}
			return byIndex(a, b)
		}
	}
	slices.SortFunc(idx, order)
	var r row
	if intKey && m.Info.Key.Kind == types.Int && (vt.Kind == types.Count || vt.Kind == types.Sum || vt.Kind == types.Min || vt.Kind == types.Max) {
		// The slot holds the whole row (the integer key, the merged
		// value): rows are made without reaching into the entries, which
		// lie in memory in the kernel's hash order, not the sorted one
		// (three cache misses a row, a third of printing 10⁶ keys).
		kt, agg := m.Info.Key, vt.Kind == types.Count || vt.Kind == types.Sum
		return compact{n: len(idx), row: func(i int) (*row, error) {
			s := idx[i]
			r = row{key: []Value{{Type: kt, Bits: s.k}}, scalar: int64(s.v)} // as entryRow makes it
			if agg {
				r.uscalar = s.v
			}
			return &r, nil
		}}, true
	}
	return compact{n: len(idx), row: func(i int) (*row, error) {
		var err error
		r, err = entryRow(m.Info, es[idx[i].i])
		return &r, err
	}}, true
}

// compactHist sorts a hist/lhist map's entries by user key bytes (each
// key's buckets then lie together), and its user keys by total count, as
// rows() does; the buckets of a key are summed when it prints.
func (p *Printer) compactHist(m MapData) (compact, bool) {
	vt := m.Info.Value
	nb := histBuckets(vt)
	if nb <= 0 || len(m.Entries) >= 1<<32-1 {
		return compact{}, false
	}
	es := m.Entries
	idx := make([]uint32, len(es))
	for i, e := range es {
		if len(e.Key) < 8 || binary.LittleEndian.Uint64(e.Key[len(e.Key)-8:]) >= uint64(nb) {
			return compact{}, false
		}
		if _, err := sumU64(e); err != nil {
			return compact{}, false
		}
		idx[i] = uint32(i)
	}
	uk := func(i uint32) []byte { k := es[i].Key; return k[:len(k)-8] }
	slices.SortFunc(idx, func(a, b uint32) int {
		if c := bytes.Compare(uk(a), uk(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var groups []slot
	for j := 0; j < len(idx); {
		k := j + 1
		for k < len(idx) && bytes.Equal(uk(idx[k]), uk(idx[j])) {
			k++
		}
		if _, err := keyParts(m.Info, uk(idx[j])); err != nil {
			return compact{}, false
		}
		var total uint64
		for _, i := range idx[j:k] {
			n, _ := sumU64(es[i])
			total += n
		}
		groups = append(groups, slot{i: uint32(j), n: uint32(k - j), v: total})
		j = k
	}
	// Equal totals keep the key order (groups are in it).
	slices.SortStableFunc(groups, func(a, b slot) int { return cmp.Compare(a.v, b.v) })
	r := row{buckets: make([]uint64, nb)}
	return compact{n: len(groups), row: func(gi int) (*row, error) {
		g := groups[gi]
		first := es[idx[g.i]]
		parts, err := keyParts(m.Info, first.Key[:len(first.Key)-8])
		if err != nil {
			return nil, err
		}
		clear(r.buckets)
		r.key, r.rawKey, r.uscalar = parts, first.Key[:len(first.Key)-8], g.v
		for _, i := range idx[g.i : g.i+g.n] {
			e := es[i]
			n, _ := sumU64(e)
			r.buckets[binary.LittleEndian.Uint64(e.Key[len(e.Key)-8:])] += n
		}
		return &r, nil
	}}, true
}
