// SPDX-License-Identifier: MIT
/*
 * heartbeat: a SCHED_OTHER task that wants to wake every PERIOD_MS milliseconds for SECONDS
 * seconds, and reports how late it got to run.
 *
 * Next to a SCHED_FIFO CPU hog, a fair task only runs when the fair (dl-)server gives it
 * its reserved bandwidth, so the longest gap between two wakeups shows how the reservation
 * is delivered: about PERIOD_MS when it is spread out, about one server period when it comes
 * in one burst per period, and the whole run when the task is starved.
 *
 * Usage: heartbeat PERIOD_MS SECONDS
 * Output, one line on stdout when the run ends:
 *   heartbeat: beats 199 max_gap_ms 51.2 period_ms 50 seconds 10
 * The first gap is measured from the start, the last one ends at the first wakeup after the
 * deadline, so a freeze at either edge is counted. Exit status: 0, or 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long parse(const char *text, long max, const char *what)
{
	char *end;

	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > max) {
		fprintf(stderr, "heartbeat: %s must be an integer in 1..%ld\n", what, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s PERIOD_MS SECONDS\n", argv[0]);
		return 2;
	}
	long period_ms = parse(argv[1], 60000, "PERIOD_MS");
	long seconds = parse(argv[2], 86400, "SECONDS");
	const struct timespec period = {
		.tv_sec = period_ms / 1000,
		.tv_nsec = (period_ms % 1000) * 1000000L,
	};
	uint64_t start = now_ns(), deadline = start + (uint64_t)seconds * 1000000000ull;
	uint64_t last = start, max_gap = 0, beats = 0;

	for (;;) {
		/* A relative sleep: each beat asks for a full period after it actually ran. */
		struct timespec left = period;
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &left, &left) == EINTR)
			;
		uint64_t now = now_ns();
		if (now - last > max_gap)
			max_gap = now - last;
		last = now;
		beats++;
		if (now >= deadline)
			break;
	}
	printf("heartbeat: beats %llu max_gap_ms %.1f period_ms %ld seconds %ld\n",
	       (unsigned long long)beats, max_gap / 1e6, period_ms, seconds);
	return 0;
}
