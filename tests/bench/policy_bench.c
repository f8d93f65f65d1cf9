// SPDX-License-Identifier: GPL-2.0
/*
 * policy_bench: what a low-priority task costs a normal one, for
 * SCHED_IDLEBATCH, SCHED_IDLE, nice 19 and nice 0, measured in one run
 * (inside the guest: make bench) and printed as ratios to nice 0.
 *
 *  share      CPU share the task gets next to a nice-0 hog on its CPU
 *  lock wait  worst wait of a nice-0 task on another CPU for a kernel
 *             lock (a tmpfs inode's i_rwsem) that the task takes over
 *             and over, on a CPU it shares with a nice-0 task that leaves
 *             5% idle time (so the task runs, and is preempted holding
 *             the lock now and then)
 *  kill       SIGKILL-to-reaped latency of the task, starved by the hog
 *
 * Usage: policy_bench [SECONDS]   (measuring time per figure, default 4)
 */
#include "../kernel/idlebatch.h"

#define CPU 1

struct policy {
	const char *name;
	int policy, nice;
	double share, lock_wait_ms, kill_ms;
};

static pid_t spinner_next_to_hog(const struct policy *p)
{
	return start_spinner(p->policy, p->nice, CPU);
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

static double measure_lock_wait(const struct policy *p, double seconds, pid_t hog)
{
	uint64_t worst, writer_ns;

	/* The steady hog waits: this figure wants a hog that leaves gaps. */
	kill(hog, SIGSTOP);
	worst = worst_lock_wait(CPU, p->policy, p->nice, seconds, &writer_ns);
	kill(hog, SIGCONT);
	return worst / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
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
		{ .name = "nice 0", .policy = SCHED_OTHER, .nice = 0 },
		{ .name = "nice 19", .policy = SCHED_OTHER, .nice = 19 },
		{ .name = "SCHED_IDLE", .policy = SCHED_IDLE, .nice = 0 },
		{ .name = "SCHED_IDLEBATCH", .policy = SCHED_IDLEBATCH, .nice = 0 },
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
	pin_to_cpu(0, 0);
	hog = start_spinner(SCHED_OTHER, 0, CPU);
	for (int i = 0; i < n; i++) {
		struct policy *p = &policies[i];

		fprintf(stderr, "policy_bench: measuring %s...\n", p->name);
		p->share = measure_share(p, seconds);
		p->lock_wait_ms = measure_lock_wait(p, seconds, hog);
		p->kill_ms = measure_kill(p);
	}
	stop_task(hog);

	printf("\nWhat a low-priority task costs a nice-0 task (%.0f s per figure, "
	       "QEMU TCG, 2 CPUs)\n\n", seconds);
	printf("%-16s %12s %7s   %14s %7s   %12s %7s\n", "policy", "CPU share",
	       "ratio", "worst lock wait", "ratio", "kill latency", "ratio");
	for (int i = 0; i < n; i++) {
		struct policy *p = &policies[i];

		printf("%-16s %11.3f%% %7.4f   %12.1f ms %7.2f   %9.2f ms %7.2f\n",
		       p->name, p->share, p->share / base->share,
		       p->lock_wait_ms, p->lock_wait_ms / base->lock_wait_ms,
		       p->kill_ms, p->kill_ms / base->kill_ms);
	}
	printf("\nTargets for SCHED_IDLEBATCH: share below 0.05%% (%s), lock wait "
	       "within 2x nice 0 (%s), kill latency within 2x nice 0 (%s)\n",
	       ib->share < 0.05 ? "met" : "MISSED",
	       ib->lock_wait_ms <= 2 * base->lock_wait_ms ? "met" : "MISSED",
	       ib->kill_ms <= 2 * base->kill_ms ? "met" : "MISSED");
	return 0;
}
