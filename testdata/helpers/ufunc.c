// ufunc N: user-space calls for uprobe/uretprobe/usym/ustack tests. Each of
// the functions below is called exactly N times, in this order per iteration
// k = 0..N-1 (all noipa: never inlined, cloned or specialised, so symbols,
// arguments and return values are exactly what the source says):
//
//   main -> chain_a(k) -> chain_b(k) -> target(k % 4, 0x100000000 + k % 4)
//       target(a, b) returns 2*a + 1  (so 1, 3, 5, 7; each N/4 times when 4 | N)
//       ustack at target: target, chain_a, main (target is a frameless
//       leaf, so %rbp is still chain_b's frame and the frame-pointer walk
//       skips chain_b; the uchain helper has the whole chain)
//   point_sum(&origin)    origin = { .x = -7, .y = 1L << 40, .name = "gotrace" },
//                         returns x + y = 1099511627769
//   apply(callback, k)    arg0 is &callback (usym: "callback"); returns k + 1
//   greet("hello gotrace") returns the string's length, 13
#include "gt.h"

struct point {
	int x;
	long y;
	char name[8];
};

#define TRACED __attribute__((noipa))

TRACED int target(int a, long b) {
	(void)b;
	return 2 * a + 1;
}

TRACED int chain_b(long k) { return target((int)(k % 4), 0x100000000L + k % 4); }
TRACED int chain_a(long k) { return chain_b(k) + 0; }

TRACED long point_sum(struct point *p) { return p->x + p->y; }

TRACED int callback(int v) { return v + 1; }
TRACED int apply(int (*fn)(int), int v) { return fn(v); }

TRACED long greet(const char *s) { return (long)strlen(s); }

struct point origin = {.x = -7, .y = 1L << 40, .name = "gotrace"};

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: ufunc N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	volatile long sink = 0; // keeps every result live
	for (long k = 0; k < n; k++) {
		sink += chain_a(k);
		sink += point_sum(&origin);
		sink += apply(callback, (int)k);
		sink += greet("hello gotrace");
	}
	gt_done(t0);
	return 0;
}
