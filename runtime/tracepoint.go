package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/gotrace/gotrace/lang"
)

// tracepointProvider attaches to tracefs events (tracepoint:CAT:NAME),
// expanding wildcards over available_events.
type tracepointProvider struct{}

func init() { register(lang.ProbeTracepoint, tracepointProvider{}) }

func (tracepointProvider) Expand(ap *lang.AttachPoint, env *Env) ([]*Probe, error) {
	cat, ev := ap.Target, ap.Func
	if cat == "" || ev == "" {
		return nil, fmt.Errorf("tracepoint needs a category and a name: tracepoint:CATEGORY:NAME")
	}
	if !hasWildcard(cat) && !hasWildcard(ev) {
		if _, err := tracefsDir(); err != nil {
			return nil, err
		}
		if !tracepointExists(cat, ev) {
			return nil, &missingTracepoint{&lang.HintError{Msg: fmt.Sprintf("tracepoint not found: %s:%s", cat, ev), Hint: suggestTracepoint(cat, ev)}}
		}
		return []*Probe{{Name: "tracepoint:" + cat + ":" + ev, Target: cat, Func: ev}}, nil
	}
	names, err := matchTracepoints(cat, ev)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		if env != nil && env.MissingProbes == "legacy" {
			return nil, fmt.Errorf("tracepoints not found: %s:%s", cat, ev) // bpftrace 0.17's words
		}
		return nil, fmt.Errorf("no tracepoints match %s:%s", cat, ev)
	}
	out := make([]*Probe, 0, len(names))
	for _, n := range names {
		c, e, _ := strings.Cut(n, ":")
		out = append(out, &Probe{Name: "tracepoint:" + n, Target: c, Func: e})
	}
	return out, nil
}

func (tracepointProvider) Attach(prog *ebpf.Program, probes []*Probe, env *Env) ([]io.Closer, error) {
	var out []io.Closer
	for _, p := range probes {
		c, err := attachTracepoint(prog, p)
		if err != nil {
			return out, fmt.Errorf("attach %s: %w", p.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// attachTracepoint opens the tracepoint's perf event and links prog to it.
// Unlike link.Tracepoint it keeps both descriptors, so a slow detach can
// be handed off (detach.go). Kernels without perf links (before 5.15) go
// through cilium's ioctl fallback.
func attachTracepoint(prog *ebpf.Program, p *Probe) (io.Closer, error) {
	fd, ok := takeEarlyTracepoint(p.Target, p.Func)
	if !ok {
		var err error
		if fd, err = openTracepoint(p.Target, p.Func, false); err != nil {
			return nil, err
		}
	}
	if p.Cookie != 0 {
		// cilium's raw links take no cookie (and a zero cookie is the
		// default): create the perf link ourselves.
		lfd, err := perfLinkWithCookie(prog, fd, p.Cookie)
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		return &fdCloser{fds: []int{lfd, fd}}, nil
	}
	l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, ebpf.ErrNotSupported) {
			return link.Tracepoint(p.Target, p.Func, prog, nil)
		}
		return nil, err
	}
	lfd, err := unix.Dup(l.FD())
	l.Close() // our dup keeps the link
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("dup link: %w", err)
	}
	unix.CloseOnExec(lfd)
	return &fdCloser{fds: []int{lfd, fd}}, nil
}

// openTracepoint opens tracepoint cat:name's perf event, disabled when
// asked (a pre-opened one, enabled when a probe takes it).
func openTracepoint(cat, name string, disabled bool) (int, error) {
	id, err := tracepointID(cat, name)
	if err != nil {
		return -1, err
	}
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_TRACEPOINT,
		Config:      id,
		Size:        uint32(unsafeSizeofPerfAttr),
		Sample_type: unix.PERF_SAMPLE_RAW,
		Sample:      1,
		Wakeup:      1,
	}
	if disabled {
		attr.Bits |= unix.PerfBitDisabled
	}
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("perf_event_open: %w", err)
	}
	return fd, nil
}

// Tracepoint events opened ahead (issue 20). Opening a tracepoint's perf
// event is most of attaching it: the kernel registers its probe on the
// tracepoint then, patching its call sites (1 ms or more here, of a 7 ms
// start-up). PrepareTracepoints opens them on another goroutine while the
// script checks, compiles and loads; attachTracepoint takes one instead of
// opening its own. Until taken they are disabled, with no program: the
// kernel records nothing for them. What no probe took is closed after
// the attach (DiscardTracepoints), and by the process's exit.

// earlyTracepoint is one tracepoint event being opened ahead.
type earlyTracepoint struct {
	cat, name string
	a         *ahead // opens it
	fd        int
	err       error
}

func (e *earlyTracepoint) open() { e.fd, e.err = openTracepoint(e.cat, e.name, true) }

var (
	earlyTPMu sync.Mutex
	earlyTPs  map[string]*earlyTracepoint // by "CAT:NAME"
)

