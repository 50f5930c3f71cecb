package ktypes

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/gotrace/gotrace/internal/priv"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gotrace/gotrace/lang/types"
	"golang.org/x/sys/unix"
)

var (
	tracefsOnce sync.Once
	tracefsDir  string
	tracefsErr  error
)

// TracefsDir finds tracefs: /sys/kernel/tracing, else the debugfs copy,
// else it mounts tracefs at /sys/kernel/tracing. The answer is cached.
func TracefsDir() (string, error) {
	tracefsOnce.Do(func() {
		for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
			if fileExists(filepath.Join(d, "available_events")) {
				tracefsDir = d
				return
			}
		}
		for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
			if err := priv.TracefsError(d); err != nil {
				tracefsErr = err // there, but root's
				return
			}
		}
		const d = "/sys/kernel/tracing"
		if err := unix.Mount("tracefs", d, "tracefs", 0, ""); err != nil {
			tracefsErr = fmt.Errorf("tracefs is not mounted and mounting it at %s failed: %w", d, err)
			return
		}
		tracefsDir = d
	})
	return tracefsDir, tracefsErr
}

// TracepointField is one line of a format file.
type TracepointField struct {
	Decl   string // the C declaration, e.g. "const char * filename"
	Name   string
	Offset int
	Size   int
	Signed bool
}

// ParseFormat parses a tracepoint format file into its fields (common_*
// ones included, in file order).
func ParseFormat(text string) ([]TracepointField, error) {
	var fields []TracepointField
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		var f TracepointField
		var haveOff, haveSize bool
		for _, part := range strings.Split(line, ";") {
			part = strings.TrimSpace(part)
			k, v, ok := strings.Cut(part, ":")
			if !ok {
				continue
			}
			switch k {
			case "field":
				f.Decl = strings.TrimSpace(v)
			case "offset", "size", "signed":
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return nil, fmt.Errorf("line %d: bad %s %q", ln, k, v)
				}
				switch k {
				case "offset":
					f.Offset, haveOff = n, true
				case "size":
					f.Size, haveSize = n, true
				default:
					f.Signed = n != 0
				}
			}
		}
		if f.Decl == "" || !haveOff || !haveSize {
			return nil, fmt.Errorf("line %d: malformed field line %q", ln, line)
		}
		f.Name = declName(f.Decl)
		if f.Name == "" || f.Name == f.Decl {
			return nil, fmt.Errorf("line %d: no field name in %q", ln, f.Decl)
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, errors.New("no fields in format")
	}
	return fields, nil
}

// declName is the name in a field declaration: the last identifier before
// any array suffix.
func declName(decl string) string {
	d := strings.TrimSpace(decl)
	for strings.HasSuffix(d, "]") {
		i := strings.LastIndex(d, "[")
		if i < 0 {
			return ""
		}
		d = strings.TrimSpace(d[:i])
	}
	i := len(d)
	for i > 0 && isIdentChar(d[i-1]) {
		i--
	}
	return d[i:]
}

// TracepointRecord turns a format file's fields into the record a
// tracepoint program's context points to: every non-common field at its
// offset in the whole record (the 8-byte common header included).
// Integers take their size and signedness from the format (the declared
// type can lie: syscall arguments are all 8 bytes); char arrays are
// strings; pointers point into user memory for syscall tracepoints and
// kernel memory otherwise; `__data_loc` fields are marked DataLoc and typed
// as a pointer to their element (see types.Field.DataLoc).
func TracepointRecord(category, event string, fields []TracepointField) (*types.Type, error) {
	space := types.AddrKernel
	if category == "syscalls" {
		space = types.AddrUser
	}
	rec := &types.Type{Kind: types.Record, Name: "struct _tracepoint_" + category + "_" + event}
	size := 0
	for _, f := range fields {
		size = max(size, f.Offset+f.Size)
		if strings.HasPrefix(f.Name, "common_") {
			continue
		}
		ft, dataLoc, err := tracepointFieldType(f, space)
		if err != nil {
			return nil, fmt.Errorf("tracepoint %s:%s field %s: %w", category, event, f.Name, err)
		}
		rec.Fields = append(rec.Fields, types.Field{Name: f.Name, Type: ft, Offset: f.Offset, DataLoc: dataLoc})
	}
	rec.Size = alignUp(size, 8)
	rec.Align = 8
	return rec, nil
}

var tpDecls = sync.OnceValue(func() *Decls {
	d, _ := ParseC("", "")
	return d
})

