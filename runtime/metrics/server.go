package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/runtime"
	"github.com/gotrace/gotrace/runtime/output"
	"github.com/gotrace/gotrace/runtime/sym"
)

// Server serves /metrics (over http.go's server, not net/http: see there
// why). It starts serving at Listen (gotrace_up only); Attach gives it the
// script's maps.
type Server struct {
	ln     net.Listener
	http   *httpServer
	scrape func(io.Writer) error // s.write; tests replace it

	mu     sync.Mutex // serialises scrapes: the printer and symbolizer are not shared
	loaded *runtime.Loaded
	maps   []*compiler.MapSpec
	clones []*ebpf.Map
	p      *output.Printer
}

// Listen binds addr ([host]:port, or a bare port; port 0 picks a free
// one) and starts serving. Without a host it binds the loopback address
// only: the endpoint shows every map's keys and values (process names,
// file names, stacks) to whoever can connect, so serving other machines
// takes an explicit host (0.0.0.0, [::] or an interface's address). The
// error is net.Listen's ("listen tcp ...: bind: address already in use").
func Listen(addr string) (*Server, error) { return listen(addr, nil) }

// listen is Listen with another scrape function than the maps' (tests).
func listen(addr string, scrape func(io.Writer) error) (*Server, error) {
	ln, err := net.Listen("tcp", DefaultHost(addr))
	if err != nil {
		return nil, err
	}
	s := &Server{ln: newLimitListener(ln, maxConns), scrape: scrape}
	if s.scrape == nil {
		s.scrape = s.write
	}
	s.http = newHTTPServer(s.ln, s.handle)
	return s, nil
}

// DefaultHost is addr with the loopback host when it names none (":9464"
// or "9464").
func DefaultHost(addr string) string {
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// Addr is the bound address (the chosen port when it was 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is where the metrics are: http://ADDR/metrics.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// Attach serves l's user maps from now on. It keeps duplicates of the maps'
// descriptors (and of the stack maps, to print stack keys), so scrapes never
// touch l, which the runtime closes on its own schedule.
func (s *Server) Attach(l *runtime.Loaded) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	syms := sym.New(sym.Options{})
	clones := map[string]*ebpf.Map{}
	var errs []error
	for _, ms := range l.Spec.Maps {
		m := l.Maps[ms.Name]
		isStack := ms.User == nil && strings.HasPrefix(ms.Name, "stack_")
		if m == nil || (ms.User == nil && !isStack) {
			continue
		}
		c, err := m.Clone()
		if err != nil {
			errs = append(errs, fmt.Errorf("map %s: %w", ms.Name, err))
			continue
		}
		clones[ms.Name] = c
		s.clones = append(s.clones, c)
		if isStack {
			syms.SetStackMap(ms.Name, c)
		}
	}
	syms.RefreshKernel()
	s.loaded = &runtime.Loaded{Spec: l.Spec, Maps: clones}
	for _, ms := range s.loaded.UserMaps() {
		if clones[ms.Name] != nil {
			s.maps = append(s.maps, ms)
		}
	}
	p := output.New(io.Discard, output.Text, syms)
	p.Boot = bootTime()
	for _, ev := range l.Spec.Events {
		if ev.Kind == compiler.EvTime {
			p.TimeFormats[ev.ID] = ev.Format
		}
	}
	s.p = p
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	return nil
}

// handle answers a request: the exposition, reading every map now, for
// GET and HEAD of /metrics.
func (s *Server) handle(r *request) response {
	if r.path != "/metrics" {
		return textResponse(404, "404 page not found")
	}
	if r.method != "GET" && r.method != "HEAD" {
		resp := textResponse(405, "method not allowed")
		resp.allow = "GET, HEAD"
		return resp
	}
	var b bytes.Buffer
	if err := s.scrape(&b); err != nil {
		return textResponse(500, err.Error())
	}
	return response{status: 200, contentType: ContentType, body: b.Bytes()}
}

func (s *Server) write(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	if p == nil {
		p = output.New(io.Discard, output.Text, nil)
	}
	var maps []*runtime.MapData
	if s.loaded != nil {
		// The runtime extends the probe table when it attaches.
		p.ProbeNames = s.loaded.Spec.Probes
		for _, ms := range s.maps {
			md, err := s.loaded.ReadMap(ms)
			if err != nil {
				return fmt.Errorf("metrics: %w", err)
			}
			maps = append(maps, md)
		}
	}
	return Write(w, p, maps)
}

// Close stops serving (waiting up to closeTimeout for scrapes in flight)
// and closes the map duplicates.
func (s *Server) Close() error {
	err := s.http.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clones {
		c.Close()
	}
	s.clones, s.loaded, s.maps = nil, nil, nil
	if err != nil {
		return fmt.Errorf("--metrics: close: %w", err)
	}
	return nil
}

// bootTime is the wall-clock time of boot, for strftime() values.
func bootTime() time.Time {
	var real, boot unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME, &real) != nil || unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil {
		return time.Time{}
	}
	return time.Unix(real.Sec, real.Nsec).Add(-time.Duration(boot.Nano()))
}
