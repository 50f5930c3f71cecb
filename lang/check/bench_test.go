package check

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/lang"
)

// BenchmarkParseCheck1000Lines parses and checks a 1,000-line script (the
// same shape as lang's BenchmarkParse1000Lines), types from the fake
// resolver.
func BenchmarkParseCheck1000Lines(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString("tracepoint:syscalls:sys_enter_openat /pid != 0 && comm == \"bash\"/\n{\n")
		sb.WriteString("  $f = str(args->filename);\n  @opens[comm, pid] = count();\n")
		sb.WriteString("  if ($f == \"/etc/passwd\") { printf(\"%s %d\\n\", $f, pid); } else { @other++; }\n")
		sb.WriteString("  @lat = hist((nsecs - @start[tid]) / 1000);\n  $x = (uint8)(1 + 2 * 3 << 1);\n")
		sb.WriteString("  delete(@start[tid]);\n  @t = (1, \"a\", $x);\n}\n")
	}
	sb.WriteString("BEGIN { @start[0] = 0; }\n")
	src := &lang.Source{Name: "bench.bt", Text: sb.String()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prog, err := lang.Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Check(prog, Options{Resolver: fakeResolver{}}); err != nil {
			b.Fatal(err)
		}
	}
}
