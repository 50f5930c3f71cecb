package check

import (
	"github.com/gotrace/gotrace/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrace/gotrace/compat"
	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
)

// bpftrace017Fails are the shipped tools bpftrace 0.17 itself rejects on
// the test machine (Linux 6.18, no kernel headers, no kprobes): why, and
// the text gotrace's error must hold if it fails too (loads.bt checks; it
// fails later, in code generation, as kaddr("avenrun") finds no symbol).
var bpftrace017Fails = map[string]struct{ why, err string }{
	"loads.bt":   {"avenrun is not in kallsyms", "avenrun"},
	"runqlat.bt": {"needs kernel headers, not installed", "Unknown identifier: 'TASK_RUNNING'"},
	"runqlen.bt": {"struct cfs_rq has no field nr_running in this kernel", "nr_running"},
}

// Every tool the bpftrace package (0.17) ships parses and checks against
// the running kernel, as with bpftrace -d, under --compat 0.17.
func TestBpftraceTools(t *testing.T) {
	out, err := exec.Command("dpkg", "-L", "bpftrace").Output()
	if err != nil {
		testkit.Skipf(t, "bpftrace package not installed: %v", err)
	}
	if _, err := os.Stat(ktypes.DefaultBTFPath); err != nil {
		testkit.Skipf(t, "no kernel BTF: %v", err)
	}
	n := 0
	for _, path := range strings.Fields(string(out)) {
		if !strings.HasSuffix(path, ".bt") || !strings.HasPrefix(path, "/usr/sbin/") {
			continue
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			err = checkTool(path, string(text))
			if bad, ok := bpftrace017Fails[name]; ok {
				switch {
				case err == nil:
					t.Logf("passes although bpftrace 0.17 fails it here (%s)", bad.why)
				case !strings.Contains(err.Error(), bad.err):
					t.Errorf("bpftrace 0.17 fails it here (%s), but gotrace for another reason: %v", bad.why, err)
				default:
					t.Logf("fails as bpftrace 0.17 does (%s): %v", bad.why, err)
				}
				return
			}
			if err != nil {
				t.Errorf("%v", err)
			}
		})
		n++
	}
	if n == 0 {
		t.Fatal("dpkg -L bpftrace lists no .bt tools in /usr/sbin")
	}
}

func checkTool(path, text string) error {
	prog, err := lang.Parse(&lang.Source{Name: path, Text: text})
	if err != nil {
		return err
	}
	var decls, incs []string
	for _, d := range prog.Decls {
		decls = append(decls, d.Text)
	}
	for _, in := range prog.Includes {
		incs = append(incs, in.Path)
	}
	_, err = Check(prog, Options{Resolver: ktypes.New(ktypes.Options{CDecls: decls, Includes: incs}), Compat: compat.V017})
	return err
}
