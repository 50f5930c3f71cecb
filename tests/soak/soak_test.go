// Package soak is gotrace's fault matrix (issue 19): each probe group is
// run under each fault — exit(), SIGINT, SIGTERM, SIGKILL while attached
// and during the attach, the -c child killed, gotrace SIGKILLed with a -c
// child, an attach that fails half way — and after every run the machine
// must be as before: no BPF program, map or link of the run (counted by
// ID), no tracefs event, no breakpoint left in the private helper binary,
// no process of the run (tracer, reaper, child) nor its perf descriptors;
// and gotrace must have exited within a bound derived from the probe count.
//
// GOTRACE_SOAK_RUNS sets the runs per scenario (default 2, the CI form,
// a few minutes; the full form is 20, about half an hour). The heavy group
// (every syscall tracepoint) gets a tenth of the runs, and only SIGTERM
// in the short form. The figures (runs, leaks, slowest exit, peak RSS
// per group) are logged at the end.
package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

func runs(t *testing.T) int {
	if v := os.Getenv("GOTRACE_SOAK_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("GOTRACE_SOAK_RUNS=%q: want a positive integer", v)
		}
		return n
	}
	return 2
}

// group is a probe set.
type group struct {
	name   string
	env    []string
	script string // %[1]s: the private helper binary
	probes int    // at least this many (for the exit bound)
	// uprobes on the private helper: check its text for breakpoints.
	uprobes bool
	heavy   bool // runs/10 (at least 1)
}

func groups(helper string) []group {
	return []group{
		{name: "tracepoints", env: []string{"GOTRACE_SYSCALL_TRACEPOINTS=perf"},
			script: `tracepoint:syscalls:sys_enter_s* { @[probe] = count(); }`, probes: 50},
		// Every syscall (~360 perf events): each run's residue takes ~15 s
		// to go (two RCU grace periods per event, in the reaper), so it
		// gets a tenth of the runs.
		{name: "tracepoints-all", env: []string{"GOTRACE_SYSCALL_TRACEPOINTS=perf"},
			script: `tracepoint:syscalls:sys_enter_* { @[probe] = count(); }`, probes: 300, heavy: true},
		{name: "tracepoints-raw", script: `tracepoint:syscalls:sys_enter_s* { @[probe] = count(); } tracepoint:sched:sched_switch { @s = count(); }`, probes: 80},
		{name: "uprobes", script: `uprobe:%[1]s:chain_a, uprobe:%[1]s:chain_b, uprobe:%[1]s:target { @[probe] = count(); } uretprobe:%[1]s:greet { @r = count(); }`, probes: 4, uprobes: true},
		{name: "uprobe-wildcard", script: `uprobe:%[1]s:* { @[probe] = count(); }`, probes: 5, uprobes: true},
		{name: "libc", script: `uprobe:libc:str* { @[probe] = count(); }`, probes: 10},
		{name: "intervals", script: `interval:ms:1 { @a = count(); } profile:hz:99 { @b = count(); } software:cpu-clock:1000000 { @c = count(); }`, probes: 3},
	}
}

type fault string

const (
	fExit        fault = "exit"
	fSIGINT      fault = "sigint"
	fSIGTERM     fault = "sigterm"
	fSIGKILL     fault = "sigkill"
	fKillAttach  fault = "sigkill-during-attach"
	fChildKilled fault = "child-killed"
	fKillWithKid fault = "sigkill-with-child"
	fAttachFails fault = "attach-fails"
)

var faults = []fault{fExit, fSIGINT, fSIGTERM, fSIGKILL, fKillAttach, fChildKilled, fKillWithKid, fAttachFails}

// figures are one group's totals.
type figures struct {
	runs, leaks  int
	slowest      time.Duration
	slowestFault fault
	slowestClean time.Duration // exit(), signals, child exit: not SIGKILL
	peakRSSKB    int64
	settle       time.Duration
}

var (
	figMu sync.Mutex
	figs  = map[string]*figures{}
)