// tracepointFieldType types one format field.
func tracepointFieldType(f TracepointField, space types.AddrSpace) (*types.Type, bool, error) {
	decl := strings.TrimSpace(f.Decl)
	typ := strings.TrimSpace(strings.TrimSuffix(decl, f.Name))
	if strings.HasPrefix(decl, "__data_loc ") || strings.HasPrefix(decl, "__rel_loc ") {
		// "__data_loc char[] name": the data is elsewhere in the record.
		if strings.HasPrefix(decl, "__rel_loc ") {
			return types.U32, false, nil // locator relative to the field: left as the raw u32
		}
		elem := strings.TrimSpace(strings.TrimPrefix(typ, "__data_loc "))
		elem = strings.TrimSpace(strings.TrimSuffix(elem, "[]"))
		et := types.IntType(1, true)
		if elem != "char" {
			if t, err := tpDecls().Lookup(elem); err == nil && t.Kind != types.None {
				et = t
			} else {
				et = types.U8
			}
		}
		return types.PointerTo(et, types.AddrKernel), true, nil
	}
	// Arrays: "char comm[16]", "u8 saddr[4]", "unsigned long args[6]".
	if i := strings.Index(decl, "["); i >= 0 && strings.HasSuffix(decl, "]") {
		base := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(decl[:i]), f.Name))
		dims := decl[i:]
		n := 1
		for _, part := range strings.Split(strings.Trim(dims, "[]"), "][") {
			k, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || k <= 0 {
				k = 0
			}
			n *= k
		}
		if n <= 0 || f.Size%n != 0 {
			return types.ArrayOf(types.U8, f.Size), false, nil
		}
		esize := f.Size / n
		if base == "char" || base == "signed char" || base == "const char" {
			if strings.Count(dims, "[") == 1 {
				return types.StringType(f.Size), false, nil
			}
		}
		elem := types.IntType(esize, f.Signed)
		if esize != 1 && esize != 2 && esize != 4 && esize != 8 {
			elem = types.ArrayOf(types.U8, esize)
		}
		return types.ArrayOf(elem, n), false, nil
	}
	if strings.Contains(typ, "*") {
		elemName := strings.TrimSpace(typ[:strings.LastIndex(typ, "*")])
		if strings.HasSuffix(elemName, "*") {
			// A pointer to a pointer: the element is itself a pointer.
			elemName = strings.TrimSpace(strings.TrimSuffix(elemName, "*"))
			return types.PointerTo(types.PointerTo(pointeeType(elemName), space), space), false, nil
		}
		return types.PointerTo(pointeeType(elemName), space), false, nil
	}
	switch f.Size {
	case 1, 2, 4, 8:
		t := types.IntType(f.Size, f.Signed)
		if strings.HasPrefix(typ, "bool") || strings.HasPrefix(typ, "_Bool") {
			t = types.IntType(1, false)
		}
		return t, false, nil
	}
	return types.ArrayOf(types.U8, f.Size), false, nil
}

// pointeeType types what a tracepoint pointer field points to, from the
// declared element ("const char", "struct sock", "void", "u8").
func pointeeType(name string) *types.Type {
	for _, q := range []string{"const ", "volatile "} {
		name = strings.ReplaceAll(name, q, "")
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "void" || name == "":
		return nil
	case strings.HasPrefix(name, "struct ") || strings.HasPrefix(name, "union "):
		return Stub(name)
	}
	if t, err := tpDecls().Lookup(name); err == nil && t.Kind != types.None {
		return t
	}
	return nil // unknown typedef: a void pointer
}

// tracepointCache holds parsed tracepoint records per tracefs directory.
type tracepointCache struct {
	mu   sync.Mutex
	recs map[string]*types.Type
	errs map[string]error
}

func (c *tracepointCache) get(dir, category, event string) (*types.Type, error) {
	key := category + ":" + event
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.recs[key]; ok {
		return r, nil
	}
	if err, ok := c.errs[key]; ok {
		return nil, err
	}
	r, err := loadTracepoint(dir, category, event)
	if c.recs == nil {
		c.recs, c.errs = map[string]*types.Type{}, map[string]error{}
	}
	if err != nil {
		c.errs[key] = err
		return nil, err
	}
	c.recs[key] = r
	return r, nil
}

func loadTracepoint(dir, category, event string) (*types.Type, error) {
	if dir == "" {
		d, err := TracefsDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if !validTPName(category) || !validTPName(event) {
		return nil, fmt.Errorf("invalid tracepoint name %s:%s", category, event)
	}
	file := filepath.Join(dir, "events", category, event, "format")
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{Kind: "tracepoint", Name: category + ":" + event,
				Tried: []string{filepath.Join(dir, "events")}}
		}
		return nil, fmt.Errorf("tracepoint %s:%s: %w", category, event, err)
	}
	fields, err := ParseFormat(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return TracepointRecord(category, event, fields)
}

func validTPName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// Tracepoints lists the tracepoints ("category:event") matching pattern,
// sorted. The pattern is "cat:name" with shell wildcards (* ? [...]) in
// either part; a pattern without ':' matches the event name in any
// category; "" and "*" match everything.
func Tracepoints(pattern string) ([]string, error) {
	dir, err := TracefsDir()
	if err != nil {
		return nil, err
	}
	return tracepointsIn(dir, pattern)
}

func tracepointsIn(dir, pattern string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "available_events"))
	if err != nil {
		return nil, fmt.Errorf("listing tracepoints: %w", err)
	}
	catPat, evPat, hasColon := strings.Cut(pattern, ":")
	if !hasColon {
		catPat, evPat = "*", pattern
	}
	if catPat == "" {
		catPat = "*"
	}
	if evPat == "" {
		evPat = "*"
	}
	if _, err := path.Match(catPat, ""); err != nil {
		return nil, fmt.Errorf("bad tracepoint pattern %q: %w", pattern, err)
	}
	if _, err := path.Match(evPat, ""); err != nil {
		return nil, fmt.Errorf("bad tracepoint pattern %q: %w", pattern, err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		cat, ev, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if m, _ := path.Match(catPat, cat); !m {
			continue
		}
		if m, _ := path.Match(evPat, ev); !m {
			continue
		}
		out = append(out, cat+":"+ev)
	}
	sort.Strings(out)
	return out, nil
}

// NotRawTracepoint reports whether tracefs event category cat holds events
// that are not kernel tracepoints, so no raw tracepoint has their names:
// the syscalls events (built on raw_syscalls' sys_enter/sys_exit),
// function-tracer and dynamic-probe events.
func NotRawTracepoint(cat string) bool {
	switch cat {
	case "syscalls", "ftrace", "kprobes", "uprobes", "eprobes", "fprobes", "synthetic":
		return true
	}
	return strings.HasSuffix(cat, "probes") // PREFIX_kprobes ... of tools naming their own
}
