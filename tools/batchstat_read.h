/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading /proc/batchstat (format: Documentation/scheduler/sched-idlebatch.rst)
 * and a task's idle-batch facts, from a /proc mounted at any root, so that
 * tests can feed recorded snapshots.
 */
#ifndef TOOLS_BATCHSTAT_READ_H
#define TOOLS_BATCHSTAT_READ_H

#include <stdbool.h>
#include <stddef.h>

#define BATCHSTAT_HISTORY	10
#define BATCHSTAT_REASONS	4	/* picked, signal, pi, policy */
/* Fields of a version-1 CPU line after "cpuN" */
#define BATCHSTAT_V1_FIELDS	22

struct batch_cpu {
	int cpu;
	int nfields;			/* how many fields the line had */
	unsigned int waiting;
	unsigned int running;
	unsigned int idle_avg;		/* permille */
	unsigned int history[BATCHSTAT_HISTORY];
	unsigned long long parks;
	unsigned long long unparks[BATCHSTAT_REASONS];
	unsigned long long migrations_in, migrations_out;
	unsigned long long run_ns, idle_ns;
};

struct batch_snapshot {
	int version;
	unsigned long long timestamp;	/* ns, CLOCK_MONOTONIC */
	int ncpu;
	struct batch_cpu *cpu;		/* ncpu of them, by line order */
};

/*
 * Parse @path.  Returns 0, or -1 with a reason in @err: the file is
 * missing (a kernel without the policy), or not in a known format.
 * Lines a newer version added fields to are read as far as this version
 * knows; a line with fewer fields keeps the ones it has (nfields says).
 */
int batchstat_read(const char *path, struct batch_snapshot *snap, char *err, size_t errlen);
void batchstat_free(struct batch_snapshot *snap);

/* A CPU's line by CPU number, or NULL */
const struct batch_cpu *batchstat_cpu(const struct batch_snapshot *snap, int cpu);

#endif
