/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ways a user can run background work at low priority, for the
 * benchmarks to compare: a nice value, a policy, or a cgroup v2 group
 * with cpu.idle=1 (systemd's CPUWeight=idle) or cpu.weight=1 (the
 * minimum; Kubernetes' best-effort pods).  The foreground stays in the
 * root group at nice 0.
 */
#ifndef TESTS_BENCH_PEERS_H
#define TESTS_BENCH_PEERS_H

#include "../kernel/idlebatch.h"

#include <sys/stat.h>

#define PEER_CGROUP_ROOT "/sys/fs/cgroup"

struct peer {
	const char *name;	/* as the tables print it */
	int policy, nice;
	const char *cgroup;	/* a group under PEER_CGROUP_ROOT, or NULL */
	const char *knob, *value;	/* what the group is set to */
};

enum peer_id {
	PEER_NONE, PEER_NICE0, PEER_NICE19, PEER_IDLE, PEER_CG_IDLE,
	PEER_CG_WEIGHT1, PEER_IDLEBATCH, PEER_NR,
};

/* PEER_NONE runs no background at all: the baseline of every ratio. */
static const struct peer peers[PEER_NR] = {
	[PEER_NONE]	  = { "none", SCHED_OTHER, 0, NULL, NULL, NULL },
	[PEER_NICE0]	  = { "nice 0", SCHED_OTHER, 0, NULL, NULL, NULL },
	[PEER_NICE19]	  = { "nice 19", SCHED_OTHER, 19, NULL, NULL, NULL },
	[PEER_IDLE]	  = { "SCHED_IDLE", SCHED_IDLE, 0, NULL, NULL, NULL },
	[PEER_CG_IDLE]	  = { "cpu.idle=1", SCHED_OTHER, 0, "bench-idle", "cpu.idle", "1" },
	[PEER_CG_WEIGHT1] = { "cpu.weight=1", SCHED_OTHER, 0, "bench-weight1", "cpu.weight", "1" },
	[PEER_IDLEBATCH]  = { "SCHED_IDLEBATCH", SCHED_IDLEBATCH, 0, NULL, NULL, NULL },
};

/*
 * Enable the cpu controller for the root group's children and create the
 * peers' groups.  Returns 0, or -1 with a message on stderr.
 */
static inline int peers_setup(void)
{
	char path[256];

	if (write_file(PEER_CGROUP_ROOT "/cgroup.subtree_control", "+cpu")) {
		fprintf(stderr, "peers: cannot enable the cpu controller in %s: %s\n",
			PEER_CGROUP_ROOT, strerror(errno));
		return -1;
	}
	for (int i = 0; i < PEER_NR; i++) {
		const struct peer *p = &peers[i];

		if (!p->cgroup)
			continue;
		snprintf(path, sizeof(path), PEER_CGROUP_ROOT "/%s", p->cgroup);
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "peers: mkdir %s: %s\n", path, strerror(errno));
			return -1;
		}
		snprintf(path, sizeof(path), PEER_CGROUP_ROOT "/%s/%s", p->cgroup, p->knob);
		if (write_file(path, p->value)) {
			fprintf(stderr, "peers: cannot write %s to %s: %s\n", p->value, path,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* In a child just forked: join @p's group, if it has one, or exit with 104 */
static inline void peer_join_cgroup_or_exit(const struct peer *p)
{
	if (p->cgroup) {
		char path[256];

		snprintf(path, sizeof(path), PEER_CGROUP_ROOT "/%s/cgroup.procs", p->cgroup);
		if (write_file(path, "0"))
			_exit(104);
	}
}

/*
 * In a child just forked: join @p's group, take its nice value and enter
 * its policy, or exit with 101..104.  What the child starts inherits it.
 */
static inline void peer_enter_or_exit(const struct peer *p)
{
	peer_join_cgroup_or_exit(p);
	enter_policy_or_exit(p->policy, p->nice, -1);
}

/* Move the running task @pid into @p's group (if it has one): 0 or -1 */
static inline int peer_move(pid_t pid, const struct peer *p)
{
	char path[256], value[32];

	if (!p->cgroup)
		return 0;
	snprintf(path, sizeof(path), PEER_CGROUP_ROOT "/%s/cgroup.procs", p->cgroup);
	snprintf(value, sizeof(value), "%d", pid);
	return write_file(path, value);
}

#endif
