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
 *    "slice_ns":2800000,"slice_mode":"default","base_slice_ns":2800000,"cpu":2,
 *    "wall_ns":…,"thread_cpu_ns":…,"ns_per_call":…}
 * slice_ns is what sched_getattr reports after the loop (the kernel's view of the slice;
 * 0 on kernels that do not report one). wall_ns is CLOCK_MONOTONIC_RAW around the loop.
 *
 * slice_mode is the mode the kernel keeps the task in after the loop, "default" or
 * "custom", found by a probe after the timing: the slice value alone cannot tell them apart
 * (a custom slice may equal the default). The probe writes another value to the default
 * slice (/sys/kernel/debug/sched/base_slice_ns), burns CPU until the task's slice follows
 * it (default mode) or has not followed it after two old slices plus 50 ms of CPU time
 * (custom mode), and writes the old default back before reporting. A task in default mode
 * takes the new default at its next deadline; one in custom mode keeps its own slice.
 * Without root or debugfs the probe cannot run: slice_mode is "unknown" and "mode_probe"
 * says why. base_slice_ns is the default slice the probe found (0 when unreadable).
 * Exit status: 0 on success, 1 when a system call fails or the old default cannot be
 * restored, 2 on bad usage.
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
#include "sched_attr.h"

#define MAX_CALLS 100000000L
#define DEFAULT_SLICE_NS 3000000ull

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts)) {
		perror("setparam_bench: clock_gettime");
		exit(1);
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int get_attr(struct aba_sched_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	return (int)syscall(SYS_sched_getattr, 0, attr, (unsigned int)sizeof(*attr), 0u);
}

static int set_custom_slice(uint64_t slice_ns)
{
	struct aba_sched_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	attr.sched_nice = 0;
	attr.sched_runtime = slice_ns;
	return (int)syscall(SYS_sched_setattr, 0, &attr, 0u);
}

#ifndef BASE_SLICE_PATH /* -D for a test without debugfs */
#define BASE_SLICE_PATH "/sys/kernel/debug/sched/base_slice_ns"
#endif

static int read_u64(const char *path, uint64_t *value)
{
	FILE *f = fopen(path, "r");
	unsigned long long v;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*value = v;
	return 0;
}

static int write_u64(const char *path, uint64_t value)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%llu\n", (unsigned long long)value) > 0;
	if (fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/* The probe described at the top: sets *mode to "default", "custom" or "unknown" (with
 * *why) and *base to the default slice found; returns -1 only when the old default could
 * not be written back (the caller must fail then). */
static int probe_slice_mode(uint64_t slice, const char **mode, const char **why, uint64_t *base)
{
	struct aba_sched_attr attr;
	uint64_t probe;

	*mode = "unknown";
	*base = 0;
	if (read_u64(BASE_SLICE_PATH, base)) {
		*why = "cannot read " BASE_SLICE_PATH " (root and debugfs needed)";
		return 0;
	}
	if (!*base || !slice) {
		*why = "no slice to compare";
		return 0;
	}
	/* A new default that neither the old one nor the task's slice equals. */
	probe = *base * 2;
	if (probe == slice)
		probe = *base * 3;
	if (write_u64(BASE_SLICE_PATH, probe)) {
		*why = "cannot write " BASE_SLICE_PATH;
		return 0;
	}
	uint64_t budget = 2 * slice + 50000000ull;
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	int followed = 0, failed = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < budget) {
		uint64_t spin = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - spin < 1000000ull)
			;
		if (get_attr(&attr)) {
			failed = 1;
			break;
		}
		if (attr.sched_runtime == probe) {
			followed = 1;
			break;
		}
	}
	if (write_u64(BASE_SLICE_PATH, *base)) {
		fprintf(stderr, "setparam_bench: cannot restore %s to %llu (it is %llu now)\n",
			BASE_SLICE_PATH, (unsigned long long)*base, (unsigned long long)probe);
		return -1;
	}
	if (failed)
		*why = "sched_getattr failed during the probe";
	else
		*mode = followed ? "default" : "custom";
	return 0;
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
	struct aba_sched_attr attr;
	if (get_attr(&attr)) {
		fprintf(stderr, "setparam_bench: sched_getattr: %s\n", strerror(errno));
		return 1;
	}
	if (attr.sched_policy != SCHED_OTHER) {
		fprintf(stderr, "setparam_bench: policy changed to %u during the loop\n",
			attr.sched_policy);
		return 1;
	}

	/* Which mode the loop left the task in, probed after the timing. */
	const char *slice_mode, *why = NULL;
	uint64_t base_slice;
	if (probe_slice_mode(attr.sched_runtime, &slice_mode, &why, &base_slice))
		return 1;

	printf("{\"schema\":\"aba-setparam-v1\",\"mode\":\"%s\",\"calls\":%ld,\"policy\":%u,"
	       "\"slice_ns\":%llu,\"slice_mode\":\"%s\",",
	       argv[1], calls, attr.sched_policy, (unsigned long long)attr.sched_runtime,
	       slice_mode);
	if (why)
		printf("\"mode_probe\":\"%s\",", why);
	printf("\"base_slice_ns\":%llu,\"cpu\":%d,\"wall_ns\":%llu,\"thread_cpu_ns\":%llu,"
	       "\"ns_per_call\":%.3f}\n",
	       (unsigned long long)base_slice, sched_getcpu(), (unsigned long long)wall,
	       (unsigned long long)thread_cpu, (double)wall / (double)calls);
	return 0;
}
