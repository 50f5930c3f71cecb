package output

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/lang/types"
)

// Format is the output format (-f).
type Format uint8

const (
	Text Format = iota
	JSON
	// Folded prints maps as folded stacks (stackcollapse's
	// "root;...;leaf count" lines, the input of flame graph tools) and
	// everything else as Text.
	Folded
)

// ParseFormat parses the -f flag's argument.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text":
		return Text, nil
	case "json":
		return JSON, nil
	case "folded":
		return Folded, nil
	}
	return Text, fmt.Errorf("invalid output format %q: valid formats are text, json and folded", s)
}

// Frame is one resolved stack frame.
type Frame struct {
	Addr   uint64
	Sym    string // symbol name; "" when the address resolves to nothing
	Offset uint64 // Addr - symbol start
	Module string // user stacks: path of the mapped object; "" when unknown
	// File and Line are the source line of the frame (bpftrace 0.26's
	// show_debug_info), when the module has DWARF line tables.
	File string
	Line int
	// Inlined marks a frame for a call the compiler inlined at Addr: Sym
	// is the inlined function, File:Line the place in it.
	Inlined bool
}

// Symbolizer resolves what only the live system knows. The runtime
// implements it (kallsyms, ELF symbols, stack maps, /etc/passwd, cgroupfs).
type Symbolizer interface {
	// KernelSym is ksym()'s text: the symbol's name, or the address as
	// bpftrace prints an unknown one ("0x..." ; "0" for 0).
	KernelSym(addr uint64) string
	// UserSym is usym()'s text for addr in process pid.
	UserSym(pid int, addr uint64) string
	// Stack returns the frames of stack id, innermost first, read from the
	// stack map info names (info.MapName(): one per kernel/user and limit)
	// and, for user stacks, resolved in process pid.
	Stack(info types.StackInfo, id int64, pid int) ([]Frame, error)
	// Username is the name of uid (bpftrace prints the number when unknown).
	Username(uid uint64) string
	// CgroupPath is cgroup_path()'s text for the cgroup id.
	CgroupPath(id uint64) string
}

// DwarfStacker is a Symbolizer that unwinds dw_ustack values: regs are
// the value after its length and pid (ip, sp, bp, then the stack copy;
// types.DwarfStackSize), in process pid.
type DwarfStacker interface {
	DwarfStack(pid int, regs []byte) ([]Frame, error)
}

// cgroupFilterer is a Symbolizer that can also restrict cgroup_path()'s
// hierarchies to those matching a wildcard filter.
type cgroupFilterer interface {
	CgroupPathFilter(id uint64, filter string) string
}

// UnknownAddr is how bpftrace prints an address it cannot resolve
// (a void* through an ostream): "0" for 0, else 0x and lowercase hex.
func UnknownAddr(addr uint64) string {
	if addr == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(addr, 16)
}

// Printer writes events and maps in one format.
type Printer struct {
	w      io.Writer
	format Format
	syms   Symbolizer
	// stacks are the stacks' lines made while one map prints (Map);
	// nil otherwise (stacklines.go).
	stacks *stackMemo

	// TimeFormats are the strftime formats by event id (Spec.Events[i].Format
	// for EvTime events), used to print strftime() values.
	TimeFormats map[int]string
	// Boot is the wall-clock time of boot: strftime() values are nsecs since
	// boot (bpf_ktime_get_boot_ns), printed as Boot + nsecs.
	Boot time.Time
	// Now gives time() its clock; time.Now when nil.
	Now func() time.Time
	// Loc is the time zone of time() and strftime(); time.Local when nil.
	Loc *time.Location
	// DummyClock: tseries epochs are taken as they are, not as CLOCK_TAI
	// intervals (bpftrace's BPFTRACE_DUMMY_TS_MAP test hook).
	DummyClock bool
	// ProbeNames are the full attach-point names by probe id, for the
	// probe builtin.
	ProbeNames []string
	// Compat is the bpftrace release whose output to print.
	Compat compat.Version
	// Notices receives what bpftrace 0.26 prints on stderr rather than
	// with the output ("Attached N probes"); nil: the output itself.
	Notices io.Writer
	// ExitGap receives the two newlines printed before the maps at exit;
	// nil: the output. With -o FILE bpftrace prints them on stdout, not
	// in the file.
	ExitGap io.Writer
	// FlameGraph, when set, is the file ExitMaps writes an SVG flame graph
	// of the stack-keyed maps to (--flamegraph); FlameTitle its title.
	FlameGraph string
	FlameTitle string
}

// New returns a Printer writing to w.
func New(w io.Writer, format Format, syms Symbolizer) *Printer {
	return &Printer{w: w, format: format, syms: syms, TimeFormats: map[int]string{}}
}

// Format is the printer's output format.
func (p *Printer) Format() Format { return p.format }

