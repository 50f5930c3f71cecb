package main

// The kernel-stack symbolization curve (issue 20): distinct kernel stacks
// symbolized and printed at exit. kprobes are compiled out on the machine
// this was built on and fentry loads are refused, so the stacks come from
// profile:hz samples of a varied syscall workload (files on the temporary
// directory's file system, pipes, unix and loopback sockets, mmap, fork,
// eventfd/epoll): each sample's stack ends at the interrupted kernel
// instruction, so the workload gives many distinct stacks, as many as its
// run time lets it. The curve's sizes are how long the workload runs; the
// "keys printed" row is the distinct stacks each tool printed, and the
// growth lines are taken over those (the cost per stack), not over the
// seconds.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// kstackHz is the sampling rate: near the kernel's
// perf_event_max_sample_rate (100,000 a second here) for both CPUs.
const kstackHz = 49999

func kstackCurve(tmp string, smoke bool) *Curve {
	sizes := []int{1, 8, 32, 128}
	if smoke {
		sizes = []int{1, 2}
	}
	c := &Curve{Name: "kstack-symbolize", What: "s of workload sampled", Sizes: sizes,
		metrics: []curveMetric{cmExit, cmKeys, cmRSS},
		xOf:     func(s Sample) float64 { return float64(s.MapLines) },
		xName:   "distinct kernel stacks printed",
	}
	c.script = func(n int) (*Script, error) {
		bin, err := kstacksHelper(tmp)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(tmp, "kstacks-files")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		w := &Workload{Name: "kstacks", Path: bin, Args: []string{fmt.Sprint(n), dir, fmt.Sprint(runtime.NumCPU())}}
		// The stack map (a kernel-preallocated 1 KiB per entry) sized past
		// the distinct stacks a run gives (~2,000 a second of workload
		// here), at most 2^19 entries (512 MiB); its ids are hashes, so a
		// stack whose bucket is taken is lost either way (both tools).
		entries := min(16384*n, 1<<19)
		env := []string{fmt.Sprintf("GOTRACE_STACK_MAP_ENTRIES=%d", entries),
			fmt.Sprintf("BPFTRACE_MAP_KEYS_MAX=%d", entries), fmt.Sprintf("BPFTRACE_MAX_MAP_KEYS=%d", entries)}
		return &Script{Workload: w, Env: env,
			Text: fmt.Sprintf(`profile:hz:%d /comm == "%s"/ { @[kstack] = count(); }`, kstackHz, w.Comm())}, nil
	}
	return c
}

// kstacksHelper builds (once) gtb_kstacks SECONDS DIR W: W child
// processes, pinned one per CPU, each looping over a varied set of
// system calls for SECONDS (files in DIR, pipes, socketpairs, a TCP
// connection and UDP datagrams on loopback only, anonymous and file
// mmaps, fork, eventfd, epoll, timerfd, mkdir, stat, /proc reads). With
// GT_TIME set it prints the wall time as loop_ns.
func kstacksHelper(tmp string) (string, error) {
	bin := filepath.Join(tmp, commPrefix+"kstacks")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	return compileC(bin, kstacksC, "-O2")
}

