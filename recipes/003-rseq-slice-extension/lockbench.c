// SPDX-License-Identifier: MIT
/*
 * lockbench: a userspace spinlock under scheduler pressure, with and without rseq time slice
 * extension requests.
 *
 * One "lock" thread per CPU (pinned) repeatedly takes one shared spinlock, holds it for about
 * HOLD_US microseconds of busy work, releases it and sleeps 100 + 27 * index microseconds, so
 * the threads arrive staggered. NOISE "noise" threads per CPU (SCHED_OTHER, pinned) run
 * short bursts of memory barrier instructions (sfence/lfence on x86) and sleep 10 us, which keeps the scheduler busy and now
 * and then preempts a lock holder in the middle of its critical section; everyone waiting
 * for the lock then spins until the holder runs again.
 *
 * With slice extensions, a lock thread asks the kernel (through its rseq area) not to be
 * preempted while it holds the lock; when the kernel grants a short extension, the thread
 * gives the CPU back right after releasing the lock. -d disables the requests.
 *
 * Usage: lockbench [-d] [-w] [-t SECONDS] [-n NOISE] [-H HOLD_US]
 *   -d          do not request slice extensions (the baseline)
 *   -w          keep the request while spinning for the lock as well
 *   -t SECONDS  run time, default 5
 *   -n NOISE    noise threads per CPU, default 5
 *   -H HOLD_US  busy time inside the critical section, default 30
 *
 * Slice extensions use the upstream rseq ABI (Linux 7.0+: rseq flags bit
 * RSEQ_CS_FLAG_SLICE_EXT_AVAILABLE, prctl(PR_RSEQ_SLICE_EXTENSION), the slice_ctrl word at
 * offset 28 of struct rseq). The offsets and constants are declared below, so the program
 * builds with headers that predate the feature; whether it is used is decided at run time.
 * Each lock thread needs an rseq area that covers slice_ctrl: glibc's when glibc registered
 * one that large (glibc 2.41+), else its own, registered with rseq(2) when glibc registered
 * none (older glibc, or GLIBC_TUNABLES=glibc.pthread.rseq=0, which Debian 12's glibc needs:
 * it registers a legacy area of which only 20 bytes are in use). The kernel must then
 * advertise the feature in the area's flags and the prctl must succeed. Otherwise the
 * program runs without requests, says why on the first line and reports "Total extended: 0".
 *
 * Output (stdout), all counts summed over the lock threads for the whole run:
 *   lockbench: 8 CPUs, 5 noise threads per CPU, 5 s, hold 30 us, slice extension: requested
 *   Ran for 121185 times
 *   Total wait time: 3.450114 s (avg: 28.470 us)
 *   Total contention: 84405
 *   Total extended: 19879
 *   Max wait: 652 us
 *   Max hold: 174 us (avg: 32.011 us)
 * "Ran for" counts lock acquisitions, "contention" the acquisitions that found the lock
 * taken, "extended" the critical sections for which the kernel granted an extension.
 * Exit status: 0 on success, 1 on a system error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h> /* glibc >= 2.35: __rseq_offset, __rseq_size */
#define HAVE_GLIBC_RSEQ 1
#endif
#endif

/* The upstream slice extension ABI, for headers that do not have it yet. */
#define LB_RSEQ_FLAGS_OFFSET 16      /* struct rseq: __u32 flags */
#define LB_RSEQ_SLICE_CTRL_OFFSET 28 /* struct rseq: union rseq_slice_ctrl slice_ctrl */
#define LB_RSEQ_SLICE_EXT_AVAILABLE (1u << 4)
#define LB_PR_RSEQ_SLICE_EXTENSION 79
#define LB_PR_RSEQ_SLICE_EXTENSION_SET 2
#define LB_PR_RSEQ_SLICE_EXT_ENABLE 1
#define LB_ORIG_RSEQ_SIZE 32         /* the original struct rseq, always accepted */
#define LB_AT_RSEQ_FEATURE_SIZE 27   /* auxv: bytes of struct rseq the kernel implements */
#define LB_AT_RSEQ_ALIGN 28          /* auxv: alignment a larger registration needs */
#define LB_RSEQ_SIG 0x53053053       /* only checked on rseq aborts, which never happen here */
#define LB_OWN_AREA 256

