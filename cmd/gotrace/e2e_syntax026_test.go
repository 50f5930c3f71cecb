package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

// TestSyntax026Output runs scripts in bpftrace 0.20-0.26 syntax (macros,
// block expressions, range loops, config, map declarations) and checks
// what they print; the expectations are those of bpftrace v0.26.1's
// runtime tests for the same scripts.
func TestSyntax026Output(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	cases := []struct {
		name, script string
		stdout       string // stdout, exactly (with the two newlines at exit)
		stderr       string // a line stderr must hold, if set
	}{
		{"macro mutates variable", `macro inc($x) { $x += 1; } begin { $a = 1; inc($a); print($a); }`, "2\n\n\n", ""},
		{"macro mutates map", `macro set(@x) { @x[1] = 2; } begin { @a[1] = 1; set(@a); }`, "\n\n@a[1]: 2\n", ""},
		{"macros call macros", `macro add1(x) { x + 1 } macro add2(y) { y + add1(y) } macro add3(z) { z + add2(z) } begin { print(add3(1)); }`, "4\n\n\n", ""},
		{"macro as ident", `macro one() { $x = 1; $x } begin { $a = one; print($a); }`, "1\n\n\n", ""},
		{"macro hygiene", `macro f() { $a = 5; $a } begin { $a = 1; $b = f(); print(($a, $b)); }`, "(1, 5)\n\n\n", ""},
		{"macro argument evaluated per use", `macro thrice(x) { x; x; x; } begin { thrice({ printf("hi") }); printf("\n"); }`, "hihihi\n\n\n", ""},
		{"macro map argument per call", `macro first_key(@x) { let $x; for ($k : @x) { $x = $k.0; break; } $x } begin { @a[1] = 0; @b[2] = 0; print((first_key(@a), first_key(@b))); }`, "(1, 2)\n\n\n@a[1]: 0\n@b[2]: 0\n", ""},
		{"macro overrides builtin", `macro cpu() { "hi" } begin { printf("%s\n", cpu()); }`, "hi\n\n\n", ""},
		{"macro exits early", `macro early() { exit(); } begin { early(); print(1); }`, "\n\n", ""},
		{"block expression", `begin { let $a = { let $b = 1; $b }; print($a); }`, "1\n\n\n", ""},
		{"discard", `begin { _ = { print(1); 1 } }`, "1\n\n\n", ""},
		{"range with continue", `begin { for ($i : 1..4) { if ($i == 2) { continue; } print($i); } }`, "1\n3\n\n\n", ""},
		{"range without parentheses", `begin { $s = 2; for $i : $s..$s + 3 { print($i); } }`, "2\n3\n4\n\n\n", ""},
		{"empty range", `begin { for ($i : 5..5) { print("here"); } print("done"); }`, "done\n\n\n", ""},
		// Bounds that are not constants: bpf_loop (bpftrace 0.26), the
		// count taken once, before the first iteration.
		{"range to a map value", `begin { @m[5] = 4; for ($i : 1..@m[5]) { print($i); } }`, "1\n2\n3\n\n\n@m[5]: 4\n", ""},
		{"range bound read once", `begin { @a = 3; for ($i : 0..@a) { @a += 1; } }`, "\n\n@a: 6\n", ""},
		{"range break and continue", `begin { @n = 9; $s = 0; for ($i : 0..@n) { if ($i == 1) { continue; } if ($i == 4) { break; } $s += $i; } print($s); }`, "5\n\n\n@n: 9\n", ""},
		{"range backwards is empty", `begin { @n = -2; for ($i : 0..@n) { print($i); } print("done"); }`, "done\n\n\n@n: -2\n", ""},
		{"return in nested loops", `begin { @m = 3; for ($i : 1..@m) { for ($j : 0..@m) { if ($j == 2) { printf("ret %d %d\n", $i, $j); return; } } } print("end"); }`, "ret 1 2\n\n\n@m: 3\n", ""},
		{"return in a map loop", `begin { @map["foo"] = 1; @map["bar"] = 2; for ($kv : @map) { if ($kv.0 == "bar") { print($kv.0); return; } } print("end"); }`, "bar\n\n\n@map[foo]: 1\n@map[bar]: 2\n", ""},
		{"return with a value", `begin { $a = 1; print($a); return $a + 1; print(2); }`, "1\n\n\n", ""},
		{"conditions without parentheses", `begin { $x = 3; if $x > 2 { print("big"); } else if $x == 1 { print("one") } $i = 0; while $i < 3 { $i++; } print($i); }`, "big\n3\n\n\n", ""},
		{"C fixed-width type names", `begin { print(sizeof(uint64_t)); print((uint8_t)257); print((int16_t)-1); }`, "8\n1\n-1\n\n\n", ""},
		{"typeof", `macro add(x) { let $y: typeof(x); if (true) { $y = 1 } x + $y } begin { print(add(1)); $s = "abc"; let $t: typeof($s) = "xy"; print($t); $n = (uint8)3; $m = (typeof($n))300; print($m); }`, "2\nxy\n44\n\n\n", ""},
		{"records", `begin { $v = 99; $t = (a=0, b=1, c="str", d=(5, 6), e=$v); printf("%d %d %s %d %d %d\n", $t.a, $t.b, $t.c, $t.d.0, $t.d.1, $t.e); print($t); @r = (x = 1, y = "s"); }`, "0 1 str 5 6 99\n{ .a = 0, .b = 1, .c = str, .d = (5, 6), .e = 99 }\n\n\n@r: { .x = 1, .y = s }\n", ""},
		{"elvis", `begin { $a = 0; $b = 5; print($a ?: 7); print($b ?: 7); print($a ? 1 : 2); }`, "7\n5\n2\n\n\n", ""},
		{"struct attributes", `struct foo { int x; char y; int z; } struct bar { int x; char y; int z; } __attribute__((packed)) struct bar2 { int x; char y; int z; } /**/ __attribute__ /**/ ((packed)) __attribute__((aligned(1))) begin { print(sizeof(struct foo)); print(sizeof(struct bar)); print(sizeof(struct bar2)); }`, "12\n9\n9\n\n\n", ""},
		{"tuple and string index", `begin { $t = (1, "a", 3); print($t[2]); print($t[1]); $s = "hello"; print($s[1]); printf("%c\n", $s[4]); }`, "3\na\n101\no\n\n\n", ""},
		{"record field order", `begin { $a = (foo={ printf("hello"); 1 }, bar={ printf("world"); 2 }); $a = (bar={ printf("hello"); 1 }, foo={ printf("world\n"); 2 }); print($a) }`, "helloworldhelloworld\n{ .foo = 2, .bar = 1 }\n\n\n", ""},
		{"duration literals", `begin { print(5s); print(100ms + 1us); print(1_000ms); print(2m); print(1d); print(3ns); print(10ul); }`, "5000000000\n100001000\n1000000000\n120000000000\n86400000000000\n3\n10\n\n\n", ""},
		{"config print_maps_on_exit", `config = { print_maps_on_exit = 0 } begin { @x = 1; }`, "", ""},
		{"declared hash is full", `let @a = hash(1); begin { @a[1] = 1; @a[2] = 2; }`, "\n\n@a[1]: 1\n", "WARNING: Map full; can't update element"},
		{"declared lruhash evicts", `let @a = lruhash(1); begin { @a[1] = 1; @a[2] = 2; }`, "\n\n@a[2]: 2\n", ""},
		// A block expression in a conditional operand runs only when the
		// operand is evaluated; `a ?: b` evaluates a once.
		{"block in && and ||", `begin { if (0 && { printf("Y"); 1 }) { print("no"); } if (1 && { printf("X"); 1 }) { print("and"); } if (1 || { printf("W"); 0 }) { print("or"); } $v = 0 || { printf("V"); 1 }; print($v); }`, "Xand\nor\nVtrue\n\n\n", ""},
		{"block in ?: branches", `begin { $c = 0 ? { printf("Z"); 1 } : 2; print($c); $s = 1 ? { printf("S"); "yes" } : { printf("N"); "no" }; print($s); 1 ? { printf("T\n") } : { printf("F\n") }; }`, "2\nSyes\nT\n\n\n", ""},
		{"elvis evaluates once", `begin { $b = ({ printf("C"); 3 }) ?: { printf("D"); 7 }; print($b); @x = 0; $c = (@x++) ?: 9; print(($c, @x)); }`, "C3\n(9, 1)\n\n\n@x: 1\n", ""},
		// exit() (bpftrace 0.26 as 0.17): the probe that calls it stops
		// there, its record tells the reader to detach, and what the other
		// probes write to the ring after it is not printed; no flag stops
		// them in the kernel before the detach.
		{"exit stops its probe; later output dropped", `config = { print_maps_on_exit = 0 } i:ms:1 { @n++; if (@n == 3) { exit(); } printf("%d\n", @n); } end { printf("end\n"); }`, "1\n2\nend\n", ""},
		{"provider names in any case", `Interval:ms:1 { print("tick"); exit(); }`, "tick\n\n\n", ""},
		{"declared percpuhash of counts", `let @c = percpuhash(10); begin { @c[1] = count(); @c[1] = count(); @c[2] = count(); if (@c[1] == 2) { print("two"); } }`, "two\n\n\n@c[2]: 1\n@c[1]: 2\n", ""},
		{"declared percpulruhash evicts", `let @c = percpulruhash(2); begin { @c[1] = count(); @c[2] = count(); @c[3] = count(); print(len(@c)); }`, "2\n\n\n@c[2]: 1\n@c[3]: 1\n", ""},
		{"string index at run time", `begin { $s = "hello"; $i = 1; print($s[$i]); $i = 10; print($s[$i]); $i = 4; printf("%c\n", $s[$i]); }`, "101\n0\no\n\n\n", ""},
		// Small 0.26 semantics (the 0.17 forms: --compat 0.17 below).
		{"probe in begin and end", `begin { printf("%s", probe); } end { printf("-%s\n", probe); }`, "begin-end\n\n\n", ""},
		{"enum constant is 64-bit", `begin { print(sizeof(BTF_VAR_STATIC)); print(BTF_VAR_GLOBAL_EXTERN); }`, "8\nBTF_VAR_GLOBAL_EXTERN\n\n\n", ""},
		{"declared array of pointers", `begin { let $x: struct file *[64] = curtask->files->fd_array; print(sizeof($x)); }`, "512\n\n\n", ""},
		{"cat of a missing file", `begin { cat("/does/not/exist/file"); }`, "\n\n", "ERROR: failed to open file '/does/not/exist/file' (No such file or directory)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gt(t, 20*time.Second, "--compat", "0.26", "-e", c.script)
			if r.ExitCode != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.ExitCode, r.Stderr)
			}
			expectOutput(t, c.name, r.Stdout, c.stdout)
			if c.stderr != "" && !strings.Contains(r.Stderr, c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, r.Stderr)
			}
		})
	}
}

