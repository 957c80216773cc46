// SPDX-License-Identifier: MIT
// preadloop: time N pread() calls at offset 0 on one already-open file (a /proc/sys file by
// default), checking that every read returns the same bytes as the first one.
// Usage: preadloop FILE READS      Prints one JSON object on stdout.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts)) {
		perror("clock_gettime");
		exit(1);
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE READS\n", argv[0]);
		return 2;
	}
	char *end;
	long reads = strtol(argv[2], &end, 10);
	if (*end || reads < 1 || reads > 100000000) {
		fprintf(stderr, "preadloop: READS must be 1..100000000\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "preadloop: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	char first[256], buf[256];
	ssize_t len = pread(fd, first, sizeof(first), 0);
	if (len <= 0) {
		fprintf(stderr, "preadloop: first read of %s returned %zd\n", argv[1], len);
		return 1;
	}
	uint64_t start = now_ns();
	for (long i = 0; i < reads; i++) {
		ssize_t got = pread(fd, buf, sizeof(buf), 0);
		if (got != len || memcmp(buf, first, (size_t)len)) {
			fprintf(stderr, "preadloop: read %ld returned %zd bytes that differ from the first read\n", i, got);
			return 1;
		}
	}
	uint64_t wall = now_ns() - start;
	close(fd);
	printf("{\"schema\":\"aba-preadloop-v1\",\"file\":\"%s\",\"reads\":%ld,\"bytes_per_read\":%zd,\"wall_ns\":%llu}\n",
	       argv[1], reads, len, (unsigned long long)wall);
	return 0;
}
