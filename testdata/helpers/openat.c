// openat N PATH...: makes exactly N openat syscalls, cycling through the
// given paths in order (call i opens PATH[i % count]), read-only; each fd that
// opens is closed again. Paths that do not exist are fine (the call fails with
// ENOENT but still happens), which lets tests check error returns too.
#include <fcntl.h>
#include <sys/syscall.h>
#include "gt.h"

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: openat N PATH...\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	char **paths = argv + 2;
	int npaths = argc - 2;
	gt_ready();
	long long t0 = gt_now_ns();
	for (long i = 0; i < n; i++) {
		long fd = syscall(SYS_openat, AT_FDCWD, paths[i % npaths], O_RDONLY);
		if (fd >= 0)
			close((int)fd);
	}
	gt_done(t0);
	return 0;
}
