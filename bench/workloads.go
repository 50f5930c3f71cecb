package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gotrace/gotrace/internal/testkit/helperbin"
)

// Workload is one run of a C helper from testdata/helpers. Ops is how many
// traced operations one run performs (syscalls or calls).
type Workload struct {
	Name string
	Path string // copied as commPrefix+Name, so comm is e.g. "gtb_getpid"
	Args []string
	Ops  int64
}

// commPrefix makes the workloads' comm unique on a shared machine: tests
// elsewhere run the same helpers, and a comm filter must not count them.
const commPrefix = "gtb_"

// Comm is the workload's process name as comm shows it.
func (w *Workload) Comm() string { return commPrefix + w.Name }

func buildWorkloads(root, tmp string, scale float64) (map[string]*Workload, error) {
	n := func(base int64) int64 {
		if v := int64(float64(base) * scale); v > 0 {
			return v
		}
		return 1
	}
	getpids, reads, opens, calls := n(1_000_000), n(100_000), n(200_000), n(1_000_000)
	sizes := []string{"1", "10", "100", "1000", "10000"}
	wls := map[string]*Workload{
		"getpid": {Name: "getpid", Args: []string{fmt.Sprint(getpids)}, Ops: getpids},
		// A longer run so profile gets enough samples.
		"getpid-long": {Name: "getpid", Args: []string{fmt.Sprint(5 * getpids)}, Ops: 5 * getpids},
		"reads":       {Name: "reads", Args: append([]string{"-r", fmt.Sprint(reads)}, sizes...), Ops: reads * int64(len(sizes))},
		"openat":      {Name: "openat", Args: []string{fmt.Sprint(opens), "/etc/passwd", "/etc/hostname", "/nonexistent/gotrace"}, Ops: opens},
		"ufunc":       {Name: "ufunc", Args: []string{fmt.Sprint(calls)}, Ops: calls},
	}
	for _, w := range wls {
		src, err := helperbin.Build(root, w.Name)
		if err != nil {
			return nil, err
		}
		w.Path = filepath.Join(tmp, w.Comm())
		if _, err := os.Stat(w.Path); err == nil {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(w.Path, b, 0o755); err != nil {
			return nil, err
		}
	}
	return wls, nil
}

var loopNsRe = regexp.MustCompile(`(?m)^loop_ns (\d+)$`)

// Run runs the workload to completion and returns its loop time as the
// helper measured it (GT_TIME), which leaves out process start-up, and its
// pid (the helpers are single-threaded: tid = pid).
func (w *Workload) Run() (d time.Duration, pid int, err error) {
	cmd := exec.Command(w.Path, w.Args...)
	cmd.Env = append(os.Environ(), "GT_TIME=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	pid = cmd.Process.Pid
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return 0, pid, fmt.Errorf("%s: %v: %s", w.Name, err, strings.TrimSpace(errb.String()))
		}
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		return 0, pid, fmt.Errorf("%s: still running after 5 minutes: killed", w.Name)
	}
	m := loopNsRe.FindStringSubmatch(errb.String())
	if m == nil {
		return 0, pid, fmt.Errorf("%s printed no loop_ns line: %q", w.Name, errb.String())
	}
	ns, _ := strconv.ParseInt(m[1], 10, 64)
	return time.Duration(ns), pid, nil
}
