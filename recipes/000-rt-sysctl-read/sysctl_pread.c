// SPDX-License-Identifier: MIT
/*
 * sysctl_pread: read latency of one /proc/sys file.
 *
 * Opens FILE once, then times READS pread() calls at offset 0 on that descriptor. Every
 * returned buffer is compared with the expected text inside the timed loop, so a kernel that
 * got faster by returning something else fails instead of looking good. open() and close()
 * are outside the timed region.
 *
 * Usage: sysctl_pread FILE READS [EXPECTED]
 *   FILE      e.g. /proc/sys/kernel/sched_rt_period_us
 *   READS     1..1000000 pread() calls in the timed loop
 *   EXPECTED  the value every read must return (e.g. 1000000); without it, every read must
 *             return what an untimed first read returned
 *
 * The program does not pin itself: run it under `taskset -c CPU` (aba's `cpu = "2"`). It
 * reports the CPU it ran on and whether its affinity was a single CPU for the whole run, so a
 * recipe can insist on it with `check.must_match = ['"pinned":true']`.
 *
 * Output, one JSON object on stdout:
 *   {"schema":"aba-sysctl-pread-v1","file":"…","reads":4096,"value":"1000000",
 *    "cpu":2,"pinned":true,"wall_ns":…,"thread_cpu_ns":…}
 * wall_ns is CLOCK_MONOTONIC_RAW around the loop; divide by READS for ns/read.
 * Exit status: 0 on success, 1 on a read that returned anything unexpected, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_READS 1000000L
#define BUF_SIZE 128

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts)) {
		perror("sysctl_pread: clock_gettime");
		exit(1);
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* True when the calling thread may run on exactly one CPU. */
static int single_cpu_affinity(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_COUNT(&set) == 1;
}

/* Prints TEXT as a JSON string body, escaping what JSON requires. */
static void json_string(const char *text)
{
	for (; *text; text++) {
		unsigned char c = (unsigned char)*text;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s FILE READS [EXPECTED]\n", argv[0]);
		return 2;
	}
	const char *path = argv[1];
	char *end;
	errno = 0;
	long reads = strtol(argv[2], &end, 10);
	if (errno || end == argv[2] || *end || reads < 1 || reads > MAX_READS) {
		fprintf(stderr, "sysctl_pread: READS must be an integer in 1..%ld\n", MAX_READS);
		return 2;
	}

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sysctl_pread: open %s: %s\n", path, strerror(errno));
		return 1;
	}

	/* The reference: the expected value plus the newline /proc/sys appends, or the first read. */
	char want[BUF_SIZE], got[BUF_SIZE];
	ssize_t want_len;
	if (argc == 4) {
		int n = snprintf(want, sizeof(want), "%s\n", argv[3]);
		if (n < 0 || (size_t)n >= sizeof(want)) {
			fprintf(stderr, "sysctl_pread: EXPECTED is too long\n");
			return 2;
		}
		want_len = n;
	} else {
		want_len = pread(fd, want, sizeof(want), 0);
		if (want_len <= 0 || want_len == (ssize_t)sizeof(want)) {
			fprintf(stderr, "sysctl_pread: untimed first read of %s returned %zd\n", path,
				want_len);
			return 1;
		}
	}

	int pinned = single_cpu_affinity();
	int cpu = sched_getcpu();
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC_RAW);
	for (long i = 0; i < reads; i++) {
		/* One read per call: no retry, no partial-read loop, no seek. */
		ssize_t n = pread(fd, got, sizeof(got), 0);
		if (n != want_len || memcmp(got, want, (size_t)want_len)) {
			int saved = errno;
			int shown = (int)want_len - (want[want_len - 1] == '\n');
			fprintf(stderr, "sysctl_pread: read %ld of %s returned %zd bytes%s%s, expected %zd bytes (\"%.*s\\n\")\n",
				i + 1, path, n, n < 0 ? ": " : "", n < 0 ? strerror(saved) : "",
				want_len, shown, want);
			return 1;
		}
	}
	uint64_t wall = clock_ns(CLOCK_MONOTONIC_RAW) - t0;
	uint64_t thread_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;

	/* Pinned means: one allowed CPU before and after, and still on the CPU we started on. */
	pinned = pinned && single_cpu_affinity() && sched_getcpu() == cpu;
	if (close(fd)) {
		perror("sysctl_pread: close");
		return 1;
	}

	printf("{\"schema\":\"aba-sysctl-pread-v1\",\"file\":\"");
	json_string(path);
	printf("\",\"reads\":%ld,\"value\":\"", reads);
	/* want_len < sizeof(want), so there is room for the terminator; drop the newline. */
	want[want[want_len - 1] == '\n' ? want_len - 1 : want_len] = '\0';
	json_string(want);
	printf("\",\"cpu\":%d,\"pinned\":%s,\"wall_ns\":%llu,\"thread_cpu_ns\":%llu}\n", cpu,
	       pinned ? "true" : "false", (unsigned long long)wall,
	       (unsigned long long)thread_cpu);
	return 0;
}
