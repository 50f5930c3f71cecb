// hotloop MS: spins in user space, in the function hotloop_burn (no system
// calls, its own stack frame), for MS milliseconds of wall time, then sleeps
// until killed. Staying alive lets a profiler resolve the addresses of its
// user stacks (main -> hotloop_burn) when it prints them at exit.
#include "gt.h"

static volatile unsigned long sink;

__attribute__((noinline)) void hotloop_burn(long long until) {
	unsigned long x = 1;
	while (gt_now_ns() < until) {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: hotloop MS\n");
		return 2;
	}
	long ms = gt_count(argv[1], "MS");
	gt_ready();
	hotloop_burn(gt_now_ns() + ms * 1000000LL);
	for (;;)
		pause();
}
