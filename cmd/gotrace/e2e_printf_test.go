package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// printfCases are printf formats with arguments and bpftrace 0.17's output.
var printfCases = []struct{ format, args, want string }{
	{`%-5s|%5d|%x`, `"ab", 42, 255`, `ab   |   42|ff`},
	{`%d %d`, `-42, 7`, `-42 7`},
	{`%u`, `-1`, `4294967295`},
	{`%lx %llu`, `-1, -1`, `ffffffffffffffff 18446744073709551615`},
	{`%hhd`, `300`, `44`},
	{`%5.2s|`, `"abc"`, `   ab|`},
	{`%x %X %o`, `48879, 48879, 8`, `beef BEEF 10`},
	{`%08x|%-8x|%8X`, `255, 255, 255`, `000000ff|ff      |      FF`},
	{`%05d|%-5d|%5d`, `-3, -3, -3`, `-0003|-3   |   -3`},
	{`%c%c%c`, `72, 105, 33`, `Hi!`},
	{`%s|%10s|%-10s|`, `"abc", "abc", "abc"`, `abc|       abc|abc       |`},
	{`100%% %d`, `5`, `100% 5`},
	{`%ld %lld %lu %llx`, `-5, -6, 7, 255`, `-5 -6 7 ff`},
	{`%hd %hu`, `70000, 70000`, `4464 4464`},
	{`%p`, `4660`, `0x1234`},
	{`%d %d`, `1 == 1, 2 > 3`, `1 0`},
	{`%s`, `comm`, `gotrace-printf`},
	{`%d`, `(int8)200`, `-56`},
	{`%x`, `-1`, `ffffffff`},
	{`[%3s]`, `"toolong"`, `[toolong]`},
	{`%d-%s-%d`, `1, "two", 3`, `1-two-3`},
	{`%5c|`, `65`, `    A|`},
	{`%o|%3o`, `0, 8`, `0| 10`},
	{`tab\there \"q\" \\`, ``, "tab\there \"q\" \\"},
}

func printfScript(i int) string {
	c := printfCases[i]
	args := ""
	if c.args != "" {
		args = ", " + c.args
	}
	return fmt.Sprintf(`printf("%d:%s\n"%s);`, i, c.format, args)
}

// TestPrintfFormats runs every case in one BEGIN under gotrace — and under
// bpftrace when installed (always in CI), whose output must be the same.
// The binary is renamed so that comm is known.
func TestPrintfFormats(t *testing.T) {
	requireTracing(t)
	var b strings.Builder
	b.WriteString("BEGIN { ")
	for i := range printfCases {
		b.WriteString(printfScript(i))
		b.WriteString(" ")
	}
	b.WriteString("exit(); }")
	script := b.String()
	var want strings.Builder
	want.WriteString("Attaching 1 probe...\n")
	for i, c := range printfCases {
		fmt.Fprintf(&want, "%d:%s\n", i, c.want)
	}
	want.WriteString("\n\n")

	bin := t.TempDir() + "/gotrace-printf"
	if err := exec.Command("cp", testkit.Gotrace(t), bin).Run(); err != nil {
		t.Fatal(err)
	}
	r := testkit.RunBounded(t, 20*time.Second, exec.Command(bin, "-e", script))
	checkNoPanic(t, r)
	if r.ExitCode != 0 {
		// Find which cases gotrace rejects, one by one.
		for i := range printfCases {
			one := testkit.RunBounded(t, 20*time.Second, exec.Command(bin, "-e", "BEGIN { "+printfScript(i)+" exit(); }"))
			if one.ExitCode != 0 {
				t.Errorf("case %d %q: exit %d:\n%s", i, printfCases[i].format, one.ExitCode, one.Stderr)
			}
		}
	} else {
		compareLines(t, "gotrace", r.Stdout, want.String())
	}

	if !testkit.InCI() && testkit.Check(testkit.Bpftrace) != nil {
		return
	}
	bt := requireBpftrace(t)
	btBin := t.TempDir() + "/gotrace-printf"
	if err := exec.Command("cp", bt, btBin).Run(); err != nil {
		t.Fatal(err)
	}
	br := testkit.RunBounded(t, 30*time.Second, exec.Command(btBin, "-e", script))
	if br.ExitCode != 0 {
		t.Fatalf("test bug: bpftrace rejects the printf table (exit %d):\n%s", br.ExitCode, br.Stderr)
	}
	if br.Stdout != want.String() {
		t.Errorf("test bug: the expected table is not bpftrace's output:")
		compareLines(t, "bpftrace", br.Stdout, want.String())
	}
}

// compareLines reports each differing line of a printf table.
func compareLines(t *testing.T, who, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			mismatch(t, "%s line %d: got %q, want %q", who, i+1, g, w)
		}
	}
}
