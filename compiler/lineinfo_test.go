package compiler

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
)

// The line info of a script written on one long line grows with its
// statements, not statements × line length (issue 19, item 1): 5,000
// statements on one 40 KB line used to put 5,000 copies of the line into
// the BTF string table (200 MB, refused by the kernel with E2BIG).
func TestLineInfoBoundedOnOneLongLine(t *testing.T) {
	text := "BEGIN { " + strings.Repeat("@a = 1; ", 5000) + "exit(); }"
	spec := compileScript(t, "one.bt", text)
	var insns int
	for _, p := range spec.Programs {
		insns += len(p.Insns)
		b, err := btf.NewBuilder(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, lines, err := btf.MarshalExtInfos(p.Insns, b)
		if err != nil {
			t.Fatalf("%s: marshal line info: %v", p.Name, err)
		}
		raw, err := b.Marshal(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A few positions per statement, each with a bounded string (the
		// whole line per position was 200 MB).
		if limit := 4 * 5000 * (maxLineInfo + 64); len(raw) > limit {
			t.Errorf("%s: BTF of %d bytes for %d line infos (limit %d)", p.Name, len(raw), len(lines)/int(btf.LineInfoSize), limit)
		}
	}
	if insns == 0 {
		t.Fatal("no instructions")
	}
}

func TestLineAround(t *testing.T) {
	long := strings.Repeat("x", 1000)
	for _, c := range []struct {
		text string
		off  int
		want string
	}{
		{"a\nBEGIN { x }\nb", 8, "BEGIN { x }"},
		{"BEGIN { x }", 0, "BEGIN { x }"},
		{long + "\nnext", 500, "..." + long[500-maxLineInfo/4:500-maxLineInfo/4+maxLineInfo] + "..."},
		{long, 10, long[:maxLineInfo] + "..."},
		{"q\n" + long, 2 + 999, "..." + long[999-maxLineInfo/4:]},
	} {
		if got := lineAround(c.text, c.off); got != c.want {
			t.Errorf("lineAround(%.20q, %d) = %.40q (%d bytes), want %.40q (%d bytes)", c.text, c.off, got, len(got), c.want, len(c.want))
		}
	}
	if s := (&srcPos{line: 1, col: 2, text: "a\x00b"}).String(); s != `1:2: a\0b` {
		t.Errorf("NUL in line info: %q", s)
	}
}

// A probe larger than the kernel accepts is refused while it is generated,
// at the statement that crossed the limit, instead of after every
// instruction was built (and then by the verifier with E2BIG).
func TestProgramTooLarge(t *testing.T) {
	text := "BEGIN {\n" + strings.Repeat("@a = 1;\n", 200000) + "}"
	prog, err := lang.Parse(&lang.Source{Name: "big.bt", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(prog, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(res, Options{})
	var ce *Error
	if err == nil || !errors.As(err, &ce) || !strings.Contains(ce.Msg, "limit of 1000000 BPF instructions") || ce.Span.Start.Line < 2 {
		t.Fatalf("got %v, want the instruction limit at a statement", err)
	}
}
