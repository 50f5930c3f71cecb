package builtins_test

// More of what bpftrace 0.20-0.26 added: is_err, signal_name, and the
// iter:task, iter:task_file and iter:task_vma probes (bpftrace 0.17 has
// those too; its own check refuses them on this kernel, so they run side by
// side with gotrace --compat 0.17 instead).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

var iterTaskScript = scriptOf("TestIterProbes", `iter:task /ctx->task->tgid == PID/ { printf("%d %s\n", ctx->task->pid, ctx->task->comm); }`)
var iterFileScript = scriptOf("TestIterProbes", `iter:task_file /ctx->task->tgid == PID/ { printf("%d %d %s\n", ctx->task->pid, ctx->fd, path(ctx->file->f_path)); }`)
var iterVMAScript = scriptOf("TestIterProbes", `iter:task_vma /ctx->task->pid == PID/ { printf("%08lx-%08lx\n", ctx->vma->vm_start, ctx->vma->vm_end); @vmas = count(); }`)

// TestIterProbes: an iterator runs its probe once per object to the end
// and the run ends by itself. With the nappers helper sleeping in 4 threads:
// iter:task prints one line per thread (its tid and comm, as /proc lists
// them), iter:task_file one per open descriptor of the process (the
// threads share the table, which the kernel visits once), iter:task_vma
// one per mapping of /proc/PID/maps (the vsyscall page aside, which is no
// VMA). The same under --compat 0.17 (bpftrace 0.17 has iter probes; its
// own feature check refuses them on this kernel). printf writes to the
// iterator's seq file (-f json wraps it as a printf record), so an
// iterator pinned with iter:task:PIN prints the same lines when its pin is
// read, after gotrace has gone.
func TestIterProbes(t *testing.T) {
	requireTracing(t, testkit.BTF)
	h := testkit.StartHelper(t, "nappers", "4", "120000")
	h.Go()
	tids := waitThreads(t, h.Pid, 4)
	comm := helperComm(t, "nappers")
	var want []string
	for _, tid := range tids {
		want = append(want, fmt.Sprintf("%d %s", tid, comm))
	}
	pid := fmt.Sprint(h.Pid)
	for _, v := range [][]string{v26, {"--compat", "0.17"}} {
		got := gtIter(t, v, strings.ReplaceAll(iterTaskScript, "PID", pid))
		expect(t, "iter:task "+v[1], sortedLines(got), strings.Join(want, "\n")+"\n")
	}

	got := gt26(t, "-q", "-f", "json", "-e", strings.ReplaceAll(iterTaskScript, "PID", pid))
	wantJSON := `{"type": "printf", "data": "` + strings.Join(want, `\n`) + `\n"}`
	if !strings.Contains(got, wantJSON+"\n") {
		t.Errorf("iter:task -f json:\n%s\nwant a line\n%s", got, wantJSON)
	}

	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "bpf", "bpf", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount bpffs on %s: %v: %s", dir, err, out)
	}
	defer exec.Command("umount", dir).Run()
	pin := filepath.Join(dir, "tasks")
	pinScript := strings.Replace(strings.ReplaceAll(iterTaskScript, "PID", pid), "iter:task ", "iter:task:"+pin+" ", 1)
	expect(t, "iter:task:PIN", gt26(t, "-e", pinScript), "Program pinned to "+pin+"\n")
	b, err := os.ReadFile(pin)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(pin)
	expect(t, "reading the pinned iterator", sortedLines(string(b)), strings.Join(want, "\n")+"\n")

	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", h.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var wantFDs []string
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", h.Pid, fd.Name()))
		if err != nil {
			t.Fatal(err)
		}
		wantFDs = append(wantFDs, fmt.Sprintf("%d %s %s", h.Pid, fd.Name(), target))
	}
	got = gtIter(t, v26, strings.ReplaceAll(iterFileScript, "PID", pid))
	expect(t, "iter:task_file", sortedLines(got), sortedLines(strings.Join(wantFDs, "\n")))

	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", h.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var ranges []string
	for _, l := range strings.Split(strings.TrimSpace(string(maps)), "\n") {
		if strings.HasSuffix(l, "[vsyscall]") {
			continue
		}
		ranges = append(ranges, strings.Fields(l)[0])
	}
	got = gtIter(t, v26, strings.ReplaceAll(iterVMAScript, "PID", pid))
	expect(t, "iter:task_vma", got, strings.Join(ranges, "\n")+fmt.Sprintf("\n\n\n@vmas: %d\n", len(ranges)))
}

// gtIter runs an iter script (which must end by itself) with the compat
// flags v.
func gtIter(t *testing.T, v []string, script string) string {
	t.Helper()
	start := time.Now()
	out := gt(t, append(append([]string{}, v...), "-e", script)...)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("iterator run took %v", d)
	}
	return out
}

