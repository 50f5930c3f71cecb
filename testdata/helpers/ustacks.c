// ustacks N: N distinct user stacks (N <= 4096) under leaf, for the stack
// storage tests. Call k = 0..N-1 goes
//
//   main -> a_X(k) -> b_Y(k) -> c_Z(k) -> mid(k) -> leaf(k)
//
// with X, Y, Z the three hex digits of k (k >> 8, (k >> 4) & 15, k & 15):
// each a_X, b_Y, c_Z is its own function (a return address of its own),
// so the N stacks at leaf differ, whatever frame a uprobe's walk at leaf's
// first instruction skips (mid's return address is the same for all).
// Each function calls the next through a table and adds 1 on the way back,
// so no call is a tail call. With GT_WAIT set the helper stays, after the
// calls, until stdin is closed, so that a tracer can still read its memory
// map and symbols to print the stacks.
#include "gt.h"

#define TRACED __attribute__((noipa))

TRACED long leaf(long k) { return k + 1; }
TRACED long mid(long k) { return leaf(k) + 1; }

typedef long (*fn)(long);

#define C(z) TRACED long c_##z(long k) { return mid(k) + 1; }
C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12) C(13) C(14) C(15)
static fn cs[16] = {c_0, c_1, c_2, c_3, c_4, c_5, c_6, c_7, c_8, c_9, c_10, c_11, c_12, c_13, c_14, c_15};

#define B(y) TRACED long b_##y(long k) { return cs[k & 15](k) + 1; }
B(0) B(1) B(2) B(3) B(4) B(5) B(6) B(7) B(8) B(9) B(10) B(11) B(12) B(13) B(14) B(15)
static fn bs[16] = {b_0, b_1, b_2, b_3, b_4, b_5, b_6, b_7, b_8, b_9, b_10, b_11, b_12, b_13, b_14, b_15};

#define A(x) TRACED long a_##x(long k) { return bs[(k >> 4) & 15](k) + 1; }
A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7) A(8) A(9) A(10) A(11) A(12) A(13) A(14) A(15)
static fn as[16] = {a_0, a_1, a_2, a_3, a_4, a_5, a_6, a_7, a_8, a_9, a_10, a_11, a_12, a_13, a_14, a_15};

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: ustacks N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	if (n > 4096) {
		fprintf(stderr, "ustacks: N is at most 4096\n");
		return 2;
	}
	gt_ready();
	long long t0 = gt_now_ns();
	volatile long sink = 0; // keeps every result live
	for (long k = 0; k < n; k++)
		sink += as[(k >> 8) & 15](k);
	gt_done(t0);
	const char *w = getenv("GT_WAIT");
	if (w != NULL && *w != '\0') {
		char c;
		for (;;) {
			ssize_t r = read(0, &c, 1);
			if (r == 0 || (r < 0 && errno != EINTR))
				break;
		}
	}
	return 0;
}
