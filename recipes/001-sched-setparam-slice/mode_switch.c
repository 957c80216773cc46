/*
 * mode_switch: does requesting a custom slice equal to the default switch a SCHED_OTHER task
 * to custom-slice mode? An untimed correctness check for aba (recipe 001).
 *
 * The thread: "Requesting a custom slice now switches the task to custom mode, even if its
 * duration equals the current default. Later changes to the default no longer change that
 * task's slice." Both problems occur in unmodified v7.2: there the request is taken for an
 * unchanged parameter and the task stays in default mode.
 *
 * The program reads the default slice D from /sys/kernel/debug/sched/base_slice_ns, asks for
 * a custom slice of D with sched_setattr, doubles the default, runs for 200 ms so that a
 * default-mode slice is refreshed, reads its slice back with sched_getattr and restores D.
 * A slice still D is custom mode, a slice of 2D default mode.
 *
 * Output: "default_slice_ns: D", "slice_ns: S", then "mode: custom" or "mode: default".
 * Exit status: 0 when the mode was determined (whichever it is), 1 when a system call fails
 * or the slice is neither, so that only a determined mode is a verdict. Needs root and debugfs.
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

#define BASE_SLICE "/sys/kernel/debug/sched/base_slice_ns"

static int read_base(unsigned long long *ns)
{
	FILE *f = fopen(BASE_SLICE, "r");
	int ok = f && fscanf(f, "%llu", ns) == 1;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static int write_base(unsigned long long ns)
{
	FILE *f = fopen(BASE_SLICE, "w");

	if (!f)
		return -1;
	int ok = fprintf(f, "%llu\n", ns) > 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	unsigned long long base;
	struct aba_sched_attr attr;

	if (read_base(&base)) {
		fprintf(stderr, "mode_switch: cannot read %s: %s\n", BASE_SLICE, strerror(errno));
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	attr.sched_runtime = base;
	if (syscall(SYS_sched_setattr, 0, &attr, 0u)) {
		fprintf(stderr, "mode_switch: sched_setattr(runtime=%llu): %s\n", base, strerror(errno));
		return 1;
	}
	if (write_base(2 * base)) {
		fprintf(stderr, "mode_switch: cannot write %s: %s\n", BASE_SLICE, strerror(errno));
		return 1;
	}
	/* Run through several slices: a default-mode slice takes the new default here. */
	for (uint64_t end = now_ns() + 200000000ull; now_ns() < end;)
		;
	memset(&attr, 0, sizeof(attr));
	long got = syscall(SYS_sched_getattr, 0, &attr, (unsigned int)sizeof(attr), 0u);
	int saved_errno = errno;
	if (write_base(base)) {
		fprintf(stderr, "mode_switch: cannot restore %s to %llu: %s\n", BASE_SLICE, base,
			strerror(errno));
		return 1;
	}
	if (got) {
		fprintf(stderr, "mode_switch: sched_getattr: %s\n", strerror(saved_errno));
		return 1;
	}
	unsigned long long slice = (unsigned long long)attr.sched_runtime;
	printf("default_slice_ns: %llu\nslice_ns: %llu\n", base, slice);
	if (slice == base) {
		printf("mode: custom\n");
	} else if (slice == 2 * base) {
		printf("mode: default\n");
	} else {
		fprintf(stderr, "mode_switch: slice %llu is neither %llu nor %llu\n", slice, base,
			2 * base);
		return 1;
	}
	return 0;
}
