// SPDX-License-Identifier: GPL-2.0
/*
 * SCHED_IDLEBATCH can never hold a kernel resource indefinitely
 * (semantics 3, 4 and 8 of the policy): a kernel lock it holds is
 * released promptly, signals reach a parked task, and no parked task is
 * lost or stuck through policy, affinity, cgroup or CPU hotplug changes,
 * RCU-Tasks grace periods or PI futexes.
 */
#include "idlebatch.h"
#include "lock_waits.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include "kselftest_harness.h"

#define CPU 1

FIXTURE(safety) {
	pid_t hog;
	pid_t pids[4];
	int n;
};

FIXTURE_SETUP(safety)
{
	REQUIRE_IDLEBATCH();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	self->n = 0;
	/* A nice-0 CPU hog owns CPU 1: idle-batch tasks there are parked. */
	self->hog = start_spinner(SCHED_OTHER, 0, CPU);
}

FIXTURE_TEARDOWN(safety)
{
	for (int i = 0; i < self->n; i++)
		stop_task(self->pids[i]);
	stop_task(self->hog);
}

static pid_t add_parked(struct _test_data_safety *self)
{
	pid_t pid = start_spinner(SCHED_IDLEBATCH, 0, CPU);

	self->pids[self->n++] = pid;
	usleep(300000);
	return pid;
}

/*
 * Is @pid starved: no more than 1 ms of CPU time over 300 ms, or one
 * tick if that is more (starved_share_bound() says why)?
 */
static int starved(pid_t pid)
{
	uint64_t c0 = cputime_ns(pid);
	uint64_t bound = ns_or_ticks(1000000, 1);

	usleep(300000);
	return cputime_ns(pid) - c0 < bound;
}

static uint64_t wait_state(pid_t pid, char want, uint64_t timeout_ns)
{
	uint64_t t0 = now_ns();

	while (task_state(pid) != want) {
		if (now_ns() - t0 > timeout_ns)
			return UINT64_MAX;
		usleep(1000);
	}
	return now_ns() - t0;
}

TEST_F(safety, a_kernel_lock_it_holds_is_released_promptly)
{
	uint64_t normal, batch, normal_cpu, batch_cpu;

	/* This test wants a hog with gaps: the fixture's steady one waits. */
	kill(self->hog, SIGSTOP);
	normal = lock_worst_wait(LOCK_I_RWSEM, CPU, SCHED_OTHER, 0, NULL, 3.0, &normal_cpu);
	batch = lock_worst_wait(LOCK_I_RWSEM, CPU, SCHED_IDLEBATCH, 0, NULL, 3.0, &batch_cpu);
	kill(self->hog, SIGCONT);
	TH_LOG("worst wait for the lock: nice-0 writer %.1f ms, idle-batch writer %.1f ms "
	       "(it ran %.0f ms)", normal / 1e6, batch / 1e6, batch_cpu / 1e6);
	EXPECT_GT(batch_cpu, 20000000ull);	/* it did take the lock */
	/* SCHED_IDLE: about 10 times the nice-0 figure (make bench). */
	EXPECT_LT(batch, 3 * normal + 50000000ull);
}

TEST_F(safety, sigkill_reaps_a_parked_task_promptly)
{
	pid_t pid = add_parked(self);
	uint64_t t0;

	ASSERT_TRUE(starved(pid));
	t0 = now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	self->n--;
	TH_LOG("SIGKILL to reaped: %.2f ms", (now_ns() - t0) / 1e6);
	EXPECT_LT(now_ns() - t0, 100000000ull);	/* SCHED_IDLE: 271 ms */
}

TEST_F(safety, sigstop_and_sigcont_reach_a_parked_task)
{
	pid_t pid = add_parked(self);
	uint64_t d;

	ASSERT_TRUE(starved(pid));
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	d = wait_state(pid, 'T', 1000000000ull);
	TH_LOG("SIGSTOP took %.2f ms", d / 1e6);
	EXPECT_LT(d, 200000000ull);
	ASSERT_EQ(0, kill(pid, SIGCONT));
	d = wait_state(pid, 'R', 1000000000ull);
	EXPECT_LT(d, 200000000ull);
	/* Back in user space, it waits for idle time again. */
	usleep(100000);
	EXPECT_TRUE(starved(pid));
}

