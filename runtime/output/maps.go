package output

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
)

// Entry is one raw map entry as read from the kernel: Key per ABI.md (for
// hist/lhist maps the user key followed by the u64 bucket index), and the
// value — PerCPU holds one value per possible CPU for per-CPU maps, Value
// the single value otherwise.
type Entry struct {
	Key    []byte
	Value  []byte
	PerCPU [][]byte
}

// MapData is one map to print: its declaration and its raw entries. Top and
// Div are print(@m, top, div)'s arguments (0 means all / no division).
type MapData struct {
	Info    *lang.MapInfo
	Entries []Entry
	Top     int
	Div     int
}

// ExitMaps prints the maps as bpftrace does when the script ends: two
// newlines, then every map in name order.
// With FlameGraph set, the flame graph is written after the maps.
func (p *Printer) ExitMaps(maps []MapData) error {
	if err := p.exitMaps(maps); err != nil {
		return err
	}
	if p.FlameGraph != "" {
		return p.WriteFlameGraphFile(p.FlameGraph, maps)
	}
	return nil
}

func (p *Printer) exitMaps(maps []MapData) error {
	if p.format == Folded {
		return p.AllMaps(maps) // folded lines only: no blank lines for tools to skip
	}
	if p.ExitGap != nil {
		if _, err := io.WriteString(p.ExitGap, "\n\n"); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	} else if err := p.write("\n\n"); err != nil {
		return err
	}
	return p.AllMaps(maps)
}

// AllMaps prints every map, sorted by name (bpftrace 0.17's SIGUSR1 dump;
// ExitMaps is this after two blank lines).
func (p *Printer) AllMaps(maps []MapData) error {
	sorted := append([]MapData(nil), maps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Info.Name < sorted[j].Info.Name })
	for _, m := range sorted {
		if err := p.Map(m); err != nil {
			return err
		}
	}
	return nil
}

// row is one printable element of a map: its user key and merged value.
type row struct {
	rawKey []byte
	key    []Value // the key's parts
	// scalar is the merged integer of count/sum/min/max/int maps; for avg and
	// stats the average; for hist/lhist the total count (sort key).
	scalar  int64
	uscalar uint64
	count   int64 // avg/stats
	total   int64
	buckets []uint64  // hist/lhist
	value   Value     // plain values
	series  []tsPoint // tseries: the intervals with a value, by epoch
	latest  uint64    // tseries: the map's latest epoch
}

// noCompact turns the compact path off (tests compare the two paths).
var noCompact bool

// Map prints one map (print(@m) or at exit).
func (p *Printer) Map(m MapData) error {
	if m.Info == nil || m.Info.Value == nil {
		return fmt.Errorf("print map: no map type")
	}
	if p.format == Folded {
		return p.foldedMap(m)
	}
	// A stack's text is made once per map printed: sorting by key and
	// printing the rows both need it, and each making is a stack-map read
	// and a symbolization of every frame.
	p.stacks = newStackMemo()
	defer func() { p.stacks = nil }()
	// The compact path (compact.go) sorts a small index over the entries
	// and builds each row only as it prints; the maps it does not take
	// (tseries, keys compared by their text) build every row first.
	if c, ok := p.compactRows(m); ok && !noCompact {
		return p.printRows(m, c.n, c.row)
	}
	rows, err := p.rows(m)
	if err != nil {
		return fmt.Errorf("print map %s: %w", m.Info.Name, err)
	}
	return p.printRows(m, len(rows), func(i int) (*row, error) { return &rows[i], nil })
}

