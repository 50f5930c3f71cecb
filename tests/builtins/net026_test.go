package builtins_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrace/gotrace/internal/testkit"
)

var socketCookieScript = scriptOf("TestSocketCookie", `rawtracepoint:inet_sock_set_state /pid == PID && args.newstate == 2/ {
	printf("cookie %llu\n", socket_cookie(args.sk));
}`)

// TestSocketCookie: socket_cookie() (bpftrace 0.26) of the socket the tcp
// helper connects, on the SYN_SENT transition in its connect(): the value
// SO_COOKIE gives the helper for the same socket. The rawtracepoint clause
// is loaded as tp_btf, where the helper is allowed.
func TestSocketCookie(t *testing.T) {
	requireTracing(t)
	h := testkit.StartHelper(t, "tcp")
	script := strings.ReplaceAll(socketCookieScript, "PID", fmt.Sprint(h.Pid))
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--compat", "0.26", "-e", script)
	h.Go()
	hr := h.Wait(30 * time.Second)
	if hr.ExitCode != 0 {
		t.Fatalf("tcp helper: exit %d: %s", hr.ExitCode, hr.Stderr)
	}
	time.Sleep(300 * time.Millisecond)
	r := tr.Stop(syscall.SIGINT, 10*time.Second)
	noCrash(t, r)
	var want string
	for _, l := range strings.Split(hr.Stdout, "\n") {
		if strings.HasPrefix(l, "cookie ") {
			want = l + "\n"
		}
	}
	if want == "" || want == "cookie 0\n" {
		t.Fatalf("tcp helper printed no cookie: %q", hr.Stdout)
	}
	expect(t, "socket_cookie", body(r.Stdout), want)
}

var skbOutputScript = scriptOf("TestSkbOutput", `rawtracepoint:netif_receive_skb /pid == PID && @n < 4/ {
	$skb = (struct sk_buff *)arg0;
	$ret = skboutput($1, $skb, $skb->len < 128 ? $skb->len : 128, 0);
	@n++;
	printf("ret %d\n", $ret);
}`)

// TestSkbOutput: skboutput() (bpftrace 0.26) of the tcp helper's loopback
// packets where the kernel receives them: the file is a classic pcap
// (LINKTYPE_RAW, snaplen 65535) whose records are IPv4 TCP packets between
// 127.0.0.1 and the helper's port, stamped with the time of the capture.
func TestSkbOutput(t *testing.T) {
	requireTracing(t)
	pcap := filepath.Join(t.TempDir(), "out.pcap")
	h := testkit.StartHelper(t, "tcp")
	// The path as a positional parameter (the v0.26 case gives a literal).
	script := strings.NewReplacer("PID", fmt.Sprint(h.Pid)).Replace(skbOutputScript)
	tr := testkit.StartTracer(t, 30*time.Second, testkit.Gotrace(t), "--compat", "0.26", "-e", script, pcap)
	before := time.Now().Add(-time.Second)
	h.Go()
	hr := h.Wait(30 * time.Second)
	if hr.ExitCode != 0 {
		t.Fatalf("tcp helper: exit %d: %s", hr.ExitCode, hr.Stderr)
	}
	time.Sleep(300 * time.Millisecond)
	r := tr.Stop(syscall.SIGINT, 10*time.Second)
	noCrash(t, r)
	after := time.Now().Add(time.Second)
	var port int
	if _, err := fmt.Sscanf(hr.Stdout, "port %d", &port); err != nil {
		t.Fatalf("tcp helper printed %q", hr.Stdout)
	}
	rets := strings.Count(r.Stdout, "ret 0\n")
	if rets == 0 || strings.Contains(r.Stdout, "ret -") {
		t.Fatalf("skboutput results:\n%s", r.Stdout)
	}
	b, err := os.ReadFile(pcap)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) < 24 || le.Uint32(b) != 0xa1b2c3d4 || le.Uint16(b[4:]) != 2 || le.Uint16(b[6:]) != 4 ||
		le.Uint32(b[8:]) != 0 || le.Uint32(b[12:]) != 0 || le.Uint32(b[16:]) != 65535 || le.Uint32(b[20:]) != 101 {
		t.Fatalf("pcap file header % x", b[:min(len(b), 24)])
	}
	recs := 0
	for p := b[24:]; len(p) > 0; recs++ {
		if len(p) < 16 {
			t.Fatalf("truncated record header % x", p)
		}
		ts := time.Unix(int64(le.Uint32(p)), int64(le.Uint32(p[4:]))*1000)
		caplen, origlen := int(le.Uint32(p[8:])), int(le.Uint32(p[12:]))
		if caplen != origlen || caplen > 128 || len(p) < 16+caplen {
			t.Fatalf("record %d: caplen %d len %d, %d bytes left", recs, caplen, origlen, len(p)-16)
		}
		if ts.Before(before) || ts.After(after) {
			t.Errorf("record %d: time %v not within the test (%v .. %v)", recs, ts, before, after)
		}
		pkt := p[16 : 16+caplen]
		// IPv4 with a 20-byte header, TCP, 127.0.0.1 to 127.0.0.1, the
		// helper's port at one end; the IP total length is the packet's.
		if caplen < 24 || pkt[0] != 0x45 || pkt[9] != 6 || string(pkt[12:16]) != "\x7f\x00\x00\x01" || string(pkt[16:20]) != "\x7f\x00\x00\x01" ||
			int(binary.BigEndian.Uint16(pkt[2:])) != caplen {
			t.Errorf("record %d is not a loopback IPv4 TCP packet: % x", recs, pkt)
		} else if sp, dp := int(binary.BigEndian.Uint16(pkt[20:])), int(binary.BigEndian.Uint16(pkt[22:])); sp != port && dp != port {
			t.Errorf("record %d: ports %d -> %d, want %d at one end", recs, sp, dp, port)
		}
		p = p[16+caplen:]
	}
	if recs != rets {
		t.Errorf("%d records in the file, %d successful skboutput() calls", recs, rets)
	}
}