static volatile sig_atomic_t *handled;

static void on_usr1(int sig)
{
	(*handled)++;
}

TEST_F(safety, a_parked_task_takes_its_signal_promptly)
{
	uint64_t t0;
	pid_t pid;

	handled = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, handled);
	*handled = 0;
	pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, on_usr1);
		pin_to_cpu(0, CPU);
		set_policy(0, SCHED_IDLEBATCH);
		spin_forever();
	}
	self->pids[self->n++] = pid;
	usleep(300000);
	ASSERT_TRUE(starved(pid));
	t0 = now_ns();
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	while (pending_signals(pid) > 0 && now_ns() - t0 < 1000000000ull)
		usleep(1000);
	TH_LOG("signal dequeued after %.2f ms; handler ran %d times",
	       (now_ns() - t0) / 1e6, (int)*handled);
	EXPECT_EQ(0, pending_signals(pid));
	EXPECT_LT(now_ns() - t0, 200000000ull);
	munmap((void *)handled, 4096);
}

TEST_F(safety, ptrace_attach_stops_a_parked_task_promptly)
{
	pid_t pid = add_parked(self);
	uint64_t t0;
	int status;

	ASSERT_TRUE(starved(pid));
	t0 = now_ns();
	ASSERT_EQ(0, ptrace(PTRACE_ATTACH, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("ptrace stop after %.2f ms", (now_ns() - t0) / 1e6);
	EXPECT_TRUE(WIFSTOPPED(status));
	EXPECT_LT(now_ns() - t0, 200000000ull);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, pid, 0, 0));
}

static int cgroup_frozen(const char *events)
{
	return (int)labelled_value(events, "frozen %lld");
}

TEST_F(safety, the_cgroup_freezer_freezes_a_parked_task_promptly)
{
	static const char cg[] = "/sys/fs/cgroup/idlebatch-freeze";
	char pidbuf[32], path[128];
	pid_t pid = add_parked(self);
	uint64_t t0;

	if (access("/sys/fs/cgroup/cgroup.procs", F_OK))
		SKIP(return, "no cgroup2 mounted at /sys/fs/cgroup");
	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	ASSERT_EQ(0, write_file(path, pidbuf));
	ASSERT_TRUE(starved(pid));
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
	t0 = now_ns();
	ASSERT_EQ(0, write_file(path, "1"));
	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	while (cgroup_frozen(path) != 1 && now_ns() - t0 < 2000000000ull)
		usleep(1000);
	TH_LOG("frozen after %.2f ms", (now_ns() - t0) / 1e6);
	EXPECT_EQ(1, cgroup_frozen(path));
	EXPECT_LT(now_ns() - t0, 500000000ull);
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
	ASSERT_EQ(0, write_file(path, "0"));
	ASSERT_EQ(0, write_file("/sys/fs/cgroup/cgroup.procs", pidbuf));
	EXPECT_EQ(0, rmdir(cg));
}

TEST_F(safety, back_to_sched_normal_takes_effect_at_once)
{
	pid_t pid = add_parked(self);
	double share;

	ASSERT_TRUE(starved(pid));
	ASSERT_EQ(0, set_policy(pid, SCHED_OTHER));
	share = cpu_share(pid, 1.0);
	TH_LOG("share once SCHED_NORMAL again: %.1f%%", share);
	EXPECT_GT(share, 30.0);
}

TEST_F(safety, an_affinity_change_moves_a_parked_task)
{
	pid_t pid = add_parked(self);
	double share;

	ASSERT_TRUE(starved(pid));
	ASSERT_EQ(0, pin_to_cpu(pid, 0));
	usleep(100000);
	share = cpu_share(pid, 1.0);
	TH_LOG("share on idle CPU 0: %.1f%%, now on CPU %lld", share, stat_field(pid, 39));
	EXPECT_EQ(0, stat_field(pid, 39));
	EXPECT_GT(share, 70.0);
}

