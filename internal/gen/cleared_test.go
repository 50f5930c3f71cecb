package gen

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestClearedKeylessAggregations: in bpftrace 0.17 only a key-less count()
// keeps `@: 0` once cleared; cleared key-less sum/min/max/avg/stats maps
// print nothing but their separator, as a cleared hist or scalar does
// (found by the side-by-side property; the bytes are bpftrace 0.17.0's for
// this script; clear() takes effect after the probe, so @i is empty too).
func TestClearedKeylessAggregations(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF, testkit.BTF, testkit.Go)
	script, err := os.ReadFile("testdata/corpus/cleared-keyless-aggregations.bt")
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.RunBounded(t, 20*time.Second, exec.Command(testkit.Gotrace(t), "--compat", "0.17", "-e", string(script)))
	want := "Attaching 1 probe...\n\n\n" +
		"\n\n" + // @a, avg
		"\n\n" + // @b, stats
		"\n" + "\n" + "\n" + // @c sum, @d min, @e max
		"@f: 0\n" +
		"\n" + "\n" + // @g hist, @h scalar
		"\n\n" // @i avg
	if r.ExitCode != 0 || r.Stdout != want {
		t.Errorf("exit %d, stdout %q, want %q; stderr:\n%s", r.ExitCode, r.Stdout, want, r.Stderr)
	}
}
