// usdt N: USDT probes (<sys/sdt.h>, provider "gotrace"). Per iteration
// k = 0..N-1:
//   gotrace:loop(int k, char *msg = "hello")       fires N times
//   gotrace:guarded(long k)                       fires only while its
//       semaphore is set (a tracer attached to it); defined in usdt.guarded.c
// and once before the loop:
//   gotrace:fixed(long -42, unsigned char 200, char *s = "gotrace")
//   gotrace:memarg(long 123456789)   the operand is a global read from
//       memory (a %rip-relative spec, which bpftrace 0.17 cannot decode)
// At exit prints "guarded G" on stdout: how many times gotrace:guarded fired.
#include <sys/sdt.h>
#include "gt.h"

int guarded_probe(long k); // usdt.guarded.c

long usdt_global = 123456789;

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: usdt N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	long neg = -42;
	unsigned char u8 = 200;
	STAP_PROBE3(gotrace, fixed, neg, u8, "gotrace");
	STAP_PROBE1(gotrace, memarg, usdt_global);
	long guarded = 0;
	for (long k = 0; k < n; k++) {
		int ik = (int)k;
		STAP_PROBE2(gotrace, loop, ik, "hello");
		guarded += guarded_probe(k);
	}
	gt_done(t0);
	printf("guarded %ld\n", guarded);
	return 0;
}
