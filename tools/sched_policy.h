/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scheduling policies by number and name, for the tools.  SCHED_IDLEBATCH is 8 (include/uapi/linux/sched.h with the
 * idle-batch series); C libraries do not know it yet.
 */
#ifndef TOOLS_SCHED_POLICY_H
#define TOOLS_SCHED_POLICY_H

#include <sched.h>
#include <stdbool.h>

#include "sched_attr.h"

#ifndef SCHED_BATCH
#define SCHED_BATCH		3
#endif
#ifndef SCHED_IDLE
#define SCHED_IDLE		5
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE		6
#endif
#ifndef SCHED_EXT
#define SCHED_EXT		7
#endif
#define SCHED_IDLEBATCH		8
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK	0x40000000
#endif

/* The name of a policy, as chrt and the kernel headers spell it */
static inline const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_OTHER:	return "SCHED_OTHER";
	case SCHED_FIFO:	return "SCHED_FIFO";
	case SCHED_RR:		return "SCHED_RR";
	case SCHED_BATCH:	return "SCHED_BATCH";
	case SCHED_IDLE:	return "SCHED_IDLE";
	case SCHED_DEADLINE:	return "SCHED_DEADLINE";
	case SCHED_EXT:		return "SCHED_EXT";
	case SCHED_IDLEBATCH:	return "SCHED_IDLEBATCH";
	default:		return "unknown policy";
	}
}

/* Does the running kernel know @policy?  sched_get_priority_max() says. */
static inline bool policy_supported(int policy)
{
	return sched_get_priority_max(policy) >= 0;
}

#endif
