// reads [-r ROUNDS] SIZE...: opens /dev/zero, then makes one read(2) of each
// given SIZE in order, ROUNDS times (default 1): exactly ROUNDS * count reads
// from the /dev/zero fd, each returning SIZE. A size of 0 is allowed.
#include <fcntl.h>
#include "gt.h"

int main(int argc, char **argv) {
	long rounds = 1;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "-r") == 0) {
		rounds = gt_count(argv[2], "ROUNDS");
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: reads [-r ROUNDS] SIZE...\n");
		return 2;
	}
	int nsizes = argc - first;
	long *sizes = calloc(nsizes, sizeof(long));
	long max = 1;
	for (int i = 0; i < nsizes; i++) {
		sizes[i] = gt_count(argv[first + i], "SIZE");
		if (sizes[i] > max)
			max = sizes[i];
	}
	char *buf = malloc(max);
	int fd = open("/dev/zero", O_RDONLY);
	if (buf == NULL || sizes == NULL || fd < 0) {
		perror("reads: setup");
		return 1;
	}
	gt_ready();
	long long t0 = gt_now_ns();
	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < nsizes; i++)
			if (read(fd, buf, sizes[i]) != sizes[i]) {
				perror("reads: read");
				return 1;
			}
	gt_done(t0);
	return 0;
}
