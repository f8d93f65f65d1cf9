// SPDX-License-Identifier: GPL-2.0
/*
 * The idle-batch balancer across NUMA nodes (tests/kernel/numa.t boots the
 * test kernel with 4 CPUs in 2 nodes: CPUs 0-1 and 2-3).  Parked tasks
 * cross to another node when their own has more of them than its idle
 * time is worth, and not merely to even out small differences between
 * CPUs, which the CPUs of one node can do among themselves: a task moved
 * away from the node its memory is on pays for that on every access.
 */
#include "../idlebatch.h"

#include "kselftest_harness.h"

#define NCPU		4
#define TRACEFS		"/sys/kernel/tracing"

/* The node of each CPU, from sysfs; 0 when all are found. */
static int read_nodes(int node_of[NCPU])
{
	char path[96];
	int cpu, node, found = 0;

	for (cpu = 0; cpu < NCPU; cpu++) {
		node_of[cpu] = -1;
		for (node = 0; node < 8; node++) {
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", cpu, node);
			if (!access(path, F_OK)) {
				node_of[cpu] = node;
				found++;
				break;
			}
		}
	}
	return found == NCPU ? 0 : -1;
}

/* The CPU a task last ran on: field 39 of /proc/PID/stat */
static int task_cpu_of(pid_t pid)
{
	return (int)stat_field(pid, 39);
}

/* Tasks of @pids on each node */
static void count_per_node(const pid_t *pids, int n, const int node_of[NCPU], int per_node[2])
{
	per_node[0] = 0;
	per_node[1] = 0;
	for (int i = 0; i < n; i++) {
		int cpu = task_cpu_of(pids[i]);

		if (cpu >= 0 && cpu < NCPU && node_of[cpu] >= 0 && node_of[cpu] < 2)
			per_node[node_of[cpu]]++;
	}
}

/* Start recording sched_batch_migrate events, from an empty buffer */
static int migrate_trace_start(void)
{
	if (write_file(TRACEFS "/tracing_on", "0") ||
	    truncate_file(TRACEFS "/trace") ||
	    write_file(TRACEFS "/events/sched_batch/sched_batch_migrate/enable", "1"))
		return -1;
	return write_file(TRACEFS "/tracing_on", "1");
}

/*
 * Stop, and count the recorded moves within a node and across nodes, by
 * kind ("balance", "pull", "swap"; NULL for all)
 */
static int migrate_trace_stop(const int node_of[NCPU], const char *kind, int *within,
			      int *across)
{
	char line[512], want[32];
	FILE *f;

	write_file(TRACEFS "/tracing_on", "0");
	write_file(TRACEFS "/events/sched_batch/sched_batch_migrate/enable", "0");
	f = fopen(TRACEFS "/trace", "r");
	if (!f)
		return -1;
	*within = 0;
	*across = 0;
	snprintf(want, sizeof(want), "kind=%s", kind ? kind : "");
	while (fgets(line, sizeof(line), f)) {
		char *s = strstr(line, "src_cpu="), *d = strstr(line, "dst_cpu=");
		int src, dst;

		if (!s || !d || (kind && !strstr(line, want)))
			continue;
		src = atoi(s + 8);
		dst = atoi(d + 8);
		if (src < 0 || src >= NCPU || dst < 0 || dst >= NCPU)
			continue;
		if (node_of[src] == node_of[dst]) {
			(*within)++;
		} else {
			(*across)++;
			/* What crossed, and why: the kind and the counts */
			fprintf(stderr, "#   across: %s", strstr(line, "src_cpu="));
		}
	}
	fclose(f);
	return 0;
}

/* Allow @pid all CPUs of @node */
static int pin_to_node(pid_t pid, int node, const int node_of[NCPU])
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int cpu = 0; cpu < NCPU; cpu++)
		if (node_of[cpu] == node)
			CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

FIXTURE(numa) {
	int node_of[NCPU];
	pid_t tasks[8];
	int nr;
};

FIXTURE_SETUP(numa)
{
	REQUIRE_IDLEBATCH();
	if (!config_has("CONFIG_NUMA"))
		SKIP(return, "kernel built without CONFIG_NUMA (the test kernel, make kernel, has it)");
	if (read_nodes(self->node_of) ||
	    self->node_of[0] != self->node_of[1] || self->node_of[2] != self->node_of[3] ||
	    self->node_of[0] == self->node_of[2])
		SKIP(return, "the guest's CPUs are not in two nodes 0-1 and 2-3 (numa.t boots them so)");
	if (access(TRACEFS "/events/sched_batch/sched_batch_migrate/enable", W_OK))
		SKIP(return, "no tracefs at " TRACEFS);
	self->nr = 0;
}

