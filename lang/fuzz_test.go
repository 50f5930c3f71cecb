package lang

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that no input makes the parser panic (Parse recovers,
// reporting "internal error", which fails here), hang, or return an error
// other than *Diagnostics with positioned, in-range diagnostics.
func FuzzParse(f *testing.F) {
	for _, c := range loadParseCases(f) {
		f.Add(c.src)
	}
	f.Add("BEGIN { $x = (struct foo *)arg0; @[comm, pid] = hist($x->a.b[2]); }")
	f.Add("uprobe:/bin/bash:readline /pid == 1/ { printf(\"%s\\n\", str(retval)); }")
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		p, err := Parse(&Source{Name: "stdin", Text: src})
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Parse took %v", d)
		}
		if err != nil {
			d, ok := err.(*Diagnostics)
			if !ok {
				t.Fatalf("error %T: %v", err, err)
			}
			if len(d.Items) == 0 {
				t.Fatal("empty diagnostics")
			}
			for _, it := range d.Items {
				if strings.Contains(it.Msg, "internal error") {
					t.Fatal(it.Msg)
				}
				if it.Span.Start.IsValid() && (it.Span.End.Offset < it.Span.Start.Offset || it.Span.End.Offset > len(src)) {
					t.Fatalf("span %+v out of range for %q", it.Span, src)
				}
			}
			_ = d.Error()
			return
		}
		_ = Dump(p)
		Inspect(p, func(n Node) bool {
			sp := n.Span()
			if sp.End.Offset < sp.Start.Offset || sp.End.Offset > len(src) {
				t.Fatalf("%T span %+v out of range", n, sp)
			}
			return true
		})
	})
}
