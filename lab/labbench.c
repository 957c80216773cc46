/*
 * labbench: tiny benchmarks for the QEMU lab guest.
 *
 *   labbench [MILLIONS] [--json]
 *
 * Runs MILLIONS (default 100) million rounds of a xorshift64 loop and prints the
 * elapsed CLOCK_MONOTONIC time of the loop in nanoseconds, as a single integer
 * line. With --json it prints {"wall_ns":N,"iters":I} instead.
 *
 *   labbench --read PATH [COUNT] [--json]
 *
 * Opens, reads (one read() of up to 4096 bytes) and closes PATH COUNT times (default
 * 1000; 1..10000000) in batches of 100 and prints the mean CLOCK_MONOTONIC nanoseconds
 * of one open+read+close in the fastest batch (a stall of the emulating host only slows a
 * batch down), as a single integer line. With --json it prints
 * {"ns_per_read":N,"reads":C}. An untimed first read gives the expected text; any
 * timed read that returns something else fails (exit 1), so a kernel cannot look
 * faster by returning less. Made to time a /proc/sys read (a sysctl handler).
 *
 * Built static (gcc -O2 -static) so it runs in the busybox initramfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: labbench [MILLIONS] [--json]\n"
               "       labbench --read PATH [COUNT] [--json]\n");
}

/* One open+read+close of path into buf; returns the bytes read, or -1 (errno set). */
static ssize_t read_once(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size);
    int saved = errno;
    close(fd);
    errno = saved;
    return n;
}

/* Reads per timed batch of a --read run: the fastest batch is reported. */
#define BATCH 100

static int read_bench(const char *path, uint64_t count, int json)
{
    static char expected[4096], buf[4096];
    ssize_t want = read_once(path, expected, sizeof(expected));
    if (want < 0) {
        fprintf(stderr, "labbench: %s: %s\n", path, strerror(errno));
        return 1;
    }

    /*
     * The reads are timed in batches of BATCH and the fastest batch's mean is reported.
     * Under emulation the guest's CPU is a host thread that other host processes (another
     * guest, a compile) take turns with for milliseconds at a time: a stall only ever makes
     * a batch slower, so the fastest of many short batches is the read's own cost, and a
     * busy host does not move it.
     */
    uint64_t best = UINT64_MAX;
    uint64_t done = 0;
    while (done < count) {
        uint64_t n_batch = count - done < BATCH ? count - done : BATCH;
        uint64_t t0 = ns_now();
        for (uint64_t i = 0; i < n_batch; i++, done++) {
            ssize_t n = read_once(path, buf, sizeof(buf));
            if (n != want || memcmp(buf, expected, (size_t)want) != 0) {
                if (n < 0)
                    fprintf(stderr, "labbench: %s: read %llu: %s\n", path,
                            (unsigned long long)done + 1, strerror(errno));
                else
                    fprintf(stderr, "labbench: %s: read %llu returned %zd bytes unlike the first %zd\n",
                            path, (unsigned long long)done + 1, n, want);
                return 1;
            }
        }
        uint64_t t1 = ns_now();
        uint64_t per = (t1 - t0 + n_batch / 2) / n_batch;
        if (per < best)
            best = per;
    }
    if (json)
        printf("{\"ns_per_read\":%llu,\"reads\":%llu}\n", (unsigned long long)best,
               (unsigned long long)done);
    else
        printf("%llu\n", (unsigned long long)best);
    return 0;
}

/* A positive decimal integer no larger than max, or 0 if arg is not one. */
static uint64_t parse_count(const char *arg, uint64_t max)
{
    char *end;
    errno = 0;
    if (arg[0] < '0' || arg[0] > '9')
        return 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || *end != '\0' || v == 0 || v > max)
        return 0;
    return v;
}

int main(int argc, char **argv)
{
    uint64_t millions = 100, count = 1000;
    int json = 0, have_number = 0;
    const char *read_path = NULL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--read") == 0) {
            if (read_path || i + 1 >= argc) {
                usage(stderr);
                return 2;
            }
            read_path = argv[++i];
        } else if (!have_number) {
            uint64_t v = parse_count(argv[i], 10000000u);
            if (v == 0) {
                fprintf(stderr, "labbench: bad argument: %s\n", argv[i]);
                return 2;
            }
            millions = count = v;
            have_number = 1;
        } else {
            fprintf(stderr, "labbench: bad argument: %s\n", argv[i]);
            return 2;
        }
    }

    if (read_path) {
        if (!have_number)
            count = 1000;
        return read_bench(read_path, count, json);
    }

    uint64_t iters = millions * 1000000u;
    volatile uint64_t seed = 0x9e3779b97f4a7c15u;
    uint64_t x = seed, acc = 0;

    uint64_t t0 = ns_now();
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x;
    }
    uint64_t t1 = ns_now();

    seed = acc; /* keep the loop alive */
    if (json)
        printf("{\"wall_ns\":%llu,\"iters\":%llu}\n", (unsigned long long)(t1 - t0),
               (unsigned long long)iters);
    else
        printf("%llu\n", (unsigned long long)(t1 - t0));
    return 0;
}
