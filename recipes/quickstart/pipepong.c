// SPDX-License-Identifier: MIT
// pipepong: a parent and a child, each pinned to its own CPU, bounce one byte through a pair
// of pipes N times; the round-trip time is dominated by wakeup and context-switch cost.
// Usage: pipepong ROUNDTRIPS       Prints one JSON object on stdout.
// The parent takes the first CPU it may run on and the child the second (the same one when
// only one is allowed), so the program runs anywhere and still measures cross-CPU wakeups
// where it can.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pipepong: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		exit(1);
	}
}

static void xfer(int fd, int write_it)
{
	char c = 'x';
	ssize_t n = write_it ? write(fd, &c, 1) : read(fd, &c, 1);
	if (n != 1) {
		fprintf(stderr, "pipepong: %s returned %zd: %s\n", write_it ? "write" : "read", n, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s ROUNDTRIPS\n", argv[0]);
		return 2;
	}
	char *end;
	long n = strtol(argv[1], &end, 10);
	if (*end || n < 1 || n > 100000000) {
		fprintf(stderr, "pipepong: ROUNDTRIPS must be 1..100000000\n");
		return 2;
	}
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("sched_getaffinity");
		return 1;
	}
	int cpus[2] = {-1, -1}, found = 0;
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[found++] = c;
	if (found == 1)
		cpus[1] = cpus[0];
	int ping[2], pong[2];
	if (pipe(ping) || pipe(pong)) {
		perror("pipe");
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pin(cpus[1]);
		for (long i = 0; i < n; i++) {
			xfer(ping[0], 0);
			xfer(pong[1], 1);
		}
		_exit(0);
	}
	pin(cpus[0]);
	/* One untimed round trip so both sides are scheduled and pinned before timing. */
	xfer(ping[1], 1);
	xfer(pong[0], 0);
	uint64_t start = now_ns();
	for (long i = 1; i < n; i++) {
		xfer(ping[1], 1);
		xfer(pong[0], 0);
	}
	uint64_t wall = now_ns() - start;
	int status;
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "pipepong: child failed\n");
		return 1;
	}
	long timed = n - 1 > 0 ? n - 1 : 1;
	printf("{\"schema\":\"aba-pipepong-v1\",\"cpus\":[%d,%d],\"roundtrips\":%ld,\"wall_ns\":%llu,\"ns_per_roundtrip\":%.3f}\n",
	       cpus[0], cpus[1], timed, (unsigned long long)wall, (double)wall / (double)timed);
	return 0;
}
