package compiler

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/gotrace/gotrace/ktypes"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/lang/check"
	"github.com/gotrace/gotrace/stdlib"
)

// runBEGIN compiles a BEGIN-only script, loads it and runs it once.
func runBEGIN(t *testing.T, text string) (*Spec, *ebpf.Collection) {
	t.Helper()
	spec := compileScript(t, "stdin", text)
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	return spec, coll
}

// lookupBytes reads a plain (non-per-CPU) map value.
func lookupBytes(t *testing.T, coll *ebpf.Collection, name string, key []byte) []byte {
	t.Helper()
	m := coll.Maps[name]
	if m == nil {
		t.Fatalf("no map %s", name)
	}
	v := make([]byte, m.ValueSize())
	if err := m.Lookup(key, &v); err != nil {
		t.Fatalf("lookup %s: %v", name, err)
	}
	return v
}

func TestStringBuiltinsRun(t *testing.T) {
	spec, coll := runBEGIN(t, `BEGIN {
  @a = strncmp("abc", "abd", 2); @b = strncmp("abc", "abd", 3); @c = strncmp("abd", "abc", 9);
  @e = strncmp("ab", "abc", 5);
  $s = "hello world";
  @d = strcontains($s, "o w"); @f = strcontains($s, "xyz"); @g = strcontains($s, "");
  @h = strcontains("ab", "abc"); @i = strcontains($s, "world"); @j = strcontains($s, "worlds");
  @n4 = ntop(0x0100007f); @n6 = ntop(10, "0123456789abcde");
  @mac = macaddr("\x01\x02\x03\x04\x05");
  @t = strftime("%H", 12345);
  @buf = buf("abcdefgh", 4);
}`)
	want := map[string]uint64{"m_a": 0, "m_b": 1, "m_c": 1, "m_e": 1, "m_d": 1, "m_f": 0, "m_g": 1, "m_h": 0, "m_i": 1, "m_j": 0}
	for name, w := range want {
		if got, ok := lookupU64(t, coll, spec, name, u64key(0)); !ok || got != w {
			t.Errorf("%s = %d (present %v), want %d", name, got, ok, w)
		}
	}
	n4 := lookupBytes(t, coll, "m_n4", u64key(0))
	if binary.LittleEndian.Uint64(n4) != 2 || !bytes.Equal(n4[8:12], []byte{127, 0, 0, 1}) {
		t.Errorf("ntop v4 = %x", n4)
	}
	n6 := lookupBytes(t, coll, "m_n6", u64key(0))
	if binary.LittleEndian.Uint64(n6) != 10 || string(n6[8:23]) != "0123456789abcde" {
		t.Errorf("ntop v6 = %x", n6)
	}
	if mac := lookupBytes(t, coll, "m_mac", u64key(0)); !bytes.Equal(mac[:6], []byte{1, 2, 3, 4, 5, 0}) {
		t.Errorf("macaddr = %x", mac)
	}
	ts := lookupBytes(t, coll, "m_t", u64key(0))
	id := binary.LittleEndian.Uint64(ts)
	if int(id) >= len(spec.Events) || spec.Events[id].Kind != EvTime || spec.Events[id].Format != "%H" ||
		binary.LittleEndian.Uint64(ts[8:]) != 12345 {
		t.Errorf("strftime value %x (events %d)", ts, len(spec.Events))
	}
	b := lookupBytes(t, coll, "m_buf", u64key(0))
	n := int(b[0])
	if n != len(b)-1 || n > 4 || string(b[1:1+n]) != "abcd"[:n] {
		t.Errorf("buf = %q", b)
	}
}

// symFake is a Resolver that knows only some kernel symbols.
type symFake struct {
	ktypes.Unresolved
	syms map[string]uint64
}

func (f symFake) KernelSymbol(name string) (uint64, bool) {
	a, ok := f.syms[name]
	return a, ok
}
func TestKaddr(t *testing.T) {
	prog, err := lang.Parse(&lang.Source{Name: "stdin", Text: `BEGIN { @ = kaddr("sym_a"); @x = kaddr("nope"); }`})
	if err != nil {
		t.Fatal(err)
	}
	syms := symFake{syms: map[string]uint64{"sym_a": 0xffffffff81000010}}
	res, err := check.Check(prog, check.Options{Resolver: syms})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(res, Options{})
	if err == nil || !strings.HasSuffix(err.Error(), ": Failed to resolve kernel symbol: nope") {
		t.Fatalf("err = %v, want bpftrace's message", err)
	}
	prog, _ = lang.Parse(&lang.Source{Name: "stdin", Text: `BEGIN { @ = kaddr("sym_a"); }`})
	res, _ = check.Check(prog, check.Options{Resolver: syms})
	spec, err := Compile(res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	coll := load(t, spec)
	run(t, coll, spec.Programs[0].Name)
	if v, _ := lookupU64(t, coll, spec, "m_", u64key(0)); v != 0xffffffff81000010 {
		t.Errorf("kaddr = %#x", v)
	}
}

func TestCgroupID(t *testing.T) {
	id, err := stdlib.CgroupID("/sys/fs/cgroup/unified")
	if err != nil {
		t.Skipf("no cgroup2 hierarchy: %v", err)
	}
	spec, coll := runBEGIN(t, `BEGIN { @ = cgroupid("/sys/fs/cgroup/unified"); }`)
	if v, _ := lookupU64(t, coll, spec, "m_", u64key(0)); v != id {
		t.Errorf("cgroupid = %d, want %d", v, id)
	}
}
