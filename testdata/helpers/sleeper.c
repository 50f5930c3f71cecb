// sleeper MS: sleeps MS milliseconds (one nanosleep, resumed after signals),
// then exits 0. A long-lived, idle target for -p and attach/detach tests.
#include "gt.h"

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: sleeper MS\n");
		return 2;
	}
	long ms = gt_count(argv[1], "MS");
	gt_ready();
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}
