package metrics

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

func scrape(t *testing.T, url string) (string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s: %s", url, resp.Status, b)
	}
	return string(b), resp.Header
}

func TestServerBeforeAttach(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/metrics") {
		t.Errorf("URL() = %q", s.URL())
	}
	body, h := scrape(t, s.URL())
	if body != up {
		t.Errorf("body = %q, want %q", body, up)
	}
	if ct := h.Get("Content-Type"); ct != ContentType {
		t.Errorf("Content-Type = %q", ct)
	}
	resp, err := http.Post(s.URL(), "text/plain", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %s", resp.Status)
	}

	// The address is taken: a second server fails with net.Listen's error.
	_, err = Listen(s.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "listen tcp "+s.Addr().String()) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("second Listen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get(s.URL()); err == nil {
		t.Errorf("still serving after Close")
	}
}

// TestGotraceMetricsBusy: a taken address is a startup error of gotrace.
func TestGotraceMetricsBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	cmd := exec.Command(testkit.Gotrace(t), "--metrics", addr, "-e", "BEGIN { exit(); }")
	r := testkit.RunBounded(t, 20*time.Second, cmd)
	want := "ERROR: --metrics: listen tcp " + addr + ": bind: address already in use\n"
	if r.ExitCode != 1 || r.Stderr != want {
		t.Errorf("exit %d, stderr %q; want exit 1, %q", r.ExitCode, r.Stderr, want)
	}
}

var servingRE = regexp.MustCompile(`Serving metrics on (http://127\.0\.0\.1:\d+/metrics)\n`)

// TestGotraceMetrics traces a helper's getpid calls and scrapes the counts.
func TestGotraceMetrics(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Go)
	const n = 137
	h := testkit.StartHelper(t, "getpid", fmt.Sprint(n))
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", h.Pid))
	if err != nil {
		t.Fatal(err)
	}
	script := `tracepoint:syscalls:sys_enter_getpid /pid == $1/ { @[comm] = count(); @h = hist(2); }`
	tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "--metrics", "127.0.0.1:0", "-e", script, fmt.Sprint(h.Pid))
	// The line precedes attaching, but stderr is copied on its own.
	var m []string
	for deadline := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, stderr := tr.Output()
		m = servingRE.FindStringSubmatch(stderr)
	}
	if m == nil {
		r := tr.Stop(syscall.SIGINT, 5*time.Second)
		t.Fatalf("no \"Serving metrics on\" line; stderr:\n%s", r.Stderr)
	}
	url := m[1]
	h.Go()
	if r := h.Wait(20 * time.Second); r.ExitCode != 0 {
		t.Fatalf("helper: exit %d: %s", r.ExitCode, r.Stderr)
	}
	body, _ := scrape(t, url)
	name := strings.TrimSpace(string(comm))
	want := up + fmt.Sprintf(`# HELP gotrace_map_total gotrace map @: count()
# TYPE gotrace_map_total counter
gotrace_map_total{key="%s"} %d
# HELP gotrace_h gotrace map @h: hist()
# TYPE gotrace_h histogram
gotrace_h_bucket{le="-1"} 0
gotrace_h_bucket{le="0"} 0
gotrace_h_bucket{le="1"} 0
gotrace_h_bucket{le="3"} %d
gotrace_h_bucket{le="+Inf"} %d
gotrace_h_count %d
`, name, n, n, n, n)
	if body != want {
		t.Errorf("scrape:\n%s\nwant:\n%s", body, want)
	}

	r := tr.Stop(syscall.SIGINT, 10*time.Second)
	if r.ExitCode != 0 || r.TimedOut {
		t.Errorf("gotrace: exit %d (timed out %v); stderr:\n%s", r.ExitCode, r.TimedOut, r.Stderr)
	}
	if !strings.Contains(r.Stdout, fmt.Sprintf("@[%s]: %d\n", name, n)) {
		t.Errorf("exit maps:\n%s", r.Stdout)
	}
	// The server is gone with the tracer.
	if _, err := http.Get(url); err == nil {
		t.Errorf("%s still answers after gotrace exited", url)
	}
}
