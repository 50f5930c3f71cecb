// spinners T MS: T threads (the main one included) pinned to one CPU, each
// spinning in user space for MS milliseconds of wall time. While they spin,
// that CPU's run queue holds all T of them: one running, T-1 waiting.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include "gt.h"

static long long until;

static void *spin(void *arg) {
	(void)arg;
	while (gt_now_ns() < until)
		;
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: spinners T MS\n");
		return 2;
	}
	long n = gt_count(argv[1], "T");
	long ms = gt_count(argv[2], "MS");
	if (n < 1 || n > 64) {
		fprintf(stderr, "spinners: T must be 1..64\n");
		return 2;
	}
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) < 0) {
		perror("spinners: sched_getaffinity");
		return 1;
	}
	int cpu = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) < 0) {
		perror("spinners: sched_setaffinity");
		return 1;
	}
	gt_ready();
	until = gt_now_ns() + ms * 1000000LL;
	pthread_t th[64];
	for (long i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, spin, NULL) != 0) {
			fprintf(stderr, "spinners: pthread_create failed\n");
			return 1;
		}
	spin(NULL);
	for (long i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