/* slice_ctrl is one 32-bit word: byte 0 "request" (written by user space), byte 1 "granted"
 * (written by the kernel when it extended the slice). */
struct lb_slice_ctrl {
	volatile uint8_t request;
	volatile uint8_t granted;
	uint16_t reserved;
};

#define MAX_SECONDS 3600
#define CACHE_LINE 64

struct lock_stats {
	uint64_t iterations;
	uint64_t contention;
	uint64_t extended;
	uint64_t wait_ns;
	uint64_t hold_ns;
	uint64_t max_wait_ns;
	uint64_t max_hold_ns;
} __attribute__((aligned(CACHE_LINE)));

struct worker {
	pthread_t thread;
	int cpu;
	int index;
	struct lock_stats stats;
} __attribute__((aligned(CACHE_LINE)));

static struct {
	int lock __attribute__((aligned(CACHE_LINE)));
	volatile int done __attribute__((aligned(CACHE_LINE)));
	int extend;       /* request extensions in the lock threads */
	int wait_extended; /* -w */
	uint64_t hold_ns;
} shared;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		fprintf(stderr, "lockbench: cannot pin to CPU %d: %s\n", cpu, strerror(err));
		exit(1);
	}
}

/* A per-thread area for our own registration, aligned beyond any AT_RSEQ_ALIGN seen so far. */
static __thread char own_area[LB_OWN_AREA] __attribute__((aligned(LB_OWN_AREA)));

/* Registers own_area for the calling thread, as large as the kernel's struct rseq. */
static char *register_own_area(const char **why)
{
	unsigned long feature = getauxval(LB_AT_RSEQ_FEATURE_SIZE);
	unsigned long align = getauxval(LB_AT_RSEQ_ALIGN);
	unsigned long len = LB_ORIG_RSEQ_SIZE;

	if (feature > LB_ORIG_RSEQ_SIZE) {
		if (!align)
			align = LB_ORIG_RSEQ_SIZE;
		len = (feature + align - 1) / align * align;
	}
	if (len > LB_OWN_AREA || align > LB_OWN_AREA) {
		*why = "the kernel's struct rseq is larger than lockbench's area";
		return NULL;
	}
	if (syscall(SYS_rseq, own_area, (unsigned int)len, 0, LB_RSEQ_SIG)) {
		*why = "rseq(2) registration failed";
		return NULL;
	}
	return own_area;
}

/* This thread's rseq area: glibc's when it covers slice_ctrl, else our own when glibc
 * registered none; NULL (with *why) otherwise. */
static char *rseq_area(const char **why)
{
#ifdef HAVE_GLIBC_RSEQ
	if (__rseq_size >= LB_RSEQ_SLICE_CTRL_OFFSET + sizeof(struct lb_slice_ctrl))
		return (char *)__builtin_thread_pointer() + __rseq_offset;
	if (__rseq_size > 0) {
		*why = "glibc's rseq area does not cover slice_ctrl; set GLIBC_TUNABLES=glibc.pthread.rseq=0";
		return NULL;
	}
#endif
	return register_own_area(why);
}

/* Turns slice extensions on for the calling thread; returns NULL and sets *why when the
 * system cannot do it. */
static struct lb_slice_ctrl *enable_slice_extension(const char **why)
{
	char *area = rseq_area(why);

	if (!area)
		return NULL;
	uint32_t flags = __atomic_load_n((uint32_t *)(area + LB_RSEQ_FLAGS_OFFSET), __ATOMIC_RELAXED);
	if (!(flags & LB_RSEQ_SLICE_EXT_AVAILABLE)) {
		*why = "the kernel does not advertise slice extensions";
		return NULL;
	}
	if (prctl(LB_PR_RSEQ_SLICE_EXTENSION, LB_PR_RSEQ_SLICE_EXTENSION_SET,
		  LB_PR_RSEQ_SLICE_EXT_ENABLE, 0, 0)) {
		*why = "prctl(PR_RSEQ_SLICE_EXTENSION) failed";
		return NULL;
	}
	return (struct lb_slice_ctrl *)(area + LB_RSEQ_SLICE_CTRL_OFFSET);
}

