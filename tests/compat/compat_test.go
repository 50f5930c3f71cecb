// Package compat_test runs scripts whose output differs between bpftrace
// 0.26.1 (gotrace's default) and bpftrace 0.17 (`--compat 0.17`), once in
// each mode, and compares their exact output: each row of the README's
// compat table has a case here.
package compat_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// A case is a script (ending itself with exit()) and what each release
// prints: stdout, or with a leading "ERROR: " a line its stderr must hold
// (exit status non-zero).
type compatCase struct {
	name   string
	script string
	v026   string
	v017   string
}

var cases = []compatCase{
	{
		// bpftrace 0.17 finds an unknown kaddr() symbol in its code
		// generation and says so without a place.
		name:   "kaddr of an unknown symbol",
		script: `BEGIN { print(kaddr("asdfzzzzzzz")); exit(); }`,
		v026:   "ERROR: Failed to resolve kernel symbol: asdfzzzzzzz",
		v017:   "ERROR: Failed to compile: Failed to resolve kernel symbol: asdfzzzzzzz",
	},
	{
		// bpftrace 0.17 drops an expanded attach point matching nothing.
		name:   "a wildcard matching nothing",
		script: `uprobe:/bin/sh:zzzzz* { } BEGIN { printf("x\n"); exit(); }`,
		v026:   "ERROR: No matches for uprobe /bin/sh:zzzzz*.",
		v017:   "x\n",
	},
	{
		// 0.26 types the constant (enum E) but a map key mixing it with
		// integers is an integer, printed as a number (bpftrace 0.26's
		// "no symbolize enum after arithmetic mixed"); the same output.
		name:   "enum constants are uint64 in 0.17",
		script: `enum E { A = 1, B = 2 }; BEGIN { @w[A] = 1; @w[2] = 3; @s[A - 5] = 4; @n[B] = 5; exit(); }`,
		v026:   "\n\n@n[B]: 5\n@s[-4]: 4\n@w[1]: 1\n@w[2]: 3\n",
		v017:   "\n\n@n[2]: 5\n@s[-4]: 4\n@w[1]: 1\n@w[2]: 3\n",
	},
	{
		name:   "uint64 map keys print signed in 0.17",
		script: `BEGIN { @a[(uint64)-1] = 1; exit(); }`,
		v026:   "\n\n@a[18446744073709551615]: 1\n",
		v017:   "\n\n@a[-1]: 1\n",
	},
	{
		name:   "bools print as words",
		script: `BEGIN { $x = 0; print((true, false, !$x, 1 > 2, strcontains("hello", "ell"))); printf("%d %d\n", 1 < 2, !1); exit(); }`,
		v026:   "(true, false, true, false, true)\n1 0\n",
		v017:   "(1, 0, 1, 0, 1)\n1 0\n",
	},
	{
		name:   "bool map keys and values",
		script: `BEGIN { @a[1 > 0, 5] = 2 < 1; exit(); }`,
		v026:   "\n\n@a[true, 5]: false\n",
		v017:   "\n\n@a[1, 5]: 0\n",
	},
	{
		name:   "casts to bool",
		script: `BEGIN { $p = (int64 *)0; print(((bool)"hello", (bool)"", (bool)7, (bool)$p)); exit(); }`,
		v026:   "(true, false, true, false)\n",
		v017:   "(1, 0, 1, 0)\n",
	},
	{
		name:   "pointers print in hex and step by the pointee",
		script: `BEGIN { @ = (int32 *)0x32; @++; print((int8 *)0x10); exit(); }`,
		v026:   "0x10\n\n\n@: 0x36\n",
		v017:   "16\n\n\n@: 54\n",
	},
	{
		name:   "a one-tuple key prints as several keys",
		script: `BEGIN { @[(1, 2)] = (3, 4); exit(); }`,
		v026:   "\n\n@[1, 2]: (3, 4)\n",
		v017:   "\n\n@[(1, 2)]: (3, 4)\n",
	},
	{
		name:   "a tuple key is the keys",
		script: `BEGIN { @[(1, "a")] = 1; @[2, "b"] = 2; $t = (3, "c"); @[$t] = 3; delete(@, (1, "a")); exit(); }`,
		v026:   "\n\n@[2, b]: 2\n@[3, c]: 3\n",
		v017:   "ERROR: Argument mismatch for @: trying to access with arguments:",
	},
	{
		name:   "enums print by name",
		script: `enum { ONE = 1, TWO = 2 }; BEGIN { @k[ONE, 7] = TWO; exit(); }`,
		v026:   "\n\n@k[ONE, 7]: TWO\n",
		v017:   "\n\n@k[1, 7]: 2\n",
	},
	{
		name:   "tuples compare with == and !=",
		script: `BEGIN { $a = (1, "hello"); printf("%d %d %d\n", $a == (1, "hello"), $a == (1, "hell"), $a != (2, "hello")); exit(); }`,
		v026:   "1 0 1\n",
		v017:   "ERROR: Type mismatch for '=='",
	},
	{
		name:   "printf %s of an enum",
		script: `enum Foo { A, B, C = 7 }; BEGIN { printf("%-3s|%s|%s|%d\n", A, B, (enum Foo)5, C); exit(); }`,
		v026:   "A  |B|5|7\n",
		v017:   "ERROR: printf: %s specifier expects a value of type string (integer supplied)",
	},
	{
		name:   "aggregations read as integers",
		script: `BEGIN { @c = count(); @c = count(); @s = sum(5); @n = min(-3); @x = max(9); @v = avg(4); @v = avg(8); printf("%d %d %d %d %d\n", @c + 0, @s, @n, @x, @v); if (@c > 1) { printf("big\n"); } clear(@c); clear(@s); clear(@n); clear(@x); clear(@v); exit(); }`,
		v026:   "2 5 -3 9 6\nbig\n",
		v017:   "ERROR: Type mismatch for '+': comparing 'count' with 'int64'",
	},
	{
		name:   "a cleared count",
		script: `BEGIN { @ = count(); clear(@); @b = 1; exit(); }`,
		v026:   "\n\n\n@b: 1\n", // the emptied @ prints as an empty line
		v017:   "\n\n@: 0\n@b: 1\n",
	},
	{
		name:   "delete returns whether it deleted",
		script: `BEGIN { @a[1] = 1; if (delete(@a, 1)) { printf("deleted\n"); } if (!delete(@a, 2)) { printf("absent\n"); } exit(); }`,
		v026:   "deleted\nabsent\n",
		v017:   "ERROR: Invalid condition in if(): none",
	},
	{
		name:   "variables are block scoped",
		script: `BEGIN { if (1) { $x = 1; } printf("%d\n", $x); exit(); }`,
		v026:   "ERROR: Undefined or undeclared variable: $x",
		v017:   "1\n",
	},
	{
		name:   "the address of a variable",
		script: `BEGIN { $a = 41; $b = &$a; printf("%d %d\n", *$b + 1, $b != 0); exit(); }`,
		v026:   "42 1\n",
		v017:   "ERROR: The & operator is not supported",
	},
	{
		// Added in bpftrace 0.19; accepted in both modes (new syntax).
		name:   "casts between integers, strings and integer arrays",
		script: `BEGIN { print((int8[])"hi"); printf("%x\n", ((int8[8])12345)[0]); $a = (uint8[2])(uint16)258; print($a); print((uint16)$a); exit(); }`,
		v026:   "[104,105,0]\n39\n[2,1]\n258\n",
		v017:   "[104,105,0]\n39\n[2,1]\n258\n",
	},
	{
		name:   "the probe builtin of the special probes",
		script: `BEGIN { printf("%s\n", probe); exit(); }`,
		v026:   "begin\n",
		v017:   "BEGIN\n",
	},
	{
		name:   "dot on a struct pointer",
		script: `BEGIN { printf("%d\n", curtask.pid == curtask->pid); exit(); }`,
		v026:   "1\n",
		v017:   "ERROR: Can not access field 'pid' on type 'struct task_struct *'. Try dereferencing it first, or using '->'",
	},
	{
		// bpftrace 0.26 (its binop_int, PR #5138): a subtraction is an
		// int64 whatever its operands' signs; 0.17 keeps them unsigned
		// (as bpftrace 0.17 prints here).
		name:   "integer subtraction is signed",
		script: `BEGIN { $a = (uint32)1; $b = (uint32)3; print($a - $b); $u = (uint64)1; print($u - 2); exit(); }`,
		v026:   "-2\n-1\n",
		v017:   "18446744073709551614\n18446744073709551615\n",
	},
	{
		// pid and tid are uint32 in bpftrace 0.26 (0.22, #3441), uint64
		// in 0.17 (as bpftrace 0.17 prints here).
		name:   "pid is 32 bits",
		script: `BEGIN { $x = pid; $y = tid; print((sizeof($x), sizeof($y))); exit(); }`,
		v026:   "(4, 4)\n",
		v017:   "(8, 8)\n",
	},
	{
		// Added in bpftrace 0.25: `probe` is a named probe's name.
		name:   "named probes",
		script: `foo=BEGIN { printf("%s\n", probe); } bar=interval:ms:1, i:ms:2 { printf("%s\n", probe); exit(); }`,
		v026:   "foo\nbar\n",
		v017:   "ERROR: named probes (foo=) were added in bpftrace 0.25; --compat 0.17 follows bpftrace 0.17, which has no probe names",
	},
}

