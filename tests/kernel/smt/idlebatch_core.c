// SPDX-License-Identifier: GPL-2.0
/*
 * Idle-batch tasks under core scheduling (tests/kernel/smt.t boots the
 * test kernel on one core with two SMT threads, CPUs 0 and 1).
 *
 * With core scheduling, the two siblings of a core only run tasks with
 * the same cookie at the same time: a sibling whose tasks have another
 * cookie is forced idle.  Core scheduling makes two normal tasks with
 * different cookies on the two siblings take turns, and it is told to
 * by the forced idle time it counts.  A parked task may fill a sibling
 * that core scheduling forces idle, as it fills any idle CPU, but the
 * normal tasks must get what they get without it.
 */
#include "../idlebatch.h"

#include <sys/prctl.h>

#include "kselftest_harness.h"

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE			62
#define PR_SCHED_CORE_CREATE		1
#define PR_SCHED_CORE_SHARE_FROM	3
#endif
#define SCOPE_THREAD			0

/* Are CPUs 0 and 1 the two threads of one core? */
static bool cpus_0_1_are_siblings(void)
{
	char buf[64];

	read_line("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", buf, sizeof(buf));
	return !strcmp(buf, "0-1") || !strcmp(buf, "0,1");
}

/*
 * Start a CPU-bound child on @cpu with @policy and a core-scheduling
 * cookie: a new one when @cookie_of is 0, else the one @cookie_of has.
 */
static pid_t start_cookie_spinner(int policy, int cpu, pid_t cookie_of)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (!cookie_of && prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, SCOPE_THREAD, 0))
		_exit(104);
	if (cookie_of &&
	    prctl(PR_SCHED_CORE, PR_SCHED_CORE_SHARE_FROM, cookie_of, SCOPE_THREAD, 0))
		_exit(105);
	enter_policy_or_exit(policy, 0, cpu);
	spin_forever();
}

/* Shares of one CPU, in percent, that @nr tasks got over @seconds */
static void cpu_shares(const pid_t *pids, double *shares, int nr, double seconds)
{
	uint64_t c0[4], t0 = now_ns(), t1;
	int i;

	for (i = 0; i < nr; i++)
		c0[i] = cputime_ns(pids[i]);
	usleep((useconds_t)(seconds * 1e6));
	t1 = now_ns();
	for (i = 0; i < nr; i++)
		shares[i] = 100.0 * (double)(cputime_ns(pids[i]) - c0[i]) / (double)(t1 - t0);
}

FIXTURE(core) {
	pid_t tasks[4];
	int nr;
};

FIXTURE_SETUP(core)
{
	REQUIRE_IDLEBATCH();
	if (!config_has("CONFIG_SCHED_CORE"))
		SKIP(return, "kernel built without CONFIG_SCHED_CORE (the test kernel, make kernel, has it)");
	if (!cpus_0_1_are_siblings())
		SKIP(return, "CPUs 0 and 1 are not SMT siblings: boot with -smp 2,threads=2 (smt.t does)");
	self->nr = 0;
}

FIXTURE_TEARDOWN(core)
{
	while (self->nr > 0)
		stop_task(self->tasks[--self->nr]);
}

/*
 * A normal task on one sibling, a parked task with another cookie on the
 * other: the parked task ranks below every normal task core-wide, so it
 * never makes core scheduling force the normal task's sibling idle.
 */
TEST_F_TIMEOUT(core, a_parked_task_never_forces_a_normal_task_idle, 60)
{
	pid_t pids[2];
	double shares[2];
	int i;

	pids[0] = start_cookie_spinner(SCHED_OTHER, 0, 0);
	self->tasks[self->nr++] = pids[0];
	pids[1] = start_cookie_spinner(SCHED_IDLEBATCH, 1, 0);
	self->tasks[self->nr++] = pids[1];
	for (i = 0; i < 50 && batch_state(pids[1]) != 'P'; i++)
		usleep(100000);
	ASSERT_EQ('P', batch_state(pids[1]));

	cpu_shares(pids, shares, 2, 4.0);
	TH_LOG("over 4 s: the normal task (CPU 0) got %.1f%%, the parked one (CPU 1, other cookie) %.1f%%",
	       shares[0], shares[1]);
	EXPECT_GT(shares[0], 90.0);
	EXPECT_LT(shares[1], 10.0);
}

