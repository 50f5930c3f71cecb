package lang

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alecthomas/participle/v2"
)

// cpuTimer reports, beside the wall time, the process's CPU time per
// operation (cpu-ns/op), which a machine shared with other work inflates
// less.
type cpuTimer struct{ start int64 }

func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func startCPU(b *testing.B) *cpuTimer {
	b.ResetTimer()
	return &cpuTimer{start: cpuNow()}
}

func (c *cpuTimer) stop(b *testing.B) {
	b.StopTimer()
	b.ReportMetric(float64(cpuNow()-c.start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkParse1000Lines parses a 1,000-line script.
func BenchmarkParse1000Lines(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString("tracepoint:syscalls:sys_enter_openat /pid != 0 && comm == \"bash\"/\n{\n")
		sb.WriteString("  $f = str(args->filename);\n  @opens[comm, pid] = count();\n")
		sb.WriteString("  if ($f == \"/etc/passwd\") { printf(\"%s %d\\n\", $f, pid); } else { @other++; }\n")
		sb.WriteString("  @lat = hist((nsecs - @start[tid]) / 1000);\n  $x = (uint8)(1 + 2 * 3 << 1);\n")
		sb.WriteString("  delete(@start[tid]);\n  @t = (1, \"a\", $x);\n}\n")
	}
	src := &Source{Name: "bench.bt", Text: sb.String()}
	if n := strings.Count(src.Text, "\n"); n != 1000 {
		b.Fatalf("%d lines", n)
	}
	c := startCPU(b)
	for i := 0; i < b.N; i++ {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
	c.stop(b)
}

// BenchmarkParseOneLiner parses a typical one-liner (after the parser is
// built, which the first Parse does once per process).
func BenchmarkParseOneLiner(b *testing.B) {
	src := &Source{Name: "stdin", Text: `tracepoint:syscalls:sys_enter_openat /comm == "bash"/ { @[str(args->filename)] = count(); }`}
	if _, err := Parse(src); err != nil {
		b.Fatal(err)
	}
	c := startCPU(b)
	for i := 0; i < b.N; i++ {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
	c.stop(b)
}

// BenchmarkBuildParser builds the participle parser from the grammar, as
// the first Parse of a process does once (without the left-recursion
// check, participle.Validated), and with the check ("validated").
func BenchmarkBuildParser(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []participle.Option
	}{{"start-up", append(grammarOptions(), participle.Validated())}, {"validated", grammarOptions()}} {
		b.Run(bc.name, func(b *testing.B) {
			c := startCPU(b)
			for i := 0; i < b.N; i++ {
				if _, err := participle.Build[gProgram](bc.opts...); err != nil {
					b.Fatal(err)
				}
			}
			c.stop(b)
		})
	}
}

// BenchmarkBuildParserFresh measures the parser's build as a process pays
// it: the first Parse's build, in a fresh process (this test binary run
// again, running only TestBuildParserChild), once per iteration. It
// reports the median over the iterations of the build's wall time
// (first-build-ns) and of the process's CPU time during it
// (first-build-cpu-ns); ns/op is the whole child process's.
func BenchmarkBuildParserFresh(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var wall, cpu []float64
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(exe, "-test.run", "^TestBuildParserChild$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "GOTRACE_BUILD_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		var w, c float64
		i := bytes.Index(out, []byte("first-build "))
		if i < 0 {
			b.Fatalf("child's output %q: no first-build line", out)
		}
		if _, err := fmt.Sscanf(string(out[i:]), "first-build %g %g", &w, &c); err != nil {
			b.Fatalf("child's output %q: %v", out, err)
		}
		wall, cpu = append(wall, w), append(cpu, c)
	}
	median := func(v []float64) float64 {
		sort.Float64s(v)
		return v[len(v)/2]
	}
	b.ReportMetric(median(wall), "first-build-ns")
	b.ReportMetric(median(cpu), "first-build-cpu-ns")
}

// TestBuildParserChild is BenchmarkBuildParserFresh's child: it builds the
// parser as the first Parse of the process does and prints the time it
// took. It does nothing unless GOTRACE_BUILD_CHILD is set.
func TestBuildParserChild(t *testing.T) {
	if os.Getenv("GOTRACE_BUILD_CHILD") == "" {
		t.Skip("run by BenchmarkBuildParserFresh")
	}
	c0, t0 := cpuNow(), time.Now()
	if _, err := grammar(); err != nil {
		t.Fatal(err)
	}
	w, c := time.Since(t0), cpuNow()-c0
	fmt.Printf("first-build %d %d\n", w.Nanoseconds(), c)
}
