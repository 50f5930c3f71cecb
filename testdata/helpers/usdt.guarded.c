// The semaphore-guarded probe of the usdt helper. sys/sdt.h decides per
// translation unit whether probes carry a semaphore, so this probe lives in
// its own file (testkit.Helper links <name>.*.c into helper <name>).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

// Set (incremented) by a tracer while it is attached to gotrace:guarded.
unsigned short gotrace_guarded_semaphore __attribute__((unused, section(".probes")));

__attribute__((noipa)) int guarded_probe(long k) {
	// volatile: the tracer writes this from outside; re-read every call.
	if (*(volatile unsigned short *)&gotrace_guarded_semaphore == 0)
		return 0;
	STAP_PROBE1(gotrace, guarded, k);
	return 1;
}
