// getpid N: makes exactly N getpid syscalls, then exits 0.
// Calls the syscall directly so no libc caching can drop any.
#include <sys/syscall.h>
#include "gt.h"

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: getpid N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	gt_done(t0);
	return 0;
}
