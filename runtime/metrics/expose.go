// Package metrics serves a running script's maps as Prometheus metrics
// (gotrace --metrics ADDR), in the text exposition format 0.0.4, so that an
// existing Prometheus aggregates what many machines trace.
//
// Every user map is one metric family named gotrace_<map name without @>
// (@ alone is gotrace_map), with characters outside [a-zA-Z0-9_] replaced
// by '_':
//
//   - count(): a counter, gotrace_<name>_total (Prometheus's naming rule for
//     counters). clear()/zero() look like a counter reset, which rate() and
//     increase() handle.
//   - sum(), min(), max() and integer values (@x = 5): gauges (sums may go
//     down: their arguments may be negative).
//   - avg(), stats(): a summary without quantiles: <name>_count and
//     <name>_sum (avg = sum / count, as bpftrace's integer average).
//   - hist(), lhist(): a histogram: cumulative <name>_bucket{le="..."}
//     series, then le="+Inf" and <name>_count. Bounds are inclusive integer
//     bounds (values are integers): log2 buckets le="-1" (negative), "0",
//     "1", "3", "7", ... 2^k-1; lhist(min, max, step) le = min-1, then
//     min+step-1, ... max-1, with values >= max only in +Inf. Buckets are
//     listed from the first one to the highest non-empty one of the map.
//     The observed values' sum is not kept by the BPF program, so there is
//     no <name>_sum.
//   - other values (strings, tuples, symbols, stacks ...): an info-style
//     gauge of 1 whose value="..." label holds the value's text.
//
// Keys become labels: key="..." for one part, key0, key1 ... for several,
// each part's text as the text printer prints it. Stacks are one line:
// their frames root first, joined by ';' (the "folded" form flame-graph
// tools read). A gotrace_up gauge of 1 says the tracer is running.
package metrics

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime"
	"github.com/gotrace/gotrace/runtime/output"
)

