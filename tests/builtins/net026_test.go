package builtins_test

import (
	"fmt"
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