// printRows prints a map's total rows in order, at(i) being row i, each
// formatted and written as it comes (in chunks) rather than joined first.
func (p *Printer) printRows(m MapData, total int, at func(i int) (*row, error)) error {
	vt := m.Info.Value
	div := int64(m.Div)
	if div <= 0 {
		div = 1
	}
	top := m.Top
	if vt.Kind == types.Stats {
		top = 0 // bpftrace ignores top and div for stats()
		div = 1
	}
	start := 0
	if top > 0 && total > top {
		start = total - top
	}
	if p.format == JSON {
		return p.jsonMap(m, start, total, at, div)
	}
	// bpftrace joins values that end in their own newline (stacks) — and,
	// by a quirk, ksym/usym/inet values — with nothing.
	delim, end := "\n", "\n"
	switch vt.Kind {
	case types.Avg, types.Stats:
		end = "\n\n"
	case types.Stack, types.Ksym, types.Usym, types.Inet:
		delim = ""
	}
	w := p.chunks()
	for i := start; i < total; i++ {
		r, err := at(i)
		if err != nil {
			return fmt.Errorf("print map %s: %w", m.Info.Name, err)
		}
		if i > start {
			w.add(delim)
		}
		w.add(m.Info.Name)
		p.addKey(w, m.Info, r.key)
		switch vt.Kind {
		case types.Hist, types.Lhist:
			if p.Compat.HistHeaderSpace() {
				w.add(": \n") // bpftrace 0.17
			} else {
				w.add(":\n")
			}
			w.add(p.histText(vt, r.buckets, uint64(div)))
		case types.Tseries:
			w.add(":\n")
			w.add(p.tseriesText(vt, *r))
		case types.Stats:
			w.add(fmt.Sprintf(": count %d, average %d, total %d", r.count, avgOf(*r), r.total))
		case types.Avg:
			w.add(": " + strconv.FormatInt(avgOf(*r)/div, 10))
		default:
			w.add(": ")
			w.add(p.scalarText(vt, *r, div))
		}
		if err := w.flushIfFull(); err != nil {
			return err
		}
	}
	w.add(end)
	return w.flush()
}

func avgOf(r row) int64 {
	if r.count == 0 {
		return 0
	}
	return r.total / r.count
}

func (p *Printer) scalarText(vt *types.Type, r row, div int64) string {
	switch vt.Kind {
	case types.Count:
		return strconv.FormatUint(r.uscalar/uint64(div), 10)
	case types.Sum, types.Min, types.Max:
		if vt.Kind == types.Sum && !vt.Signed {
			return strconv.FormatUint(r.uscalar/uint64(div), 10)
		}
		return strconv.FormatInt(r.scalar/div, 10)
	}
	if isIntValue(vt) && div != 1 {
		if vt.Signed {
			return strconv.FormatInt(r.value.Int()/div, 10)
		}
		return strconv.FormatUint(r.value.Bits/uint64(div), 10)
	}
	return p.Text(r.value)
}

func isIntValue(t *types.Type) bool {
	switch t.Kind {
	case types.Int, types.Bool, types.Enum, types.Pointer, types.Kaddr:
		return true
	}
	return false
}

// keyParts decodes a map's user key into its parts.
func keyParts(info *lang.MapInfo, key []byte) ([]Value, error) {
	if info.Key == nil {
		return nil, nil
	}
	if len(info.KeyParts) > 1 && info.Key.Kind == types.Tuple {
		if len(key) < info.Key.Size {
			return nil, fmt.Errorf("key of %d bytes, want %d", len(key), info.Key.Size)
		}
		parts := make([]Value, len(info.Key.Fields))
		for i, f := range info.Key.Fields {
			v, err := Decode(f.Type, key[f.Offset:])
			if err != nil {
				return nil, fmt.Errorf("key part %d: %w", i+1, err)
			}
			parts[i] = v
		}
		return parts, nil
	}
	v, err := Decode(info.Key, key)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	return []Value{v}, nil
}

// addKey adds the key's text to w: "[part, part]" (stack frames indented
// by 4), nothing for a map without keys; a stack part's lines one by one
// while a map prints (none of its text joined first).
func (p *Printer) addKey(w *chunkWriter, info *lang.MapInfo, parts []Value) {
	if info.Key == nil {
		return
	}
	if len(parts) == 1 && parts[0].Kind() == types.Tuple && p.Compat.FlatTupleKeys() &&
		!(len(parts[0].Names) > 0 && parts[0].Names[0] != "") {
		// bpftrace 0.26: @[(1, 2)] is @[1, 2] (a record stays whole).
		parts = parts[0].Elems
	}
	w.add("[")
	for i, v := range parts {
		if i > 0 {
			w.add(", ")
		}
		if v.Kind() == types.Stack {
			p.emitStack(v, 4, w.add)
			continue
		}
		w.add(p.keyPartText(v))
	}
	w.add("]")
}

