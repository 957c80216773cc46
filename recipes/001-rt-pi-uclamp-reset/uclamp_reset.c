// SPDX-License-Identifier: MIT
/*
 * uclamp_reset: UNVERIFIED. The RT-PI uclamp reset of recipe 001's thread, as one sequence
 * derived from the thread's outcome and the v7.2 kernel source; no kernel the sequence was
 * written for has run it. Every step it depends on is checked, and a step that does not
 * happen as derived fails the program with the reason (exit 1), so a wrong derivation fails
 * loudly and is never mistaken for the kernel's answer.
 *
 * The thread: "In the RT-PI test, sched_setparam() resets the implicit uclamp_min from 1024
 * to 0 after the boost ends, even though the slice duration is unchanged", a problem that
 * "occur[s] in unmodified v7.2". The sequence that gives unmodified v7.2 and the revision
 * different outcomes (kernel/sched/syscalls.c):
 *   1. a SCHED_OTHER holder of a PTHREAD_PRIO_INHERIT mutex is boosted by a SCHED_FIFO
 *      waiter (its effective priority becomes the waiter's);
 *   2. during the boost it asks for a new custom slice (sched_setattr, SCHED_OTHER, a
 *      sched_runtime other than its slice): a changing call, which takes the full update
 *      path on both kernels, where __setscheduler_uclamp() sees rt_task() true (the boost)
 *      and sets the implicit uclamp_min to sched_util_clamp_min_rt_default (1024);
 *   3. the holder unlocks; the boost ends; the implicit clamp stays;
 *   4. an unchanged sched_setparam(0, priority 0) (the same custom slice: _sched_setscheduler
 *      passes it as sched_runtime): unmodified v7.2 returns early for unchanged fair
 *      parameters and keeps 1024; the revision's fair_params_changed() sees an implicit
 *      clamp that needs resetting, takes the full path and resets it to 0.
 * Checked before the verdict: uclamp exists (/proc/sys/kernel/sched_util_clamp_min_rt_default),
 * the boost is seen, the clamp read during the boost (sched_getattr's sched_util_min) is the
 * RT default, and it is still that default after the unlock, before the last call.
 *
 * Output: "rt_default: N", "boosted: PRIO", "uclamp_min during boost: N", "after unlock: P",
 * "uclamp_min before setparam: N", "uclamp_min after setparam: M", then
 * "reset: yes" (M = 0) or "reset: no" (M = N). Exit status: 0 when the sequence ran as
 * derived (whichever the verdict), 1 with "uclamp_reset: ..." on stderr otherwise. Needs root
 * (a SCHED_FIFO waiter), Linux 6.12+ (custom slices) and CONFIG_UCLAMP_TASK.
 *
 * `uclamp_reset explicit` is one of the thread's controls, "explicit uclamp requests": the
 * same sequence for a task that asked for its own uclamp_min (EXPLICIT_MIN, with
 * SCHED_FLAG_UTIL_CLAMP_MIN). A user-defined clamp is never replaced by the RT default
 * (uclamp_se.user_defined), so the changing call during the boost keeps it, and the
 * revision's reset, which is for the implicit clamp, must keep it too: "explicit kept: yes"
 * on both kernels. The same checks fail the program where the derivation does not hold.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "task_prio.h"
#include "sched_attr.h"

#define RT_DEFAULT "/proc/sys/kernel/sched_util_clamp_min_rt_default"
/* include/uapi/linux/sched.h */
#define ABA_SCHED_FLAG_UTIL_CLAMP_MIN 0x20
/* The explicit request of the control: neither 0 nor the usual RT default of 1024. */
#define EXPLICIT_MIN 512u

static pthread_mutex_t lock;

static void fail(const char *why)
{
	fprintf(stderr, "uclamp_reset: %s\n", why);
	exit(1);
}

