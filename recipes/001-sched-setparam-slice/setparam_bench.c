// SPDX-License-Identifier: MIT
/*
 * setparam_bench: cost of an unchanged sched_setparam(0, priority 0) from a SCHED_OTHER task.
 *
 * The call changes nothing, so a kernel can take a fast path and return early; whether it
 * does depends on the task's slice mode:
 *   default  the task runs with the default (sysctl) slice, as every task does unless it
 *            asks otherwise;
 *   custom   the task first asks for its own slice with sched_setattr(SCHED_OTHER,
 *            sched_runtime = SLICE_NS), then makes the same calls.
 *
 * Usage: setparam_bench default|custom CALLS [SLICE_NS]
 *   CALLS     1..100000000 sched_setparam() calls in the timed loop
 *   SLICE_NS  the custom slice (default 3000000, i.e. 3 ms; the kernel clamps it to its range)
 *
 * sched_setattr/sched_getattr are called through syscall(2) with the kernel's struct layout,
 * because glibc on Debian 12 has no wrapper for them. Every call's return value is checked.
 *
 * Output, one JSON object on stdout:
 *   {"schema":"aba-setparam-v1","mode":"default","calls":500000,"policy":0,
 *    "slice_ns":2800000,"cpu":2,"wall_ns":…,"thread_cpu_ns":…,"ns_per_call":…}
 * slice_ns is what sched_getattr reports after the loop (the kernel's view of the slice;
 * 0 on kernels that do not report one). wall_ns is CLOCK_MONOTONIC_RAW around the loop.
 * Exit status: 0 on success, 1 when a system call fails, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CALLS 100000000L
#define DEFAULT_SLICE_NS 3000000ull

/* The first version of struct sched_attr (SCHED_ATTR_SIZE_VER0, 48 bytes), as in
 * include/uapi/linux/sched/types.h; declared here so the program builds with old headers. */
struct bench_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts)) {
		perror("setparam_bench: clock_gettime");
		exit(1);
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int get_attr(struct bench_sched_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	return (int)syscall(SYS_sched_getattr, 0, attr, (unsigned int)sizeof(*attr), 0u);
}

static int set_custom_slice(uint64_t slice_ns)
{
	struct bench_sched_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	attr.sched_nice = 0;
	attr.sched_runtime = slice_ns;
	return (int)syscall(SYS_sched_setattr, 0, &attr, 0u);
}

static long parse_long(const char *text, long min, long max, const char *what)
{
	char *end;

	errno = 0;
	long value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < min || value > max) {
		fprintf(stderr, "setparam_bench: %s must be an integer in %ld..%ld\n", what, min, max);
		exit(2);
	}
	return value;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s default|custom CALLS [SLICE_NS]\n", argv[0]);
		return 2;
	}
	int custom;
	if (!strcmp(argv[1], "default"))
		custom = 0;
	else if (!strcmp(argv[1], "custom"))
		custom = 1;
	else {
		fprintf(stderr, "setparam_bench: mode must be `default` or `custom`\n");
		return 2;
	}
	long calls = parse_long(argv[2], 1, MAX_CALLS, "CALLS");
	uint64_t slice_ns = DEFAULT_SLICE_NS;
	if (argc == 4) {
		if (!custom) {
			fprintf(stderr, "setparam_bench: SLICE_NS only applies to `custom`\n");
			return 2;
		}
		slice_ns = (uint64_t)parse_long(argv[3], 1, 1000000000L, "SLICE_NS");
	}

	/* The benchmark is about SCHED_OTHER: refuse to measure anything else. */
	int policy = sched_getscheduler(0);
	if (policy != SCHED_OTHER) {
		fprintf(stderr, "setparam_bench: running under policy %d, not SCHED_OTHER\n", policy);
		return 1;
	}
	if (custom && set_custom_slice(slice_ns)) {
		fprintf(stderr, "setparam_bench: sched_setattr(SCHED_OTHER, runtime=%llu): %s\n",
			(unsigned long long)slice_ns, strerror(errno));
		return 1;
	}

	struct sched_param param = { .sched_priority = 0 };
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC_RAW);
	for (long i = 0; i < calls; i++) {
		if (sched_setparam(0, &param)) {
			fprintf(stderr, "setparam_bench: sched_setparam call %ld: %s\n", i + 1,
				strerror(errno));
			return 1;
		}
	}
	uint64_t wall = clock_ns(CLOCK_MONOTONIC_RAW) - t0;
	uint64_t thread_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;

	/* Read back what the loop left behind: still SCHED_OTHER, and the slice the kernel uses. */
	struct bench_sched_attr attr;
	if (get_attr(&attr)) {
		fprintf(stderr, "setparam_bench: sched_getattr: %s\n", strerror(errno));
		return 1;
	}
	if (attr.sched_policy != SCHED_OTHER) {
		fprintf(stderr, "setparam_bench: policy changed to %u during the loop\n",
			attr.sched_policy);
		return 1;
	}

	printf("{\"schema\":\"aba-setparam-v1\",\"mode\":\"%s\",\"calls\":%ld,\"policy\":%u,"
	       "\"slice_ns\":%llu,\"cpu\":%d,\"wall_ns\":%llu,\"thread_cpu_ns\":%llu,"
	       "\"ns_per_call\":%.3f}\n",
	       argv[1], calls, attr.sched_policy, (unsigned long long)attr.sched_runtime,
	       sched_getcpu(), (unsigned long long)wall, (unsigned long long)thread_cpu,
	       (double)wall / (double)calls);
	return 0;
}