// maxEarlyTracepoints bounds the events opened ahead: past a few, a
// wildcard-like list of probes attaches as before.
const maxEarlyTracepoints = 16

// PrepareTracepoints starts opening, on another goroutine, the perf
// events of the tracepoint attach points named without wildcards or
// parameters (one per distinct tracepoint, at most maxEarlyTracepoints),
// for attaching them to take. It returns at once; a failure (no such
// tracepoint, not root) is left for the attach to meet and report.
func PrepareTracepoints(aps []*lang.AttachPoint) {
	var todo []*earlyTracepoint
	earlyTPMu.Lock()
	if earlyTPs == nil {
		earlyTPs = map[string]*earlyTracepoint{}
	}
	for _, ap := range aps {
		if len(todo) == maxEarlyTracepoints {
			break
		}
		if ap.Provider != lang.ProbeTracepoint || !plainTracepointPart(ap.Target) || !plainTracepointPart(ap.Func) {
			continue
		}
		k := ap.Target + ":" + ap.Func
		if earlyTPs[k] != nil {
			continue
		}
		e := &earlyTracepoint{cat: ap.Target, name: ap.Func, fd: -1}
		e.a = newAhead(e.open)
		earlyTPs[k] = e
		todo = append(todo, e)
	}
	earlyTPMu.Unlock()
	if len(todo) == 0 {
		return
	}
	go func() {
		for _, e := range todo {
			e.a.do() // unless its attach has begun opening it
		}
	}()
}

// plainTracepointPart reports whether s names a tracefs directory as it
// is: no wildcard, no positional parameter, no path separator.
func plainTracepointPart(s string) bool {
	return s != "" && !strings.ContainsAny(s, "*?[]{}$/") && s != "." && s != ".."
}

// takeEarlyTracepoint returns, enabled, the event PrepareTracepoints
// opened for cat:name, waiting for its opening; false if there is none
// (or it failed: the caller opens its own and reports that failure). A
// second probe on the same tracepoint opens its own.
func takeEarlyTracepoint(cat, name string) (int, bool) {
	k := cat + ":" + name
	earlyTPMu.Lock()
	e := earlyTPs[k]
	delete(earlyTPs, k)
	earlyTPMu.Unlock()
	if e == nil {
		return -1, false
	}
	e.a.wait() // opened here if the goroutine has not begun it
	if e.err != nil {
		return -1, false
	}
	if err := unix.IoctlSetInt(e.fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
		unix.Close(e.fd)
		return -1, false
	}
	return e.fd, true
}

// DiscardTracepoints closes the events PrepareTracepoints opened that no
// probe took: Attach calls it when done and a run on its way out (a
// failure before the attach, a syscall tracepoint attached raw); a caller
// whose script then fails to compile calls it itself.
func DiscardTracepoints() {
	earlyTPMu.Lock()
	all := earlyTPs
	earlyTPs = nil
	earlyTPMu.Unlock()
	for _, e := range all {
		if e.a.cancel() {
			continue // never opened
		}
		if e.err == nil {
			unix.Close(e.fd)
		}
	}
}

// tracepointID reads events/CAT/NAME/id from tracefs.
func tracepointID(cat, name string) (uint64, error) {
	dir, err := tracefsDir()
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "events", cat, name, "id"))
	if err != nil {
		return 0, fmt.Errorf("tracepoint %s:%s: %w", cat, name, err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("tracepoint %s:%s: bad id %q", cat, name, b)
	}
	return id, nil
}

// suggestTracepoint is the "did you mean" of a tracepoint that does not
// exist: the closest event of the category, or of the closest category.
func suggestTracepoint(cat, ev string) string {
	dir, err := tracefsDir()
	if err != nil {
		return ""
	}
	subdirs := func(d string) []string {
		ents, _ := os.ReadDir(d)
		var names []string
		for _, e := range ents {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		return names
	}
	events := filepath.Join(dir, "events")
	if _, err := os.Stat(filepath.Join(events, cat)); err != nil {
		var all []string
		for _, c := range subdirs(events) {
			if lang.EditDistance(c, cat) <= max(1, len(cat)/3) {
				for _, e := range subdirs(filepath.Join(events, c)) {
					all = append(all, c+":"+e)
				}
			}
		}
		return lang.Suggest(cat+":"+ev, all)
	}
	var names []string
	for _, e := range subdirs(filepath.Join(events, cat)) {
		names = append(names, cat+":"+e)
	}
	return lang.Suggest(cat+":"+ev, names)
}

// missingTracepoint is a tracepoint named without wildcards that the
// kernel does not have. Alone in its clause it is an error; beside other
// attach points it is a warning at its place and the rest attach, as in
// bpftrace ("t:syscalls:sys_exit_nanosleep,t:syscalls:nonsense { }").
type missingTracepoint struct{ *lang.HintError }

func (e *missingTracepoint) Unwrap() error { return e.HintError }
