package runtime

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/gotrace/gotrace/stdlib"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/types"
	"github.com/gotrace/gotrace/runtime/output"
)

// TextPrinter is the runtime's Printer over runtime/output: it decodes each
// record's payload with the event's layout and prints it as bpftrace does.
type TextPrinter struct {
	P      *output.Printer
	Out    *Output
	Spec   *compiler.Spec
	Unsafe bool
	// NoWarnings (--no-warnings) drops warnf() output.
	NoWarnings bool
	// CatMax bounds the bytes cat() prints and reads (BPFTRACE_CAT_BYTES_MAX;
	// 0: DefaultCatMax).
	CatMax int
	sym    symTracker // symbols.go
	// fast holds the compiled printf formats by event ID (fastprintf.go);
	// buf is the reused line buffer.
	fast []*fastFormat
	buf  []byte
	// capture: see StartCapture.
	capture *bytes.Buffer
	notices io.Writer // Notices before the capture
	errs    int       // errorf()s and helper errors printed while capturing
}

// StartCapture sends everything the printer writes from now on, stdout
// and the errorf()/warnf() diagnostics alike, to a buffer, until
// EndCapture returns it with the number of errors (errorf() calls and
// helper errors) printed meanwhile: one test: probe's run.
func (t *TextPrinter) StartCapture() {
	t.capture, t.errs, t.notices = &bytes.Buffer{}, 0, t.P.Notices
	t.Out.setCapture(t.capture)
	t.P.Notices = t.capture
}

// EndCapture ends StartCapture.
func (t *TextPrinter) EndCapture() (string, int) {
	if t.capture == nil {
		return "", 0
	}
	t.Out.setCapture(nil)
	t.P.Notices = t.notices
	text, errs := t.capture.String(), t.errs
	t.capture = nil
	return text, errs
}

// TestResults prints the test:NAME results (--mode test).
func (t *TextPrinter) TestResults(res []output.TestResult) error { return t.P.TestResults(res) }

// NewTextPrinter prints events of spec to out in format f.
func NewTextPrinter(out *Output, f output.Format, syms output.Symbolizer, spec *compiler.Spec) *TextPrinter {
	p := output.New(out, f, syms)
	p.ProbeNames = spec.Probes
	p.Boot = bootTime()
	for _, ev := range spec.Events {
		if ev.Kind == compiler.EvTime {
			p.TimeFormats[ev.ID] = ev.Format
		}
	}
	t := &TextPrinter{P: p, Out: out, Spec: spec, CatMax: DefaultCatMax, sym: symTracker{syms: syms}}
	if f == output.Text {
		t.fast = make([]*fastFormat, len(spec.Events))
		for i, ev := range spec.Events {
			if ev.ID == i {
				t.fast[i] = compileFast(ev)
			}
		}
	}
	return t
}

func (t *TextPrinter) decodeArgs(ev *compiler.Event, payload []byte) ([]output.Value, error) {
	t.syncProbeNames() // probenames.go
	if ev.Args == nil || len(ev.Args.Fields) == 0 {
		return nil, nil
	}
	v, err := output.Decode(ev.Args, payload)
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", ev.ID, err)
	}
	return v.Elems, nil
}

