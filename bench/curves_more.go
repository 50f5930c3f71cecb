package main

// Two more scale curves of issue 20: the --metrics scrape as the map grows
// (metrics-scrape) and the printf event rate at which events start to be
// lost (printf-loss).

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	cmScrape    = curveMetric{name: "scrape (bpftrace: print) ms", get: func(s Sample) float64 { return s.ScrapeMs }, fmt: "%.1f"}
	cmScrapeCPU = curveMetric{name: "tracer CPU ms per scrape", get: func(s Sample) float64 { return s.ScrapeCPUMs }, fmt: "%.1f"}
	cmScrapeKey = curveMetric{name: "keys per scrape", get: func(s Sample) float64 { return float64(s.ScrapeKeys) }, fmt: "%.0f", noGrowth: true}
	cmOffered   = curveMetric{name: "offered k events/s", get: offeredKps, fmt: "%.0f", noGrowth: true}
	cmDelivered = curveMetric{name: "delivered", get: func(s Sample) float64 { return float64(s.Delivered) }, fmt: "%.0f", noGrowth: true}
	cmLost      = curveMetric{name: "lost (made - delivered)", get: func(s Sample) float64 { return float64(s.Generated - s.Delivered) }, fmt: "%.0f", noGrowth: true}
	cmLostMsg   = curveMetric{name: "\"Lost N events\" sum", get: func(s Sample) float64 { return float64(s.LostMsg) }, fmt: "%.0f", noGrowth: true}
)

// offeredKps is the workload's achieved event rate: events made over its
// loop time (the paced helper runs flat out once it cannot keep the pace).
func offeredKps(s Sample) float64 {
	if s.LoopNs <= 0 {
		return 0
	}
	return float64(s.Generated) / (float64(s.LoopNs) / 1e9) / 1000
}

// scrapesPer is how many scrapes (or triggered prints) one run makes.
const scrapesPer = 5

