// Package ringsize is the size of gotrace's event ring buffer, in the one
// place both the runtime and the command's first init (which makes the
// ring while the rest of the process starts, cmd/gotrace/internal/early)
// read it; it imports nothing, so that init can run early.
package ringsize

// DefaultPagesPerCPU sizes the ring buffer when nothing else does.
const DefaultPagesPerCPU = 64

// MinBytes is the smallest default ring buffer. The ring is one
// for all CPUs, so it must hold what every CPU writes while the reader is
// off the CPU: printf("%d\n", tid) on every getpid of two CPUs running
// flat out (the benchmark's printf-loss curve, 1.2 M records of 24 bytes
// a second, 29 MB/s) left 0.3 MB unread typically and once up to 3.8 MB
// when the reader was starved by other load, which the old 1 MiB lost.
// 4 MiB holds about 175,000 such records, 0.15 s of that rate: with it
// the printf-loss curve lost nothing up to flat out (3·10⁶ events at 1.5 M
// a second) and the load benchmark nothing of 22.8·10⁶ events in 20 s
// (1.14 M a second), 2026-12-02. It is kernel memory, allocated when the
// map is created, a start-up cost that grows with it (8 MiB: the script
// attached 2.3 ms later, 10.5 against 8.2 ms; 1 MiB 7.95), and charged to
// the tracer's memory cgroup; BPFTRACE_PERF_RB_PAGES sets a larger ring.
// bpftrace 0.17's perf buffers are 64 pages per CPU (512 KiB on 2 CPUs).
const MinBytes = 4 << 20

// MaxBytes bounds the event ring buffer (all CPUs together).
const MaxBytes = 1 << 30

// Bytes is the ring buffer's size in bytes for ncpu possible CPUs of page
// bytes: pagesPerCPU pages per CPU when given (the caller validated it,
// see MaxBytes), else the compiler's size with at least DefaultPagesPerCPU
// pages per CPU and at least MinBytes; rounded up to a power of two, as
// the kernel requires.
func Bytes(ncpu, page int, compiled uint32, pagesPerCPU int) uint32 {
	n64, pg := uint64(max(ncpu, 1)), uint64(page)
	size := max(DefaultPagesPerCPU*pg*n64, MinBytes)
	if pagesPerCPU > 0 {
		size = uint64(pagesPerCPU) * pg * n64
	} else if uint64(compiled) > size {
		size = uint64(compiled)
	}
	n := pg
	for n < size && n < MaxBytes {
		n <<= 1
	}
	return uint32(n)
}
