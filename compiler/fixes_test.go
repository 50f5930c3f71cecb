package compiler

import (
	"strings"
	"testing"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
)

// expectU64 checks that each map (no keys) holds the wanted value.
func expectU64(t *testing.T, text string, want map[string]uint64) {
	t.Helper()
	spec, coll := runBEGIN(t, text)
	for name, w := range want {
		if got, ok := lookupU64(t, coll, spec, name, u64key(0)); !ok || got != w {
			t.Errorf("%s = %d (present %v), want %d", name, got, ok, w)
		}
	}
}

// Pointer arithmetic steps by the pointee's size, as in C.
func TestPointerArithmetic(t *testing.T) {
	expectU64(t, `
BEGIN {
  @a = (int16*)32; @a += 1;
  @b = (int32*)32; @b--;
  @c = (int64*)32; @c++;
  @d = (int32*)32; @d -= 1;
  @e = (int8*)32; @e++;
  $x = 6;
  @f = (int32*)32; @f += $x;
  $p = (int32*)32; $p++; $p += 2; --$p; @g = $p;
  $q = (int64*)8; @h = $q + $x; @i = 3 + $q; @j = $q - 1;
  $s = (struct list_head*)0; $s++; @k = $s; @l = $s + $x;
  @m = (int32*)32; @n = @m++; @o = ++@m;
  $u = (uint8*)10; @p = $u + 5;
}`, map[string]uint64{
		"m_a": 34, "m_b": 28, "m_c": 40, "m_d": 28, "m_e": 33, "m_f": 56, "m_g": 40,
		"m_h": 56, "m_i": 32, "m_j": 0, "m_k": 16, "m_l": 112, "m_m": 40, "m_n": 32, "m_o": 40, "m_p": 15,
	})
}

// str() of a positional parameter is its text (also when it looks like a
// number), truncated to a constant length.
func TestStrPositional(t *testing.T) {
	spec := compileScript(t, "stdin", `BEGIN {
  @a = str($1); @b = str($1, 3); @c = str($2);
  if (str($1) == str($3)) { @d = 1 } if (str($1) != str($2)) { @e = 1 }
  $x = str($1, 4); if ($x == "hell") { @f = 1 }
}`, "hello", "42", "hello")
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	for name, want := range map[string]string{"m_a": "hello", "m_b": "hel", "m_c": "42"} {
		v := lookupBytes(t, coll, name, u64key(0))
		if got := strings.TrimRight(string(v), "\x00"); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"m_d", "m_e", "m_f"} {
		if got, ok := lookupU64(t, coll, spec, name, u64key(0)); !ok || got != 1 {
			t.Errorf("%s = %d (present %v), want 1", name, got, ok)
		}
	}
}

// A ternary used as a statement runs one branch's effects; branches may be
// calls without a value, and code after branches that both exit is dead.
func TestTernaryStatement(t *testing.T) {
	spec := compileScript(t, "stdin", `BEGIN {
  $a = 0; $b = 1; @x = 1; @y = 2; @z = 3;
  $a ? printf("yes\n") : printf("no\n");
  $b ? delete(@x) : delete(@y);
  1 ? delete(@z) : delete(@y);
}
END { $a = 0; $a ? exit() : exit(); printf("x\n") }
interval:s:1 { $c = 1; if ($c) { exit() } else { exit() } printf("x\n") }`)
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	if got, ok := lookupU64(t, coll, spec, "m_y", u64key(0)); !ok || got != 2 {
		t.Errorf("@y = %d (present %v), want 2", got, ok)
	}
	for _, name := range []string{"m_x", "m_z"} {
		if _, ok := lookupU64(t, coll, spec, name, u64key(0)); ok {
			t.Errorf("%s is set", name)
		}
	}
	if n := len(spec.Events); n < 2 || spec.Events[0].Format != "yes\n" || spec.Events[1].Format != "no\n" {
		t.Errorf("events %d", n)
	}
}

// buf(value, n) holds n bytes: the value's, then zeros (bpftrace prints
// buf("ok_key", 8) as ok_key\x00\x00).
func TestBufLength(t *testing.T) {
	_, coll := runBEGIN(t, `BEGIN { @a = buf("ok_key", 8); @b = buf("abc", 2); }`)
	if v := lookupBytes(t, coll, "m_a", u64key(0)); string(v) != "\x08ok_key\x00\x00" {
		t.Errorf("buf(\"ok_key\", 8) = %q", v)
	}
	if v := lookupBytes(t, coll, "m_b", u64key(0)); string(v) != "\x02ab" {
		t.Errorf("buf(\"abc\", 2) = %q", v)
	}
}

