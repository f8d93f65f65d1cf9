// SPDX-License-Identifier: GPL-2.0
/*
 * SCHED_IDLEBATCH's system-call interface (semantic 1 of the policy):
 * numbers, priorities, permissions, fork, nice and the reported timeslice.
 */
#include "idlebatch.h"
#include "kselftest_harness.h"

FIXTURE(abi) {
};

FIXTURE_SETUP(abi)
{
	REQUIRE_IDLEBATCH();
}

FIXTURE_TEARDOWN(abi)
{
	set_policy(0, SCHED_OTHER);
	setpriority(PRIO_PROCESS, 0, 0);
}

TEST_F(abi, policy_8_round_trips_through_every_interface)
{
	struct sched_param sp = { 0 };
	struct sched_attr attr = { 0 };

	ASSERT_EQ(0, set_policy(0, SCHED_IDLEBATCH));
	EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(0));
	EXPECT_EQ(SCHED_IDLEBATCH, stat_field(getpid(), 41));
	EXPECT_EQ(0, stat_field(getpid(), 40));		/* rt_priority */
	ASSERT_EQ(0, sched_getparam(0, &sp));
	EXPECT_EQ(0, sp.sched_priority);
	ASSERT_EQ(0, sched_getattr(0, &attr, sizeof(attr), 0));
	EXPECT_EQ(SCHED_IDLEBATCH, (int)attr.sched_policy);
	EXPECT_EQ(0, sched_get_priority_min(SCHED_IDLEBATCH));
	EXPECT_EQ(0, sched_get_priority_max(SCHED_IDLEBATCH));
	ASSERT_EQ(0, set_policy(0, SCHED_OTHER));
	EXPECT_EQ(SCHED_OTHER, stat_field(getpid(), 41));
}

TEST_F(abi, nonzero_priority_is_einval)
{
	struct sched_param sp = { .sched_priority = 1 };

	errno = 0;
	EXPECT_EQ(-1, sched_setscheduler(0, SCHED_IDLEBATCH, &sp));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
}

TEST_F(abi, sched_setattr_sets_policy_and_nice)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_IDLEBATCH,
		.sched_nice = 5,
	};

	ASSERT_EQ(0, sched_setattr(0, &attr, 0));
	EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(0));
	EXPECT_EQ(5, getpriority(PRIO_PROCESS, 0));
	EXPECT_EQ(5, stat_field(getpid(), 19));
}

/* The timeslice scales with nice as in the 2002 patch: 1.5 s at nice 0. */
TEST_F(abi, rr_interval_is_the_nice_scaled_batch_timeslice)
{
	static const struct { int nice; double lo, hi; } want[] = {
		{ 0, 1.45, 1.55 }, { 19, 0.09, 0.11 }, { -20, 2.9, 3.05 },
	};
	struct timespec ts;

	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		double s;

		ASSERT_EQ(0, setpriority(PRIO_PROCESS, 0, want[i].nice));
		ASSERT_EQ(0, set_policy(0, SCHED_IDLEBATCH));
		ASSERT_EQ(0, sched_rr_get_interval(0, &ts));
		s = ts.tv_sec + ts.tv_nsec / 1e9;
		TH_LOG("nice %d: %.3f s", want[i].nice, s);
		EXPECT_GE(s, want[i].lo);
		EXPECT_LE(s, want[i].hi);
		ASSERT_EQ(0, set_policy(0, SCHED_OTHER));
	}
}

/*
 * Fork inherits the policy.  SCHED_RESET_ON_FORK, which anyone may set,
 * does not lead out of it: as for SCHED_IDLE, the child keeps the policy
 * and only what needs privilege, a negative nice value, is reset.
 */
TEST_F(abi, fork_inherits_and_reset_on_fork_keeps_the_policy)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, set_policy(0, SCHED_IDLEBATCH));
	pid = fork();
	if (pid == 0)
		_exit(sched_getscheduler(0) == SCHED_IDLEBATCH ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, setpriority(PRIO_PROCESS, 0, -5));
	ASSERT_EQ(0, set_policy(0, SCHED_IDLEBATCH | SCHED_RESET_ON_FORK));
	pid = fork();
	if (pid == 0) {
		int policy = sched_getscheduler(0);

		if (policy & SCHED_RESET_ON_FORK)
			_exit(2);
		if (policy != SCHED_IDLEBATCH)
			_exit(3);
		_exit(getpriority(PRIO_PROCESS, 0) == 0 ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	setpriority(PRIO_PROCESS, 0, 0);
}

/*
 * Run @fn as an unprivileged user (nobody) with RLIMIT_NICE 0, so it may
 * not lower its nice value; return its exit status.
 */
static int as_nobody(int (*fn)(void))
{
	struct rlimit rl = { 0, 0 };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setrlimit(RLIMIT_NICE, &rl) || setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fn());
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

static int enter_then_leave(void)
{
	if (set_policy(0, SCHED_IDLEBATCH))
		return 1;			/* entering must work */
	if (set_policy(0, SCHED_OTHER) == 0 || errno != EPERM)
		return 2;			/* leaving must need privilege */
	if (set_policy(0, SCHED_BATCH) == 0 || errno != EPERM)
		return 3;
	return sched_getscheduler(0) == SCHED_IDLEBATCH ? 0 : 4;
}

TEST_F(abi, any_user_may_enter_but_leaving_needs_rlimit_nice_or_cap)
{
	EXPECT_EQ(0, as_nobody(enter_then_leave));
}

static int leave_with_rlimit(void)
{
	struct rlimit rl = { 20, 20 };	/* allows nice 0 */

	if (set_policy(0, SCHED_IDLEBATCH))
		return 1;
	/* An unprivileged task may raise its soft limit up to the hard one only. */
	if (setrlimit(RLIMIT_NICE, &rl) == 0)
		return 2;
	return 0;
}

TEST_F(abi, an_unprivileged_task_cannot_raise_rlimit_nice_to_leave)
{
	EXPECT_EQ(0, as_nobody(leave_with_rlimit));
}

TEST_F(abi, root_may_leave)
{
	ASSERT_EQ(0, set_policy(0, SCHED_IDLEBATCH));
	EXPECT_EQ(0, set_policy(0, SCHED_OTHER));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
}

TEST_HARNESS_MAIN