func run(t *testing.T, version, script string) testkit.Result {
	t.Helper()
	cmd := exec.Command(testkit.Gotrace(t), "--compat", version, "-e", script)
	return testkit.RunBounded(t, 20*time.Second, cmd)
}

// stdout drops 0.17's "Attaching N probes..." line and the blank lines
// that end the output.
func stdout(version string, r testkit.Result) string {
	out := r.Stdout
	if version == "0.17" && strings.HasPrefix(out, "Attaching ") {
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return strings.TrimRight(out, "\n") + "\n"
}

func TestCompat(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []struct{ version, want string }{{"0.26", c.v026}, {"0.17", c.v017}} {
				r := run(t, v.version, c.script)
				if r.TimedOut {
					t.Fatalf("--compat %s: timed out; stderr:\n%s", v.version, r.Stderr)
				}
				if strings.Contains(r.Stderr, "panic:") {
					t.Fatalf("--compat %s: crashed:\n%s", v.version, r.Stderr)
				}
				if msg, isErr := strings.CutPrefix(v.want, "ERROR: "); isErr {
					if r.ExitCode == 0 || !strings.Contains(r.Stderr, "ERROR: "+msg) {
						t.Errorf("--compat %s: exit %d, stderr:\n%s\nwant an error holding %q", v.version, r.ExitCode, r.Stderr, "ERROR: "+msg)
					}
					continue
				}
				if r.ExitCode != 0 {
					t.Errorf("--compat %s: exit %d; stderr:\n%s", v.version, r.ExitCode, r.Stderr)
				}
				if got := stdout(v.version, r); got != v.want {
					t.Errorf("--compat %s: stdout\n%q\nwant\n%q", v.version, got, v.want)
				}
			}
		})
	}
}

// TestExitAfterBeginEnd: a script of only BEGIN/END probes ends by itself
// after BEGIN in bpftrace 0.26 (0.24, #4358), END and the maps printed;
// bpftrace 0.17 waits for Ctrl-C.
func TestExitAfterBeginEnd(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	script := `BEGIN { @a = 1; printf("x\n"); } END { printf("end\n"); }`
	r := run(t, "0.26", script)
	if r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("--compat 0.26: exit %d, timed out %v; stderr:\n%s", r.ExitCode, r.TimedOut, r.Stderr)
	}
	if got, want := r.Stdout, "x\nend\n\n\n@a: 1\n"; got != want {
		t.Errorf("--compat 0.26: stdout %q, want %q", got, want)
	}
	cmd := exec.Command(testkit.Gotrace(t), "--compat", "0.17", "-e", script)
	r = testkit.RunBounded(t, 2*time.Second, cmd)
	if !r.TimedOut {
		t.Errorf("--compat 0.17: ended by itself (exit %d), want it to wait for Ctrl-C; stdout:\n%s", r.ExitCode, r.Stdout)
	}
}