// usdtFake is a Resolver that knows only the sites of usdt probes.
type usdtFake struct {
	ktypes.Unresolved
	sites func(path, provider, name string) ([]ktypes.USDTSite, error)
}

func (f usdtFake) USDTSites(path, provider, name string) ([]ktypes.USDTSite, error) {
	return f.sites(path, provider, name)
}

// Sites of a usdt probe that pass an argument differently are told apart by
// the page offset of the probe address; the dispatch passes the verifier.
func TestUSDTSitesDispatch(t *testing.T) {
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: `usdt:/bin/true:p:n { @a = arg0; @b = arg1; }`})
	if err != nil {
		t.Fatal(err)
	}
	reg := func(r string, off int) ktypes.USDTArg {
		return ktypes.USDTArg{Kind: ktypes.USDTReg, Size: 4, Signed: true, Reg: r, RegOffset: off}
	}
	mem := ktypes.USDTArg{Kind: ktypes.USDTMem, Size: 8, Reg: "bp", RegOffset: 32, Offset: -16, Index: "ax", IndexOffset: 80, Scale: 8}
	sites := []ktypes.USDTSite{
		{PC: 0x401123, Args: []ktypes.USDTArg{reg("di", 112), mem}},
		{PC: 0x402456, Args: []ktypes.USDTArg{reg("si", 104), mem}},
	}
	r := usdtFake{sites: func(path, provider, name string) ([]ktypes.USDTSite, error) {
		if path != "/bin/true" || provider != "p" || name != "n" {
			t.Errorf("USDTSites(%q, %q, %q)", path, provider, name)
		}
		return sites, nil
	}}
	res, err := check.Check(prog, check.Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{}
	spec, err := Compile(res, opts)
	if err != nil {
		t.Fatal(err)
	}
	dump := spec.Dump()
	if !strings.Contains(dump, "imm: 291") || !strings.Contains(dump, "imm: 1110") {
		t.Errorf("no dispatch on page offsets 0x123 and 0x456:\n%s", dump)
	}
	load(t, spec)

	// Two sites at one page offset that differ cannot be told apart.
	sites[1].PC = 0x402123
	if _, err := Compile(res, opts); err == nil || !strings.Contains(err.Error(), "same page offset") {
		t.Errorf("err = %v, want a same-page-offset error", err)
	}
	// An argument the probe does not have.
	prog, _ = lang.Parse(&lang.Source{Name: "stdin", Text: `usdt:/bin/true:p:n { @c = arg5; }`})
	res, _ = check.Check(prog, check.Options{Resolver: r})
	if _, err := Compile(res, opts); err == nil || !strings.Contains(err.Error(), "only 2 arguments") {
		t.Errorf("err = %v, want an argument-count error", err)
	}
}

// for ($kv : @m) visits every element in a callback of
// bpf_for_each_map_elem, reading and writing the clause's variables;
// len(@m) counts the elements.
func TestForLoopAndLen(t *testing.T) {
	expectU64(t, `BEGIN {
  @m[1] = 2; @m[3] = 4; @m[5] = 6;
  $s = 0; $n = 0;
  for ($kv : @m) { $s += $kv.0 * $kv.1; $n++; }
  @sum = $s; @n = $n; @len = len(@m);
  $b = 0;
  for ($kv : @m) { $b++; break; }
  @brk = $b;
  @c[1, "a"] = count(); @c[2, "b"] = count();
  $t = 0;
  for ($e : @c) { if ($e.0.1 == "b") { continue; } $t += $e.0.0 + $e.1; }
  @t = $t;
}`, map[string]uint64{"m_sum": 2 + 12 + 30, "m_n": 3, "m_len": 3, "m_brk": 1, "m_t": 2})
}

// Without -k no check code is generated; with -kk every map helper is
// checked and the programs still verify.
func TestHelperCheckCode(t *testing.T) {
	text := `BEGIN { @[1] = 1; @x = @[2]; delete(@[3]); @s = "a"; @t = @s; }`
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(prog, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := func(spec *Spec) (n int) {
		for _, ev := range spec.Events {
			if ev.Kind == EvHelperError {
				n++
			}
		}
		return n
	}
	plain, err := Compile(res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := kinds(plain); n != 0 {
		t.Errorf("%d helper checks without -k", n)
	}
	k1, _ := Compile(res, Options{HelperCheck: 1})
	k2, err := Compile(res, Options{HelperCheck: 2})
	if err != nil {
		t.Fatal(err)
	}
	// -k: 4 updates and 1 delete; -kk: and 2 lookups.
	if n1, n2 := kinds(k1), kinds(k2); n1 != 5 || n2 != 7 {
		t.Errorf("helper checks: -k %d (want 5), -kk %d (want 7)", n1, n2)
	}
	load(t, k2)
}