func fig(g string) *figures {
	x := figs[g]
	if x == nil {
		x = &figures{}
		figs[g] = x
	}
	return x
}

func recordLeaks(g string, settle time.Duration, leaks int) {
	figMu.Lock()
	defer figMu.Unlock()
	x := fig(g)
	x.leaks += leaks
	x.settle = max(x.settle, settle)
}

func record(g string, f fault, exit time.Duration, rssKB int64) {
	figMu.Lock()
	defer figMu.Unlock()
	x := fig(g)
	x.runs++
	if exit > x.slowest {
		x.slowest, x.slowestFault = exit, f
	}
	if f != fSIGKILL && f != fKillAttach && f != fKillWithKid && f != fAttachFails {
		x.slowestClean = max(x.slowestClean, exit)
	}
	x.peakRSSKB = max(x.peakRSSKB, rssKB)
}

// exitBound is how long gotrace may take to exit after the fault. A clean
// exit hands slow detaches to the reaper: milliseconds plus a little per
// probe. A SIGKILLed gotrace closes its descriptors in the kernel's exit
// path, two RCU grace periods per perf event.
var attachedRE = regexp.MustCompile(`Attach(?:ing|ed) (\d+) probes?`)

func exitBound(f fault, probes int) time.Duration {
	switch f {
	case fSIGKILL, fKillAttach, fKillWithKid:
		return 5*time.Second + time.Duration(probes)*150*time.Millisecond
	}
	return 3*time.Second + time.Duration(probes)*10*time.Millisecond
}

func TestSoak(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.BTF, testkit.Tracefs, testkit.GCC, testkit.Go)
	gotrace := testkit.Gotrace(t)
	// A private copy of the helper: breakpoints left in it are ours.
	helper := filepath.Join(t.TempDir(), "soak_ufunc")
	copyFile(t, testkit.Helper(t, "ufunc"), helper)
	sleeper := testkit.Helper(t, "sleeper")
	exes := []string{gotrace, helper, sleeper}
	n := runs(t)
	for _, g := range groups(helper) {
		for _, f := range faults {
			t.Run(g.name+"/"+string(f), func(t *testing.T) {
				runs := n
				if g.heavy {
					runs = max(1, n/10)
					if n < 10 && f != fSIGTERM {
						// The short (CI) form: the heavy group only
						// for the hand-off race (item 3).
						t.Skip("heavy group: SIGTERM only below 10 runs")
					}
				}
				// The residue is counted once per scenario: the runs follow
				// each other while the reapers of the earlier ones still
				// close their probes (each perf event takes two RCU grace
				// periods), and everything of all the runs must then go.
				before, err := testkit.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				for i := range runs {
					runOne(t, g, f, i, gotrace, helper, sleeper)
					if t.Failed() {
						break
					}
				}
				leaks, settle := before.Leftovers(180*time.Second, exes, []string{"gotrace", filepath.Base(helper)})
				if g.uprobes {
					if n, err := breakpoints(helper); err != nil {
						t.Errorf("checking %s for breakpoints: %v", helper, err)
					} else if n > 0 {
						leaks = append(leaks, fmt.Sprintf("%d breakpoint bytes left in %s", n, helper))
					}
				}
				recordLeaks(g.name, settle, len(leaks))
				if len(leaks) > 0 {
					t.Errorf("%s/%s: %d runs left behind, after %v:\n  %s", g.name, f, runs, settle.Round(time.Millisecond), strings.Join(leaks, "\n  "))
				}
			})
		}
	}
	t.Cleanup(func() {
		figMu.Lock()
		defer figMu.Unlock()
		var names []string
		for k := range figs {
			names = append(names, k)
		}
		sort.Strings(names)
		total, leaks := 0, 0
		for _, k := range names {
			x := figs[k]
			total += x.runs
			leaks += x.leaks
			t.Logf("soak %-16s runs %4d  leaks %d  slowest clean exit %8v  slowest exit %8v (%s)  longest settle (per scenario) %8v  peak RSS %6.1f MB",
				k, x.runs, x.leaks, x.slowestClean.Round(time.Millisecond), x.slowest.Round(time.Millisecond), x.slowestFault, x.settle.Round(time.Millisecond), float64(x.peakRSSKB)/1024)
		}
		t.Logf("soak total: %d runs, %d leaks", total, leaks)
	})
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteExecutable(t, to, b)
}

