package main

import "testing"

func TestParseE(t *testing.T) {
	for _, c := range []struct {
		in       string
		tid, seq int64
		ns       uint64
		ok       bool
	}{
		{"E 123 7 99887766554433\n", 123, 7, 99887766554433, true},
		{"E 1 1 0", 1, 1, 0, true},
		{"E  42  3  5\n", 42, 3, 5, true},
		{"E 123 7\n", 0, 0, 0, false},
		{"E x 1 2\n", 0, 0, 0, false},
		{"E \n", 0, 0, 0, false},
	} {
		tid, seq, ns, ok := parseE([]byte(c.in))
		if ok != c.ok || (ok && (tid != c.tid || seq != c.seq || ns != c.ns)) {
			t.Errorf("parseE(%q) = %d %d %d %v, want %d %d %d %v", c.in, tid, seq, ns, ok, c.tid, c.seq, c.ns, c.ok)
		}
	}
}

func TestMapLines(t *testing.T) {
	out := "Attaching 1 probe...\n\n@s[101]: 5000\n@s[102]: 7\n@[103]: 12\n@x[1, 2]: 3\nLost 5 events\n"
	got := map[string]string{}
	for _, m := range mapLineRe.FindAllStringSubmatch(out, -1) {
		got[m[1]] = m[2]
	}
	want := map[string]string{"101": "5000", "102": "7", "103": "12"}
	if len(got) != len(want) {
		t.Fatalf("map lines %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: %q, want %q", k, got[k], v)
		}
	}
	if m := lostRe.FindAllStringSubmatch(out, -1); len(m) != 1 || m[0][1] != "5" {
		t.Errorf("Lost lines: %v", m)
	}
}

func TestAccounted(t *testing.T) {
	s := &LoadSample{Generated: 10, Delivered: 7, LostMsg: 3}
	if !s.Accounted() {
		t.Error("7 delivered + 3 reported lost of 10: not accounted")
	}
	s.LostMsg = 2
	if s.Accounted() {
		t.Error("7 delivered + 2 reported lost of 10: accounted")
	}
}

func TestStatusKiB(t *testing.T) {
	st := []byte("Name:\tgotrace\nVmPeak:\t  123456 kB\nVmHWM:\t   11520 kB\nVmRSS:\t   10240 kB\n")
	if v := statusKiB(st, "VmHWM:"); v != 11520 {
		t.Errorf("VmHWM = %d, want 11520", v)
	}
	if v := statusKiB(st, "VmSwap:"); v != 0 {
		t.Errorf("missing field = %d, want 0", v)
	}
}
