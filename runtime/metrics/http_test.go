package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serve starts a server on a free loopback port with scrape (nil: the
// maps', which before Attach is gotrace_up only) and closes it at the end.
func serve(t *testing.T, scrape func(io.Writer) error) *Server {
	t.Helper()
	s, err := listen("127.0.0.1:0", scrape)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dial(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

// readResp reads one response to a request of method (HEAD has no body).
func readResp(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, string(b)
}

// closed reports whether the server closed c (it reads EOF, no byte).
func closed(t *testing.T, br *bufio.Reader) bool {
	t.Helper()
	n, err := br.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return n == 0 && err != nil
}

const getMetrics = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

// TestHTTPRequests: one raw request per row, its status, headers and
// body, and whether the connection stays usable (a second GET answers).
func TestHTTPRequests(t *testing.T) {
	defer func(n int64) { maxDiscard = n }(maxDiscard)
	maxDiscard = 1000
	s := serve(t, nil)
	big := "X-Big: " + strings.Repeat("a", 16<<10) + "\r\n"
	near := "X-Near: " + strings.Repeat("a", 16<<10-len("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Near: \r\n\r\n")) + "\r\n"
	for _, tc := range []struct {
		name, req string
		method    string // of the request, for the response's framing
		status    int
		header    map[string]string // "" wants the header absent
		body      string
		close     bool
	}{
		{"get", getMetrics, "GET", 200, map[string]string{"Content-Type": ContentType, "Content-Length": strconv.Itoa(len(up)), "Connection": ""}, up, false},
		{"query", "GET /metrics?a=1&b HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 200, nil, up, false},
		{"head", "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD", 200, map[string]string{"Content-Type": ContentType, "Content-Length": strconv.Itoa(len(up))}, "", false},
		{"absolute form", "GET http://x:1/metrics HTTP/1.1\r\nHost: x:1\r\n\r\n", "GET", 200, nil, up, false},
		{"empty line first", "\r\n" + getMetrics, "GET", 200, nil, up, false},
		{"LF line ends", "GET /metrics HTTP/1.1\nHost: x\n\n", "GET", 200, nil, up, false},
		{"headers near the limit", "GET /metrics HTTP/1.1\r\nHost: x\r\n" + near + "\r\n", "GET", 200, nil, up, false},
		{"post", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "POST", 405, map[string]string{"Allow": "GET, HEAD", "Connection": ""}, "method not allowed\n", false},
		{"put no body", "PUT /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "PUT", 405, map[string]string{"Allow": "GET, HEAD"}, "method not allowed\n", false},
		{"lower-case method", "get /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "get", 405, nil, "method not allowed\n", false},
		{"get with body", "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", "GET", 200, nil, up, false},
		{"body over the bound", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", "POST", 405, map[string]string{"Connection": "close"}, "method not allowed\n", true},
		{"chunked body", "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "POST", 405, map[string]string{"Connection": "close"}, "method not allowed\n", true},
		{"expect 100-continue", "POST /metrics HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", "POST", 405, map[string]string{"Connection": "close"}, "method not allowed\n", true},
		{"other path", "GET /other HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 404, nil, "404 page not found\n", false},
		{"root", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 404, nil, "404 page not found\n", false},
		{"trailing slash", "GET /metrics/ HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 404, nil, "404 page not found\n", false},
		{"head other path", "HEAD /x HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD", 404, map[string]string{"Content-Length": "19"}, "", false},
		{"connection close", "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "GET", 200, map[string]string{"Connection": "close"}, up, true},
		{"connection close token", "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: foo, Close\r\n\r\n", "GET", 200, map[string]string{"Connection": "close"}, up, true},
		{"http/1.0", "GET /metrics HTTP/1.0\r\n\r\n", "GET", 200, map[string]string{"Connection": "close"}, up, true},
		{"http/1.0 keep-alive", "GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "GET", 200, map[string]string{"Connection": "keep-alive"}, up, false},
		{"no request line", "GARBAGE\r\n\r\n", "GET", 400, map[string]string{"Connection": "close"}, "malformed request line\n", true},
		{"two spaces", "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 400, nil, "malformed request line\n", true},
		{"space in target", "GET /met rics HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 400, nil, "malformed request line\n", true},
		{"relative target", "GET metrics HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 400, nil, "malformed request target\n", true},
		{"bad version", "GET /metrics HTTP/1.x\r\nHost: x\r\n\r\n", "GET", 400, nil, "malformed HTTP version \"HTTP/1.x\"\n", true},
		{"http/0.9", "GET /metrics\r\n\r\n", "GET", 400, nil, "malformed request line\n", true},
		{"http/2", "GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n", "GET", 505, map[string]string{"Connection": "close"}, "HTTP version not supported\n", true},
		{"no colon", "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", "GET", 400, nil, "malformed header line\n", true},
		{"space before colon", "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", "GET", 400, nil, "malformed header line\n", true},
		{"folded header", "GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", "GET", 400, nil, "malformed header line\n", true},
		{"control in value", "GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", "GET", 400, nil, "invalid header value\n", true},
		{"no host", "GET /metrics HTTP/1.1\r\n\r\n", "GET", 400, nil, "missing or repeated Host header\n", true},
		{"two hosts", "GET /metrics HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "GET", 400, nil, "missing or repeated Host header\n", true},
		{"bad content-length", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", "POST", 400, nil, "invalid Content-Length\n", true},
		{"signed content-length", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n", "POST", 400, nil, "invalid Content-Length\n", true},
		{"conflicting content-length", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "POST", 400, nil, "conflicting Content-Length\n", true},
		{"unknown expectation", "GET /metrics HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n", "GET", 417, nil, "expectation failed\n", true},
		{"oversized headers", "GET /metrics HTTP/1.1\r\nHost: x\r\n" + big + "\r\n", "GET", 431, map[string]string{"Connection": "close"}, "request header fields too large\n", true},
		{"oversized request line", "GET /" + strings.Repeat("m", 20<<10), "GET", 431, nil, "request header fields too large\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dial(t, s)
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			resp, body := readResp(t, br, tc.method)
			if resp.StatusCode != tc.status || resp.Proto != "HTTP/1.1" {
				t.Errorf("status %q, want %d", resp.Status, tc.status)
			}
			if body != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			if resp.Close != tc.close { // "Connection: close" (ReadResponse takes it out of Header)
				t.Errorf("response says close %v, want %v", resp.Close, tc.close)
			}
			for k, v := range tc.header {
				if k == "Connection" && v == "close" {
					continue
				}
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if resp.Header.Get("Date") == "" {
				t.Errorf("no Date header")
			}
			if tc.close {
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				if !closed(t, br) {
					t.Errorf("connection still open")
				}
				return
			}
			// Still open: a second request on it is answered.
			io.WriteString(c, getMetrics)
			if resp, body := readResp(t, br, "GET"); resp.StatusCode != 200 || body != up {
				t.Errorf("second request: %s %q", resp.Status, body)
			}
		})
	}
}

// Two requests on one keep-alive connection, then Connection: close.
func TestHTTPKeepAlive(t *testing.T) {
	n := 0
	s := serve(t, func(w io.Writer) error { n++; _, err := io.WriteString(w, strconv.Itoa(n)); return err })
	c, br := dial(t, s)
	for i, want := range []string{"1", "2"} {
		io.WriteString(c, getMetrics)
		resp, body := readResp(t, br, "GET")
		if resp.StatusCode != 200 || body != want || resp.Close {
			t.Errorf("request %d: %s %q (close %v), want 200 %q", i+1, resp.Status, body, resp.Close, want)
		}
	}
	io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if resp, body := readResp(t, br, "GET"); body != "3" || !resp.Close {
		t.Errorf("last request: %q (close %v)", body, resp.Close)
	}
	if !closed(t, br) {
		t.Errorf("connection still open after Connection: close")
	}
}

// Pipelined requests (sent at once) are answered in order, a bad one last.
func TestHTTPPipelining(t *testing.T) {
	s := serve(t, nil)
	c, br := dial(t, s)
	io.WriteString(c, getMetrics+"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"+
		"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"+
		"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"+
		getMetrics+"BAD\r\n\r\n"+getMetrics)
	for i, want := range []struct {
		method string
		status int
		body   string
	}{{"GET", 200, up}, {"GET", 404, "404 page not found\n"}, {"HEAD", 200, ""}, {"POST", 405, "method not allowed\n"}, {"GET", 200, up}, {"GET", 400, "malformed request line\n"}} {
		resp, body := readResp(t, br, want.method)
		if resp.StatusCode != want.status || body != want.body {
			t.Errorf("response %d: %s %q, want %d %q", i+1, resp.Status, body, want.status, want.body)
		}
	}
	if !closed(t, br) {
		t.Errorf("connection open after the bad request")
	}
}

// Errors of the scrape are 500 with the message.
func TestHTTPScrapeError(t *testing.T) {
	s := serve(t, func(w io.Writer) error { io.WriteString(w, "partial"); return errors.New("metrics: map @x: boom") })
	c, br := dial(t, s)
	io.WriteString(c, getMetrics)
	resp, body := readResp(t, br, "GET")
	if resp.StatusCode != 500 || body != "metrics: map @x: boom\n" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("%s %q %q", resp.Status, body, resp.Header.Get("Content-Type"))
	}
}

// A client that starts a request and stalls is closed after headerTimeout,
// unanswered; so is one that stalls in a body it announced.
func TestHTTPHeaderTimeout(t *testing.T) {
	defer func(d time.Duration) { headerTimeout = d }(headerTimeout)
	headerTimeout = 300 * time.Millisecond
	s := serve(t, nil)
	for _, req := range []string{
		"GET /metrics HTTP/1.1\r\nHo",
		"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",
	} {
		c, br := dial(t, s)
		io.WriteString(c, req)
		start := time.Now()
		b, err := io.ReadAll(br)
		if took := time.Since(start); err != nil || len(b) != 0 || took < 200*time.Millisecond || took > 3*time.Second {
			t.Errorf("%q: read %q, %v after %v; want EOF after ~300ms", req, b, err, took)
		}
	}
	// A keep-alive request's header gets headerTimeout from its first byte,
	// not from the end of the previous response.
	defer func(d time.Duration) { idleTimeout = d }(idleTimeout)
	idleTimeout = 5 * time.Second
	s = serve(t, nil)
	c, br := dial(t, s)
	io.WriteString(c, getMetrics)
	readResp(t, br, "GET")
	time.Sleep(400 * time.Millisecond)
	io.WriteString(c, getMetrics)
	if resp, _ := readResp(t, br, "GET"); resp.StatusCode != 200 {
		t.Errorf("after idling: %s", resp.Status)
	}
}

// At most maxConns connections are served; the next waits for one to close.
func TestHTTPMaxConns(t *testing.T) {
	defer func(n int) { maxConns = n }(maxConns)
	maxConns = 2
	s := serve(t, nil)
	var first net.Conn
	for i := 0; i < 2; i++ {
		c, br := dial(t, s)
		io.WriteString(c, getMetrics)
		readResp(t, br, "GET")
		if i == 0 {
			first = c
		}
	}
	c, br := dial(t, s) // in the accept queue
	io.WriteString(c, getMetrics)
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.Peek(1); err == nil {
		t.Fatalf("third connection served while two are open")
	}
	first.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, _ := readResp(t, br, "GET"); resp.StatusCode != 200 {
		t.Errorf("third connection: %s", resp.Status)
	}
}

// serverGoroutines are the goroutines running the HTTP server's code.
func serverGoroutines() string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "metrics.(*httpServer)") || strings.Contains(g, "metrics.(*limitListener)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func checkNoGoroutines(t *testing.T) {
	t.Helper()
	var left string
	// Close has waited for them: only its own waiter may still be exiting.
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if left = serverGoroutines(); left == "" {
			return
		}
	}
	t.Errorf("goroutines left after Close:\n%s", left)
}

// Close with idle connections open (a new one and a keep-alive one)
// returns at once and closes them.
func TestHTTPCloseIdle(t *testing.T) {
	s, err := listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	c1, br1 := dial(t, s)
	io.WriteString(c1, getMetrics)
	readResp(t, br1, "GET")
	_, br2 := dial(t, s)
	time.Sleep(50 * time.Millisecond) // accepted
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v with idle connections only", took)
	}
	if !closed(t, br1) || !closed(t, br2) {
		t.Errorf("idle connections still open after Close")
	}
	if _, err := net.Dial("tcp", s.Addr().String()); err == nil {
		t.Errorf("still accepting after Close")
	}
	checkNoGoroutines(t)
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Close during a scrape waits for its response (which says Connection:
// close), refuses new connections meanwhile, and leaves no goroutine.
func TestHTTPCloseInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s, err := listen("127.0.0.1:0", func(w io.Writer) error {
		close(started)
		<-release
		_, err := io.WriteString(w, "done\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c, br := dial(t, s)
	io.WriteString(c, getMetrics)
	<-started
	closeErr := make(chan error)
	go func() { closeErr <- s.Close() }()
	select {
	case err := <-closeErr:
		t.Fatalf("Close returned (%v) during a scrape", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := net.Dial("tcp", s.Addr().String()); err == nil {
		t.Errorf("accepting while closing")
	}
	close(release)
	resp, body := readResp(t, br, "GET")
	if resp.StatusCode != 200 || body != "done\n" || !resp.Close {
		t.Errorf("scrape in flight: %s %q (close %v)", resp.Status, body, resp.Close)
	}
	if err := <-closeErr; err != nil {
		t.Errorf("Close: %v", err)
	}
	checkNoGoroutines(t)
}

// A scrape that outlasts closeTimeout: Close closes its connection, says
// so, and still leaves no goroutine (also when the scrape holds the last
// connection slot, so that the accept loop waits for the limit).
func TestHTTPCloseTimeout(t *testing.T) {
	defer func(d time.Duration, n int) { closeTimeout, maxConns = d, n }(closeTimeout, maxConns)
	closeTimeout, maxConns = 200*time.Millisecond, 1
	started := make(chan struct{})
	s, err := listen("127.0.0.1:0", func(w io.Writer) error {
		close(started)
		time.Sleep(600 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, br := dial(t, s)
	io.WriteString(c, getMetrics)
	<-started
	start := time.Now()
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), "1 connection(s) still busy after 200ms") {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("Close took %v", took)
	}
	if b, _ := io.ReadAll(br); len(b) != 0 {
		t.Errorf("got %q from a connection closed mid-scrape", b)
	}
	checkNoGoroutines(t)
}

// FuzzReadRequest: the parser never panics, and a request it accepts
// parses again, from its own bytes(), the same.
func FuzzReadRequest(f *testing.F) {
	for _, seed := range []string{
		getMetrics,
		"HEAD /metrics?x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"POST http://h/metrics HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
		"\r\n\nGET * HTTP/1.1\nHost:x\nTransfer-Encoding: chunked\n\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: \t a b \t\r\nConnection: close, keep-alive\r\n\r\n",
		"GET /metrics HTTP/2.0\r\n\r\n", "GARBAGE\r\n\r\n", "GET / HTTP/1.1\r\n b\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := readRequest(bufio.NewReader(bytes.NewReader(data)), maxHeaderBytes)
		if err != nil {
			return
		}
		b := r.bytes()
		r2, err := readRequest(bufio.NewReader(bytes.NewReader(b)), maxHeaderBytes)
		if err != nil {
			t.Fatalf("%q parsed, its bytes %q do not: %v", data, b, err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("%q parsed as %+v, its bytes %q as %+v", data, r, b, r2)
		}
	})
}

// Close while connections wait for the limit: none is served, Close
// returns at once, and the accept loop is gone too.
func TestHTTPCloseAtLimit(t *testing.T) {
	defer func(n int) { maxConns = n }(maxConns)
	maxConns = 1
	s, err := listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	c1, br1 := dial(t, s)
	io.WriteString(c1, getMetrics)
	readResp(t, br1, "GET")
	c2, br2 := dial(t, s) // waits in the accept queue
	io.WriteString(c2, getMetrics)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v", took)
	}
	if b, _ := io.ReadAll(br2); len(b) != 0 {
		t.Errorf("a connection over the limit was served during Close: %q", b)
	}
	checkNoGoroutines(t)
}
