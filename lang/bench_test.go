package lang

import (
	"strings"
	"syscall"
	"testing"

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
// the first Parse of a process does once.
func BenchmarkBuildParser(b *testing.B) {
	c := startCPU(b)
	for i := 0; i < b.N; i++ {
		if _, err := participle.Build[gProgram](grammarOptions()...); err != nil {
			b.Fatal(err)
		}
	}
	c.stop(b)
}
