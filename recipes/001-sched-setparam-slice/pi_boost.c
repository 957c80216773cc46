/*
 * pi_boost: does a priority-inheritance boost survive sched_setparam() with unchanged
 * parameters? An untimed correctness check for aba (recipe 001), the thread's "RT/DL PI"
 * controls: "The revision and unmodified v7.2 also passed the basic syscall checks and the
 * other controls: RT/DL PI, [...]" (the thread's reply). The revision keeps "the full
 * update path for PI-boosted [...] tasks" (its patch); a fast path that skipped an update it
 * needed, or took the boosted priority for the task's own, would show here.
 *
 * For each waiter (SCHED_FIFO priority 10; SCHED_DEADLINE 1 ms every 10 ms) and each slice of
 * the holder (the default; a custom 3 ms, as the recipe's custom-slice case), the main thread,
 * a SCHED_OTHER task, locks a PTHREAD_PRIO_INHERIT mutex; the waiter blocks on it, which
 * boosts the holder. The holder then calls sched_setparam(0, priority 0), the benchmark's
 * call, reads its effective priority (/proc/self/task/TID/stat, field 18), unlocks, and reads
 * it again once the waiter is done. A case is ok when the boost came, was still there after
 * the call, and was gone after the unlock.
 *
 * What the call returns is printed, not judged, beyond "0, or EBUSY under a deadline boost":
 * a SCHED_OTHER task under a deadline boost counts as a deadline task, and the full update
 * path refuses it with EBUSY at the bandwidth check (Linux 6.18 here: the default-slice case
 * gets EBUSY), while a path that returns early for unchanged parameters returns 0 (the
 * custom-slice case). Which a kernel does is its design; the boost must survive either way.
 *
 * Output, one line per case: "pi fifo default: setparam 0, boosted -11, after setparam -11,
 * after unlock 20: ok" (or "... FAIL"), then "pi: all ok" or "pi: FAIL". Exit status: 0 when
 * every case was determined (ok or FAIL), 1 when a system call failed so that the check could
 * not be made. Needs root (SCHED_FIFO, SCHED_DEADLINE).
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

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

#define CUSTOM_SLICE_NS 3000000ull

static pthread_mutex_t lock;
static int waiter_policy;
static int waiter_error;

static int set_attr(uint32_t policy, uint64_t runtime, uint64_t deadline, uint64_t period)
{
	struct aba_sched_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = policy;
	attr.sched_runtime = runtime;
	attr.sched_deadline = deadline;
	attr.sched_period = period;
	return (int)syscall(SYS_sched_setattr, 0, &attr, 0u);
}

static void *waiter(void *unused)
{
	(void)unused;
	if (waiter_policy == SCHED_DEADLINE &&
	    set_attr(SCHED_DEADLINE, 1000000ull, 10000000ull, 10000000ull)) {
		waiter_error = errno;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* One case; 0 when determined, 1 when a system call failed. `*ok` says how it went. */
static int one_case(int policy, int custom, int *ok)
{
	const char *who = policy == SCHED_FIFO ? "fifo" : "deadline";
	int want = policy == SCHED_FIFO ? PRIO_FIFO_10 : PRIO_DEADLINE;
	struct sched_param zero = { 0 };
	pthread_attr_t attr;
	pthread_t thread;
	int err, boosted, after_setparam, after_unlock;

	if (set_attr(SCHED_OTHER, custom ? CUSTOM_SLICE_NS : 0, 0, 0)) {
		fprintf(stderr, "pi_boost: sched_setattr(SCHED_OTHER, runtime %llu): %s\n",
			custom ? CUSTOM_SLICE_NS : 0ull, strerror(errno));
		return 1;
	}
	pthread_attr_init(&attr);
	if (policy == SCHED_FIFO) {
		struct sched_param rt = { 10 };

		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &rt);
	}
	waiter_policy = policy;
	waiter_error = 0;
	pthread_mutex_lock(&lock);
	err = pthread_create(&thread, &attr, waiter, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pthread_mutex_unlock(&lock);
		fprintf(stderr, "pi_boost: a %s waiter: %s\n", who, strerror(err));
		return 1;
	}
	boosted = wait_prio(want);
	err = sched_setparam(0, &zero) ? errno : 0;
	after_setparam = own_prio();
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	after_unlock = wait_prio(PRIO_NICE_0);
	if (waiter_error) {
		fprintf(stderr, "pi_boost: the waiter's sched_setattr(SCHED_DEADLINE): %s\n",
			strerror(waiter_error));
		return 1;
	}
	if (err && !(err == EBUSY && policy == SCHED_DEADLINE)) {
		fprintf(stderr, "pi_boost: sched_setparam(0, 0) while boosted: %s\n", strerror(err));
		return 1;
	}
	*ok = boosted == want && after_setparam == want && after_unlock == PRIO_NICE_0;
	printf("pi %s %s: setparam %s, boosted %d, after setparam %d, after unlock %d: %s\n", who,
	       custom ? "custom" : "default", err ? "EBUSY" : "0", boosted, after_setparam,
	       after_unlock, *ok ? "ok" : "FAIL");
	return 0;
}

int main(void)
{
	pthread_mutexattr_t attr;
	int policies[2] = { SCHED_FIFO, SCHED_DEADLINE };
	int all = 1;

	pthread_mutexattr_init(&attr);
	if (pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT)) {
		fprintf(stderr, "pi_boost: no PTHREAD_PRIO_INHERIT mutexes here\n");
		return 1;
	}
	pthread_mutex_init(&lock, &attr);
	for (int p = 0; p < 2; p++) {
		for (int custom = 0; custom < 2; custom++) {
			int ok = 0;

			if (one_case(policies[p], custom, &ok))
				return 1;
			all &= ok;
		}
	}
	/* Back to the default slice, as the program found it. */
	set_attr(SCHED_OTHER, 0, 0, 0);
	printf("pi: %s\n", all ? "all ok" : "FAIL");
	return 0;
}