// Event implements Printer.
func (t *TextPrinter) Event(ev *compiler.Event, payload []byte) error {
	if ev.ID >= 0 && ev.ID < len(t.fast) && t.fast[ev.ID] != nil {
		if b, ok := t.fast[ev.ID].appendTo(t.buf[:0], payload); ok {
			t.buf = b
			if _, err := t.Out.Write(b); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			return nil
		}
	}
	args, err := t.decodeArgs(ev, payload)
	if err != nil {
		return err
	}
	t.sym.event(ev, args)
	switch ev.Kind {
	case compiler.EvPrintf:
		return t.P.Printf(ev.Format, args)
	case compiler.EvTime:
		return t.P.Time(ev.Format)
	case compiler.EvHelperError:
		return t.helperError(ev, payload)
	case compiler.EvErrorf, compiler.EvWarnf:
		return t.diagnostic(ev, args)
	case compiler.EvPrintNonMap:
		if len(args) == 0 {
			return fmt.Errorf("print: event %d has no value", ev.ID)
		}
		return t.P.Value(args[0])
	case compiler.EvCat:
		path, err := t.sprintf(ev.Format, args)
		if err != nil {
			return err
		}
		limit := t.CatMax
		if limit <= 0 {
			limit = DefaultCatMax
		}
		b, rerr := readCat(path, limit)
		if rerr != nil {
			// bpftrace reports and goes on.
			if t.P.Compat.CatErrorParens() {
				fmt.Fprintf(os.Stderr, "ERROR: failed to open file '%s' (%s)\n", path, strerror(unwrapPathErr(rerr)))
			} else {
				fmt.Fprintf(os.Stderr, "ERROR: failed to open file '%s': %s\n", path, strerror(unwrapPathErr(rerr)))
			}
			return nil
		}
		return t.P.Cat(string(b))
	case compiler.EvSystem:
		if !t.Unsafe {
			return fmt.Errorf("system() needs --unsafe")
		}
		cmd, err := t.sprintf(ev.Format, args)
		if err != nil {
			return err
		}
		if err := t.Out.Flush(); err != nil {
			return err
		}
		out, _ := exec.Command("/bin/sh", "-c", cmd).Output()
		return t.P.System(string(out))
	case compiler.EvJoin:
		return t.join(ev, payload)
	}
	return fmt.Errorf("event %d: unexpected kind %d", ev.ID, ev.Kind)
}

// join prints join(arr[, sep]): the payload is the array of argv strings;
// an empty string ends it.
func (t *TextPrinter) join(ev *compiler.Event, payload []byte) error {
	args, err := t.decodeArgs(ev, payload)
	if err != nil {
		return err
	}
	var parts []string
list:
	for _, a := range args {
		for _, e := range flattenStrings(a) {
			if e == "" {
				break list // the first empty string ends the whole list
			}
			parts = append(parts, e)
		}
	}
	sep := ev.Format
	if sep == "" {
		sep = " "
	}
	return t.P.Join(parts, sep)
}

func flattenStrings(v output.Value) []string {
	if len(v.Elems) > 0 {
		var out []string
		for _, e := range v.Elems {
			out = append(out, flattenStrings(e)...)
		}
		return out
	}
	return []string{strings.TrimRight(string(v.Bytes), "\x00")}
}

