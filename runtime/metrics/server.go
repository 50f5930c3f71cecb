package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

// Server serves /metrics. It starts serving at Listen (gotrace_up only);
// Attach gives it the script's maps.
type Server struct {
	ln   net.Listener
	http *http.Server
	done chan struct{}

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
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", DefaultHost(addr))
	if err != nil {
		return nil, err
	}
	s := &Server{ln: &limitListener{Listener: ln, sem: make(chan struct{}, maxConns)}, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s)
	s.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       headerTimeout,
		WriteTimeout:      30 * time.Second,
		// A keep-alive connection with no request closes after this:
		// idle clients must not hold descriptors for ever.
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: 16 << 10,
	}
	go func() {
		defer close(s.done)
		s.http.Serve(ln) // returns http.ErrServerClosed at Close
	}()
	return s, nil
}

// idleTimeout closes idle keep-alive connections; maxConns bounds the
// connections open at once (more wait in the kernel's accept queue).
// (Variables for tests.)
var (
	idleTimeout   = 15 * time.Second
	headerTimeout = 10 * time.Second
	maxConns      = 64
)

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

// limitListener accepts at most cap(sem) connections at once.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
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

// ServeHTTP writes the exposition, reading every map now.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var b bytes.Buffer
	if err := s.write(&b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Write(b.Bytes())
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

// Close stops serving (waiting briefly for scrapes in flight) and closes
// the map duplicates.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	<-s.done
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
