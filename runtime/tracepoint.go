package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
			return nil, &lang.HintError{Msg: fmt.Sprintf("tracepoint not found: %s:%s", cat, ev), Hint: suggestTracepoint(cat, ev)}
		}
		return []*Probe{{Name: "tracepoint:" + cat + ":" + ev, Target: cat, Func: ev}}, nil
	}
	names, err := matchTracepoints(cat, ev)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
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
	id, err := tracepointID(p.Target, p.Func)
	if err != nil {
		return nil, err
	}
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_TRACEPOINT,
		Config:      id,
		Size:        uint32(unsafeSizeofPerfAttr),
		Sample_type: unix.PERF_SAMPLE_RAW,
		Sample:      1,
		Wakeup:      1,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open: %w", err)
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
