// vfsops COMM N: renames itself to COMM (prctl PR_SET_NAME, after the
// dynamic loader's own opens and reads, and after the ready handshake), then
// makes exactly N openat, N read and N write system calls: N times, open
// /dev/zero, read one byte from it, write that byte to /dev/null, close.
// Under COMM it makes no other openat, read, write, stat or statx call, so a
// tracer filtering on COMM sees exact counts.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "gt.h"

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: vfsops COMM N\n");
		return 2;
	}
	long n = gt_count(argv[2], "N");
	int null = open("/dev/null", O_WRONLY);
	if (null < 0) {
		perror("vfsops: /dev/null");
		return 1;
	}
	gt_ready();
	if (prctl(PR_SET_NAME, argv[1], 0, 0, 0) < 0) {
		perror("vfsops: prctl");
		return 1;
	}
	char c;
	for (long i = 0; i < n; i++) {
		long fd = syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDONLY);
		if (fd < 0)
			return 1;
		if (syscall(SYS_read, fd, &c, 1) != 1 || syscall(SYS_write, null, &c, 1) != 1)
			return 1;
		close((int)fd);
	}
	return 0;
}
