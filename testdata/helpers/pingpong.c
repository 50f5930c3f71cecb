// pingpong N: two threads pinned to one CPU pass a byte back and forth over
// two pipes N times (N round trips). Each transfer hands the CPU to the
// other thread: the sender wakes the blocked receiver and then blocks in its
// own read, so the receiver waits in the run queue until the sender is off
// the CPU. That makes at least 2N switches into the helper's threads, each
// after a wakeup (or a preemption): 2N run-queue waits.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include "gt.h"

static int ping[2], pong[2];
static long rounds;

static void xfer(int in, int out, int first) {
	char c = 'x';
	for (long i = 0; i < rounds; i++) {
		if (!first && read(in, &c, 1) != 1)
			exit(1);
		if (write(out, &c, 1) != 1)
			exit(1);
		if (first && read(in, &c, 1) != 1)
			exit(1);
	}
}

static void *responder(void *arg) {
	(void)arg;
	xfer(ping[0], pong[1], 0);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: pingpong N\n");
		return 2;
	}
	rounds = gt_count(argv[1], "N");
	// Pin to the first CPU this process may use (spinners takes the last);
	// the thread inherits it.
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) < 0) {
		perror("pingpong: sched_getaffinity");
		return 1;
	}
	int cpu = -1;
	for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) < 0 || pipe(ping) < 0 || pipe(pong) < 0) {
		perror("pingpong: setup");
		return 1;
	}
	gt_ready();
	pthread_t th;
	if (pthread_create(&th, NULL, responder, NULL) != 0) {
		fprintf(stderr, "pingpong: pthread_create failed\n");
		return 1;
	}
	xfer(pong[0], ping[1], 1);
	pthread_join(th, NULL);
	return 0;
}