TEST_F(safety, a_cgroup_move_keeps_a_parked_task)
{
	static const char cg[] = "/sys/fs/cgroup/idlebatch-test";
	char pidbuf[32];
	pid_t pid = add_parked(self);
	double share;

	if (access("/sys/fs/cgroup/cgroup.procs", F_OK))
		SKIP(return, "no cgroup2 mounted at /sys/fs/cgroup");
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	ASSERT_TRUE(starved(pid));
	ASSERT_EQ(0, write_file("/sys/fs/cgroup/idlebatch-test/cgroup.procs", pidbuf));
	EXPECT_TRUE(starved(pid));
	kill(self->hog, SIGSTOP);
	share = cpu_share(pid, 1.0);
	kill(self->hog, SIGCONT);
	TH_LOG("share in the new cgroup once the hog stopped: %.1f%%", share);
	EXPECT_GT(share, 70.0);
	ASSERT_EQ(0, write_file("/sys/fs/cgroup/cgroup.procs", pidbuf));
	EXPECT_EQ(0, rmdir(cg));
}

TEST_F(safety, offlining_the_cpu_of_parked_tasks_loses_none)
{
	static const char online[] = "/sys/devices/system/cpu/cpu1/online";
	pid_t a = add_parked(self), b = add_parked(self);
	uint64_t t0;

	if (access(online, W_OK))
		SKIP(return, "CPU 1 cannot be taken offline");
	ASSERT_TRUE(starved(a));
	t0 = now_ns();
	ASSERT_EQ(0, write_file(online, "0"));
	TH_LOG("offline took %.1f ms", (now_ns() - t0) / 1e6);
	EXPECT_LT(now_ns() - t0, 5000000000ull);
	EXPECT_EQ(0, kill(a, 0));
	EXPECT_EQ(0, kill(b, 0));
	EXPECT_EQ(0, stat_field(a, 39));
	EXPECT_EQ(0, stat_field(b, 39));
	ASSERT_EQ(0, write_file(online, "1"));
	/* Both still run once CPU time is free. */
	kill(self->hog, SIGSTOP);
	usleep(200000);
	EXPECT_GT(cpu_share(a, 2.0) + cpu_share(b, 2.0), 50.0);
	kill(self->hog, SIGCONT);
}

