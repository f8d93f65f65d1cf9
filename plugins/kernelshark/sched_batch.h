/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * KernelShark plugin for the sched_batch trace events (SCHED_IDLEBATCH).
 *
 * The data part (sched_batch.c, C) collects the park, unpark and migrate
 * events while KernelShark loads a trace, then pairs every park with its
 * unpark into a parked interval and rebuilds each CPU's idle-batch queue
 * length over time.  The draw part (SchedBatchDraw.cpp, C++) draws the
 * intervals in task graphs and migrations and queue lengths in CPU graphs.
 */
#ifndef _KS_PLUGIN_SCHED_BATCH_H
#define _KS_PLUGIN_SCHED_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libkshark.h"
#include "libkshark-plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The numbers of the symbolic fields, as the kernel's
 * include/trace/events/sched_batch.h exports them.
 */
enum sb_unpark_reason {
	SB_UNPARK_PICKED,
	SB_UNPARK_SIGNAL,
	SB_UNPARK_PI,
	SB_UNPARK_POLICY,
	SB_UNPARK_OTHER,		/* a newer kernel's reason, or a lost event */
	SB_STILL_PARKED = -1,		/* no unpark before the trace ends */
};

/* One sched_batch_park event */
struct sb_park {
	const struct kshark_entry	*entry;
	int32_t				pid;
	int32_t				cpu;
	int32_t				nr_queued;	/* itself included */
};

/* One sched_batch_unpark event */
struct sb_unpark {
	const struct kshark_entry	*entry;
	int32_t				pid;
	int32_t				cpu;
	int32_t				reason;
};

/* One sched_batch_migrate event */
struct sb_migration {
	const struct kshark_entry	*entry;
	int32_t				src_cpu;
	int32_t				dst_cpu;
};

/*
 * A task's time in an idle-batch queue, from @start to @end (ns): @start
 * is INT64_MIN when the task was parked before the trace began, @end
 * INT64_MAX (and @reason SB_STILL_PARKED) when it was still parked at
 * its end.
 */
struct sb_interval {
	int64_t				start, end;
	int32_t				pid;
	int32_t				reason;
};

/* One end of a migration, for the CPU it left (@in false) or entered */
struct sb_migration_end {
	int64_t				ts;
	int32_t				cpu;
	bool				in;
};

/*
 * The length of @cpu's idle-batch queue from @ts on.  Only known from the
 * CPU's first park event on: a park event carries the absolute length,
 * unparks and batch migrations change it by one.  Moves the batch
 * balancer does not make (affinity changes, hotplug) have no sched_batch
 * event, so the length can be off by those until the CPU's next park.
 */
struct sb_queue_point {
	int64_t				ts;
	int32_t				cpu;
	int32_t				len;
};

/* Per data stream state of the plugin */
struct plugin_sched_batch_context {
	int				park_id, unpark_id;
	int				migrate_id;	/* -1: not in the trace */

	/*
	 * KernelShark may load the entries again (filters, plugin changes)
	 * without re-initialising the plugin; the entries collected before
	 * are freed then.  An entry at or before the last one seen on its
	 * CPU (entries load in file order per CPU) starts a new load.
	 */
	int				nr_cpus;
	int64_t				*last_offset;

	/* Fields, looked up by name once */
	struct tep_format_field		*park_pid, *park_cpu, *park_nr;
	struct tep_format_field		*unpark_pid, *unpark_cpu, *unpark_reason;
	struct tep_format_field		*mig_src, *mig_dst;

	/* Filled while KernelShark loads the trace, in file order */
	struct sb_park			*parks;
	size_t				nr_parks, cap_parks;
	struct sb_unpark		*unparks;
	size_t				nr_unparks, cap_unparks;
	struct sb_migration		*migrations;
	size_t				nr_migrations, cap_migrations;

	/*
	 * Built by sched_batch_analysed_context(): the intervals sorted by
	 * task and time, the queue points and migration ends by CPU and time,
	 * so that a graph finds its part of the view by binary search.
	 */
	bool				analysed;
	struct sb_interval		*intervals;
	size_t				nr_intervals;
	struct sb_queue_point		*queue;
	size_t				nr_queue;
	struct sb_migration_end		*ends;
	size_t				nr_ends;
	int32_t				max_queue_len;
};

KS_DECLARE_PLUGIN_CONTEXT_METHODS(struct plugin_sched_batch_context)

/*
 * The stream's context with the intervals and queue lengths built (once,
 * after loading): for the draw part, and exported for the tests.  NULL
 * when the plugin is not loaded for @sd or memory ran out.
 */
struct plugin_sched_batch_context *sched_batch_analysed_context(int sd);

void sched_batch_draw(struct kshark_cpp_argv *argv, int sd, int val, int draw_action);

#ifdef __cplusplus
}
#endif

#endif /* _KS_PLUGIN_SCHED_BATCH_H */
