// unofp N: a call chain built without frame pointers, for dw_ustack
// (DWARF CFI unwinding). Per iteration main -> funcA -> funcB -> funcC ->
// funcD, each exactly N times. The pragma overrides the helpers'
// -fno-omit-frame-pointer: no function here keeps %rbp as a frame
// pointer, so bpf_get_stackid's frame-pointer walk cannot see the chain,
// while the .eh_frame rules gcc emits can.
#pragma GCC optimize("omit-frame-pointer")
#include "gt.h"

#define TRACED __attribute__((noipa))

volatile long sink;

TRACED long funcD(long k) { sink += k; return k + 1; }
TRACED long funcC(long k) { long v[4] = {k, k + 1, k + 2, k + 3}; sink += v[k & 3]; return funcD(k) + 1; }
TRACED long funcB(long k) { return funcC(k) * 2 + 1; }
TRACED long funcA(long k) { return funcB(k) + 1; }

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: unofp N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	for (long k = 0; k < n; k++)
		sink += funcA(k);
	gt_done(t0);
	return 0;
}