// TestSmall026Compat017: under --compat 0.17 the same scripts print as
// bpftrace 0.17 does: BEGIN/END in upper case, cat's error with a colon.
func TestSmall026Compat017(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	r := gt(t, 20*time.Second, "--compat", "0.17", "-e", `BEGIN { printf("%s", probe); } END { printf("-%s\n", probe); } BEGIN { exit(); }`)
	if !strings.Contains(r.Stdout, "BEGIN-END\n") {
		t.Errorf("probe in BEGIN/END under 0.17: %q", r.Stdout)
	}
	r = gt(t, 20*time.Second, "--compat", "0.17", "-e", `BEGIN { cat("/does/not/exist/file"); exit(); }`)
	if !strings.Contains(r.Stderr, "ERROR: failed to open file '/does/not/exist/file': No such file or directory") {
		t.Errorf("cat error under 0.17: %q", r.Stderr)
	}
	r = gt(t, 20*time.Second, "--compat", "0.26", "-f", "json", "-e", `begin { print((1, 2)); }`)
	if !strings.HasPrefix(r.Stdout, `{"type": "attached_probes", "data": {"probes": 1}}`+"\n"+`{"type": "value", "data": [1,2]}`) {
		t.Errorf("-f json: the attached_probes record, then BEGIN's output: %q", r.Stdout)
	}
}