// keyPartText is a key part's text: records (also inside arrays) print
// compactly in keys, {.m=2,.n=3}, as bpftrace 0.17 does (0.26 prints
// them as values, { .m = 2, .n = 3 }).
func (p *Printer) keyPartText(v Value) string {
	switch v.Kind() {
	case types.Record:
		if !p.Compat.CompactRecordKeys() {
			return p.text(v, 4)
		}
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = "." + v.Names[i] + "=" + p.keyPartText(e)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case types.Array:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = p.keyPartText(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return p.text(p.keyInt(v), 4)
}

// keyInt: in bpftrace 0.17 a 64-bit unsigned integer key part prints as
// signed.
func (p *Printer) keyInt(v Value) Value {
	if p.Compat.UnsignedKeysSigned() && v.Kind() == types.Int && !v.Type.Signed && v.Type.Size == 8 {
		t := *v.Type
		t.Signed = true
		v.Type = &t
	}
	return v
}

func (p *Printer) jsonKey(parts []Value) string {
	s := make([]string, len(parts))
	for i, v := range parts {
		s[i] = p.text(p.keyInt(v), 4)
	}
	return `"` + jsonEscape(strings.Join(s, ",")) + `"`
}

func (p *Printer) jsonMap(m MapData, start, total int, at func(i int) (*row, error), div int64) error {
	if total == 0 {
		return nil // bpftrace prints nothing for an empty map in JSON
	}
	vt := m.Info.Value
	typ := "map"
	switch vt.Kind {
	case types.Hist, types.Lhist:
		typ = "hist"
	case types.Tseries:
		typ = "tseries"
	case types.Avg, types.Stats:
		typ = "stats"
	}
	keyed := m.Info.Key != nil
	w := p.chunks()
	w.add(`{"type": "` + typ + `", "data": {"` + jsonEscape(m.Info.Name) + `": `)
	if keyed {
		w.add("{")
	}
	for i := start; i < total; i++ {
		r, err := at(i)
		if err != nil {
			return fmt.Errorf("print map %s: %w", m.Info.Name, err)
		}
		var val string
		switch vt.Kind {
		case types.Hist, types.Lhist:
			val = histJSON(vt, r.buckets, uint64(div))
		case types.Tseries:
			val = p.tseriesJSON(vt, *r)
		case types.Stats:
			val = fmt.Sprintf(`{"count": %d, "average": %d, "total": %d}`, r.count, avgOf(*r), r.total)
		case types.Avg:
			val = strconv.FormatInt(avgOf(*r)/div, 10)
		case types.Count, types.Sum, types.Min, types.Max:
			val = p.scalarText(vt, *r, div)
		default:
			if isIntValue(vt) && (div != 1 || !p.Compat.JSONValid()) {
				val = p.scalarText(vt, *r, div)
			} else {
				val = p.JSONText(r.value)
			}
		}
		if i > start {
			w.add(", ")
		}
		if keyed {
			w.add(p.jsonKey(r.key))
			w.add(": ")
		}
		w.add(val)
		if err := w.flushIfFull(); err != nil {
			return err
		}
	}
	if keyed {
		w.add("}")
	}
	w.add("}}\n")
	return w.flush()
}

// rows merges per-CPU values, groups hist buckets by user key and sorts the
// rows as bpftrace: by value (count, sum, min, max, integers), by average
// (avg, stats), by total count (hist, lhist), else by key.
func (p *Printer) rows(m MapData) ([]row, error) {
	vt := m.Info.Value
	var rows []row
	switch vt.Kind {
	case types.Tseries:
		return p.tseriesRows(m)
	case types.Hist, types.Lhist:
		byKey := map[string]*row{}
		nb := histBuckets(vt)
		if nb <= 0 {
			return nil, fmt.Errorf("lhist step %d", vt.Lhist[2])
		}
		for _, e := range m.Entries {
			if len(e.Key) < 8 {
				return nil, fmt.Errorf("hist key of %d bytes has no bucket index", len(e.Key))
			}
			uk := e.Key[:len(e.Key)-8]
			b := binary.LittleEndian.Uint64(e.Key[len(e.Key)-8:])
			if b >= uint64(nb) {
				return nil, fmt.Errorf("bucket index %d out of range (%d buckets)", b, nb)
			}
			r := byKey[string(uk)]
			if r == nil {
				parts, err := keyParts(m.Info, uk)
				if err != nil {
					return nil, err
				}
				r = &row{rawKey: append([]byte(nil), uk...), key: parts, buckets: make([]uint64, nb)}
				byKey[string(uk)] = r
			}
			n, err := sumU64(e)
			if err != nil {
				return nil, err
			}
			r.buckets[b] += n
		}
		for _, r := range byKey {
			for _, n := range r.buckets {
				r.uscalar += n
			}
			rows = append(rows, *r)
		}
		// bpftrace keeps hist rows in a std::map (key bytes order), then
		// sorts by total; for small maps that sort is stable.
		stableSort(rows, func(a, b *row) bool { return bytes.Compare(a.rawKey, b.rawKey) < 0 })
		stableSort(rows, func(a, b *row) bool { return a.uscalar < b.uscalar })
		return rows, nil
	}
	rows = make([]row, 0, len(m.Entries))
	for _, e := range m.Entries {
		r, err := entryRow(m.Info, e)
		if err != nil {
			return nil, err
		}
		r.rawKey = append([]byte(nil), e.Key...)
		rows = append(rows, r)
	}
	switch {
	case vt.Kind == types.Avg || vt.Kind == types.Stats:
		stableSort(rows, func(a, b *row) bool { return bytes.Compare(a.rawKey, b.rawKey) < 0 })
		stableSort(rows, func(a, b *row) bool { return a.scalar < b.scalar })
	case vt.Kind == types.Count || (vt.Kind == types.Sum && !vt.Signed) || (isIntValue(vt) && !vt.Signed):
		p.sortByKey(rows, func(a, b *row) int { return cmp.Compare(a.uscalar, b.uscalar) })
	case vt.Kind == types.Sum || vt.Kind == types.Min || vt.Kind == types.Max || isIntValue(vt):
		p.sortByKey(rows, func(a, b *row) int { return cmp.Compare(a.scalar, b.scalar) })
	default:
		p.sortByKey(rows, nil)
	}
	return rows, nil
}

// histBuckets is the number of buckets of a hist or lhist map's user
// key; 0 for an lhist without a positive step.
func histBuckets(vt *types.Type) int {
	if vt.Kind == types.Lhist {
		step := vt.Lhist[2]
		if step <= 0 {
			return 0
		}
		return int((vt.Lhist[1]-vt.Lhist[0])/step) + 2
	}
	if k := int(vt.Lhist[0]); k > 0 {
		return (64-k)<<k + 1 // hist(n, k): 2^k per power of 2
	}
	return 65 // log2 buckets: <0, 0, then 2^0 .. 2^62
}

// entryRow is the row of one entry of a map that is not a hist, lhist
// or tseries: its key parts and merged value (rawKey is the entry's key,
// not a copy).
func entryRow(info *lang.MapInfo, e Entry) (row, error) {
	vt := info.Value
	parts, err := keyParts(info, e.Key)
	if err != nil {
		return row{}, err
	}
	r := row{rawKey: e.Key, key: parts}
	switch vt.Kind {
	case types.Count, types.Sum:
		u, err := sumU64(e)
		if err != nil {
			return row{}, err
		}
		r.uscalar, r.scalar = u, int64(u)
	case types.Min, types.Max:
		r.scalar, err = minMax(e, vt.Kind == types.Min)
		if err != nil {
			return row{}, err
		}
	case types.Avg, types.Stats:
		r.count, r.total, err = sumPairs(e)
		if err != nil {
			return row{}, err
		}
		r.scalar = avgOf(r)
	default:
		val := e.Value
		if val == nil && len(e.PerCPU) > 0 {
			val = e.PerCPU[0]
		}
		r.value, err = Decode(vt, val)
		if err != nil {
			return row{}, fmt.Errorf("value: %w", err)
		}
		r.scalar, r.uscalar = r.value.Int(), r.value.Bits
	}
	return r, nil
}

// stableSort sorts rows by less, equal rows keeping their order: the
// order sort.SliceStable gives. It sorts an index permutation (pdqsort,
// the index breaking ties) and then moves every row once, in place, where
// SliceStable's in-place merges move the large row structs O(n log² n)
// times (a 10⁵-key map took seconds to print at exit).
func stableSort(rows []row, less func(a, b *row) bool) {
	stableSortCmp(rows, func(a, b *row) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}

// stableSortCmp is stableSort with a three-way comparison.
func stableSortCmp(rows []row, compare func(a, b *row) int) {
	stableSortIdx(rows, func(i, j int) int { return compare(&rows[i], &rows[j]) })
}

// stableSortIdx is stableSortCmp comparing rows by their indices.
func stableSortIdx(rows []row, compare func(i, j int) int) {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		if c := compare(i, j); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	// rows[j] = old rows[idx[j]], in place, one cycle of the permutation
	// at a time (a second copy of a 10⁶-row map is 200 MB).
	for i := range idx {
		if idx[i] < 0 {
			continue
		}
		tmp, j := rows[i], i
		for {
			k := idx[j]
			idx[j] = -1
			if k == i {
				rows[j] = tmp
				break
			}
			rows[j] = rows[k]
			j = k
		}
	}
}

// sortByKey orders rows by their key parts: integers as unsigned 64-bit
// numbers, strings byte-wise, other parts by their text (bpftrace's
// sort_by_key). A part's text is made once per sort: for a stack it is a
// stack-map read and a symbolization, which per comparison made 10^5
// distinct stacks take minutes (about 3·10^6 symbolizations).
//
// first, when not nil, orders rows before their keys do (a map's sort by
// value): one sort by (value, key), the order of a stable sort by value
// after the sort by key, comparing keys only between equal values.
func (p *Printer) sortByKey(rows []row, first func(a, b *row) int) {
	// texts[i*parts+k] is the text of part k of row i when the sort
	// compares that part by its text, made before sorting (a lookup per
	// comparison was a tenth of printing 3·10⁴ stacks).
	parts := 0
	for i := range rows {
		parts = max(parts, len(rows[i].key))
	}
	// A stack part compares by its lines (stackLines), shared between
	// stacks, rather than by its joined text: the same order, without
	// holding every stack's text at once.
	if p.stacks == nil {
		p.stacks = newStackMemo()
		defer func() { p.stacks = nil }()
	}
	var texts []string
	var lines [][]lineID
	for i := range rows {
		for k := range rows[i].key {
			v := &rows[i].key[k]
			switch {
			case byValue(v):
			case heldAsLines(v):
				if lines == nil {
					lines = make([][]lineID, len(rows)*parts)
				}
				lines[i*parts+k] = p.stackLines(*v, 4)
			default:
				if texts == nil {
					texts = make([]string, len(rows)*parts)
				}
				texts[i*parts+k] = p.text(*v, 4)
			}
		}
	}
	var rank []uint32
	if lines != nil {
		rank = p.stacks.ranked()
	}
	stableSortIdx(rows, func(i, j int) int {
		if first != nil {
			if c := first(&rows[i], &rows[j]); c != 0 {
				return c
			}
		}
		a, b := rows[i].key, rows[j].key
		for k := 0; k < len(a) && k < len(b); k++ {
			c, ok := compareValues(&a[k], &b[k])
			if !ok {
				// Part k has one type in every row of the map.
				if heldAsLines(&a[k]) {
					c = compareLines(lines[i*parts+k], lines[j*parts+k], rank)
				} else {
					c = strings.Compare(texts[i*parts+k], texts[j*parts+k])
				}
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a), len(b))
	})
}

// byValue reports whether v is an integer or a string, which
// compareValues orders by value rather than by text.
func byValue(v *Value) bool {
	return v.Type != nil && v.Type.IsInteger() || v.Kind() == types.String
}

// compareValues orders two integers as unsigned 64-bit numbers or two
// strings byte-wise; false for parts compared by their text.
func compareValues(a, b *Value) (int, bool) {
	if a.Type != nil && a.Type.IsInteger() && b.Type != nil && b.Type.IsInteger() {
		return cmp.Compare(a.Bits, b.Bits), true
	}
	if a.Kind() == types.String && b.Kind() == types.String {
		return bytes.Compare(a.Bytes, b.Bytes), true
	}
	return 0, false
}

// values is an entry's per-CPU values (or its single value).
func values(e Entry) [][]byte {
	if len(e.PerCPU) > 0 {
		return e.PerCPU
	}
	return [][]byte{e.Value}
}

func sumU64(e Entry) (uint64, error) {
	var s uint64
	for i, v := range values(e) {
		if len(v) < 8 {
			return 0, fmt.Errorf("value %d: %d bytes, want 8", i, len(v))
		}
		s += binary.LittleEndian.Uint64(v)
	}
	return s, nil
}

// minMax merges min()/max() values: [0:8] value, [8:16] set flag; CPUs that
// never set a value do not count. No CPU set → 0 (a zeroed map).
func minMax(e Entry, isMin bool) (int64, error) {
	var res int64
	found := false
	for i, v := range values(e) {
		if len(v) < 16 {
			return 0, fmt.Errorf("min/max value %d: %d bytes, want 16", i, len(v))
		}
		if binary.LittleEndian.Uint64(v[8:16]) == 0 {
			continue
		}
		x := int64(binary.LittleEndian.Uint64(v[0:8]))
		if !found || (isMin && x < res) || (!isMin && x > res) {
			res, found = x, true
		}
	}
	return res, nil
}

func sumPairs(e Entry) (count, total int64, err error) {
	for i, v := range values(e) {
		if len(v) < 16 {
			return 0, 0, fmt.Errorf("avg/stats value %d: %d bytes, want 16", i, len(v))
		}
		count += int64(binary.LittleEndian.Uint64(v[0:8]))
		total += int64(binary.LittleEndian.Uint64(v[8:16]))
	}
	return count, total, nil
}

// histText prints hist/lhist buckets as bpftrace's bar chart, from the
// first to the last non-empty bucket.
func (p *Printer) histText(vt *types.Type, buckets []uint64, div uint64) string {
	first, last, maxv := -1, -1, uint64(0)
	for i, n := range buckets {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
		if n > maxv {
			maxv = n
		}
	}
	if last < 0 {
		return ""
	}
	var sb strings.Builder
	for i := first; i <= last; i++ {
		var header string
		count := buckets[i]
		if vt.Kind == types.Hist {
			header = log2HeaderK(i, int(vt.Lhist[0]))
			count /= div
		} else {
			header = linearHeader(vt.Lhist, len(buckets), i)
		}
		// bpftrace computes the bar in single precision.
		width := int(float32(buckets[i]) / float32(maxv) * float32(52))
		fmt.Fprintf(&sb, "%-16s%8d |%-52s|\n", header, count, strings.Repeat("@", width))
	}
	return sb.String()
}

// log2HeaderK is bucket i's label in hist(n, k) (bpftrace 0.20): the
// values below 2^(k+1) one per bucket, "[v]"; then "[lo, hi)".
func log2HeaderK(i, k int) string {
	if k == 0 {
		return log2Header(i)
	}
	switch {
	case i == 0:
		return "(..., 0)"
	case i <= 2<<k:
		return "[" + strconv.Itoa(i-1) + "]"
	}
	return "[" + histKLabel(i-1, k) + ", " + histKLabel(i, k) + ")"
}

// histKLower is the least value of bucket i >= 1 of hist(n, k).
func histKLower(i, k int) uint64 {
	j := i - 1
	if j < 1<<k {
		return uint64(j)
	}
	e, sub := j>>k, j&(1<<k-1)
	return uint64(1<<k+sub) << uint(e-1)
}

// histKLabel spells the lower bound of the bucket after index j (j >=
// 2^k): (2^k + j's low k bits) << (j>>k - 1), the power of 2 with a
// K/M/G/T/P/E suffix per 10 bits, as bpftrace.
func histKLabel(j, k int) string {
	n := 1 << k
	power := j>>k - 1
	decade := power / 10
	power -= decade * 10
	suffix := ""
	if decade > 0 && decade < 7 {
		suffix = string("KMGTPE"[decade-1])
	}
	return strconv.FormatUint(uint64(1)<<uint(power)*uint64(n+j&(n-1)), 10) + suffix
}

func log2Header(i int) string {
	switch i {
	case 0:
		return "(..., 0)"
	case 1:
		return "[0]"
	case 2:
		return "[1]"
	}
	return "[" + log2Label(i-2) + ", " + log2Label(i-1) + ")"
}

// log2Label spells 2^power with a K/M/G/T suffix, as bpftrace.
func log2Label(power int) string {
	suffix := ""
	switch {
	case power >= 40:
		suffix, power = "T", power-40
	case power >= 30:
		suffix, power = "G", power-30
	case power >= 20:
		suffix, power = "M", power-20
	case power >= 10:
		suffix, power = "K", power-10
	}
	return strconv.FormatUint(1<<uint(power), 10) + suffix
}

func linearHeader(params [3]int64, nb, i int) string {
	min, max, step := params[0], params[1], params[2]
	switch {
	case i == 0:
		return "(..., " + linearLabel(min) + ")"
	case i == nb-1:
		return "[" + linearLabel(max) + ", ...)"
	}
	return "[" + linearLabel(int64(i-1)*step+min) + ", " + linearLabel(int64(i)*step+min) + ")"
}

// linearLabel prints an lhist bound: multiples of 1M and 1K with a suffix.
func linearLabel(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n/(1<<20), 10) + "M"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n/(1<<10), 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

func histJSON(vt *types.Type, buckets []uint64, div uint64) string {
	first, last := -1, -1
	for i, n := range buckets {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if last < 0 {
		return "[]"
	}
	parts := make([]string, 0, last-first+1)
	for i := first; i <= last; i++ {
		var bounds string
		count := buckets[i]
		if k := int(vt.Lhist[0]); vt.Kind == types.Hist && k > 0 {
			count /= div
			switch {
			case i == 0:
				bounds = `"max": -1, `
			default:
				lo := histKLower(i, k)
				hi := histKLower(i+1, k) - 1
				if i+1 >= len(buckets) {
					hi = math.MaxInt64
				}
				bounds = fmt.Sprintf(`"min": %d, "max": %d, `, lo, hi)
			}
		} else if vt.Kind == types.Hist {
			count /= div
			switch i {
			case 0:
				bounds = `"max": -1, `
			case 1:
				bounds = `"min": 0, "max": 0, `
			case 2:
				bounds = `"min": 1, "max": 1, `
			default:
				lo := uint64(1) << uint(i-2)
				hi := uint64(1)<<uint(i-1) - 1
				if i-1 >= 64 {
					hi = math.MaxUint64
				}
				bounds = fmt.Sprintf(`"min": %d, "max": %d, `, lo, hi)
			}
		} else {
			min, max, step := vt.Lhist[0], vt.Lhist[1], vt.Lhist[2]
			switch {
			case i == 0:
				bounds = fmt.Sprintf(`"max": %d, `, min-1)
			case i == len(buckets)-1:
				bounds = fmt.Sprintf(`"min": %d, `, max)
			default:
				bounds = fmt.Sprintf(`"min": %d, "max": %d, `, int64(i-1)*step+min, int64(i)*step+min-1)
			}
		}
		parts = append(parts, "{"+bounds+`"count": `+strconv.FormatUint(count, 10)+"}")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
