// SPDX-License-Identifier: GPL-2.0
/*
 * policy_bench: what a low-priority task costs a normal one, for every
 * peer of peers.h (nice 0 and 19, SCHED_IDLE, cgroups with cpu.idle=1 and
 * cpu.weight=1, SCHED_IDLEBATCH), measured in one run (inside the guest:
 * make bench) and printed as ratios to nice 0.
 *
 *  share      CPU share the task gets next to a nice-0 hog on its CPU
 *  lock wait  worst wait of a nice-0 task on another CPU for a kernel
 *             lock (a tmpfs inode's i_rwsem) that the task takes over
 *             and over, on a CPU it shares with a nice-0 task that leaves
 *             5% idle time (so the task runs, and is preempted holding
 *             the lock now and then)
 *  kill       SIGKILL-to-reaped latency of the task, starved by the hog
 *
 * Then the worst wait for each kind of resource of lock_waits.h (mutexes,
 * rwsems read and written, a folio lock, a PI futex, a journal handle)
 * held by a task of each peer, as a table of ms and ratios to nice 0.
 *
 * Usage: policy_bench [SECONDS]   (measuring time per figure, default 4)
 */
#include "peers.h"
#include "../kernel/lock_waits.h"

#define CPU 1

struct policy {
	const struct peer *peer;
	double share, lock_wait_ms, kill_ms;
	double kind_wait_ms[LOCK_KINDS];
};

static pid_t spinner_next_to_hog(const struct policy *p)
{
	pid_t pid = start_spinner(p->peer->policy, p->peer->nice, CPU);

	if (peer_move(pid, p->peer)) {
		fprintf(stderr, "policy_bench: cannot move %d into %s's group\n", pid,
			p->peer->name);
		stop_task(pid);
		exit(1);
	}
	return pid;
}

static double measure_share(const struct policy *p, double seconds)
{
	pid_t pid = spinner_next_to_hog(p);
	double share;

	usleep(300000);
	share = cpu_share(pid, seconds);
	stop_task(pid);
	return share;
}

/* The worst wait for a resource of @kind held by a task of @p, in ms; -1 if it failed */
static double measure_kind_wait(const struct policy *p, enum lock_kind kind, double seconds,
				pid_t hog)
{
	char group[256];
	uint64_t worst, holder_ns;

	kill(hog, SIGSTOP);
	snprintf(group, sizeof(group), PEER_CGROUP_ROOT "/%s", p->peer->cgroup ? p->peer->cgroup : "");
	worst = lock_worst_wait(kind, CPU, p->peer->policy, p->peer->nice,
				p->peer->cgroup ? group : NULL, seconds, &holder_ns);
	kill(hog, SIGCONT);
	return worst == UINT64_MAX ? -1 : worst / 1e6;
}

/* The tmpfs i_rwsem figure of the first table */
static double measure_lock_wait(const struct policy *p, double seconds, pid_t hog)
{
	return measure_kind_wait(p, LOCK_I_RWSEM, seconds, hog);
}

static double measure_kill(const struct policy *p)
{
	enum { RUNS = 5 };
	double ms[RUNS];

	for (int i = 0; i < RUNS; i++) {
		pid_t pid = spinner_next_to_hog(p);
		uint64_t t0;

		usleep(500000);
		t0 = now_ns();
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ms[i] = (now_ns() - t0) / 1e6;
	}
	qsort(ms, RUNS, sizeof(ms[0]), cmp_double);
	return ms[RUNS / 2];
}

int main(int argc, char **argv)
{
	struct policy policies[] = {
		{ .peer = &peers[PEER_NICE0] },
		{ .peer = &peers[PEER_NICE19] },
		{ .peer = &peers[PEER_IDLE] },
		{ .peer = &peers[PEER_CG_IDLE] },
		{ .peer = &peers[PEER_CG_WEIGHT1] },
		{ .peer = &peers[PEER_IDLEBATCH] },
	};
	const int n = sizeof(policies) / sizeof(policies[0]);
	double seconds = argc > 1 ? atof(argv[1]) : 4;
	struct policy *base = &policies[0], *ib = &policies[n - 1];
	pid_t hog;

	if (seconds <= 0 || argc > 2) {
		fprintf(stderr, "usage: policy_bench [SECONDS]\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "policy_bench: needs 2 CPUs\n");
		return 2;
	}
	if (!kernel_has_idlebatch()) {
		fprintf(stderr, "policy_bench: this kernel has no SCHED_IDLEBATCH\n");
		return 2;
	}
	if (peers_setup())
		return 2;
	pin_to_cpu(0, 0);
	hog = start_spinner(SCHED_OTHER, 0, CPU);
	for (int i = 0; i < n; i++) {
		struct policy *p = &policies[i];

		fprintf(stderr, "policy_bench: measuring %s...\n", p->peer->name);
		p->share = measure_share(p, seconds);
		p->lock_wait_ms = measure_lock_wait(p, seconds, hog);
		p->kill_ms = measure_kill(p);
		for (int k = 0; k < LOCK_KINDS; k++)
			p->kind_wait_ms[k] = lock_kind_unavailable(k) ? -1 :
					     measure_kind_wait(p, k, seconds, hog);
	}
	stop_task(hog);

	printf("\nWhat a low-priority task costs a nice-0 task (%.0f s per figure, "
	       "QEMU TCG, 2 CPUs)\n\n", seconds);
	printf("%-16s %12s %7s   %14s %7s   %12s %7s\n", "policy", "CPU share",
	       "ratio", "worst lock wait", "ratio", "kill latency", "ratio");
	for (int i = 0; i < n; i++) {
		struct policy *p = &policies[i];

		printf("%-16s %11.3f%% %7.4f   %12.1f ms %7.2f   %9.2f ms %7.2f\n",
		       p->peer->name, p->share, p->share / base->share,
		       p->lock_wait_ms, p->lock_wait_ms / base->lock_wait_ms,
		       p->kill_ms, p->kill_ms / base->kill_ms);
	}
	printf("\nTargets for SCHED_IDLEBATCH: share below 0.05%% (%s), lock wait "
	       "within 2x nice 0 (%s), kill latency within 2x nice 0 (%s)\n",
	       ib->share < 0.05 ? "met" : "MISSED",
	       ib->lock_wait_ms <= 2 * base->lock_wait_ms ? "met" : "MISSED",
	       ib->kill_ms <= 2 * base->kill_ms ? "met" : "MISSED");

	printf("\nWorst wait of a nice-0 task for a resource a task of each policy holds "
	       "now and then (ms, %.0f s each; see tests/kernel/lock_waits.h)\n\n", seconds);
	printf("%-11s", "resource");
	for (int i = 0; i < n; i++)
		printf(" %15s", policies[i].peer->name);
	printf(" %8s  %s\n", "ratio", "SCHED_IDLEBATCH within 1.5x nice 0");
	for (int k = 0; k < LOCK_KINDS; k++) {
		const char *why = lock_kind_unavailable(k);
		double b = base->kind_wait_ms[k], w = ib->kind_wait_ms[k];

		printf("%-11s", lock_kind_names[k]);
		if (why) {
			printf(" not measured: %s\n", why);
			continue;
		}
		for (int i = 0; i < n; i++) {
			if (policies[i].kind_wait_ms[k] < 0)
				printf(" %15s", "failed");
			else
				printf(" %15.2f", policies[i].kind_wait_ms[k]);
		}
		if (b <= 0 || w < 0)
			printf(" %8s  %s\n", "-", "not known");
		else
			printf(" %8.2f  %s\n", w / b, w <= 1.5 * b ? "met" : "MISSED");
	}
	return 0;
}
