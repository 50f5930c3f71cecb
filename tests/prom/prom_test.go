// Package prom_test runs a real Prometheus (Debian's prometheus 2.42,
// started directly on loopback with a temporary configuration and
// storage) against gotrace --metrics and checks what its query API
// answers.
package prom_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// prometheus is a Prometheus server this test started.
type prometheus struct {
	url string
	cmd *exec.Cmd
	log *strings.Builder
}

// startPrometheus runs prometheus scraping target (host:port) every
// second, on a free loopback port, and waits until it is ready. It is
// stopped (SIGTERM, then SIGKILL of its own process group) at the end of
// the test.
func startPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gotrace
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	var log strings.Builder
	cmd := exec.Command("prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	p := &prometheus{url: "http://" + addr, cmd: cmd, log: &log}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-done:
			t.Fatalf("prometheus exited: %s", log.String())
		default:
		}
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 60s: %v\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// query runs an instant query and returns the values of its vector, by
// the series' labels as text.
func (p *prometheus) query(t *testing.T, q string) map[string]string {
	t.Helper()
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" || r.Data.ResultType != "vector" {
		t.Fatalf("query %s: %v %s", q, err, body)
	}
	out := map[string]string{}
	for _, s := range r.Data.Result {
		v, _ := s.Value[1].(string)
		out[fmt.Sprint(s.Metric)] = v
	}
	return out
}

// waitValue polls q until its single series has the value want (what the
// last scrape saw), or fails after timeout with what it had.
func (p *prometheus) waitValue(t *testing.T, q, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var got map[string]string
	for time.Now().Before(deadline) {
		got = p.query(t, q)
		if len(got) == 1 {
			for _, v := range got {
				if v == want {
					return
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s = %v after %v, want one series of %s\nprometheus log:\n%s", q, got, timeout, want, p.log.String())
}

var servingRE = regexp.MustCompile(`Serving metrics on http://(127\.0\.0\.1:\d+)/metrics\n`)

// TestPrometheusScrapesGotrace: the uchain helper calls target(k) for k =
// 0..999, once each, while gotrace counts the calls and makes a log2
// histogram of k; Prometheus scrapes gotrace every second. Its API must
// then give exactly 1000 calls and the quantiles its linear interpolation
// makes of the buckets of 0..999 (le = 0, 1, 3, 7, ... 1023 holding 1, 2,
// 4, 8, ... 512 and 1000 values cumulatively).
func TestPrometheusScrapesGotrace(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.Tracefs, testkit.GCC, testkit.Prometheus)
	bin := testkit.Helper(t, "uchain")
	h := testkit.StartHelper(t, "uchain", "1000")
	script := fmt.Sprintf(`uprobe:%s:target /pid == %d/ { @calls = count(); @k = hist(arg0); }`, bin, h.Pid)
	t0 := time.Now()
	tr := testkit.StartTracer(t, 20*time.Second, testkit.Gotrace(t), "--metrics", "127.0.0.1:0", "-e", script)
	defer tr.Stop(syscall.SIGINT, 5*time.Second)
	_, stderr := tr.Output()
	m := servingRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"Serving metrics on\" line:\n%s", stderr)
	}
	p := startPrometheus(t, m[1])
	h.Go()
	if r := h.Wait(10 * time.Second); r.ExitCode != 0 {
		t.Fatalf("uchain: exit %d: %s", r.ExitCode, r.Stderr)
	}

	p.waitValue(t, `gotrace_calls_total{job="gotrace"}`, "1000", 60*time.Second)
	t.Logf("Prometheus saw 1000 calls %v after gotrace started", time.Since(t0).Round(time.Millisecond))
	p.waitValue(t, `gotrace_k_count`, "1000", 10*time.Second)
	for le, want := range map[string]string{"0": "1", "1": "2", "3": "4", "255": "256", "511": "512", "1023": "1000", "+Inf": "1000"} {
		p.waitValue(t, fmt.Sprintf(`gotrace_k_bucket{le=%q}`, le), want, 5*time.Second)
	}
	// histogram_quantile: rank q*1000 falls in the bucket (lo, hi] whose
	// cumulative count first reaches it; the value interpolates linearly.
	interp := func(q float64) float64 {
		rank := q * 1000
		lo, below := -1.0, 0.0
		for _, b := range [][2]float64{{0, 1}, {1, 2}, {3, 4}, {7, 8}, {15, 16}, {31, 32}, {63, 64}, {127, 128}, {255, 256}, {511, 512}, {1023, 1000}} {
			if b[1] >= rank {
				if lo < 0 {
					lo = 0 // Prometheus's lower bound of the first bucket when its bound is positive
				}
				return lo + (b[0]-lo)*(rank-below)/(b[1]-below)
			}
			lo, below = b[0], b[1]
		}
		return math.NaN()
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		want := interp(q)
		got := p.query(t, fmt.Sprintf(`histogram_quantile(%g, gotrace_k_bucket)`, q))
		if len(got) != 1 {
			t.Fatalf("histogram_quantile(%g) = %v, want one series", q, got)
		}
		for _, v := range got {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.Abs(f-want) > 1e-9 {
				t.Errorf("histogram_quantile(%g) = %s, want %v", q, v, want)
			}
		}
	}
	if got := p.query(t, `histogram_quantile(0.5, gotrace_k_bucket)`); fmt.Sprint(got) != "map[map[instance:"+m[1]+" job:gotrace]:499]" {
		t.Errorf("median of 0..999 by Prometheus: %v, want 499", got)
	}
	r := tr.Stop(syscall.SIGINT, 5*time.Second)
	if !strings.Contains(r.Stdout, "@calls: 1000\n") {
		t.Errorf("gotrace's own @calls:\n%s", r.Stdout)
	}
}
