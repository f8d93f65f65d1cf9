/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The idle-batch tasks (SCHED_IDLEBATCH threads) under a /proc root, with
 * what a live view shows of each: /proc/PID/task/TID/{stat,status,batchstat}.
 * Tasks that exit while they are read are left out.
 */
#ifndef TOOLS_BATCH_TASKS_H
#define TOOLS_BATCH_TASKS_H

#include <sys/types.h>

struct batch_task {
	pid_t pid, tid;
	uid_t uid;
	char comm[32];
	int nice;
	int cpu;			/* the CPU it last ran on */
	char sched_state;		/* R, S, D, ... from stat */
	char batch_state;		/* P, R, N from batchstat; '?' if unknown */
	unsigned long long cpu_ticks;	/* utime + stime, clock ticks */
	unsigned long long parks;
	unsigned long long parked_ns;
};

/*
 * Scan @proc (e.g. "/proc"): the idle-batch tasks into *@tasks (malloc'd,
 * sorted by TID), their number returned, or -1 if @proc cannot be read.
 */
int batch_tasks_scan(const char *proc, struct batch_task **tasks);

#endif