/* Leaves a critical section: withdraw the request; if the kernel granted an extension, give
 * the CPU back now with a system call (any system call ends a granted extension). */
static void end_request(struct lb_slice_ctrl *ctrl, struct lock_stats *st)
{
	ctrl->request = 0;
	__asm__ __volatile__("" ::: "memory");
	if (ctrl->granted) {
		st->extended++;
#ifdef SYS_rseq_slice_yield
		syscall(SYS_rseq_slice_yield);
#else
		syscall(SYS_getppid); /* side-effect free; only the syscall entry matters */
#endif
	}
}

static void *lock_thread(void *arg)
{
	struct worker *w = arg;
	struct lock_stats *st = &w->stats;
	struct lb_slice_ctrl *ctrl = NULL;

	pin_to(w->cpu);
	if (shared.extend) {
		const char *why;

		ctrl = enable_slice_extension(&why);
		if (!ctrl) {
			fprintf(stderr, "lockbench: CPU %d: %s\n", w->cpu, why);
			exit(1);
		}
	}
	const long pause_us = 100 + 27L * w->index;

	while (!shared.done) {
		if (ctrl && shared.wait_extended)
			ctrl->request = 1;
		uint64_t start = now_ns();
		int contended = 0;

		while (__atomic_exchange_n(&shared.lock, 1, __ATOMIC_ACQUIRE)) {
			contended = 1;
			while (__atomic_load_n(&shared.lock, __ATOMIC_RELAXED))
				cpu_relax();
		}
		if (ctrl)
			ctrl->request = 1;
		uint64_t acquired = now_ns();

		/* The critical section: busy work for hold_ns. */
		while (now_ns() - acquired < shared.hold_ns)
			cpu_relax();

		uint64_t released = now_ns();
		__atomic_store_n(&shared.lock, 0, __ATOMIC_RELEASE);
		if (ctrl)
			end_request(ctrl, st);

		uint64_t wait = acquired - start, hold = released - acquired;
		st->iterations++;
		st->contention += contended;
		st->wait_ns += wait;
		st->hold_ns += hold;
		if (wait > st->max_wait_ns)
			st->max_wait_ns = wait;
		if (hold > st->max_hold_ns)
			st->max_hold_ns = hold;
		sleep_us(pause_us);
	}
	return NULL;
}

/*
 * The noise threads' barriers are the RFC's wmb()/rmb() (its noise loop: 100 x wmb(),
 * do_sleep(10), rmb()), i.e. real barrier instructions as the kernel defines them, each of
 * which costs the CPU something. C11 fences are not that: on x86 (TSO) a release or acquire
 * fence emits no instruction, and gcc 12 -O2 compiled the loop of 100 release fences to an
 * empty count-down (objdump -d of noise_thread: `mov $0x64,%eax; sub $0x1,%eax; jne` and no
 * fence at all). A compiler barrier (asm volatile("" ::: "memory")) would not be one either.
 * These are the kernel's mandatory barriers; with them, objdump -d of noise_thread (gcc 12
 * -O2, x86-64) shows the loop as `mov $0x64,%eax; sfence; sub $0x1,%eax; jne` and an
 * `lfence` after the nanosleep call (`dsb st` / `dsb ld` on arm64).
 */
static inline void noise_wmb(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb st" ::: "memory");
#else
	__sync_synchronize();
#endif
}

static inline void noise_rmb(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb ld" ::: "memory");
#else
	__sync_synchronize();
#endif
}

static void *noise_thread(void *arg)
{
	struct worker *w = arg;

	pin_to(w->cpu);
	while (!shared.done) {
		for (int i = 0; i < 100; i++)
			noise_wmb();
		sleep_us(10);
		noise_rmb();
	}
	return NULL;
}

static long parse(const char *text, long min, long max, const char *what)
{
	char *end;

	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max) {
		fprintf(stderr, "lockbench: %s must be an integer in %ld..%ld\n", what, min, max);
		exit(2);
	}
	return v;
}

