package metrics

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Label values are valid UTF-8 whatever the key's bytes: one invalid byte
// made Prometheus reject the whole scrape (issue 19, item 6).
func TestEscapeLabelInvalidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"plain":       "plain",
		"caf\xc3\xa9": "café",
		"bad\xffname": `bad\\xffname`,
		"\xc3":        `\\xc3`,
		"q\"\n\\\x80": `q\"\n\\\\x80`,
		"\xe2\x82":    `\\xe2\\x82`,
	} {
		got := escapeLabel(in)
		if got != want {
			t.Errorf("escapeLabel(%q) = %q, want %q", in, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("escapeLabel(%q) = %q is not UTF-8", in, got)
		}
	}
}

// Without a host, the endpoint binds the loopback address only.
func TestDefaultHostLoopback(t *testing.T) {
	for in, want := range map[string]string{
		":9464":        "127.0.0.1:9464",
		"9464":         "127.0.0.1:9464",
		"0.0.0.0:9464": "0.0.0.0:9464",
		"[::1]:80":     "[::1]:80",
		"host:1":       "host:1",
	} {
		if got := DefaultHost(in); got != want {
			t.Errorf("DefaultHost(%q) = %q, want %q", in, got, want)
		}
	}
	s, err := Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ip := s.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Errorf("Listen(\":0\") bound %v, want loopback", s.Addr())
	}
}

// An idle keep-alive connection is closed by the server: idle clients
// must not hold descriptors for ever.
func TestIdleConnectionsTimeOut(t *testing.T) {
	defer func(i, h time.Duration) { idleTimeout, headerTimeout = i, h }(idleTimeout, headerTimeout)
	idleTimeout, headerTimeout = 300*time.Millisecond, 300*time.Millisecond
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// One request on a keep-alive connection, then silence.
	c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("response %q, %v", line, err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	for {
		if _, err := br.ReadByte(); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("idle connection still open after %v", time.Since(start))
			}
			break // closed by the server
		}
	}
	// A connection that never sends a request closes too.
	c2, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("silent connection still open after 5 s")
		}
	}
}