func (t *TextPrinter) sprintf(format string, args []output.Value) (string, error) {
	var b strings.Builder
	if err := output.Printf(&b, format, args); err != nil {
		return "", err
	}
	return b.String(), nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func (t *TextPrinter) mapData(m *MapData) output.MapData {
	t.syncProbeNames() // probenames.go
	// The snapshot's entries as they are (Entry is output.Entry): a map
	// of 10⁶ keys is not held twice while it prints.
	md := output.MapData{Info: m.Spec.User, Entries: m.Entries}
	if len(md.Entries) == 0 && keylessCount(m.Spec) && t.P.Compat.CountKeepsZero() {
		// bpftrace 0.17 prints a keyless count() map that has no value
		// (never counted, or deleted) as 0.
		md.Entries = []output.Entry{{Key: make([]byte, m.Spec.KeySize), Value: make([]byte, m.Spec.ValueSize)}}
	}
	return md
}

// helperError prints a -k warning as bpftrace: the place in the script,
// the helper and its error ("0" for a lookup that found nothing).
func (t *TextPrinter) helperError(ev *compiler.Event, payload []byte) error {
	t.errs++
	var ret int64
	if len(payload) >= 8 {
		ret = int64(binary.LittleEndian.Uint64(payload))
	}
	if t.P.Format() == output.JSON {
		// bpftrace's helper_error object: the helper, its return code and
		// where in the script the call is (0.26: with the error's text
		// and the script's name).
		if t.P.Compat.HelperCheckReads() {
			msg, file := "", "stdin"
			if ret < 0 {
				msg = output.Strerror(-ret)
			}
			if t.Spec.Source != nil && t.Spec.Source.Name != "" {
				file = t.Spec.Source.Name
			}
			m, _ := json.Marshal(msg)
			f, _ := json.Marshal(file)
			_, err := fmt.Fprintf(t.Out, "{\"type\": \"helper_error\", \"msg\": %s, \"helper\": \"%s\", \"retcode\": %d, \"filename\": %s, \"line\": %d, \"col\": %d}\n",
				m, ev.Format, ret, f, ev.Pos.Start.Line, ev.Pos.Start.Col)
			return err
		}
		_, err := fmt.Fprintf(t.Out, "{\"type\": \"helper_error\", \"helper\": \"%s\", \"retcode\": %d, \"line\": %d, \"col\": %d}\n",
			ev.Format, ret, ev.Pos.Start.Line, ev.Pos.Start.Col)
		return err
	}
	what := "0"
	if ret != 0 {
		what = fmt.Sprintf("%s (%d)", output.Strerror(-ret), ret)
	}
	d := &lang.Diagnostics{Src: t.Spec.Source}
	if t.P.Compat.HelperCheckReads() {
		// bpftrace 0.26's words for a key that is not there, then the
		// helper and its code on a line of their own.
		var m string
		switch {
		case ev.Format == "map_delete_elem" && ret == -2:
			m = "Can't delete map element because it does not exist."
		case ev.Format == "map_lookup_elem" && ret == 0:
			m = "Can't lookup map element because it does not exist."
		}
		if m != "" {
			msg := d.Format(lang.Diagnostic{Severity: lang.Warning, Span: ev.Pos, Msg: m})
			head, rest, _ := strings.Cut(msg, "\n")
			_, err := fmt.Fprintf(t.Out, "%s\nAdditional Info - helper: %s, retcode: %d\n%s\n", head, ev.Format, ret, rest)
			return err
		}
	}
	msg := d.Format(lang.Diagnostic{Severity: lang.Warning, Span: ev.Pos, Msg: "Failed to " + ev.Format + ": " + what})
	_, err := fmt.Fprintln(t.Out, msg)
	return err
}

// Benchmarks prints the bench:NAME results (--mode bench).
func (t *TextPrinter) Benchmarks(res []output.Bench) error { return t.P.Benchmarks(res) }

// diagnostic prints errorf()/warnf() on stderr as bpftrace 0.26 does: the
// formatted message as a diagnostic at the call (warnf not with
// --no-warnings).
func (t *TextPrinter) diagnostic(ev *compiler.Event, args []output.Value) error {
	sev := lang.Error
	if ev.Kind == compiler.EvWarnf {
		if t.NoWarnings {
			return nil
		}
		sev = lang.Warning
	}
	msg, err := t.sprintf(ev.Format, args)
	if err != nil {
		return err
	}
	if sev == lang.Error {
		t.errs++
	}
	w := t.P.Notices
	if w == nil {
		w = os.Stderr
	}
	if err := t.Out.Flush(); err != nil {
		return err
	}
	d := &lang.Diagnostics{Src: t.Spec.Source}
	_, err = fmt.Fprintln(w, d.Format(lang.Diagnostic{Severity: sev, Span: ev.Pos, Msg: msg}))
	return err
}

// bootTime is the wall-clock time of boot: strftime() prints its nsecs
// argument as an offset from it, as bpftrace 0.17 does (realtime minus
// CLOCK_BOOTTIME, read back to back).
func bootTime() time.Time {
	var real, boot unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME, &real) != nil || unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil {
		return time.Time{}
	}
	return time.Unix(real.Sec, real.Nsec).Add(-time.Duration(boot.Nano()))
}

// keylessCount reports whether m implements a count() map without keys.
func keylessCount(m *compiler.MapSpec) bool {
	u := m.User
	return u != nil && u.Value != nil && u.Value.Kind == types.Count && u.Key == nil && len(u.KeyParts) == 0
}

// PrintMap implements Printer: print(@m[, top[, div]]). The payload holds
// top and div as little-endian u64s when the script gave them.
func (t *TextPrinter) PrintMap(ev *compiler.Event, payload []byte, m *MapData) error {
	t.sym.mapData(m, false)
	md := t.mapData(m)
	if len(payload) >= 8 {
		md.Top = int(int64(binary.LittleEndian.Uint64(payload)))
	}
	if len(payload) >= 16 {
		md.Div = int(int64(binary.LittleEndian.Uint64(payload[8:])))
	}
	return t.P.Map(md)
}