func (p *Printer) write(s string) error {
	if _, err := io.WriteString(p.w, s); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// message writes a text message as is, or as a JSON {"type", "data"} line.
func (p *Printer) message(typ, msg string) error {
	if p.format == JSON {
		return p.write(`{"type": "` + typ + `", "data": "` + jsonEscape(msg) + "\"}\n")
	}
	return p.write(msg)
}

// AttachedRecord is the JSON attached_probes record, with its newline.
func (p *Printer) AttachedRecord(n int) string {
	return fmt.Sprintf(`{"type": "attached_probes", "data": {"probes": %d}}`+"\n", n)
}

// IsJSON reports whether the printer prints JSON (-f json).
func (p *Printer) IsJSON() bool { return p.format == JSON }

// AttachedProbes prints bpftrace 0.17's "Attaching N probes..." or 0.26's
// "Attached N probes" (on Notices), or the JSON attached_probes record.
func (p *Printer) AttachedProbes(n int) error {
	if p.format == JSON {
		return p.write(p.AttachedRecord(n))
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	msg := fmt.Sprintf("Attaching %d probe%s...\n", n, plural)
	if p.Compat.AttachedAfter() {
		msg = fmt.Sprintf("Attached %d probe%s\n", n, plural)
	}
	// Folded output is data for flame graph tools: the message goes with
	// the notices, in 0.17's wording too.
	if p.Notices == nil || (!p.Compat.AttachedAfter() && p.format != Folded) {
		return p.write(msg)
	}
	if _, err := io.WriteString(p.Notices, msg); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// LostEvents reports n events the kernel dropped.
func (p *Printer) LostEvents(n uint64) error {
	if p.format == JSON {
		return p.write(fmt.Sprintf(`{"type": "lost_events", "data": {"events": %d}}`+"\n", n))
	}
	return p.write(fmt.Sprintf("Lost %d events\n", n))
}

// Printf prints a printf() event: format applied to args.
func (p *Printer) Printf(format string, args []Value) error {
	if len(args) == 0 {
		// bpftrace 0.17 prints a format without arguments as it is,
		// "%%" included.
		return p.message("printf", format)
	}
	var sb strings.Builder
	if err := p.sprintf(&sb, format, args); err != nil {
		return err
	}
	return p.message("printf", sb.String())
}

// System prints the output of a system() command.
func (p *Printer) System(out string) error { return p.message("syscall", out) }

// Cat prints the contents of a file read by cat().
func (p *Printer) Cat(contents string) error { return p.message("cat", contents) }

// Join prints join(): the arguments joined with sep, then a newline in text.
func (p *Printer) Join(args []string, sep string) error {
	s := strings.Join(args, sep)
	if p.format == JSON {
		return p.message("join", s)
	}
	return p.write(s + "\n")
}

// DefaultTimeFormat is time()'s format when the script gives none.
const DefaultTimeFormat = "%H:%M:%S\n"

// Time prints time(format) for the current wall-clock time.
func (p *Printer) Time(format string) error {
	if format == "" {
		format = DefaultTimeFormat
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	return p.message("time", Strftime(format, now().In(p.loc())))
}

func (p *Printer) loc() *time.Location {
	if p.Loc != nil {
		return p.Loc
	}
	return time.Local
}

// Value prints print(expr): the value and a newline, or a JSON "value" line.
func (p *Printer) Value(v Value) error {
	if p.format == JSON {
		return p.write(`{"type": "value", "data": ` + p.JSONText(v) + "}\n")
	}
	return p.write(p.Text(v) + "\n")
}

// Text is v as bpftrace prints it in text output (print(), map values).
func (p *Printer) Text(v Value) string { return p.text(v, 8) }

// text formats v; indent is the indentation of stack frames (8 in values,
// 4 in map keys, as bpftrace).
func (p *Printer) text(v Value, indent int) string {
	switch v.Kind() {
	case types.Int, types.Bool, types.Enum, types.Pointer, types.Ctx:
		// bpftrace 0.17 prints enums as numbers, bools as 1/0 and pointers
		// stored in maps as decimal integers; 0.26 prints words, names and
		// hex.
		if s, ok := p.text026(v); ok {
			return s
		}
		if v.Signed() {
			return strconv.FormatInt(v.Int(), 10)
		}
		return strconv.FormatUint(v.Bits, 10)
	case types.Kaddr:
		return strconv.FormatUint(v.Bits, 10)
	case types.Probe:
		if v.Bits < uint64(len(p.ProbeNames)) {
			return p.ProbeNames[v.Bits]
		}
		return ""
	case types.String:
		return string(v.Bytes)
	case types.Buffer:
		return bufText(v.Bytes)
	case types.Ksym:
		if p.syms == nil {
			return UnknownAddr(v.Bits)
		}
		return p.syms.KernelSym(v.Bits)
	case types.Usym:
		if p.syms == nil {
			return UnknownAddr(v.Bits)
		}
		return p.syms.UserSym(int(v.Aux), v.Bits)
	case types.Username:
		if p.syms == nil {
			return strconv.FormatUint(v.Bits, 10)
		}
		return p.syms.Username(v.Bits)
	case types.CgroupPath:
		if p.syms == nil {
			return ""
		}
		// cgroup_path(id, filter) keeps its filter in the type's Name.
		if f, ok := p.syms.(cgroupFilterer); ok && v.Type.Name != "" {
			return f.CgroupPathFilter(v.Bits, v.Type.Name)
		}
		return p.syms.CgroupPath(v.Bits)
	case types.Strerror:
		return Strerror(v.Int())
	case types.Inet:
		return inetText(v.Bits, v.Bytes)
	case types.MacAddr:
		return macText(v.Bytes)
	case types.Timestamp:
		return p.timestampText(v)
	case types.Stack:
		return p.stackText(v, indent)
	case types.Tuple:
		parts := make([]string, len(v.Elems))
		record := len(v.Names) > 0 && v.Names[0] != ""
		for i, e := range v.Elems {
			parts[i] = p.text(e, indent)
			if record {
				// A record literal's tuple (bpftrace 0.24).
				parts[i] = "." + v.Names[i] + " = " + parts[i]
			}
		}
		if record {
			return "{ " + strings.Join(parts, ", ") + " }"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case types.Array:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = p.text(e, indent)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case types.Record:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = "." + v.Names[i] + " = " + p.text(e, indent)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return ""
}

// JSONText is v as a JSON value in bpftrace's -f json output.
func (p *Printer) JSONText(v Value) string {
	switch v.Kind() {
	case types.Tuple:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = p.JSONText(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case types.Array:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = p.JSONText(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case types.Record:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = `"` + v.Names[i] + `": ` + p.JSONText(e)
		}
		if p.Compat.JSONCompactRecords() {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	switch v.Kind() {
	case types.Pointer, types.Ctx, types.Enum:
		// Numbers in JSON in both releases (0.26's hex and enum names
		// are text output only).
		if v.Signed() {
			return strconv.FormatInt(v.Int(), 10)
		}
		return strconv.FormatUint(v.Bits, 10)
	}
	s := p.text(v, 8)
	if jsonQuoted(v.Kind()) || p.Compat.JSONValid() && jsonQuoted026(v.Kind()) {
		return `"` + jsonEscape(s) + `"`
	}
	return s
}

// jsonQuoted lists the kinds bpftrace 0.17 quotes in JSON; the others (even
// strerror, cgroup_path and strftime, whose text is not a number) it
// writes bare.
func jsonQuoted(k types.Kind) bool {
	switch k {
	case types.String, types.Buffer, types.Ksym, types.Usym, types.Inet,
		types.Username, types.Stack, types.Probe:
		return true
	}
	return false
}

// jsonEscape escapes s as bpftrace 0.17 does: quotes, backslashes, \n \r \t,
// other control bytes as \u00XX — and, because it tests a signed char, bytes
// >= 0x80 as \u followed by the byte sign-extended to 32 bits (\uffffffff).
func jsonEscape(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if c <= 0x1f || c >= 0x80 {
				fmt.Fprintf(&sb, `\u%04x`, uint32(int32(int8(c))))
			} else {
				sb.WriteByte(c)
			}
		}
	}
	return sb.String()
}

// bufText prints buf() data: printable ASCII as is, other bytes as \xNN.
func bufText(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c <= 0x7e {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02x`, c)
		}
	}
	return sb.String()
}

// Address families of ntop() values.
const (
	afInet  = 2
	afInet6 = 10
)

func inetText(family uint64, addr []byte) string {
	switch family {
	case afInet:
		if len(addr) >= 4 {
			return netip.AddrFrom4([4]byte(addr[:4])).String()
		}
	case afInet6:
		if len(addr) >= 16 {
			return netip.AddrFrom16([16]byte(addr[:16])).String()
		}
	}
	return ""
}

func macText(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(parts, ":")
}

// Strerror is strerror(errno) as glibc words it.
func Strerror(errno int64) string {
	if errno >= 0 && errno < int64(len(glibcErrors)) && glibcErrors[errno] != "" {
		return glibcErrors[errno]
	}
	return fmt.Sprintf("Unknown error %d", errno)
}

func (p *Printer) timestampText(v Value) string {
	format, ok := p.TimeFormats[int(v.Bits)]
	if !ok {
		return ""
	}
	t := p.Boot.Add(time.Duration(v.Aux)).In(p.loc())
	return Strftime(format, t)
}

// sourceSuffix is "@file:line" for a frame whose source line is known.
func sourceSuffix(f Frame) string {
	if f.File == "" || f.Line <= 0 {
		return ""
	}
	return "@" + f.File + ":" + strconv.Itoa(f.Line)
}

// chunkWriter gathers a map's text and writes it to the printer's
// writer in chunks of about chunkSize bytes, so that printing a large map
// holds one chunk, not the whole text.
type chunkWriter struct {
	p   *Printer
	buf []byte
}

const chunkSize = 64 << 10

func (p *Printer) chunks() *chunkWriter { return &chunkWriter{p: p} }

func (w *chunkWriter) add(s string) { w.buf = append(w.buf, s...) }

func (w *chunkWriter) flushIfFull() error {
	if len(w.buf) < chunkSize {
		return nil
	}
	return w.flush()
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.p.w.Write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
