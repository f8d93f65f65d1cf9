// SPDX-License-Identifier: GPL-2.0
/*
 * Round trips through the scheduling-policy system calls for the policies
 * Linux 6.12 already has.  They prove the test bed (the guest, its kernel,
 * the kselftest harness) before the new policy is tested on top of it.
 */
#include "idlebatch.h"

#include "kselftest_harness.h"

/* The policy column (field 41) of /proc/PID/stat. */
static int stat_policy(pid_t pid)
{
	return (int)stat_field(pid, 41);
}

static int set_prio_policy(int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return sched_setscheduler(0, policy, &sp);
}

struct round_trip {
	int policy;
	int prio;
	int min, max;
};

FIXTURE(policy) {
	struct round_trip rt;
};

FIXTURE_VARIANT(policy) {
	struct round_trip rt;
};

FIXTURE_VARIANT_ADD(policy, normal) { .rt = { SCHED_OTHER, 0, 0, 0 } };
FIXTURE_VARIANT_ADD(policy, batch)  { .rt = { SCHED_BATCH, 0, 0, 0 } };
FIXTURE_VARIANT_ADD(policy, idle)   { .rt = { SCHED_IDLE, 0, 0, 0 } };
FIXTURE_VARIANT_ADD(policy, fifo)   { .rt = { SCHED_FIFO, 10, 1, 99 } };
FIXTURE_VARIANT_ADD(policy, rr)     { .rt = { SCHED_RR, 20, 1, 99 } };

FIXTURE_SETUP(policy)
{
	self->rt = variant->rt;
}

FIXTURE_TEARDOWN(policy)
{
}

TEST_F(policy, set_get_and_proc_agree)
{
	struct sched_param sp = { 0 };

	ASSERT_EQ(0, set_prio_policy(self->rt.policy, self->rt.prio));
	EXPECT_EQ(self->rt.policy, sched_getscheduler(0));
	ASSERT_EQ(0, sched_getparam(0, &sp));
	EXPECT_EQ(self->rt.prio, sp.sched_priority);
	EXPECT_EQ(self->rt.policy, stat_policy(getpid()));
	EXPECT_EQ(self->rt.min, sched_get_priority_min(self->rt.policy));
	EXPECT_EQ(self->rt.max, sched_get_priority_max(self->rt.policy));
	/* And back: root may always return to SCHED_OTHER. */
	ASSERT_EQ(0, set_prio_policy(SCHED_OTHER, 0));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	EXPECT_EQ(SCHED_OTHER, stat_policy(getpid()));
}

TEST_F(policy, out_of_range_priority_is_einval)
{
	errno = 0;
	EXPECT_EQ(-1, set_prio_policy(self->rt.policy, self->rt.max + 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
}

TEST_F(policy, fork_inherits_and_reset_on_fork_resets)
{
	int status, expected;
	pid_t pid;

	ASSERT_EQ(0, set_prio_policy(self->rt.policy, self->rt.prio));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(sched_getscheduler(0) == self->rt.policy ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* SCHED_RESET_ON_FORK resets only RT and deadline policies. */
	expected = self->rt.prio ? SCHED_OTHER : self->rt.policy;
	ASSERT_EQ(0, set_prio_policy(self->rt.policy | SCHED_RESET_ON_FORK, self->rt.prio));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == expected ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, set_prio_policy(SCHED_OTHER, 0));
}

TEST(unknown_policy_is_einval)
{
	errno = 0;
	EXPECT_EQ(-1, set_prio_policy(42, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
}

TEST(deadline_round_trip_through_sched_setattr)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_DEADLINE,
		.sched_runtime = 1000000,
		.sched_deadline = 10000000,
		.sched_period = 10000000,
	};
	struct sched_attr got = { 0 };

	ASSERT_EQ(0, sched_setattr(0, &attr, 0));
	ASSERT_EQ(0, sched_getattr(0, &got, sizeof(got), 0));
	EXPECT_EQ(SCHED_DEADLINE, (int)got.sched_policy);
	EXPECT_EQ(attr.sched_runtime, got.sched_runtime);
	EXPECT_EQ(attr.sched_period, got.sched_period);
	EXPECT_EQ(SCHED_DEADLINE, stat_policy(getpid()));
	attr.sched_policy = SCHED_OTHER;
	attr.sched_runtime = attr.sched_deadline = attr.sched_period = 0;
	ASSERT_EQ(0, sched_setattr(0, &attr, 0));
}

TEST(nice_survives_a_policy_round_trip)
{
	ASSERT_EQ(0, setpriority(PRIO_PROCESS, 0, 7));
	ASSERT_EQ(0, set_prio_policy(SCHED_BATCH, 0));
	ASSERT_EQ(0, set_prio_policy(SCHED_OTHER, 0));
	errno = 0;
	EXPECT_EQ(7, getpriority(PRIO_PROCESS, 0));
	EXPECT_EQ(0, errno);
	ASSERT_EQ(0, setpriority(PRIO_PROCESS, 0, 0));
}

TEST_HARNESS_MAIN
