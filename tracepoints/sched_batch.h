/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of the idle-batch scheduling class (SCHED_IDLEBATCH):
 * Documentation/scheduler/sched-idlebatch.rst, "Trace events".
 *
 * Field names, types and the numbers of the symbolic values are an ABI:
 * trace-cmd, perf, bpftrace and the project's tools read them by name.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sched_batch

#if !defined(_TRACE_SCHED_BATCH_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_SCHED_BATCH_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

#ifndef _SCHED_BATCH_TRACE_ENUMS
#define _SCHED_BATCH_TRACE_ENUMS
/* What the user-mode preemption point did with an idle-batch task */
enum sched_batch_decision {
	SCHED_BATCH_PARKED,		/* moved into the idle-batch class */
	SCHED_BATCH_REQUEUED,		/* already in it: back to its queue */
	SCHED_BATCH_KEPT_SIGNAL,	/* not parked: a signal is pending */
	SCHED_BATCH_KEPT_PI,		/* not parked: a PI waiter boosts it */
	SCHED_BATCH_KEPT_EXITING,	/* not parked: it is exiting */
	SCHED_BATCH_KEPT_NOT_QUEUED,	/* not parked: it is not runnable */
	SCHED_BATCH_KEPT_WORK,		/* not parked: other exit work first */
	SCHED_BATCH_KEPT_VFORK,		/* not parked: a vfork parent waits */
	SCHED_BATCH_KEPT_EXT,		/* not parked: sched_ext runs it */
	SCHED_BATCH_KEPT_UPROBE,	/* not parked: a uprobe single-steps */
};

/* Why a parked task left its queue */
enum sched_batch_unpark_reason {
	SCHED_BATCH_UNPARK_PICKED,	/* picked to run: the CPU had idle time */
	SCHED_BATCH_UNPARK_SIGNAL,	/* back to fair to handle a signal */
	SCHED_BATCH_UNPARK_PI,		/* back to fair: a PI waiter boosts it */
	SCHED_BATCH_UNPARK_POLICY,	/* its policy changed */
	SCHED_BATCH_UNPARK_NR
};

/* Which part of the balancer moved a parked task */
enum sched_batch_migrate_kind {
	SCHED_BATCH_MIGRATE_BALANCE,	/* the once-a-second balance pass */
	SCHED_BATCH_MIGRATE_PULL,	/* a CPU with nothing to run pulled it */
	SCHED_BATCH_MIGRATE_SWAP,	/* the pass swapped it for fairness */
};

/* The list a parked task waits in */
enum sched_batch_queue {
	SCHED_BATCH_QUEUE_ACTIVE,
	SCHED_BATCH_QUEUE_EXPIRED,
};
#endif /* _SCHED_BATCH_TRACE_ENUMS */

/* Export the values so that user space can decode the fields */
TRACE_DEFINE_ENUM(SCHED_BATCH_PARKED);
TRACE_DEFINE_ENUM(SCHED_BATCH_REQUEUED);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_SIGNAL);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_PI);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_EXITING);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_NOT_QUEUED);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_WORK);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_VFORK);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_EXT);
TRACE_DEFINE_ENUM(SCHED_BATCH_KEPT_UPROBE);
TRACE_DEFINE_ENUM(SCHED_BATCH_UNPARK_PICKED);
TRACE_DEFINE_ENUM(SCHED_BATCH_UNPARK_SIGNAL);
TRACE_DEFINE_ENUM(SCHED_BATCH_UNPARK_PI);
TRACE_DEFINE_ENUM(SCHED_BATCH_UNPARK_POLICY);
TRACE_DEFINE_ENUM(SCHED_BATCH_MIGRATE_BALANCE);
TRACE_DEFINE_ENUM(SCHED_BATCH_MIGRATE_PULL);
TRACE_DEFINE_ENUM(SCHED_BATCH_MIGRATE_SWAP);
TRACE_DEFINE_ENUM(SCHED_BATCH_QUEUE_ACTIVE);
TRACE_DEFINE_ENUM(SCHED_BATCH_QUEUE_EXPIRED);

/*
 * The user-mode preemption point: an idle-batch task is preempted on its
 * way back to user space, where it may be parked.
 */
TRACE_EVENT(sched_batch_user_preempt,

	TP_PROTO(struct task_struct *p, int cpu, int decision),

	TP_ARGS(p, cpu, decision),

	TP_STRUCT__entry(
		__array(char,	comm,	TASK_COMM_LEN)
		__field(pid_t,	pid)
		__field(int,	cpu)
		__field(int,	decision)
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
		__entry->pid		= p->pid;
		__entry->cpu		= cpu;
		__entry->decision	= decision;
	),

	TP_printk("comm=%s pid=%d cpu=%d decision=%s",
		  __entry->comm, __entry->pid, __entry->cpu,
		  __print_symbolic(__entry->decision,
				   { SCHED_BATCH_PARKED,		"parked" },
				   { SCHED_BATCH_REQUEUED,		"requeued" },
				   { SCHED_BATCH_KEPT_SIGNAL,		"signal_pending" },
				   { SCHED_BATCH_KEPT_PI,		"pi_boosted" },
				   { SCHED_BATCH_KEPT_EXITING,		"exiting" },
				   { SCHED_BATCH_KEPT_NOT_QUEUED,	"not_runnable" },
				   { SCHED_BATCH_KEPT_WORK,		"exit_work_pending" },
				   { SCHED_BATCH_KEPT_VFORK,		"vfork_parent_waits" },
				   { SCHED_BATCH_KEPT_EXT,		"sched_ext" },
				   { SCHED_BATCH_KEPT_UPROBE,		"uprobe_single_step" }))
);