const kstacksC = `#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/utsname.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static char buf[65536];
static void onsig(int s) { (void)s; }
static const char *procs[] = {"/proc/self/status", "/proc/self/maps", "/proc/self/stat", "/proc/meminfo", "/proc/stat",
  "/proc/interrupts", "/proc/self/mountinfo", "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/system/cpu/online", "/proc/loadavg"};
static void work(int k, double secs, const char *dir) {
  char path[512], p2[600];
  memset(buf, 'x', sizeof buf);
  double end = now() + secs;
  unsigned it = 0;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (ls < 0 || bind(ls, (void *)&a, sizeof a) || listen(ls, 16) || getsockname(ls, (void *)&a, &al)) _exit(3);
  while (now() < end) {
    it++;
    size_t sz = 1 + (it * 2654435761u) % 65536;
    snprintf(path, sizeof path, "%s/f%d_%u", dir, k, it % 64);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd >= 0) {
      write(fd, buf, sz); lseek(fd, 0, SEEK_SET); read(fd, buf, sz);
      if (it % 8 == 0) fsync(fd);
      ftruncate(fd, sz / 2);
      struct stat st; fstat(fd, &st);
      void *m = mmap(0, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m != MAP_FAILED) { ((char *)m)[0] = 1; msync(m, sz / 2 + 1, it % 8 == 1 ? MS_SYNC : MS_ASYNC); munmap(m, sz); }
      close(fd);
    }
    if (it % 3 == 0) unlink(path); else { snprintf(p2, sizeof p2, "%s.r", path); rename(path, p2); unlink(p2); }
    int p[2];
    if (pipe2(p, it % 2 ? O_NONBLOCK : 0) == 0) { write(p[1], buf, sz % 60000 + 1); read(p[0], buf, sizeof buf); close(p[0]); close(p[1]); }
    int sp[2];
    if (socketpair(AF_UNIX, it % 2 ? SOCK_STREAM : SOCK_DGRAM, 0, sp) == 0) { send(sp[0], buf, sz % 8000 + 1, 0); recv(sp[1], buf, sizeof buf, 0); close(sp[0]); close(sp[1]); }
    if (it % 4 == 0) {
      int c = socket(AF_INET, SOCK_STREAM, 0);
      if (c >= 0 && connect(c, (void *)&a, sizeof a) == 0) { int s = accept(ls, 0, 0); if (s >= 0) { write(c, buf, sz); read(s, buf, sizeof buf); close(s); } }
      if (c >= 0) close(c);
    }
    if (it % 4 == 1) {
      int u = socket(AF_INET, SOCK_DGRAM, 0);
      struct sockaddr_in b = a; b.sin_port = htons(9); /* loopback discard port: nothing listens */
      if (u >= 0) { sendto(u, buf, sz % 1400 + 1, 0, (void *)&b, sizeof b); close(u); }
    }
    void *m = mmap(0, sz * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) { memset(m, 1, sz); mprotect(m, sz, PROT_READ); madvise(m, sz * 4, MADV_DONTNEED); munmap(m, sz * 4); }
    if (it % 16 == 0) { pid_t c = fork(); if (c == 0) _exit(0); if (c > 0) waitpid(c, 0, 0); }
    int e = eventfd(0, 0);
    if (e >= 0) {
      uint64_t v = 1; write(e, &v, 8); read(e, &v, 8);
      int ep = epoll_create1(0);
      if (ep >= 0) { struct epoll_event ev = {.events = EPOLLIN}; epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev); epoll_wait(ep, &ev, 1, 0); close(ep); }
      close(e);
    }
    int tf = timerfd_create(CLOCK_MONOTONIC, 0); if (tf >= 0) close(tf);
    if (it % 8 == 4) { snprintf(p2, sizeof p2, "%s/d%d_%u", dir, k, it % 64); mkdir(p2, 0755); rmdir(p2); }
    struct stat st; stat("/etc/passwd", &st); stat("/nonexistent/gotrace/x", &st);
    int nf = open(procs[it % 10], O_RDONLY); if (nf >= 0) { read(nf, buf, 4096); close(nf); }
    /* More kernel paths: vectored and zero-copy I/O, locks, xattrs,
       directory reads, inotify, signals, random, IPv6 loopback. */
    fd = open(path, O_CREAT | O_RDWR, 0644);
    if (fd >= 0) {
      struct iovec iov[2] = {{buf, sz / 2 + 1}, {buf, sz / 3 + 1}};
      writev(fd, iov, 2); pread(fd, buf, 512, sz / 4); pwrite(fd, buf, 512, sz);
      flock(fd, it % 2 ? LOCK_EX : LOCK_SH); flock(fd, LOCK_UN);
      struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 16}; fcntl(fd, F_SETLK, &fl);
      fsetxattr(fd, "user.gtb", buf, it % 64 + 1, 0); fgetxattr(fd, "user.gtb", buf, 128);
      fallocate(fd, 0, 0, sz + 4096);
      int p3[2];
      if (pipe(p3) == 0) { lseek(fd, 0, SEEK_SET); splice(fd, 0, p3[1], 0, 4096, 0); close(p3[0]); close(p3[1]); }
      int o = open("/dev/null", O_WRONLY); if (o >= 0) { sendfile(o, fd, 0, sz % 8192 + 1); close(o); }
      close(fd);
    }
    DIR *d = opendir(it % 4 ? "/proc/self/fd" : dir); if (d) { while (readdir(d)) ; closedir(d); }
    if (it % 64 == 5) { int in = inotify_init1(IN_NONBLOCK); if (in >= 0) { inotify_add_watch(in, dir, IN_ALL_EVENTS); close(in); } } /* its close waits for an SRCU grace period */
    if (it % 8 == 2) { signal(SIGUSR1, onsig); kill(getpid(), SIGUSR1); }
    getrandom(buf, it % 256 + 1, 0);
    struct utsname un; uname(&un);
    if (it % 8 == 3) {
      int s6 = socket(AF_INET6, SOCK_DGRAM, 0);
      struct sockaddr_in6 b6 = {0}; b6.sin6_family = AF_INET6; b6.sin6_addr = in6addr_loopback; b6.sin6_port = htons(9);
      if (s6 >= 0) { sendto(s6, buf, sz % 1200 + 1, 0, (void *)&b6, sizeof b6); close(s6); }
    }
    sched_yield();
  }
  for (unsigned i = 0; i < 64; i++) { snprintf(path, sizeof path, "%s/f%d_%u", dir, k, i); unlink(path); }
}
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  double secs = atof(argv[1]);
  int w = atoi(argv[3]), ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  struct timespec a, z;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int k = 0; k < w; k++) {
    if (fork() == 0) {
      cpu_set_t set; CPU_ZERO(&set); CPU_SET(k % ncpu, &set);
      sched_setaffinity(0, sizeof set, &set);
      work(k, secs, argv[2]);
      _exit(0);
    }
  }
  int st, bad = 0;
  while (wait(&st) > 0) bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  clock_gettime(CLOCK_MONOTONIC, &z);
  if (getenv("GT_TIME")) fprintf(stderr, "loop_ns %lld\n", (long long)(z.tv_sec - a.tv_sec) * 1000000000LL + (z.tv_nsec - a.tv_nsec));
  return bad;
}
`
