// forker N: forks N children, one at a time; each child _exit(0)s at once
// and the parent reaps it before the next fork. Exactly N new processes,
// all forked by this helper's comm (no threads, no exec).
#include <sys/wait.h>
#include "gt.h"

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: forker N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("forker: fork");
			return 1;
		}
		if (pid == 0)
			_exit(0);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	return 0;
}