func runOne(t *testing.T, g group, f fault, i int, gotrace, helper, sleeper string) {
	t.Helper()
	script := g.script
	if strings.Contains(script, "%[1]s") {
		script = fmt.Sprintf(script, helper)
	}
	args := []string{}
	switch f {
	case fExit:
		script += ` interval:ms:300 { exit(); }`
	case fAttachFails:
		// Expands, then fails at perf_event_open once the rest attached.
		script += ` profile:hz:999999999 { @p = count(); }`
	case fChildKilled, fKillWithKid:
		args = append(args, "-c", sleeper+" 60000")
	}
	script += ` END { printf("soak-end\n"); }`
	args = append(args, "-e", script)
	cmd := exec.Command(gotrace, args...)
	cmd.Env = append(os.Environ(), g.env...)
	cmd.Env = append(cmd.Env, testkit.NotifyAttached+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderrR, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	attached := make(chan struct{})
	var stderr bytes.Buffer
	var errMu sync.Mutex
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		br := bufio.NewReader(stderrR)
		once := sync.Once{}
		for {
			line, err := br.ReadString('\n')
			if strings.TrimSpace(line) == testkit.NotifyAttached {
				once.Do(func() { close(attached) })
			} else {
				errMu.Lock()
				stderr.WriteString(line)
				errMu.Unlock()
			}
			if err != nil {
				io.Copy(io.Discard, br)
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { <-copied; done <- cmd.Wait() }()
	pid := cmd.Process.Pid
	fail := func(format string, a ...any) {
		t.Helper()
		syscall.Kill(-pid, syscall.SIGKILL)
		errMu.Lock()
		defer errMu.Unlock()
		t.Errorf("%s/%s run %d: %s\nstdout:\n%.2000s\nstderr:\n%.2000s", g.name, f, i, fmt.Sprintf(format, a...), stdout.String(), stderr.String())
	}
	waitAttached := func() bool {
		select {
		case <-attached:
			return true
		case err := <-done:
			done <- err
			fail("exited before attaching: %v", err)
		case <-time.After(60 * time.Second):
			fail("not attached after 60 s")
		}
		return false
	}
	var child int
	var trigger time.Time
	wantCode := 0
	switch f {
	case fExit:
		if !waitAttached() {
			return
		}
		trigger = time.Now().Add(300 * time.Millisecond) // exit() fires ~300 ms in
	case fSIGINT, fSIGTERM, fSIGKILL:
		if !waitAttached() {
			return
		}
		time.Sleep(time.Duration(50+rand.Intn(200)) * time.Millisecond)
		sig := map[fault]syscall.Signal{fSIGINT: syscall.SIGINT, fSIGTERM: syscall.SIGTERM, fSIGKILL: syscall.SIGKILL}[f]
		trigger = time.Now()
		syscall.Kill(pid, sig)
		if f == fSIGKILL {
			wantCode = -1
		}
	case fKillAttach:
		// Somewhere in the start-up: load, expand or attach.
		time.Sleep(time.Duration(rand.Intn(400)) * time.Millisecond)
		trigger = time.Now()
		syscall.Kill(pid, syscall.SIGKILL)
		wantCode = -2 // killed, or finished attaching first and then killed
	case fChildKilled, fKillWithKid:
		if !waitAttached() {
			return
		}
		// The command is exec'ed once released, just after the notify
		// line (until then the child is gotrace's stub).
		for deadline := time.Now().Add(5 * time.Second); child == 0 && time.Now().Before(deadline); {
			if child = childOf(pid, sleeper); child == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		if child == 0 {
			fail("no -c child found")
			return
		}
		trigger = time.Now()
		if f == fChildKilled {
			syscall.Kill(child, syscall.SIGKILL)
		} else {
			syscall.Kill(pid, syscall.SIGKILL)
			wantCode = -1
		}
	case fAttachFails:
		trigger = time.Now()
		wantCode = 1
	}
	// The bound follows the probes actually attached (the kernel releases
	// each on a SIGKILL): sys_enter_s* is more than g.probes on some
	// kernels (73 here).
	probes := g.probes
	if m := attachedRE.FindStringSubmatch(stdout.String()); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > probes {
			probes = n
		}
	}
	bound := exitBound(f, probes)
	if f == fAttachFails {
		bound += 60 * time.Second // includes the whole start-up
	}
	var werr error
	select {
	case werr = <-done:
	case <-time.After(bound + time.Until(trigger)):
		fail("still running %v after the fault (bound %v)", time.Since(trigger).Round(time.Millisecond), bound)
		<-done
		return
	}
	exitTime := time.Since(trigger)
	if exitTime < 0 {
		exitTime = 0
	}
	_ = werr
	code := cmd.ProcessState.ExitCode()
	switch {
	case wantCode == -2:
	case code != wantCode:
		fail("exit code %d, want %d", code, wantCode)
	}
	if f == fAttachFails && !strings.Contains(stderr.String(), "failed to attach") {
		fail("no attach failure reported")
	}
	if f == fSIGINT || f == fSIGTERM || f == fExit {
		if !strings.Contains(stdout.String(), "soak-end\n") {
			fail("END did not run")
		}
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	if child != 0 {
		// The -c child dies with gotrace, SIGKILLed or not (item 8).
		deadline := time.Now().Add(2 * time.Second)
		for alive(child) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(child) {
			fail("-c child %d outlived gotrace by 2 s", child)
			syscall.Kill(child, syscall.SIGKILL)
		}
	}
	// gotrace's process group holds nothing after it: a straggler there
	// (the -c child) would be a leak of this run.
	// (Zombies are dead: whoever adopted them reaps them.)
	if len(liveInGroup(pid)) > 0 {
		time.Sleep(200 * time.Millisecond)
		if left := liveInGroup(pid); len(left) > 0 {
			fail("processes %v left in gotrace's process group", left)
		}
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	record(g.name, f, exitTime, rss)
}

func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(st)
	return !strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "Z")
}

// childOf finds the process of exe whose parent is pid.
func childOf(pid int, exe string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if x, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); x != exe {
			continue
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			return p
		}
	}
	return 0
}

// breakpoints starts path (waiting at its handshake), compares its mapped
// executable text with the file, and returns how many bytes differ: a
// uprobe still registered on the file puts an int3 in every new mapping.
func breakpoints(path string) (int, error) {
	cmd := exec.Command(path, "1")
	cmd.Env = []string{"GT_WAIT=1"}
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		return 0, fmt.Errorf("no ready line: %q %v", line, err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	diff, checked := 0, 0
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[5] != path || !strings.Contains(f[1], "x") {
			continue
		}
		var lo, hi, off uint64
		fmt.Sscanf(f[0], "%x-%x", &lo, &hi)
		fmt.Sscanf(f[2], "%x", &off)
		buf := make([]byte, hi-lo)
		n, _ := mem.ReadAt(buf, int64(lo))
		for j := 0; j < n && int(off)+j < len(file); j++ {
			checked++
			if buf[j] != file[int(off)+j] {
				diff++
			}
		}
	}
	if checked == 0 {
		return 0, fmt.Errorf("no executable mapping of %s in the process", path)
	}
	return diff, nil
}

// liveInGroup lists the processes of process group pgid that are not
// zombies.
func liveInGroup(pgid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		// state ppid pgrp ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			out = append(out, p)
		}
	}
	return out
}
