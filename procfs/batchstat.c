// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/batchstat: the idle-batch class on each online CPU -- its queue,
 * its idle history and its counters -- and /proc/PID/batchstat: one
 * task's.  Both are read without any global lock.  The formats are
 * documented in Documentation/scheduler/sched-idlebatch.rst; tools parse
 * the per-CPU lines by position and must check the version.
 *
 * Built as part of build_utility.c.
 */

/* Bump when a field changes meaning; new fields are added at line ends. */
#define BATCHSTAT_VERSION	1

static int batchstat_show(struct seq_file *m, void *v)
{
	u64 parks, unparks[IDLEBATCH_UNPARK_REASONS], mig_in, mig_out, run;
	u16 history[IDLEBATCH_HISTORY];
	unsigned long util = 0;
	unsigned int start;
	int cpu, i;

	seq_printf(m, "version %d\n", BATCHSTAT_VERSION);
	seq_printf(m, "timestamp %llu\n", ktime_get_ns());

	for_each_online_cpu(cpu) {
		struct rq *rq = cpu_rq(cpu);
		struct batch_rq *batch_rq = &rq->batch;
		unsigned int nr = READ_ONCE(batch_rq->nr_running), running;
		unsigned int avg = idlebatch_read_history(cpu, history);
		u64 now, idle = idlebatch_idle_time(cpu, &now);

		do {
			start = u64_stats_fetch_begin(&batch_rq->stats_sync);
			parks = u64_stats_read(&batch_rq->nr_parks);
			for (i = 0; i < IDLEBATCH_UNPARK_REASONS; i++)
				unparks[i] = u64_stats_read(&batch_rq->nr_unparks[i]);
			mig_in = u64_stats_read(&batch_rq->nr_migrations_in);
			mig_out = u64_stats_read(&batch_rq->nr_migrations_out);
			run = u64_stats_read(&batch_rq->run_ns);
		} while (u64_stats_fetch_retry(&batch_rq->stats_sync, start));

		rcu_read_lock();
		running = rcu_dereference(rq->curr)->sched_class == &batch_sched_class;
		rcu_read_unlock();
		running = min(running, nr);
#ifdef CONFIG_SMP
		/* As schedutil reads it, without its boosts */
		util = effective_cpu_util(cpu, cpu_util_cfs(cpu) + cpu_util_batch(rq),
					  NULL, NULL);
#endif

		seq_printf(m, "cpu%d %u %u %u", cpu, nr - running, running, avg);
		for (i = 0; i < IDLEBATCH_HISTORY; i++)
			seq_printf(m, " %u", history[i]);
		seq_printf(m, " %llu", parks);
		for (i = 0; i < IDLEBATCH_UNPARK_REASONS; i++)
			seq_printf(m, " %llu", unparks[i]);
		/* Idle time counts idle-batch run time too; show them apart. */
		seq_printf(m, " %llu %llu %llu %llu %lu\n", mig_in, mig_out,
			   run, idle > run ? idle - run : 0, util);
	}
	return 0;
}

/*
 * /proc/PID/batchstat: "STATE PARKS PARKED_NS", where STATE is P (parked),
 * R (running in the idle-batch class), B (boosted by priority inheritance
 * to a real-time or deadline waiter's priority), N (in fair: runnable or
 * sleeping, at its nice value) or - (not an idle-batch task), PARKS the
 * times it was parked and PARKED_NS the time it spent parked, both since
 * fork.  B needs a donor too (pi_top_task, only compared with NULL): a
 * change of policy from real time stores the policy before the class, and
 * a reader between the two must not see a boost.
 */
int proc_pid_batchstat(struct seq_file *m, struct pid_namespace *ns,
		       struct pid *pid, struct task_struct *p)
{
	const struct sched_class *cls;
	u64 parked_at, parked, now;
	unsigned long parks;
	unsigned int seq;
	char state;

	/*
	 * Without the rq lock: any user may read this in a loop, and must not
	 * contend for the task's runqueue.
	 */
	do {
		seq = read_seqcount_begin(&p->batch.park_seq);
		parked_at = p->batch.parked_at;
		parks = p->batch.nr_parks;
		parked = p->batch.parked_sum;
	} while (read_seqcount_retry(&p->batch.park_seq, seq));

	cls = READ_ONCE(p->sched_class);
	if (cls == &batch_sched_class)
		state = task_on_cpu(task_rq(p), p) ? 'R' : 'P';
	else if (!task_has_idlebatch_policy(p))
		state = '-';
	else if (sched_class_above(cls, &fair_sched_class) &&
		 /* the donor is only compared with NULL, never followed */
		 data_race(rt_mutex_get_top_task(p)))
		state = 'B';
	else
		state = 'N';
	if (parked_at) {
		now = sched_clock_cpu(task_cpu(p));
		if (now > parked_at)
			parked += now - parked_at;
	}

	seq_printf(m, "%c %lu %llu\n", state, parks, parked);
	return 0;
}

static int __init batchstat_init(void)
{
	proc_create_single("batchstat", 0444, NULL, batchstat_show);
	return 0;
}
subsys_initcall(batchstat_init);
