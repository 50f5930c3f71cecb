// nappers T MS: T threads (the main one included), each sleeping MS
// milliseconds, then exits 0. An idle multi-threaded target (iter:task
// tests count its threads).
#include <pthread.h>
#include "gt.h"

static long ms;

static void *nap(void *arg) {
	(void)arg;
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: nappers T MS\n");
		return 2;
	}
	long n = gt_count(argv[1], "T");
	ms = gt_count(argv[2], "MS");
	if (n < 1 || n > 64) {
		fprintf(stderr, "nappers: T must be 1..64\n");
		return 2;
	}
	gt_ready();
	pthread_t th[64];
	for (long i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, nap, NULL) != 0) {
			fprintf(stderr, "nappers: pthread_create failed\n");
			return 1;
		}
	nap(NULL);
	for (long i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