static void fail_errno(const char *what)
{
	fprintf(stderr, "uclamp_reset: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct aba_sched_attr_v1 get_attr(void)
{
	struct aba_sched_attr_v1 attr;

	memset(&attr, 0, sizeof(attr));
	if (syscall(SYS_sched_getattr, 0, &attr, (unsigned int)sizeof(attr), 0u))
		fail_errno("sched_getattr");
	if (attr.size < sizeof(attr))
		fail("sched_getattr returned no clamps (a kernel without CONFIG_UCLAMP_TASK?)");
	return attr;
}

static void *waiter(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The sequence; with `explicit`, for a task with its own uclamp_min. */
static int run(int explicit)
{
	pthread_mutexattr_t mattr;
	pthread_attr_t tattr;
	struct sched_param rt = { 10 }, zero = { 0 };
	struct aba_sched_attr_v1 attr;
	pthread_t thread;
	unsigned long rt_default;
	unsigned int want;
	uint64_t slice;
	FILE *f;
	int err, prio;

	f = fopen(RT_DEFAULT, "r");
	if (!f)
		fail("no " RT_DEFAULT ": a kernel without uclamp (CONFIG_UCLAMP_TASK) cannot show the reset");
	if (fscanf(f, "%lu", &rt_default) != 1)
		fail("cannot read " RT_DEFAULT);
	fclose(f);
	printf("rt_default: %lu\n", rt_default);
	if (rt_default == 0)
		fail(RT_DEFAULT " is 0: an implicit RT clamp of 0 cannot be told from a reset");

	/* SCHED_OTHER, default slice, no clamp of its own: the state the thread starts from. */
	attr = get_attr();
	if (attr.sched_policy != SCHED_OTHER)
		fail("the program must start as a SCHED_OTHER task");
	if (attr.sched_util_min != 0)
		fail("the task starts with a uclamp_min other than 0");
	/* A custom slice that differs from the current one: a changing call on any kernel. */
	slice = attr.sched_runtime + 1000000ull;
	/* The control: the task's own request, made before anything else. */
	want = explicit ? EXPLICIT_MIN : (unsigned int)rt_default;
	if (explicit) {
		if (rt_default == EXPLICIT_MIN)
			fail(RT_DEFAULT " is the control's own request (512): they cannot be told apart");
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.sched_policy = SCHED_OTHER;
		attr.sched_flags = ABA_SCHED_FLAG_UTIL_CLAMP_MIN;
		attr.sched_util_min = EXPLICIT_MIN;
		if (syscall(SYS_sched_setattr, 0, &attr, 0u))
			fail_errno("sched_setattr(SCHED_OTHER, uclamp_min 512)");
		attr = get_attr();
		printf("explicit uclamp_min: %u\n", attr.sched_util_min);
		if (attr.sched_util_min != EXPLICIT_MIN)
			fail("the explicit uclamp_min request did not take");
	}

	pthread_mutexattr_init(&mattr);
	if (pthread_mutexattr_setprotocol(&mattr, PTHREAD_PRIO_INHERIT))
		fail("no PTHREAD_PRIO_INHERIT mutexes here");
	pthread_mutex_init(&lock, &mattr);
	pthread_attr_init(&tattr);
	pthread_attr_setinheritsched(&tattr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&tattr, SCHED_FIFO);
	pthread_attr_setschedparam(&tattr, &rt);

	/* 1. The boost. */
	pthread_mutex_lock(&lock);
	err = pthread_create(&thread, &tattr, waiter, NULL);
	if (err) {
		errno = err;
		fail_errno("a SCHED_FIFO 10 waiter (root needed)");
	}
	prio = wait_prio(PRIO_FIFO_10);
	printf("boosted: %d\n", prio);
	if (prio != PRIO_FIFO_10)
		fail("the SCHED_FIFO waiter did not boost the holder");

	/* 2. A changing call during the boost: a new custom slice. */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	attr.sched_runtime = slice;
	if (syscall(SYS_sched_setattr, 0, &attr, 0u))
		fail_errno("sched_setattr(SCHED_OTHER, a new custom slice) during the boost");
	attr = get_attr();
	printf("uclamp_min during boost: %u\n", attr.sched_util_min);
	if (attr.sched_util_min != want)
		fail(explicit ? "the changing call during the boost replaced the explicit clamp: the derived sequence does not hold on this kernel"
			      : "the changing call during the boost did not set the implicit RT clamp: the derived sequence does not hold on this kernel");

	/* 3. The unlock. */
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	prio = wait_prio(PRIO_NICE_0);
	printf("after unlock: %d\n", prio);
	if (prio != PRIO_NICE_0)
		fail("the boost did not end at the unlock");
	attr = get_attr();
	printf("uclamp_min before setparam: %u\n", attr.sched_util_min);
	if (attr.sched_util_min != want)
		fail("the clamp changed before the last call: the derived sequence does not hold on this kernel");
	if (attr.sched_runtime != slice)
		fail("the custom slice did not survive the boost");

	/* 4. The unchanged call. */
	if (sched_setparam(0, &zero))
		fail_errno("sched_setparam(0, 0) after the boost");
	attr = get_attr();
	printf("uclamp_min after setparam: %u\n", attr.sched_util_min);
	if (attr.sched_util_min != 0 && attr.sched_util_min != want)
		fail("uclamp_min is neither reset nor kept after the last call");
	if (explicit)
		printf("explicit kept: %s\n", attr.sched_util_min == want ? "yes" : "no");
	else
		printf("reset: %s\n", attr.sched_util_min == 0 ? "yes" : "no");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "explicit")))
		fail("usage: uclamp_reset [explicit]");
	return run(argc == 2);
}
