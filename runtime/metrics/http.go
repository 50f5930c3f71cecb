package metrics

// A small HTTP/1.1 server for /metrics, on package net only.
//
// Why not net/http: it is the only importer of net/http (and so of
// crypto/tls, crypto/x509, mime, net/textproto, ... and their package
// inits) in gotrace, and every start-up paid for it, --metrics or not: a
// build without it starts `gotrace --version` in 5.6 ms instead of 7.1 ms
// (median of 60 interleaved runs) and shrinks from 12.2 to 9.1 MB, while
// start-up ≤ 0.10× bpftrace is an acceptance metric (issue 20). One path,
// GET and HEAD, no TLS, no request bodies: what Prometheus and curl need.
//
// What it does: GET/HEAD /metrics (query ignored) → 200 with Content-Type,
// Content-Length and the exposition (HEAD: headers only); other methods →
// 405 with Allow; other paths → 404; a malformed request → 400, a header
// block over maxHeaderBytes → 431, HTTP/2+ → 505, an Expect other than
// 100-continue → 417, each closing the connection. Keep-alive as HTTP/1.1
// says (Connection: close honoured; HTTP/1.0 closes unless it asks for
// keep-alive); pipelined requests are answered in order. Request bodies: a
// Content-Length body up to maxDiscard bytes is read and discarded and the
// connection stays open; a larger one, a Transfer-Encoding (chunked) one,
// or one behind Expect: 100-continue is not read: the response says
// Connection: close and the connection closes (lingering, so that the
// client reads the response rather than a reset).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits and timeouts (variables for tests; a server keeps the values it
// started with). A request's header block (and its body) must arrive
// within headerTimeout of its first byte (of the accept, for a
// connection's first request); an idle keep-alive connection closes after
// idleTimeout; writing a response may take writeTimeout.
var (
	idleTimeout    = 15 * time.Second
	headerTimeout  = 10 * time.Second
	writeTimeout   = 30 * time.Second
	closeTimeout   = 2 * time.Second // Close waits this long for scrapes in flight
	maxConns       = 64
	maxHeaderBytes = 16 << 10
	maxDiscard     = int64(256 << 10)
)

const lingerTimeout = 500 * time.Millisecond

// request is a parsed request line and header block.
type request struct {
	method, target, proto string // as sent
	minor                 int    // HTTP/1.minor
	header                []field
	path                  string // target's path, without query
	contentLength         int64  // 0 when absent
	chunked               bool   // a Transfer-Encoding header is present
	expectContinue        bool
	connClose, connKeep   bool // Connection: close / keep-alive
}

type field struct{ name, value string }

// httpError is a request the server answers with status and closes.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.status, e.msg) }

func badRequest(format string, args ...any) error {
	return &httpError{400, fmt.Sprintf(format, args...)}
}

var errHeaderTooLarge = &httpError{431, "request header fields too large"}

