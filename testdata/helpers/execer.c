// execer [PROG ARG...]: forks once; the child execs PROG with argv
// {PROG, ARG...} (default: /bin/true execer-child one two); the parent waits
// and exits with the child's exit status. For exec tracepoints and
// str(args->argv) style tests.
#include <sys/wait.h>
#include "gt.h"

int main(int argc, char **argv) {
	char *def[] = {"/bin/true", "execer-child", "one", "two", NULL};
	char **child = argc > 1 ? argv + 1 : def;
	gt_ready();
	pid_t pid = fork();
	if (pid < 0) {
		perror("execer: fork");
		return 1;
	}
	if (pid == 0) {
		execv(child[0], child);
		perror("execer: execv");
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
