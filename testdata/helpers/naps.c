// naps N US: N nanosleeps of US microseconds each, doing nothing in between.
// Each sleep blocks the thread, so it leaves the CPU at least N times after
// on-CPU slices of a few microseconds (longer only if interrupted).
#include "gt.h"

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: naps N US\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	long us = gt_count(argv[2], "US");
	gt_ready();
	for (long i = 0; i < n; i++) {
		struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	return 0;
}