// readRequest reads one request's line and headers (not its body). An
// io error (EOF, timeout) is returned as it is; a request the server must
// refuse is an *httpError.
func readRequest(br *bufio.Reader, maxBytes int) (*request, error) {
	budget := maxBytes
	line, err := readLine(br, &budget)
	for err == nil && line == "" { // RFC 9112 2.2: ignore empty lines before a request
		line, err = readLine(br, &budget)
	}
	if err != nil {
		return nil, err
	}
	r := &request{}
	var ok bool
	r.method, line, ok = strings.Cut(line, " ")
	if ok {
		r.target, r.proto, ok = strings.Cut(line, " ")
	}
	if !ok || !isToken(r.method) || r.target == "" || !isVisible(r.target) || strings.Contains(r.proto, " ") {
		return nil, badRequest("malformed request line")
	}
	p := r.proto
	if len(p) != 8 || p[:5] != "HTTP/" || !isDigit(p[5]) || p[6] != '.' || !isDigit(p[7]) {
		return nil, badRequest("malformed HTTP version %q", p)
	}
	if p[5] != '1' {
		return nil, &httpError{505, "HTTP version not supported"}
	}
	r.minor = int(p[7] - '0')
	switch t := r.target; {
	case t[0] == '/':
		r.path, _, _ = strings.Cut(t, "?")
	case t == "*":
		r.path = t
	case hasPrefixFold(t, "http://") || hasPrefixFold(t, "https://"): // absolute-form
		_, rest, _ := strings.Cut(t, "://")
		if i := strings.IndexAny(rest, "/?"); i >= 0 && rest[i] == '/' {
			r.path, _, _ = strings.Cut(rest[i:], "?")
		} else {
			r.path = "/"
		}
	default:
		return nil, badRequest("malformed request target")
	}
	hosts, lengths := 0, ""
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) { // also a folded line or a space before ':'
			return nil, badRequest("malformed header line")
		}
		value = strings.Trim(value, " \t")
		if !isFieldValue(value) {
			return nil, badRequest("invalid header value")
		}
		r.header = append(r.header, field{name, value})
		switch strings.ToLower(name) {
		case "host":
			hosts++
		case "content-length":
			if lengths != "" && value != lengths {
				return nil, badRequest("conflicting Content-Length")
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || strings.Trim(value, "0123456789") != "" {
				return nil, badRequest("invalid Content-Length")
			}
			lengths, r.contentLength = value, n
		case "transfer-encoding":
			r.chunked = true
		case "expect":
			if !strings.EqualFold(value, "100-continue") {
				return nil, &httpError{417, "expectation failed"}
			}
			r.expectContinue = true
		case "connection":
			for _, tok := range strings.Split(value, ",") {
				tok = strings.Trim(tok, " \t")
				r.connClose = r.connClose || strings.EqualFold(tok, "close")
				r.connKeep = r.connKeep || strings.EqualFold(tok, "keep-alive")
			}
		}
	}
	if hosts > 1 || (hosts == 0 && r.minor >= 1) {
		return nil, badRequest("missing or repeated Host header")
	}
	return r, nil
}