// Maps implements Printer: every user map at exit.
func (t *TextPrinter) Maps(maps []*MapData) error {
	// Kernel stacks are resolved in one pass over kallsyms, without
	// building its index (sym.PrepareKernelStacks); a failure leaves it
	// to the index.
	if p, ok := t.sym.syms.(interface{ PrepareKernelStacks() error }); ok {
		_ = p.PrepareKernelStacks()
	}
	var all []output.MapData
	for _, m := range maps {
		if m.Spec.User == nil {
			continue
		}
		t.sym.mapData(m, true)
		all = append(all, t.mapData(m))
	}
	return t.P.ExitMaps(all)
}

// AllMaps prints every user map while tracing goes on (SIGUSR1 in
// bpftrace 0.17).
func (t *TextPrinter) AllMaps(maps []*MapData) error {
	var all []output.MapData
	for _, m := range maps {
		if m.Spec.User == nil {
			continue
		}
		t.sym.mapData(m, true)
		all = append(all, t.mapData(m))
	}
	return t.P.AllMaps(all)
}

// Flush implements Printer.
func (t *TextPrinter) Flush() error { return t.Out.Flush() }

// IterOutput prints an iterator's seq-file output as printf output.
func (t *TextPrinter) IterOutput(text string) error { return t.P.Printf(text, nil) }

// LostEvents prints "Lost N events" (or its JSON form).
func (t *TextPrinter) LostEvents(n uint64) error { return t.P.LostEvents(n) }

// Drained is called when the ring buffer has no more records for now.
func (t *TextPrinter) Drained() error { return t.Out.Drained() }

// AttachedProbes prints "Attaching N probes..." (or its JSON form) and
// flushes it, so that a reader sees it before the first event.
func (t *TextPrinter) AttachedProbes(n int) error {
	if err := t.P.AttachedProbes(n); err != nil {
		return err
	}
	return t.Out.Flush()
}

// writeStart stores the tracer's start time in the `start` map (see
// compiler/ABI.md), which `elapsed` subtracts from bpf_ktime_get_ns.
func (l *Loaded) writeStart() error {
	m, ok := l.Maps[compiler.MapStart]
	if !ok {
		return nil
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return fmt.Errorf("read the monotonic clock: %w", err)
	}
	if err := m.Put(uint32(0), uint64(ts.Nano())); err != nil {
		return fmt.Errorf("write the start time: %w", err)
	}
	return nil
}

// writeTaiOffset stores CLOCK_TAI - CLOCK_BOOTTIME in the `tai_offset` map,
// which nsecs(sw_tai) adds to bpf_ktime_get_boot_ns.
func (l *Loaded) writeTaiOffset() error {
	m, ok := l.Maps[stdlib.TaiOffsetMap]
	if !ok {
		return nil
	}
	var tai, boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return fmt.Errorf("read the boot clock: %w", err)
	}
	if err := unix.ClockGettime(unix.CLOCK_TAI, &tai); err != nil {
		return fmt.Errorf("read the TAI clock: %w", err)
	}
	if err := m.Put(uint32(0), uint64(tai.Nano()-boot.Nano())); err != nil {
		return fmt.Errorf("write the TAI offset: %w", err)
	}
	return nil
}

// writeCpid stores the -c command's pid in the `cpid` map (see
// compiler/ABI.md), which the cpid builtin reads.
func (l *Loaded) writeCpid(pid int) error {
	m, ok := l.Maps[compiler.MapCpid]
	if !ok {
		return nil
	}
	if err := m.Put(uint32(0), uint64(pid)); err != nil {
		return fmt.Errorf("write the child's pid: %w", err)
	}
	return nil
}

// strerror spells err as C's strerror does ("No such file or directory").
func strerror(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// IsJSON reports whether the output is JSON (-f json).
func (t *TextPrinter) IsJSON() bool { return t.P.IsJSON() }

// AttachedRecord is the JSON attached_probes record.
func (t *TextPrinter) AttachedRecord(n int) string { return t.P.AttachedRecord(n) }
