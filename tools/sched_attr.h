/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct sched_attr and the sched_setattr()/sched_getattr() calls.  glibc
 * 2.36 has neither, and <linux/sched/types.h> clashes with <sched.h> over
 * struct sched_param, so the layout (include/uapi/linux/sched/types.h) is
 * written out here.
 */
#ifndef TOOLS_SCHED_ATTR_H
#define TOOLS_SCHED_ATTR_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sched_attr {
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

static inline int sched_setattr(pid_t pid, struct sched_attr *attr, unsigned int flags)
{
	return syscall(SYS_sched_setattr, pid, attr, flags);
}

static inline int sched_getattr(pid_t pid, struct sched_attr *attr, unsigned int size,
				unsigned int flags)
{
	return syscall(SYS_sched_getattr, pid, attr, size, flags);
}

#endif
