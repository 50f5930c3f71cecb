// sigrecv [TIMEOUT_MS]: waits for a signal sent by a tracer (signal()
// builtin). Every catchable signal is handled. While waiting it makes one
// getpid syscall every 10 ms, so a script like
//   tracepoint:syscalls:sys_enter_getpid /pid == N/ { signal("SIGUSR1") }
// has something to fire on. Prints "signal <number>" and exits 0 on the first
// signal, or prints "timeout" and exits 1 after TIMEOUT_MS (default 5000).
#include <signal.h>
#include <sys/syscall.h>
#include "gt.h"

static volatile sig_atomic_t got;

static void on_signal(int sig) { got = sig; }

int main(int argc, char **argv) {
	long timeout = argc > 1 ? gt_count(argv[1], "TIMEOUT_MS") : 5000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL); // errors for reserved RT signals are fine
	gt_ready();
	for (long waited = 0; !got && waited < timeout; waited += 10) {
		syscall(SYS_getpid);
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL); // EINTR ends the nap early: fine
	}
	if (!got) {
		printf("timeout\n");
		return 1;
	}
	printf("signal %d\n", (int)got);
	return 0;
}
