// int80 N: makes exactly N 32-bit (ia32) getpid system calls through
// `int $0x80` from 64-bit code, then prints what the last one returned (its
// pid, or -38 when the kernel runs no ia32 system calls). ia32 getpid is
// number 20, which is writev in the x86-64 table: a tracer that mapped the
// number without checking the ABI would see writev calls. The kernel's
// syscalls tracepoints skip ia32 system calls altogether. x86-64 only.
#include "gt.h"

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: int80 N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long r = 0;
#if defined(__x86_64__)
	for (long i = 0; i < n; i++) {
		long nr = 20; /* __NR_ia32_getpid */
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr) : "memory");
	}
#else
	(void)n;
	r = -38;
#endif
	printf("%ld\n", r);
	return 0;
}