// waitThreads waits for pid to have n threads and returns their tids.
func waitThreads(t *testing.T, pid, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ents, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		if len(ents) == n {
			var tids []int
			for _, e := range ents {
				id, _ := strconv.Atoi(filepath.Base(e))
				tids = append(tids, id)
			}
			sort.Ints(tids)
			return tids
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d has %d threads, want %d", pid, len(ents), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sortedLines sorts the non-empty lines of s field by field, numbers as
// numbers.
func sortedLines(s string) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	less := func(a, b string) bool {
		fa, fb := strings.Fields(a), strings.Fields(b)
		for k := 0; k < len(fa) && k < len(fb); k++ {
			na, ea := strconv.Atoi(fa[k])
			nb, eb := strconv.Atoi(fb[k])
			switch {
			case ea == nil && eb == nil && na != nb:
				return na < nb
			case (ea != nil || eb != nil) && fa[k] != fb[k]:
				return fa[k] < fb[k]
			}
		}
		return len(fa) < len(fb)
	}
	sort.SliceStable(ls, func(i, j int) bool { return less(ls[i], ls[j]) })
	return strings.Join(ls, "\n") + "\n"
}

var histKScript = scriptOf("TestHistK", `BEGIN { $i = 0; while ($i < 40) { @ = hist($i, 2); $i++; } @ = hist(-3, 2); @big = hist(5000, 3); @big = hist(3 * 1024 * 1024 * 1024, 3); exit(); }`)
var histKJSONScript = scriptOf("TestHistK", `BEGIN { $i = 0; while ($i < 64) { @ = hist($i, 3); $i++; } exit(); }`)

// TestHistK: hist(n, k) (bpftrace 0.20) splits each power of 2 into 2^k
// buckets: values below 2^(k+1) one per bucket, then [lo, hi) with
// bpftrace's K/M/G labels; -f json gives each bucket's min and max as
// bpftrace's tests/runtime/outputs/hist_2args.json. --compat 0.17 refuses
// the second argument, naming the release.
func TestHistK(t *testing.T) {
	requireTracing(t)
	bar := func(n int) string { return strings.Repeat("@", int(float32(n)/float32(8)*52)) }
	var want strings.Builder
	fmt.Fprintf(&want, "@:\n%-16s%8d |%-52s|\n", "(..., 0)", 1, bar(1))
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&want, "%-16s%8d |%-52s|\n", fmt.Sprintf("[%d]", i), 1, bar(1))
	}
	for _, b := range [][2]int{{8, 10}, {10, 12}, {12, 14}, {14, 16}, {16, 20}, {20, 24}, {24, 28}, {28, 32}, {32, 40}} {
		fmt.Fprintf(&want, "%-16s%8d |%-52s|\n", fmt.Sprintf("[%d, %d)", b[0], b[1]), b[1]-b[0], bar(b[1]-b[0]))
	}
	// 3 << 30 is in [3 << 30, 3.25 << 30), labelled in M as bpftrace
	// labels a bound (by the power of 2 it multiplies).
	want.WriteString("\n@big:\n[4608, 5120)           1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n")
	got := gt26(t, "-e", histKScript)
	var nonzero []string
	for _, l := range strings.Split(strings.TrimLeft(got, "\n"), "\n") {
		if !strings.Contains(l, " 0 |") {
			nonzero = append(nonzero, l)
		}
	}
	want.WriteString("[3072M, 3328M)         1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n")
	expect(t, "hist(n, k) (empty buckets aside)", strings.Join(nonzero, "\n"), want.String())

	var js []string
	for v := 0; v < 16; v++ {
		js = append(js, fmt.Sprintf(`{"min": %d, "max": %d, "count": 1}`, v, v))
	}
	for lo := 16; lo < 64; {
		w := 2
		if lo >= 32 {
			w = 4
		}
		js = append(js, fmt.Sprintf(`{"min": %d, "max": %d, "count": %d}`, lo, lo+w-1, w))
		lo += w
	}
	got = strings.TrimLeft(gt26(t, "-q", "-f", "json", "-e", histKJSONScript), "\n")
	expect(t, "hist(n, 3) json", got, `{"type": "hist", "data": {"@": [`+strings.Join(js, ", ")+"]}}\n")

	want17 := "stdin:1:13-23: ERROR: hist() requires one argument (2 provided): hist() with 2 arguments was added in bpftrace 0.20 (--compat 0.17 follows bpftrace 0.17)\n"
	if got := gtErr(t, "--compat", "0.17", "-e", `BEGIN { @ = hist(1, 2); }`); !strings.HasPrefix(got, want17) {
		t.Errorf("--compat 0.17 hist(1, 2):\n%s\nwant it to start with:\n%s", got, want17)
	}
	// bpftrace 0.17 gives the same error, without the note.
	testkit.Require(t, testkit.Bpftrace)
	r := run(t, "bpftrace", "-e", `BEGIN { @ = hist(1, 2); }`)
	if !strings.Contains(r.Stderr, "stdin:1:13-23: ERROR: hist() requires one argument (2 provided)\n") {
		t.Errorf("bpftrace 0.17 hist(1, 2): %s", r.Stderr)
	}
}
