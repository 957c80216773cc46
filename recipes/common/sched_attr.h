// SPDX-License-Identifier: MIT
/*
 * sched_attr.h: struct sched_attr as include/uapi/linux/sched/types.h defines it, declared
 * here so the programs of recipe 001 and 001-rt-pi-uclamp-reset build with old headers.
 * aba_sched_attr is the first version (SCHED_ATTR_SIZE_VER0, 48 bytes); a program that sets
 * or reads the utilization clamps uses aba_sched_attr_v1 (SCHED_ATTR_SIZE_VER1, 56 bytes).
 * The size a program passes to sched_setattr(2) is sizeof the struct it uses.
 */
#ifndef ABA_SCHED_ATTR_H
#define ABA_SCHED_ATTR_H

#include <stdint.h>

struct aba_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

struct aba_sched_attr_v1 {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};

_Static_assert(sizeof(struct aba_sched_attr) == 48, "SCHED_ATTR_SIZE_VER0");
_Static_assert(sizeof(struct aba_sched_attr_v1) == 56, "SCHED_ATTR_SIZE_VER1");

#endif
