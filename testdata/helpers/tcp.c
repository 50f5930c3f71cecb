// tcp: one loopback TCP connection: listen on 127.0.0.1 (kernel-chosen port),
// connect, accept, send one byte each way, close all three sockets. Prints
// "port <n>" at the end, then "cookie <n>": the connecting socket's
// SO_COOKIE (what socket_cookie() reads). No traffic leaves the machine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "gt.h"

static void die(const char *what) {
	perror(what);
	exit(1);
}

int main(void) {
	struct sockaddr_in addr = {.sin_family = AF_INET};
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof addr;
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(ls, 1) < 0 ||
	    getsockname(ls, (struct sockaddr *)&addr, &len) < 0)
		die("tcp: listen");
	gt_ready();
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&addr, sizeof addr) < 0)
		die("tcp: connect");
	unsigned long long cookie = 0;
	socklen_t clen = sizeof cookie;
	if (getsockopt(c, SOL_SOCKET, SO_COOKIE, &cookie, &clen) < 0)
		die("tcp: SO_COOKIE");
	int s = accept(ls, NULL, NULL);
	if (s < 0)
		die("tcp: accept");
	char b = 'x';
	if (write(c, &b, 1) != 1 || read(s, &b, 1) != 1 || write(s, &b, 1) != 1 || read(c, &b, 1) != 1)
		die("tcp: exchange");
	close(c);
	close(s);
	close(ls);
	printf("port %d\n", ntohs(addr.sin_port));
	printf("cookie %llu\n", cookie);
	return 0;
}