/*
 * Two normal tasks with different cookies, one on each sibling, take
 * turns.  A parked task with the first one's cookie, next to the second,
 * may run while the first one runs (its sibling is forced idle then), but
 * the second must keep its turns.  Core scheduling ends a normal task's
 * turn at its tick only while a sibling is counted as forced idle; a
 * parked task that filled that sibling without being counted so left the
 * first task running for ever.
 */
TEST_F_TIMEOUT(core, normal_tasks_keep_their_turns_next_to_a_parked_task, 90)
{
	double before[2], after[3];
	pid_t pids[3];
	int i;

	pids[0] = start_cookie_spinner(SCHED_OTHER, 0, 0);
	self->tasks[self->nr++] = pids[0];
	pids[1] = start_cookie_spinner(SCHED_OTHER, 1, 0);
	self->tasks[self->nr++] = pids[1];
	sleep(1);
	cpu_shares(pids, before, 2, 4.0);
	TH_LOG("alone, over 4 s: normal task A (CPU 0) %.1f%%, normal task B (CPU 1) %.1f%%",
	       before[0], before[1]);

	/* A's cookie, on B's CPU */
	pids[2] = start_cookie_spinner(SCHED_IDLEBATCH, 1, pids[0]);
	self->tasks[self->nr++] = pids[2];
	for (i = 0; i < 50 && batch_state(pids[2]) != 'P'; i++)
		usleep(100000);
	ASSERT_EQ('P', batch_state(pids[2]));
	sleep(1);
	cpu_shares(pids, after, 3, 4.0);
	TH_LOG("with a parked task of A's cookie on CPU 1: A %.1f%%, B %.1f%%, the parked one %.1f%%",
	       after[0], after[1], after[2]);

	/* Each kept its turns: no less than 3/4 of what it had alone */
	EXPECT_GT(after[0], before[0] * 0.75);
	EXPECT_GT(after[1], before[1] * 0.75);
	/* The parked task only filled time B's sibling would have idled */
	EXPECT_LT(after[2], 100.0 - after[1] + 10.0);
}

#define SLICE_SYSCTL	"/proc/sys/kernel/sched_idlebatch_slice_ms"

/*
 * Two parked tasks with different cookies, one on each sibling and
 * nothing else: only one of them can run at a time, and they take turns
 * by timeslice as two parked tasks on one CPU do (the core-wide pick
 * prefers the one that ran least recently, and a timeslice used up while
 * the sibling is forced idle ends at the tick).
 */
TEST_F_TIMEOUT(core, parked_tasks_with_different_cookies_take_turns, 60)
{
	char old_slice[32] = "";
	double shares[2];
	pid_t pids[2];

	ASSERT_NE(0, read_line(SLICE_SYSCTL, old_slice, sizeof(old_slice))[0]);
	ASSERT_EQ(0, write_file(SLICE_SYSCTL, "100"));

	pids[0] = start_cookie_spinner(SCHED_IDLEBATCH, 0, 0);
	self->tasks[self->nr++] = pids[0];
	pids[1] = start_cookie_spinner(SCHED_IDLEBATCH, 1, 0);
	self->tasks[self->nr++] = pids[1];
	sleep(1);
	cpu_shares(pids, shares, 2, 4.0);
	write_file(SLICE_SYSCTL, old_slice);
	TH_LOG("100 ms timeslices, over 4 s: %.1f%% (CPU 0) and %.1f%% (CPU 1), parked %ld and %ld times",
	       shares[0], shares[1], task_parks(pids[0]), task_parks(pids[1]));
	/*
	 * Turns by timeslice, ended at ticks: near half each.  Without the
	 * turns the core-wide pick kept choosing the picker's own task, and
	 * the other got 6% in one run.
	 */
	EXPECT_GT(shares[0], 30.0);
	EXPECT_GT(shares[1], 30.0);
}

TEST_HARNESS_MAIN
