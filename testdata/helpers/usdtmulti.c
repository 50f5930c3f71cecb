// usdtmulti N: one USDT probe, gotrace:twice(long k), compiled at two
// places (two locations of one probe); each fires N times, so the probe
// fires 2N times in all.
#include <sys/sdt.h>
#include "gt.h"

__attribute__((noinline)) static void first(long k) { STAP_PROBE1(gotrace, twice, k); }
__attribute__((noinline)) static void second(long k) { STAP_PROBE1(gotrace, twice, k + 1000); }

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: usdtmulti N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	for (long k = 0; k < n; k++) {
		first(k);
		second(k);
	}
	gt_done(t0);
	return 0;
}