// TestConfigPrecedence: a BPFTRACE_ variable overrides the script's config
// block, which overrides the default.
func TestConfigPrecedence(t *testing.T) {
	testkit.Require(t, testkit.Root, testkit.BPF)
	script := `config = { print_maps_on_exit = 0 } begin { @x = 1; }`
	r := gt(t, 20*time.Second, "--compat", "0.26", "-e", script)
	expectOutput(t, "config", r.Stdout, "")
	t.Setenv("BPFTRACE_PRINT_MAPS_ON_EXIT", "1")
	r = gt(t, 20*time.Second, "--compat", "0.26", "-e", script)
	expectOutput(t, "env over config", r.Stdout, "\n\n@x: 1\n")
}

// TestConfigErrors: an unknown key or a bad value is an error at its item.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`config = { bogus = 4 } begin { }`, "stdin:1:12-21: ERROR: Unrecognized config variable: bogus"},
		{`config = { print_maps_on_exit = 5 } begin { }`, "stdin:1:12-34: ERROR: Invalid value for print_maps_on_exit: needs to be either true/false or 1/0"},
		{`config = { stack_mode = fast } begin { }`, "ERROR: Invalid value for stack_mode: valid values are bpftrace, perf, raw, build_id"},
		{`let @a = foo(1); begin { }`, "stdin:1:1-17: ERROR: Invalid bpf map type: foo"},
		{`macro f($x) { $x } begin { f(1); }`, "ERROR: Mismatched arg. Macro f expects a variable for $x"},
		{`macro f($x) { $x } begin { f(1); }`, "HINT: $x is declared at 1:9"},
		{`macro f(x) { x } begin { f(1, 2); }`, "ERROR: Call to f() has the wrong number of arguments: expected 1, got 2"},
		{`macro f() { f() } begin { f(); }`, "ERROR: Macro recursion limit reached: f"},
	} {
		r := gt(t, 20*time.Second, "-d", "-e", c.script)
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%s: exit %d, stderr lacks %q:\n%s", c.script, r.ExitCode, c.want, r.Stderr)
		}
	}
}

// TestRecordErrors: a field a record lacks, a field named twice.
func TestRecordErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`begin { $t = (a = 1); print($t.b); }`, "ERROR: Record does not contain a field named 'b'"},
		{`begin { $t = (a = 1, a = 2); }`, "ERROR: Duplicate field name in record: a"},
		{`begin { $t = (1, 2); print($t[2]); }`, "ERROR: the index 2 is out of bounds for tuple of size 2"},
		{`begin { $t = (1, 2); $i = 1; print($t[$i]); }`, "ERROR: The index of a tuple must be a constant integer"},
	} {
		r := gt(t, 20*time.Second, "-d", "-e", c.script)
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%s: exit %d, stderr lacks %q:\n%s", c.script, r.ExitCode, c.want, r.Stderr)
		}
	}
}