// readLine reads a line ending in LF (or CRLF), without it, taking its
// length plus 2 from *budget (so a line costs the same with either
// ending): errHeaderTooLarge when the budget runs out.
func readLine(br *bufio.Reader, budget *int) (string, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if line = append(line, frag...); len(line) > *budget {
			return "", errHeaderTooLarge
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if *budget -= len(line) + 2; *budget < 0 {
			return "", errHeaderTooLarge
		}
		return string(line), nil
	}
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// isToken: RFC 9110's token (method, header name).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// isVisible: printable ASCII, no space (a request target).
func isVisible(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// isFieldValue: no control characters but tab.
func isFieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// bytes is the request as sent in its shortest form (CRLF line ends, no
// space after ':'): the fuzz target checks that what the parser accepts
// parses again the same.
func (r *request) bytes() []byte {
	var b []byte
	b = fmt.Appendf(b, "%s %s %s\r\n", r.method, r.target, r.proto)
	for _, f := range r.header {
		b = fmt.Appendf(b, "%s:%s\r\n", f.name, f.value)
	}
	return append(b, "\r\n"...)
}

var statusText = map[int]string{
	200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
	417: "Expectation Failed", 431: "Request Header Fields Too Large",
	500: "Internal Server Error", 505: "HTTP Version Not Supported",
}

// response is what a handler answers.
type response struct {
	status      int
	contentType string
	allow       string
	body        []byte
}

func textResponse(status int, msg string) response {
	return response{status: status, contentType: "text/plain; charset=utf-8", body: []byte(msg + "\n")}
}

// writeResponse writes the status line, headers and (unless head) body.
func writeResponse(w *bufio.Writer, resp response, head, keep, http10 bool) error {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\n", resp.status, statusText[resp.status])
	fmt.Fprintf(w, "Content-Type: %s\r\nContent-Length: %d\r\n", resp.contentType, len(resp.body))
	fmt.Fprintf(w, "Date: %s\r\n", time.Now().UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	if resp.allow != "" {
		fmt.Fprintf(w, "Allow: %s\r\n", resp.allow)
	}
	if !keep {
		w.WriteString("Connection: close\r\n")
	} else if http10 {
		w.WriteString("Connection: keep-alive\r\n")
	}
	w.WriteString("\r\n")
	if !head {
		w.Write(resp.body)
	}
	return w.Flush()
}

// httpServer serves the connections of one listener with handle.
type httpServer struct {
	ln     net.Listener
	handle func(*request) response
	done   chan struct{} // closed when the accept loop returns
	wg     sync.WaitGroup

	idle, header, write, closeWait time.Duration
	maxHeader                      int
	maxDiscard                     int64

	mu      sync.Mutex
	conns   map[net.Conn]bool // true while a request is read or answered
	closing bool
}

func newHTTPServer(ln net.Listener, handle func(*request) response) *httpServer {
	h := &httpServer{ln: ln, handle: handle, done: make(chan struct{}), conns: map[net.Conn]bool{},
		idle: idleTimeout, header: headerTimeout, write: writeTimeout, closeWait: closeTimeout,
		maxHeader: maxHeaderBytes, maxDiscard: maxDiscard}
	go h.serve()
	return h
}

func (h *httpServer) serve() {
	defer close(h.done)
	delay := 5 * time.Millisecond
	for {
		c, err := h.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(delay) // e.g. EMFILE: retry, as net/http does
			delay = min(2*delay, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		h.mu.Lock()
		if h.closing {
			h.mu.Unlock()
			c.Close()
			continue
		}
		h.conns[c] = false
		h.wg.Add(1)
		h.mu.Unlock()
		go h.serveConn(c)
	}
}

// setActive marks c busy (true) or idle; false if the server is closing.
func (h *httpServer) setActive(c net.Conn, active bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns[c] = active
	return !h.closing
}

func (h *httpServer) serveConn(c net.Conn) {
	defer h.wg.Done()
	defer func() {
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
		c.Close()
	}()
	br := bufio.NewReader(c)
	bw := bufio.NewWriter(c)
	for first := true; ; first = false {
		// Idle until a request's first byte (a new connection's first
		// request has headerTimeout from the accept).
		wait := h.idle
		if first {
			wait = h.header
		}
		c.SetReadDeadline(time.Now().Add(wait))
		if _, err := br.Peek(1); err != nil || !h.setActive(c, true) {
			return
		}
		if !first {
			c.SetReadDeadline(time.Now().Add(h.header))
		}
		req, err := readRequest(br, h.maxHeader)
		var resp response
		var he *httpError
		switch {
		case errors.As(err, &he):
			resp = textResponse(he.status, he.msg)
		case err != nil:
			return // EOF or timeout: nothing to answer
		}
		keep := err == nil && !req.connClose && (req.minor >= 1 || req.connKeep)
		if err == nil {
			if req.chunked || req.expectContinue && req.contentLength > 0 || req.contentLength > h.maxDiscard {
				keep = false // the body is not read
			} else if _, err := io.CopyN(io.Discard, br, req.contentLength); err != nil {
				return
			}
		}
		c.SetWriteDeadline(time.Now().Add(h.write))
		if err == nil {
			resp = h.handle(req)
		}
		h.mu.Lock()
		keep = keep && !h.closing
		h.mu.Unlock()
		head := err == nil && req.method == "HEAD"
		if writeResponse(bw, resp, head, keep, err == nil && req.minor == 0) != nil {
			return
		}
		if !keep {
			h.lingerClose(c)
			return
		}
		if !h.setActive(c, false) {
			return
		}
	}
}

// lingerClose closes c's sending side and reads what the client still
// sends for a while: closing with unread data would send a reset, and the
// client could lose the response.
func (h *httpServer) lingerClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.CopyN(io.Discard, c, h.maxDiscard)
}

// close stops accepting, closes idle connections, waits closeTimeout for
// the others to finish their response, then closes those too and waits
// for their goroutines.
func (h *httpServer) close() error {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil
	}
	h.closing = true
	for c, active := range h.conns {
		if !active {
			c.Close()
		}
	}
	h.mu.Unlock()
	h.ln.Close()
	<-h.done
	idle := make(chan struct{})
	go func() { h.wg.Wait(); close(idle) }()
	var err error
	select {
	case <-idle:
	case <-time.After(h.closeWait):
		h.mu.Lock()
		err = fmt.Errorf("%d connection(s) still busy after %v", len(h.conns), h.closeWait)
		for c := range h.conns {
			c.Close()
		}
		h.mu.Unlock()
		<-idle
	}
	return err
}

// limitListener accepts at most cap(sem) connections at once (more wait
// in the kernel's accept queue).
type limitListener struct {
	net.Listener
	sem    chan struct{}
	closed chan struct{}
	once   sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), closed: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
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

func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