FIXTURE_TEARDOWN(numa)
{
	while (self->nr > 0)
		stop_task(self->tasks[--self->nr]);
}

/*
 * Four parked tasks started on node 0, all CPUs idle: node 0 has twice
 * its share, so two of them cross to node 1, and each CPU ends with one.
 */
TEST_F_TIMEOUT(numa, tasks_cross_to_a_node_with_more_idle_time, 90)
{
	int per_node[2] = { 0, 0 }, within, across, i;
	uint64_t start;

	for (i = 0; i < 4; i++) {
		self->tasks[self->nr] = start_spinner(SCHED_IDLEBATCH, 0, i % 2);
		self->nr++;
	}
	sleep(2);
	count_per_node(self->tasks, self->nr, self->node_of, per_node);
	TH_LOG("pinned to node 0: %d on node 0, %d on node 1", per_node[0], per_node[1]);
	ASSERT_EQ(4, per_node[0]);

	ASSERT_EQ(0, migrate_trace_start());
	for (i = 0; i < self->nr; i++)
		ASSERT_EQ(0, allow_all_cpus(self->tasks[i]));
	start = now_ns();
	do {
		usleep(250000);
		count_per_node(self->tasks, self->nr, self->node_of, per_node);
	} while (per_node[1] != 2 && (now_ns() - start) / 1e9 < 10);
	ASSERT_EQ(0, migrate_trace_stop(self->node_of, NULL, &within, &across));
	TH_LOG("allowed all CPUs: %d on node 0, %d on node 1 after %.1f s; %d moves within a node, %d across",
	       per_node[0], per_node[1], (now_ns() - start) / 1e9, within, across);
	EXPECT_EQ(2, per_node[1]);
	EXPECT_GE(across, 2);
}

/*
 * Six parked tasks on four idle CPUs, three in each node, as the nodes'
 * idle time has it: two CPUs have two tasks, two have one.  The balancer
 * swaps tasks of a node between its CPUs now and then (when the lone task
 * of a CPU happens to be parked at a pass: a running task is not swapped),
 * and never across nodes, which have equal shares.  The series before the
 * per-node balancer swapped across nodes too (2 moves in 10 s).
 */
TEST_F_TIMEOUT(numa, balanced_nodes_swap_only_within_a_node, 90)
{
	int per_node[2], within, across, i;
	double lo = 1e30, hi = 0;

	for (i = 0; i < 6; i++) {
		self->tasks[self->nr] = start_spinner(SCHED_IDLEBATCH, 0, -1);
		ASSERT_EQ(0, pin_to_node(self->tasks[self->nr], i % 2, self->node_of));
		self->nr++;
	}
	sleep(2);
	for (i = 0; i < self->nr; i++)
		ASSERT_EQ(0, allow_all_cpus(self->tasks[i]));
	sleep(3);
	count_per_node(self->tasks, self->nr, self->node_of, per_node);
	TH_LOG("after 3 s on all CPUs: %d on node 0, %d on node 1", per_node[0], per_node[1]);

	ASSERT_EQ(0, migrate_trace_start());
	sleep(10);
	ASSERT_EQ(0, migrate_trace_stop(self->node_of, NULL, &within, &across));
	/* Since they started: the swaps even out the totals */
	for (i = 0; i < self->nr; i++) {
		double got = cputime_ns(self->tasks[i]) / 1e9;

		lo = got < lo ? got : lo;
		hi = got > hi ? got : hi;
	}
	count_per_node(self->tasks, self->nr, self->node_of, per_node);
	TH_LOG("over 10 s: %d moves within a node, %d across; now %d on node 0, %d on node 1; "
	       "CPU time since they started %.2f .. %.2f s", within, across, per_node[0], per_node[1], lo, hi);
	EXPECT_EQ(3, per_node[0]);
	EXPECT_EQ(3, per_node[1]);
	EXPECT_EQ(0, across);
	EXPECT_GT(lo, 0);
}

TEST_HARNESS_MAIN
