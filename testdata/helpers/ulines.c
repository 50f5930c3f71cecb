// ulines N: known source lines for statement probes
// (uprobe:BIN@ulines.c:LINE). step(k) runs for k = 0..N-1: the line marked
// LINE_EVERY runs N times, the one marked LINE_THIRD once per k divisible
// by 3 (N/3 rounded up). Tests find the lines by their markers.
#include "gt.h"

#define TRACED __attribute__((noipa))

volatile long acc;

TRACED void step(long k)
{
	acc += k; /* LINE_EVERY: N times */
	if (k % 3 == 0)
		acc ^= k; /* LINE_THIRD: k % 3 == 0 */
	acc++;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: ulines N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	for (long k = 0; k < n; k++)
		step(k);
	gt_done(t0);
	return 0;
}