// metricsCurve: @[nsecs] = count() over N getpid calls, as map-print; then,
// before Ctrl-C, five scrapes of gotrace's --metrics endpoint (a Go HTTP
// client on loopback), each timed and its tracer CPU counted. bpftrace has
// no metrics endpoint: its column is the same map printed by print(@),
// which the harness triggers with a getppid call of its own (the script's
// second probe), timed until the N-th "@[" line arrives.
func metricsCurve(getpid *Workload, keysEnv func(int) []string) *Curve {
	return &Curve{Name: "metrics-scrape", What: "keys", Sizes: []int{1_000, 10_000, 100_000},
		metrics: []curveMetric{cmScrape, cmScrapeCPU, cmScrapeKey, cmRSS},
		script: func(n int) (*Script, error) {
			w := *getpid
			w.Args, w.Ops = []string{fmt.Sprint(n)}, int64(n)
			base := fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { @[nsecs] = count(); }`, getpid.Comm())
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
			sc := &Script{Workload: &w, Env: keysEnv(n + 1024)}
			sc.PerTool = func(tool string) ([]string, string) {
				if tool == "gotrace" {
					return []string{"--metrics", fmt.Sprintf("127.0.0.1:%d", port)}, base
				}
				return nil, base + fmt.Sprintf("\ntracepoint:syscalls:sys_enter_getppid /pid == %d/ { print(@); }", os.Getpid())
			}
			sc.During = func(tool string, pid int, mapLines func() int64, s *Sample) error {
				if tool == "gotrace" {
					return scrapeMetrics(url, pid, n, s)
				}
				return triggerPrints(pid, n, mapLines, s)
			}
			return sc, nil
		}}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tracerCPU is the CPU time of every thread of pid so far
// (/proc/PID/task/*/schedstat: ns on the CPU), ns.
func tracerCPU(pid int) int64 {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var sum int64
	for _, e := range ents {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, e.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			sum += v
		}
	}
	return sum
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// scrapeMetrics scrapes url scrapesPer times; a scrape must hold n series
// of the map (gotrace_map_total{...}).
func scrapeMetrics(url string, pid, n int, s *Sample) error {
	client := &http.Client{Timeout: 120 * time.Second}
	var walls []float64
	var cpu int64
	for i := 0; i < scrapesPer; i++ {
		c0, t0 := tracerCPU(pid), time.Now()
		resp, err := client.Get(url)
		if err != nil {
			return fmt.Errorf("scrape %s: %v", url, err)
		}
		keys, err := countPrefix(resp.Body, []byte("gotrace_map_total{"))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("scrape %s: %v", url, err)
		}
		walls, cpu = append(walls, ms(time.Since(t0))), cpu+tracerCPU(pid)-c0
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("scrape %s: %s", url, resp.Status)
		}
		s.ScrapeKeys = keys
	}
	s.ScrapeMs, s.ScrapeCPUMs, s.Scrapes = median(walls), float64(cpu)/1e6/scrapesPer, scrapesPer
	if s.ScrapeKeys < int64(n)*99/100 {
		return fmt.Errorf("scrape served %d of %d keys", s.ScrapeKeys, n)
	}
	return nil
}

func countPrefix(r io.Reader, prefix []byte) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var n int64
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, prefix) {
			n++
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return n, err
		}
	}
}

// triggerPrints makes the tracer print its map scrapesPer times, by a
// getppid call of this process, and times each print from the call to
// the arrival of its n-th "@[" line.
func triggerPrints(pid, n int, mapLines func() int64, s *Sample) error {
	var walls []float64
	var cpu int64
	for i := 0; i < scrapesPer; i++ {
		before := mapLines()
		c0, t0 := tracerCPU(pid), time.Now()
		syscall.Getppid()
		deadline := t0.Add(120 * time.Second)
		for mapLines() < before+int64(n) {
			if time.Now().After(deadline) {
				return fmt.Errorf("print %d: %d of %d keys after 120 s", i+1, mapLines()-before, n)
			}
			time.Sleep(200 * time.Microsecond)
		}
		walls, cpu = append(walls, ms(time.Since(t0))), cpu+tracerCPU(pid)-c0
		s.ScrapeKeys = mapLines() - before
		// Let the print's trailing output (a blank line) go before the next.
		time.Sleep(20 * time.Millisecond)
	}
	s.ScrapeMs, s.ScrapeCPUMs, s.Scrapes = median(walls), float64(cpu)/1e6/scrapesPer, scrapesPer
	return nil
}

// printfLossCurve: printf("E %d\n", tid) for every getpid of a paced
// helper making R calls a second for dur, in one process per CPU (each
// pinned to its CPU, R/1000/CPUs calls each millisecond, then sleeping to
// the next millisecond; past the rate it can make it runs flat out). Delivered is the E lines received, lost the calls made
// less those, beside the sum of the tool's own "Lost N events" lines.
func printfLossCurve(tmp string, smoke bool) *Curve {
	dur, workers := time.Second, runtime.NumCPU()
	if smoke {
		dur = 100 * time.Millisecond
	}
	c := &Curve{Name: "printf-loss", What: "events/s asked",
		Sizes:   []int{10_000, 30_000, 100_000, 300_000, 500_000, 1_000_000, 3_000_000, 10_000_000},
		Labels:  map[int]string{10_000_000: "10000000 (flat out)"},
		metrics: []curveMetric{cmOffered, cmDelivered, cmLost, cmLostMsg, cmRSS},
		summary: lossOnset,
	}
	c.script = func(n int) (*Script, error) {
		bin, err := pacedGetpid(tmp)
		if err != nil {
			return nil, err
		}
		ops := int64(float64(n) * dur.Seconds())
		if n >= 10_000_000 {
			ops = int64(3_000_000 * dur.Seconds()) // flat out: as many as at 3 M/s
		}
		w := &Workload{Name: "paced", Path: bin, Args: []string{fmt.Sprint(n), fmt.Sprint(ops), fmt.Sprint(workers)}, Ops: ops}
		return &Script{Workload: w, Printf: true, AnyTID: true,
			Text: fmt.Sprintf(`tracepoint:syscalls:sys_enter_getpid /comm == "%s"/ { printf("E %%d\n", tid); }`, w.Comm())}, nil
	}
	return c
}

// lossOnset names, per tool, the lowest asked rate at which events were lost.
func lossOnset(c *Curve, tools []string) []string {
	var out []string
	for _, t := range tools {
		onset, lastOK := "", ""
		for _, p := range c.Points {
			s, ok := p.Samples[t]
			if !ok || s.Err != "" {
				continue
			}
			if s.Generated-s.Delivered > 0 || s.LostMsg > 0 {
				onset = fmt.Sprintf("%s loses events from %s/s asked (%.0f k/s made, %.2f%% lost)", t, p.Label, offeredKps(s),
					100*float64(s.Generated-s.Delivered)/float64(s.Generated))
				break
			}
			lastOK = fmt.Sprintf("%.0f k/s made", offeredKps(s))
		}
		switch {
		case onset != "" && lastOK != "":
			out = append(out, onset+"; none lost up to "+lastOK)
		case onset != "":
			out = append(out, onset+" (the lowest rate run)")
		case lastOK != "":
			out = append(out, fmt.Sprintf("%s lost nothing up to %s", t, lastOK))
		}
	}
	return out
}

// pacedGetpid builds (once) gtb_paced RATE N W: N getpid calls at RATE a
// second, shared by W child processes pinned to CPUs 0..W-1, each making
// its share of RATE/1000 in each millisecond (absolute clock_nanosleep to
// the next); it prints the wall time of all of them as loop_ns with
// GT_TIME set.
func pacedGetpid(tmp string) (string, error) {
	bin := filepath.Join(tmp, commPrefix+"paced")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	const text = `#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static void work(long long rate, long long n) {
  long long per = rate / 1000;
  if (per < 1) per = 1;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long long done = 0; done < n;) {
    for (long long i = 0; i < per && done < n; i++, done++) syscall(SYS_getpid);
    next.tv_nsec += 1000000;
    if (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
}
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  long long rate = atoll(argv[1]), n = atoll(argv[2]);
  int w = atoi(argv[3]), ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  struct timespec a, z;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int k = 0; k < w; k++) {
    if (fork() == 0) {
      cpu_set_t set; CPU_ZERO(&set); CPU_SET(k % ncpu, &set);
      sched_setaffinity(0, sizeof set, &set);
      work(rate / w, n / w + (k < n % w));
      _exit(0);
    }
  }
  int st, bad = 0;
  while (wait(&st) > 0) bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  clock_gettime(CLOCK_MONOTONIC, &z);
  if (getenv("GT_TIME")) fprintf(stderr, "loop_ns %lld\n", (long long)(z.tv_sec - a.tv_sec) * 1000000000LL + (z.tv_nsec - a.tv_nsec));
  return bad;
}
`
	return compileC(bin, text, "-O2")
}
