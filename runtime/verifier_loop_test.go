package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
)

// loopSpec is a BEGIN program counting to n in a loop the verifier walks
// iteration by iteration, each instruction placed in the script's while.
func loopSpec(text string, n int32, body, cond string) *compiler.Spec {
	return &compiler.Spec{Source: &lang.Source{Name: "stdin", Text: text}, Programs: []*compiler.Program{{
		Name: "BEGIN", Type: ebpf.RawTracepoint, Attach: []*lang.AttachPoint{{Provider: lang.ProbeBegin}},
		Insns: asm.Instructions{
			asm.Mov.Imm(asm.R1, 0).WithSource(asm.Comment("1:9-15")),
			asm.Add.Imm(asm.R1, 1).WithSymbol("loop").WithSource(asm.Comment(body)),
			asm.JLT.Imm(asm.R1, n, "loop").WithSource(asm.Comment(cond)),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	}}}
}

// TestVerifierLoopTooLarge: a loop the verifier cannot finish is reported
// at the loop's head, not at an empty place in its body.
func TestVerifierLoopTooLarge(t *testing.T) {
	requireBPF(t)
	text := `BEGIN { $i = 0; while ($i < 1000000) { $i++; } exit(); }`
	_, err := Load(loopSpec(text, 1000000, "1:40", "1:24-36"))
	var ve *VerifierError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want *VerifierError", err, err)
	}
	if !ve.Loop {
		t.Fatalf("not mapped to the loop: reason %q span %v", ve.Reason, ve.Span)
	}
	want := "stdin:1:17-37: ERROR: loop is too large for the BPF verifier (bound it, or use unroll/for over a map)\n" +
		text + "\n" +
		"                ~~~~~~~~~~~~~~~~~~~~\n"
	if msg := ve.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "HINT: the verifier said: ") {
		t.Errorf("message:\n%s\nwant prefix:\n%s", msg, want)
	}
}

// TestVerifierLoopNotInLoop: a size complaint outside any loop keeps the
// verifier's own message, with a non-empty marker.
func TestVerifierLoopNotInLoop(t *testing.T) {
	src := &lang.Source{Name: "stdin", Text: `BEGIN { $i = 0; while ($i < 3) { $i++; } while ($i < 9) { $i++; } exit(); }`}
	spec := &compiler.Spec{Source: src, Programs: []*compiler.Program{{Name: "BEGIN"}}}
	at := lang.Span{Start: lang.Pos{Offset: 8, Line: 1, Col: 9}, End: lang.Pos{Offset: 8, Line: 1, Col: 9}}
	if _, ok := refusedLoop(spec, spec.Programs[0], at); ok {
		t.Error("a place outside both loops named a loop")
	}
	w := widenEmpty(src, at)
	if w.Start.Col != 9 || w.End.Col != 11 {
		t.Errorf("widened span %v, want 1:9-11 ($i)", w)
	}
}

func TestLoopHeader(t *testing.T) {
	for _, tc := range []struct{ text, at, want string }{
		{`BEGIN { while (1) { while ($j < 5) { $j++; } } }`, "$j++", "while ($j < 5)"},
		{`BEGIN { unroll(5) { @x++; } }`, "@x++", "unroll(5)"},
		{"BEGIN { @m[1] = 1; }\nEND { for ($kv : @m) { print($kv); } }", "print", "for ($kv : @m)"},
	} {
		src := &lang.Source{Name: "stdin", Text: tc.text}
		prog, err := lang.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		off := strings.Index(tc.text, tc.at)
		spec := &compiler.Spec{Source: src, Programs: []*compiler.Program{{Name: "p", Clause: len(prog.Probes) - 1}}}
		at := lang.Span{Start: src.PosAt(off), End: src.PosAt(off)}
		sp, ok := refusedLoop(spec, spec.Programs[0], at)
		if !ok {
			t.Errorf("%s: no loop found", tc.text)
			continue
		}
		if got := tc.text[sp.Start.Offset:sp.End.Offset]; got != tc.want {
			t.Errorf("%s: header %q, want %q", tc.text, got, tc.want)
		}
	}
}