// ContentType is the text exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Write writes the exposition of maps (gotrace_up first, then one family per
// map in the order given). p prints key parts and values as text (its
// Symbolizer resolves symbols and stacks).
func Write(w io.Writer, p *output.Printer, maps []*runtime.MapData) error {
	var b bytes.Buffer
	b.WriteString("# HELP gotrace_up 1 while the gotrace script runs.\n# TYPE gotrace_up gauge\ngotrace_up 1\n")
	used := map[string]bool{"gotrace_up": true}
	for _, md := range maps {
		if md == nil || md.Spec == nil || md.Spec.User == nil || md.Spec.User.Value == nil {
			continue
		}
		name := uniqueName(FamilyName(md.Spec.User), used)
		if err := writeFamily(&b, p, name, md); err != nil {
			return fmt.Errorf("metrics: map %s: %w", md.Spec.User.Name, err)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// FamilyName is the metric family of a script map: gotrace_<name>, with
// _total for count() maps.
func FamilyName(info *lang.MapInfo) string {
	n := strings.TrimPrefix(info.Name, "@")
	if n == "" {
		n = "map"
	}
	var sb strings.Builder
	sb.WriteString("gotrace_")
	for _, r := range n {
		if r < 0x80 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	s := sb.String()
	if info.Value != nil && info.Value.Kind == types.Count && !strings.HasSuffix(s, "_total") {
		s += "_total"
	}
	return s
}

// uniqueName keeps families apart when two map names sanitise alike (or a
// map is called @up).
func uniqueName(name string, used map[string]bool) string {
	base := name
	for i := 2; used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	used[name] = true
	return name
}

type label struct{ name, value string }

// sample is one series of a family: its key's labels and decoded value.
type sample struct {
	labels  []label
	sortKey string
	// num orders a key of one integer part (sortKey is then empty), as
	// its zero-padded decimal text did: see intOrder.
	num     uint64
	value   string   // scalar families
	count   uint64   // avg/stats, hist
	sum     int64    // avg/stats
	buckets []uint64 // hist/lhist
}

// sortSamples is the order of samples by their sort key (by num when
// numeric: the map's key is one integer), equal keys in decode order: a
// pdqsort of indices (ties broken by index), the samples not moved.
// Sorting the structs in place (sort.SliceStable) spent half of a
// 10^5-key scrape swapping them, and gathering them afterwards (copying
// 100-byte structs of pointers) a tenth; comparing numbers where the keys
// are integers, not their zero-padded texts, halves the sort.
func sortSamples(samples []sample, numeric bool) []int32 {
	idx := make([]int32, len(samples))
	for i := range idx {
		idx[i] = int32(i)
	}
	if numeric {
		slices.SortFunc(idx, func(a, b int32) int {
			if c := cmp.Compare(samples[a].num, samples[b].num); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		return idx
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := strings.Compare(samples[a].sortKey, samples[b].sortKey); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

// intOrder maps an integer key part to a number that sorts as its sort
// key text ("%021d" signed, "%020d" unsigned) does: unsigned values in
// order; signed ones the negatives first, by magnitude (the text "-0…05"
// before "-0…10"), then the others in order.
func intOrder(v output.Value) uint64 {
	if !v.Signed() {
		return v.Bits
	}
	if x := v.Int(); x < 0 {
		return uint64(-x) - 1 // -1 → 0 … MinInt64 → 2^63-1
	} else {
		return 1<<63 + uint64(x)
	}
}

// numericKey says whether info's key is one integer part (its samples
// sort by num).
func numericKey(info *lang.MapInfo) bool {
	if info.Key == nil || (len(info.KeyParts) > 1 && info.Key.Kind == types.Tuple) {
		return false
	}
	return info.Key.IsInteger()
}

func writeFamily(b *bytes.Buffer, p *output.Printer, name string, md *runtime.MapData) error {
	info := md.Spec.User
	vt := info.Value
	typ := "gauge"
	switch vt.Kind {
	case types.Count:
		typ = "counter"
	case types.Avg, types.Stats:
		typ = "summary"
	case types.Hist, types.Lhist:
		typ = "histogram"
	}
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(helpText(info)), name, typ)

	samples, err := decodeSamples(p, md)
	if err != nil {
		return err
	}
	order := sortSamples(samples, numericKey(info))
	switch vt.Kind {
	case types.Avg, types.Stats:
		for _, i := range order {
			s := &samples[i]
			writeSample(b, name+"_sum", s.labels, strconv.FormatInt(s.sum, 10))
			writeSample(b, name+"_count", s.labels, strconv.FormatUint(s.count, 10))
		}
	case types.Hist, types.Lhist:
		// One bucket list for every series of the map: the first bucket up
		// to the highest non-empty one (the lhist overflow bucket is only
		// in +Inf).
		last := -1
		for _, s := range samples {
			for i, n := range s.buckets {
				if n > 0 && i > last {
					last = i
				}
			}
		}
		bounds := bucketBounds(vt, nbuckets(vt))
		if last >= len(bounds) {
			last = len(bounds) - 1
		}
		for _, i := range order {
			s := &samples[i]
			var cum uint64
			for i := 0; i <= last; i++ {
				cum += s.buckets[i]
				writeSample(b, name+"_bucket", append(s.labels[:len(s.labels):len(s.labels)], label{"le", bounds[i]}), strconv.FormatUint(cum, 10))
			}
			writeSample(b, name+"_bucket", append(s.labels[:len(s.labels):len(s.labels)], label{"le", "+Inf"}), strconv.FormatUint(s.count, 10))
			writeSample(b, name+"_count", s.labels, strconv.FormatUint(s.count, 10))
		}
	default:
		for _, i := range order {
			writeSample(b, name, samples[i].labels, samples[i].value)
		}
	}
	return nil
}

func helpText(info *lang.MapInfo) string {
	kind := info.Value.Kind
	if kind.IsAggregation() {
		return fmt.Sprintf("gotrace map %s: %s()", mapName(info), kind)
	}
	return fmt.Sprintf("gotrace map %s: %s values", mapName(info), info.Value)
}

func mapName(info *lang.MapInfo) string {
	if strings.HasPrefix(info.Name, "@") {
		return info.Name
	}
	return "@" + info.Name
}

// decodeSamples turns raw entries (per-CPU values already merged, as
// runtime.ReadMap returns them) into one sample per user key.
func decodeSamples(p *output.Printer, md *runtime.MapData) ([]sample, error) {
	info := md.Spec.User
	vt := info.Value
	le := binary.LittleEndian
	if vt.Kind == types.Hist || vt.Kind == types.Lhist {
		nb := nbuckets(vt)
		if nb <= 0 {
			return nil, fmt.Errorf("lhist parameters %v", vt.Lhist)
		}
		byKey := map[string]*sample{}
		var order []string
		for _, e := range md.Entries {
			if len(e.Key) < 8 || len(e.Value) < 8 {
				return nil, fmt.Errorf("hist entry of %d key and %d value bytes", len(e.Key), len(e.Value))
			}
			uk := e.Key[:len(e.Key)-8]
			idx := le.Uint64(e.Key[len(e.Key)-8:])
			if idx >= uint64(nb) {
				return nil, fmt.Errorf("bucket index %d out of range (%d buckets)", idx, nb)
			}
			s := byKey[string(uk)]
			if s == nil {
				labels, sk, num, err := keyLabels(p, info, uk)
				if err != nil {
					return nil, err
				}
				s = &sample{labels: labels, sortKey: sk, num: num, buckets: make([]uint64, nb)}
				byKey[string(uk)] = s
				order = append(order, string(uk))
			}
			n := le.Uint64(e.Value)
			s.buckets[idx] += n
			s.count += n
		}
		out := make([]sample, 0, len(order))
		for _, k := range order {
			out = append(out, *byKey[k])
		}
		return out, nil
	}
	out := make([]sample, 0, len(md.Entries))
	for _, e := range md.Entries {
		labels, sk, num, err := keyLabels(p, info, e.Key)
		if err != nil {
			return nil, err
		}
		s := sample{labels: labels, sortKey: sk, num: num}
		v := e.Value
		switch vt.Kind {
		case types.Count, types.Sum:
			if len(v) < 8 {
				return nil, fmt.Errorf("value of %d bytes, want 8", len(v))
			}
			if vt.Kind == types.Sum && vt.Signed {
				s.value = strconv.FormatInt(int64(le.Uint64(v)), 10)
			} else {
				s.value = strconv.FormatUint(le.Uint64(v), 10)
			}
		case types.Min, types.Max:
			if len(v) < 16 {
				return nil, fmt.Errorf("value of %d bytes, want 16", len(v))
			}
			// An entry zero()ed or never set on any CPU prints as 0, as in
			// the text output.
			s.value = strconv.FormatInt(int64(le.Uint64(v)), 10)
		case types.Avg, types.Stats:
			if len(v) < 16 {
				return nil, fmt.Errorf("value of %d bytes, want 16", len(v))
			}
			s.count, s.sum = le.Uint64(v[0:8]), int64(le.Uint64(v[8:16]))
		default:
			val, err := output.Decode(vt, v)
			if err != nil {
				return nil, fmt.Errorf("value: %w", err)
			}
			switch val.Kind() {
			case types.Int, types.Bool, types.Enum, types.Pointer, types.Kaddr:
				if val.Signed() {
					s.value = strconv.FormatInt(val.Int(), 10)
				} else {
					s.value = strconv.FormatUint(val.Bits, 10)
				}
			default:
				s.labels = append(s.labels, label{"value", partText(p, val)})
				s.value = "1"
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// keyLabels decodes a user key into labels (key, or key0, key1 ...) and a
// sort key that orders series stably: the text sortKey, or for a key of
// one integer part the number num (intOrder).
func keyLabels(p *output.Printer, info *lang.MapInfo, key []byte) ([]label, string, uint64, error) {
	if info.Key == nil {
		return nil, "", 0, nil
	}
	var parts []output.Value
	if len(info.KeyParts) > 1 && info.Key.Kind == types.Tuple {
		if len(key) < info.Key.Size {
			return nil, "", 0, fmt.Errorf("key of %d bytes, want %d", len(key), info.Key.Size)
		}
		for i, f := range info.Key.Fields {
			v, err := output.Decode(f.Type, key[f.Offset:])
			if err != nil {
				return nil, "", 0, fmt.Errorf("key part %d: %w", i+1, err)
			}
			parts = append(parts, v)
		}
	} else {
		v, err := output.Decode(info.Key, key)
		if err != nil {
			return nil, "", 0, fmt.Errorf("key: %w", err)
		}
		parts = []output.Value{v}
	}
	labels := make([]label, len(parts))
	if len(parts) == 1 && numericKey(info) {
		// One integer: sorted by num (intOrder), no sort key text.
		labels[0] = label{"key", partText(p, parts[0])}
		return labels, "", intOrder(parts[0]), nil
	}
	var sk strings.Builder
	for i, v := range parts {
		name := "key"
		if len(parts) > 1 {
			name = "key" + strconv.Itoa(i)
		}
		labels[i] = label{name, partText(p, v)}
		// Integers sort numerically (zero-padded), the rest by text.
		if v.Type != nil && v.Type.IsInteger() {
			if v.Signed() {
				fmt.Fprintf(&sk, "%021d\x00", v.Int())
			} else {
				fmt.Fprintf(&sk, "%020d\x00", v.Bits)
			}
		} else {
			sk.WriteString(labels[i].value + "\x00")
		}
	}
	return labels, sk.String(), 0, nil
}

// partText is a value's text as the text printer prints it, stacks folded
// onto one line (frames root first, joined by ';').
func partText(p *output.Printer, v output.Value) string {
	text := p.Text(v)
	if v.Kind() != types.Stack {
		return text
	}
	var frames []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			frames = append(frames, l)
		}
	}
	for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
		frames[i], frames[j] = frames[j], frames[i]
	}
	return strings.Join(frames, ";")
}

// nbuckets is the number of bucket indexes of a hist/lhist map (ABI.md):
// log2: <0, 0, then 2^0 .. 2^62; lhist: <min, N steps, >=max.
func nbuckets(vt *types.Type) int {
	if vt.Kind == types.Hist {
		return 65
	}
	min, max, step := vt.Lhist[0], vt.Lhist[1], vt.Lhist[2]
	if step <= 0 || max < min {
		return 0
	}
	return int((max-min)/step) + 2
}

// bucketBounds are the inclusive upper bounds (le) of the buckets that have
// one: every log2 bucket; every lhist bucket but the last (>= max).
func bucketBounds(vt *types.Type, nb int) []string {
	if vt.Kind == types.Hist {
		out := make([]string, nb)
		out[0] = "-1"
		out[1] = "0"
		for i := 2; i < nb; i++ {
			out[i] = strconv.FormatUint(uint64(1)<<uint(i-1)-1, 10)
		}
		return out
	}
	min, step := vt.Lhist[0], vt.Lhist[2]
	out := make([]string, 0, nb-1)
	for i := 0; i < nb-1; i++ {
		out = append(out, strconv.FormatInt(min+int64(i)*step-1, 10))
	}
	return out
}

func writeSample(b *bytes.Buffer, name string, labels []label, value string) {
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l.name)
			b.WriteString(`="`)
			b.WriteString(escapeLabel(l.value))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(value)
	b.WriteByte('\n')
}

// escapeLabel escapes a label value as the exposition format requires:
// backslash, double quote and line feed. The format is UTF-8 and one
// invalid byte makes Prometheus reject the whole scrape, while keys are
// whatever the kernel saw (any file name a local user creates): an invalid
// byte becomes the text \xNN (written \\xNN).
func escapeLabel(s string) string {
	if !utf8.ValidString(s) {
		var b strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
		}
		s = b.String()
	}
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// escapeHelp escapes HELP text: backslash and line feed.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}
