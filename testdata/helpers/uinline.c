// uinline N: calls the compiler inlines, for stack frames with source
// lines and [inlined] frames (bpftrace 0.26's show_debug_info). outer(k)
// runs for k = 0..N-1 and has middle(k) inlined into it, which has
// inner(k) inlined into it. Tests find the lines by their markers.
#include "gt.h"

#define TRACED __attribute__((noipa))
#define INLINE static inline __attribute__((always_inline))

volatile long acc;

INLINE void inner(long k) {
	acc += k * 3; /* INNER_LINE: the statement probed */
}

INLINE void middle(long k) {
	inner(k); /* MIDDLE_CALL: inner inlined here */
	acc ^= 1;
}

TRACED void outer(long k) {
	middle(k); /* OUTER_CALL: middle inlined here */
	acc++;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: uinline N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	for (long k = 0; k < n; k++)
		outer(k);
	gt_done(t0);
	return 0;
}
