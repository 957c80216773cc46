/*
 * labbench: a tiny CPU-bound benchmark for the QEMU lab guest.
 *
 *   labbench [MILLIONS] [--json]
 *
 * Runs MILLIONS (default 100) million rounds of a xorshift64 loop and prints the
 * elapsed CLOCK_MONOTONIC time of the loop in nanoseconds, as a single integer
 * line. With --json it prints {"wall_ns":N,"iters":I} instead.
 * Built static (gcc -O2 -static) so it runs in the busybox initramfs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    uint64_t millions = 100;
    int json = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: labbench [MILLIONS] [--json]\n");
            return 0;
        } else {
            char *end;
            millions = strtoull(argv[i], &end, 10);
            if (*end != '\0' || millions == 0) {
                fprintf(stderr, "labbench: bad argument: %s\n", argv[i]);
                return 2;
            }
        }
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