static void start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(thread, NULL, fn, arg);
	if (err) {
		fprintf(stderr, "lockbench: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int disable = 0, opt;
	long seconds = 5, noise = 5, hold_us = 30;

	shared.wait_extended = 0;
	while ((opt = getopt(argc, argv, "dwt:n:H:")) != -1) {
		switch (opt) {
		case 'd': disable = 1; break;
		case 'w': shared.wait_extended = 1; break;
		case 't': seconds = parse(optarg, 1, MAX_SECONDS, "-t SECONDS"); break;
		case 'n': noise = parse(optarg, 0, 64, "-n NOISE"); break;
		case 'H': hold_us = parse(optarg, 1, 100000, "-H HOLD_US"); break;
		default:
			fprintf(stderr, "usage: %s [-d] [-w] [-t SECONDS] [-n NOISE] [-H HOLD_US]\n", argv[0]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lockbench: unexpected argument `%s`\n", argv[optind]);
		return 2;
	}
	shared.hold_ns = (uint64_t)hold_us * 1000;

	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("lockbench: sched_getaffinity");
		return 1;
	}
	int ncpu = CPU_COUNT(&allowed);

	/* Probe once in the main thread, so an unsupported system is reported in one line. */
	const char *mode = "disabled (-d)";
	const char *why = NULL;
	if (!disable) {
		if (enable_slice_extension(&why)) {
			shared.extend = 1;
			mode = "requested";
		} else {
			mode = "unavailable";
		}
	}
	printf("lockbench: %d CPUs, %ld noise threads per CPU, %ld s, hold %ld us, slice extension: %s%s%s%s\n",
	       ncpu, noise, seconds, hold_us, mode, why ? " (" : "", why ? why : "", why ? ")" : "");
	fflush(stdout);

	struct worker *locks = aligned_alloc(CACHE_LINE, sizeof(*locks) * (size_t)ncpu);
	struct worker *noises = aligned_alloc(CACHE_LINE, sizeof(*noises) * (size_t)(ncpu * noise + 1));
	if (!locks || !noises) {
		fprintf(stderr, "lockbench: out of memory\n");
		return 1;
	}
	memset(locks, 0, sizeof(*locks) * (size_t)ncpu);
	int n = 0, k = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < ncpu; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		for (long i = 0; i < noise; i++, k++) {
			noises[k].cpu = cpu;
			start(&noises[k].thread, noise_thread, &noises[k]);
		}
		locks[n].cpu = cpu;
		locks[n].index = n;
		start(&locks[n].thread, lock_thread, &locks[n]);
		n++;
	}

	sleep_us(seconds * 1000000L);
	shared.done = 1;
	struct lock_stats sum = { 0 };
	for (int i = 0; i < n; i++) {
		pthread_join(locks[i].thread, NULL);
		struct lock_stats *st = &locks[i].stats;
		sum.iterations += st->iterations;
		sum.contention += st->contention;
		sum.extended += st->extended;
		sum.wait_ns += st->wait_ns;
		sum.hold_ns += st->hold_ns;
		if (st->max_wait_ns > sum.max_wait_ns)
			sum.max_wait_ns = st->max_wait_ns;
		if (st->max_hold_ns > sum.max_hold_ns)
			sum.max_hold_ns = st->max_hold_ns;
	}
	for (int i = 0; i < k; i++)
		pthread_join(noises[i].thread, NULL);

	double iters = sum.iterations ? (double)sum.iterations : 1.0;
	printf("Ran for %llu times\n", (unsigned long long)sum.iterations);
	printf("Total wait time: %.6f s (avg: %.3f us)\n", sum.wait_ns / 1e9,
	       sum.wait_ns / iters / 1e3);
	printf("Total contention: %llu\n", (unsigned long long)sum.contention);
	printf("Total extended: %llu\n", (unsigned long long)sum.extended);
	printf("Max wait: %llu us\n", (unsigned long long)(sum.max_wait_ns / 1000));
	printf("Max hold: %llu us (avg: %.3f us)\n", (unsigned long long)(sum.max_hold_ns / 1000),
	       sum.hold_ns / iters / 1e3);
	free(locks);
	free(noises);
	return 0;
}