/* Removing an ftrace callback waits for an RCU-Tasks grace period. */
TEST_F(safety, synchronize_rcu_tasks_does_not_wait_for_parked_tasks)
{
	static const char t[] = "/sys/kernel/tracing";
	char path[128];
	uint64_t t0;

	if (!config_has("CONFIG_TASKS_RCU"))
		SKIP(return, "kernel without TASKS_RCU");
	add_parked(self);
	add_parked(self);
	snprintf(path, sizeof(path), "%s/set_ftrace_filter", t);
	ASSERT_EQ(0, write_file(path, "do_sys_openat2"));
	snprintf(path, sizeof(path), "%s/current_tracer", t);
	t0 = now_ns();
	ASSERT_EQ(0, write_file(path, "function"));
	ASSERT_EQ(0, write_file(path, "nop"));
	TH_LOG("function tracer on and off: %.1f ms", (now_ns() - t0) / 1e6);
	EXPECT_LT(now_ns() - t0, 5000000000ull);
	snprintf(path, sizeof(path), "%s/set_ftrace_filter", t);
	write_file(path, "");
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A child that takes @sh's PI lock, then becomes an idle-batch task on CPU
 * and holds the lock for @hold_s of its own CPU time in user space, next
 * to the hog: parked, the lock held.  Returned once it holds the lock and
 * has had 300 ms to be parked.  Lock first: parked before it took the
 * lock, it never would.
 */
static pid_t start_parked_pi_owner(struct pi_shared *sh, double hold_s)
{
	pid_t owner = fork();

	if (owner == 0) {
		double start;

		pthread_mutex_lock(&sh->lock);
		sh->locked = 1;
		pin_to_cpu(0, CPU);
		set_policy(0, SCHED_IDLEBATCH);
		start = thread_cpu_s();
		while (thread_cpu_s() - start < hold_s)
			;
		pthread_mutex_unlock(&sh->lock);
		spin_forever();
	}
	while (owner > 0 && !sh->locked)
		usleep(1000);
	usleep(300000);
	return owner;
}

TEST_F(safety, a_parked_pi_futex_owner_is_boosted)
{
	struct pi_shared *sh;
	struct timespec deadline;
	uint64_t t0;
	pid_t owner;
	int ret;

	sh = pi_shared_create();
	ASSERT_NE(NULL, sh);

	/* The lock held for 100 ms of the owner's CPU time */
	owner = start_parked_pi_owner(sh, 0.1);
	ASSERT_LT(0, owner);
	self->pids[self->n++] = owner;
	ASSERT_TRUE(starved(owner));

	pin_to_cpu(0, 0);
	t0 = now_ns();
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	ret = pthread_mutex_timedlock(&sh->lock, &deadline);
	TH_LOG("waited %.1f ms for the parked owner (status %d)", (now_ns() - t0) / 1e6, ret);
	EXPECT_EQ(0, ret);
	EXPECT_LT(now_ns() - t0, 2000000000ull);
	if (!ret)
		pthread_mutex_unlock(&sh->lock);
	munmap(sh, sizeof(*sh));
}

/*
 * /proc/PID/batchstat says B while a real-time waiter's priority lifts an
 * idle-batch owner, in user space, soon and throughout the wait, and P
 * again once it lets go; a real-time task of its own is -.
 */
TEST_F(safety, a_pi_owner_boosted_to_rt_shows_b)
{
	struct sched_param sp = { .sched_priority = 10 };
	uint64_t t0, first_b = UINT64_MAX;
	int boosted = 0, seen = 0, status = 0;
	long long parks, parked;
	struct pi_shared *sh;
	pid_t owner, waiter;
	char state;

	if (!access("/sys/kernel/sched_ext/root/ops", F_OK))
		SKIP(return, "a BPF scheduler runs: idle-batch tasks are not parked");
	/* A real-time task without the policy (this one, a moment) is - */
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		SKIP(return, "SCHED_FIFO refused here: %s", strerror(errno));
	status = task_batchstat(getpid(), &state, &parks, &parked);
	sp.sched_priority = 0;
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &sp));
	sp.sched_priority = 10;
	ASSERT_EQ(0, status);
	EXPECT_EQ('-', state);

	sh = pi_shared_create();
	ASSERT_NE(NULL, sh);

	/* The lock held for 1 s of the owner's CPU time */
	owner = start_parked_pi_owner(sh, 1.0);
	ASSERT_LT(0, owner);
	self->pids[self->n++] = owner;
	ASSERT_TRUE(starved(owner));
	ASSERT_EQ(0, task_batchstat(owner, &state, &parks, &parked));
	EXPECT_EQ('P', state);

	waiter = fork();
	if (waiter == 0) {
		struct timespec deadline;

		pin_to_cpu(0, 0);
		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(100);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 20;
		if (pthread_mutex_timedlock(&sh->lock, &deadline))
			_exit(101);
		pthread_mutex_unlock(&sh->lock);
		_exit(0);
	}
	ASSERT_LT(0, waiter);
	/*
	 * While the waiter waits, the owner runs at its priority: B from
	 * the first look that says so until the waiter has the lock (the
	 * waiter's own wait bound, 20 s, bounds the loop too)
	 */
	t0 = now_ns();
	while (now_ns() - t0 < 20000000000ull && waitpid(waiter, &status, WNOHANG) == 0) {
		if (task_batchstat(owner, &state, &parks, &parked) == 0 &&
		    (state == 'B' || first_b != UINT64_MAX)) {
			seen++;
			boosted += state == 'B';
			if (state == 'B' && boosted == 1) {
				first_b = now_ns() - t0;
				TH_LOG("B after %.1f ms: policy %lld, priority %lld (stat)",
				       first_b / 1e6, stat_field(owner, 41), stat_field(owner, 18));
			}
		}
		usleep(5000);
	}
	if (waitpid(waiter, &status, WNOHANG) == 0) {
		kill(waiter, SIGKILL);
		waitpid(waiter, &status, 0);
	}
	TH_LOG("%d of %d looks from the first B said B", boosted, seen);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_LT(first_b, 2000000000ull);
	/* The last looks may fall after the unlock, before the waiter ends */
	EXPECT_GE(boosted * 4, seen * 3);
	/* Its policy stays idle-batch throughout, and it parks again */
	EXPECT_EQ(SCHED_IDLEBATCH, stat_field(owner, 41));
	t0 = now_ns();
	while (now_ns() - t0 < 2000000000ull &&
	       (task_batchstat(owner, &state, &parks, &parked) || state != 'P'))
		usleep(10000);
	EXPECT_EQ('P', state);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN
