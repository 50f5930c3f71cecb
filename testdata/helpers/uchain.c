// uchain N: a known user call chain for ustack tests. Per iteration
// k = 0..N-1 (each function exactly N times):
//
//   main -> chain_a(k) -> chain_b(k) -> target(k) -> leaf(k)
//       returns k + 4 (leaf: k + 1, then +1 on each way back)
//
// Every function but leaf sets up a frame (push %rbp; mov %rsp,%rbp), target
// included: it calls leaf, so it is not a frameless leaf (unlike ufunc's
// target). A frame-pointer walk (bpf_get_stackid) from inside target, once
// its prologue ran, therefore sees the whole chain: target, chain_b,
// chain_a, main. At target's first instruction %rbp is still chain_b's
// frame: the walk alone skips chain_b; newer kernels (6.18 here) add the
// return address at [sp] for a uprobe on a function's push %rbp, older
// ones do not (bpftrace and gotrace alike: the kernel walks the stack).
#include "gt.h"

#define TRACED __attribute__((noipa))

TRACED long leaf(long k) { return k + 1; }
TRACED long target(long k) { return leaf(k) + 1; }
TRACED long chain_b(long k) { return target(k) + 1; }
TRACED long chain_a(long k) { return chain_b(k) + 1; }

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: uchain N\n");
		return 2;
	}
	long n = gt_count(argv[1], "N");
	gt_ready();
	long long t0 = gt_now_ns();
	volatile long sink = 0; // keeps every result live
	for (long k = 0; k < n; k++)
		sink += chain_a(k);
	gt_done(t0);
	return 0;
}
