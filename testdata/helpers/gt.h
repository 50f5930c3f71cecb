// gt.h: the small shared part of gotrace's test helpers.
//
// Handshake: when the environment variable GT_WAIT is set (non-empty), a
// helper prints "ready <pid>\n" on stdout and then blocks until stdin becomes
// readable (a byte arrives, or stdin is closed) before doing its work, so a
// tracer can attach first. It waits with poll(2) and does not read the byte,
// so the only extra syscall seen after the attach is poll's return: read,
// openat and getpid counts of the workload stay exact. (Printing the pid costs
// one getpid before "ready".) Without GT_WAIT a helper starts at once and
// prints nothing extra, which suits `gotrace -c` and the benchmarks.
//
// Timing: when GT_TIME is set, gt_done prints "loop_ns <n>" on stderr: the
// wall time of the measured loop alone (used by bench/ for slowdown).
#ifndef GT_H
#define GT_H

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline void gt_ready(void) {
	const char *w = getenv("GT_WAIT");
	if (w == NULL || *w == '\0')
		return;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	struct pollfd p = {.fd = 0, .events = POLLIN};
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
}

// gt_count parses a non-negative count argument or exits with a usage error.
static inline long gt_count(const char *s, const char *what) {
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "bad %s \"%s\": want a non-negative integer\n", what, s);
		exit(2);
	}
	return v;
}

static inline long long gt_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// gt_done reports the loop time that started at start (see GT_TIME above).
static inline void gt_done(long long start) {
	long long ns = gt_now_ns() - start;
	const char *t = getenv("GT_TIME");
	if (t != NULL && *t != '\0')
		fprintf(stderr, "loop_ns %lld\n", ns);
}

#endif
