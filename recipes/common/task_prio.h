// SPDX-License-Identifier: MIT
/*
 * task_prio.h: the calling thread's effective priority as the kernel reports it, for the
 * priority-inheritance checks of recipe 001 (pi_boost.c) and 001-rt-pi-uclamp-reset
 * (uclamp_reset.c): a boost is seen in /proc/self/task/TID/stat, field 18, which prints
 * task_prio(), prio - 100 (-11 for SCHED_FIFO 10, -101 for SCHED_DEADLINE, 20 for nice 0).
 */
#ifndef ABA_TASK_PRIO_H
#define ABA_TASK_PRIO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Effective priorities as /proc/PID/stat prints them. */
#define PRIO_FIFO_10 (-11)
#define PRIO_DEADLINE (-101)
#define PRIO_NICE_0 20

/* The calling thread's effective priority, or a value below -1000 when it cannot be read. */
static int own_prio(void)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;
	char *p;
	int field = 2, prio = -10000;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", (long)syscall(SYS_gettid));
	f = fopen(path, "r");
	if (!f)
		return prio;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return prio;
	/* Field 3 (state) follows ") "; count to field 18. */
	for (p += 2; *p && field < 17; p++)
		if (*p == ' ')
			field++;
	if (field == 17)
		prio = atoi(p);
	return prio;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits up to 2 s for the calling thread's priority to become `want`; the last one read. */
static int wait_prio(int want)
{
	int prio = own_prio();

	for (int i = 0; i < 200 && prio != want; i++) {
		sleep_ms(10);
		prio = own_prio();
	}
	return prio;
}

#endif
