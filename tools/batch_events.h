/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live counts of the sched_batch trace events, through libtracefs, in a
 * private tracefs instance that is removed again however batchtop ends.
 */
#ifndef TOOLS_BATCH_EVENTS_H
#define TOOLS_BATCH_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

enum batch_event {
	EV_USER_PREEMPT, EV_PARK, EV_UNPARK, EV_MIGRATE, EV_SLICE_EXPIRED, EV_QUEUE_SWAP,
	EV_KINDS
};

extern const char *const batch_event_names[EV_KINDS];

/*
 * Start counting.  Returns false, with the reason in @why, where tracefs or
 * the sched_batch events are not there or the user may not use them.
 */
bool batch_events_start(char *why, size_t size);

/* Add the events recorded since the last call to @counts. */
void batch_events_collect(unsigned long long counts[EV_KINDS]);

/*
 * Remove the instance (also done at exit).  The caller must end through
 * exit() or call this on SIGINT, SIGTERM, SIGHUP and SIGQUIT: batchtop
 * catches them for that (see quit_signal in batchtop.c).
 */
void batch_events_stop(void);

#endif