/* A task is set aside in its CPU's batch queue. */
TRACE_EVENT(sched_batch_park,

	TP_PROTO(struct task_struct *p, int cpu, int queue, unsigned int nr_queued),

	TP_ARGS(p, cpu, queue, nr_queued),

	TP_STRUCT__entry(
		__array(char,		comm,	TASK_COMM_LEN)
		__field(pid_t,		pid)
		__field(int,		cpu)
		__field(int,		queue)
		__field(unsigned int,	nr_queued)
		__field(u64,		slice_left)
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
		__entry->pid		= p->pid;
		__entry->cpu		= cpu;
		__entry->queue		= queue;
		__entry->nr_queued	= nr_queued;
		__entry->slice_left	= p->batch.slice_left;
	),

	TP_printk("comm=%s pid=%d cpu=%d queue=%s nr_queued=%u slice_left=%llu",
		  __entry->comm, __entry->pid, __entry->cpu,
		  __print_symbolic(__entry->queue,
				   { SCHED_BATCH_QUEUE_ACTIVE,	"active" },
				   { SCHED_BATCH_QUEUE_EXPIRED,	"expired" }),
		  __entry->nr_queued, __entry->slice_left)
);

/* A parked task leaves its queue, after @parked_ns in it. */
TRACE_EVENT(sched_batch_unpark,

	TP_PROTO(struct task_struct *p, int cpu, int reason, u64 parked_ns),

	TP_ARGS(p, cpu, reason, parked_ns),

	TP_STRUCT__entry(
		__array(char,	comm,	TASK_COMM_LEN)
		__field(pid_t,	pid)
		__field(int,	cpu)
		__field(int,	reason)
		__field(u64,	parked_ns)
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
		__entry->pid		= p->pid;
		__entry->cpu		= cpu;
		__entry->reason		= reason;
		__entry->parked_ns	= parked_ns;
	),

	TP_printk("comm=%s pid=%d cpu=%d reason=%s parked_ns=%llu",
		  __entry->comm, __entry->pid, __entry->cpu,
		  __print_symbolic(__entry->reason,
				   { SCHED_BATCH_UNPARK_PICKED,	"picked" },
				   { SCHED_BATCH_UNPARK_SIGNAL,	"signal" },
				   { SCHED_BATCH_UNPARK_PI,	"pi" },
				   { SCHED_BATCH_UNPARK_POLICY,	"policy" }),
		  __entry->parked_ns)
);

/*
 * The batch balancer moves a parked task; the counts (tasks in the class)
 * and idle averages (permille) are those it decided on.
 */
TRACE_EVENT(sched_batch_migrate,

	TP_PROTO(struct task_struct *p, int src_cpu, int dst_cpu,
		 unsigned int src_nr, unsigned int dst_nr,
		 unsigned int src_idle_avg, unsigned int dst_idle_avg, int kind),

	TP_ARGS(p, src_cpu, dst_cpu, src_nr, dst_nr, src_idle_avg, dst_idle_avg, kind),

	TP_STRUCT__entry(
		__array(char,		comm,	TASK_COMM_LEN)
		__field(pid_t,		pid)
		__field(int,		src_cpu)
		__field(int,		dst_cpu)
		__field(unsigned int,	src_nr)
		__field(unsigned int,	dst_nr)
		__field(unsigned int,	src_idle_avg)
		__field(unsigned int,	dst_idle_avg)
		__field(int,		kind)
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
		__entry->pid		= p->pid;
		__entry->src_cpu	= src_cpu;
		__entry->dst_cpu	= dst_cpu;
		__entry->src_nr		= src_nr;
		__entry->dst_nr		= dst_nr;
		__entry->src_idle_avg	= src_idle_avg;
		__entry->dst_idle_avg	= dst_idle_avg;
		__entry->kind		= kind;
	),

	TP_printk("comm=%s pid=%d src_cpu=%d dst_cpu=%d src_nr=%u dst_nr=%u src_idle_avg=%u dst_idle_avg=%u kind=%s",
		  __entry->comm, __entry->pid, __entry->src_cpu, __entry->dst_cpu,
		  __entry->src_nr, __entry->dst_nr,
		  __entry->src_idle_avg, __entry->dst_idle_avg,
		  __print_symbolic(__entry->kind,
				   { SCHED_BATCH_MIGRATE_BALANCE,	"balance" },
				   { SCHED_BATCH_MIGRATE_PULL,		"pull" },
				   { SCHED_BATCH_MIGRATE_SWAP,		"swap" }))
);

/* A task used up its timeslice and gets a new one of @slice ns. */
TRACE_EVENT(sched_batch_slice_expired,

	TP_PROTO(struct task_struct *p, int cpu, u64 slice),

	TP_ARGS(p, cpu, slice),

	TP_STRUCT__entry(
		__array(char,	comm,	TASK_COMM_LEN)
		__field(pid_t,	pid)
		__field(int,	cpu)
		__field(u64,	slice)
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
		__entry->pid	= p->pid;
		__entry->cpu	= cpu;
		__entry->slice	= slice;
	),

	TP_printk("comm=%s pid=%d cpu=%d slice=%llu",
		  __entry->comm, __entry->pid, __entry->cpu, __entry->slice)
);

/* The active list ran dry: it swaps with the expired list. */
TRACE_EVENT(sched_batch_queue_swap,

	TP_PROTO(int cpu, unsigned int nr_queued),

	TP_ARGS(cpu, nr_queued),

	TP_STRUCT__entry(
		__field(int,		cpu)
		__field(unsigned int,	nr_queued)
	),

	TP_fast_assign(
		__entry->cpu		= cpu;
		__entry->nr_queued	= nr_queued;
	),

	TP_printk("cpu=%d nr_queued=%u", __entry->cpu, __entry->nr_queued)
);

#endif /* _TRACE_SCHED_BATCH_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
