// SPDX-License-Identifier: GPL-2.0
/*
 * Idle-only for every kind of work: an idle-batch task of any kind -- in
 * user mode or in the kernel, sleeping, yielding, forking -- uses only
 * time no other task wants, idle-batch tasks share that time equally
 * whatever they do, and no unprivileged path leads out of idle priority.
 * Every assertion is on behaviour measured in this run, against a
 * baseline measured in the same run where there is one.
 */
#include "workloads.h"

#include <sys/time.h>
#include "kselftest_harness.h"

#define CPU 1

/* Use @ns of this thread's CPU time, in user mode */
static void use_cpu_ns(double ns)
{
	double c0 = thread_cpu_ns();

	while (thread_cpu_ns() - c0 < ns)
		;
}

/*
 * The foreground: a nice-0 task on CPU that does 10 ms of CPU work and
 * sleeps 10 ms, @cycles times.  Returns, through a pipe, how much longer
 * in wall time each 10 ms of its work took on average (1.00: undisturbed).
 */
static double foreground_stretch(int cycles)
{
	double stretch = -1;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		double sum = 0;

		close(fds[0]);
		pin_to_cpu(0, CPU);
		usleep(20000);
		for (int i = 0; i < cycles; i++) {
			uint64_t t0 = now_ns();

			use_cpu_ns(10e6);
			sum += (now_ns() - t0) / 10e6;
			usleep(10000);
		}
		sum /= cycles;
		if (write(fds[1], &sum, sizeof(sum)) != sizeof(sum))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &stretch, sizeof(stretch)) != sizeof(stretch))
		stretch = -1;
	close(fds[0]);
	waitpid(pid, NULL, 0);
	return stretch;
}

/*
 * The foreground's stretch next to @kind running with @policy on its CPU:
 * the better of two runs, as the host's own load only ever adds to it.
 */
static double stretch_next_to(enum work_kind kind, int policy, int cycles)
{
	double stretch = 0;

	for (int run = 0; run < 2; run++) {
		pid_t bg = start_work(kind, policy, 0, CPU);
		double s;

		usleep(200000);
		s = foreground_stretch(cycles);
		stop_work(bg);
		if (run == 0 || s < stretch)
			stretch = s;
	}
	return stretch;
}

FIXTURE(work) {
	char old_slice[32];
};

FIXTURE_SETUP(work)
{
	REQUIRE_IDLEBATCH();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	ASSERT_EQ(0, work_tree_create());
	ASSERT_EQ(0, work_exec_create());
	self->old_slice[0] = 0;
	ASSERT_NE(0, read_line("/proc/sys/kernel/sched_idlebatch_slice_ms", self->old_slice,
			       sizeof(self->old_slice))[0]);
	/* The test runs the harness on CPU 0, the work on CPU 1. */
	pin_to_cpu(0, 0);
}

FIXTURE_TEARDOWN(work)
{
	if (self->old_slice[0])
		write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", self->old_slice);
}

/*
 * The backgrounds, and what each may cost the foreground.  A foreground
 * wakeup that finds the background in the kernel costs it the rest of
 * that kernel stretch, which the background finishes at its fair priority
 * by design (it may hold a kernel lock there, as fork() holds the
 * parent's mmap_lock): on average half of one of the background's
 * system calls per 10 ms unit of the foreground's work, where a
 * SCHED_IDLE background, which finishes them at idle priority, costs
 * nothing.  That is noise for system calls well under a millisecond, but
 * not under TCG, where a 1 MiB read() takes about 1.3 ms and an
 * mprotect() of 64 MiB about 2.6 ms (measured 1.000 to 1.021 and 1.003
 * to 1.012).  So for the kinds whose step is one or two system calls the
 * bound is measured in the same run: half the length of one call over
 * 10 ms, plus 0.01 for noise.  A fork() is one system call
 * of about 14 ms (a fork, exec and exit of a static busybox costs 48 ms,
 * 46 of them in the kernel, in several calls): measured 1.05 to 1.15, and
 * its bound is fixed.  A nice-0 background costs about 2.
 */
static const struct {
	enum work_kind kind;
	double max_stretch;	/* the foreground's, over undisturbed */
	double over_idle;	/* more than with a SCHED_IDLE background */
	int calls;		/* system calls a step makes; 0: not measured */
} backgrounds[] = {
	{ WORK_SPIN,	  1.05, 0.02, 0 },
	{ WORK_NAP,	  1.05, 0.02, 0 },
	{ WORK_READ,	  1.05, 0.02, 1 },
	{ WORK_MPROTECT,  1.06, 0.05, 2 },
	{ WORK_SYSCALLS,  1.05, 0.02, 1 },
	{ WORK_TREE_WALK, 1.05, 0.02, 0 },
	{ WORK_FORK_EXEC, 1.30, 0.30, 0 },
};

/*
 * A duty-cycled foreground next to a background of each kind: with an
 * idle-batch background it is within its bound of undisturbed, and no
 * worse than with a SCHED_IDLE one measured in the same run, by more than
 * noise (or the kind's kernel stretches, above).
 */
TEST_F_TIMEOUT(work, a_foreground_task_is_undisturbed_by_every_kind, 300)
{
	const int cycles = 100;
	double base, base2, batch, idle;

	base = foreground_stretch(cycles);
	base2 = foreground_stretch(cycles);
	if (base2 < base)
		base = base2;
	ASSERT_GT(base, 0);
	TH_LOG("%-26s %9s %9s %9s %9s  (foreground stretch over undisturbed %.3f)",
	       "background", "IDLEBATCH", "IDLE", "call ms", "allowed", base);
	for (size_t i = 0; i < ARRAY_SIZE(backgrounds); i++) {
		enum work_kind kind = backgrounds[i].kind;
		double max_stretch = backgrounds[i].max_stretch;
		double over_idle = backgrounds[i].over_idle;
		double call_ms = 0;

		if (backgrounds[i].calls) {
			call_ms = work_step_ns(kind, CPU) / 1e6 / backgrounds[i].calls;
			ASSERT_GT(call_ms, 0) TH_LOG("%s: timing one step", work_names[kind]);
			if (0.01 + call_ms / 20 > over_idle)
				over_idle = 0.01 + call_ms / 20;
			if (1.03 + over_idle > max_stretch)
				max_stretch = 1.03 + over_idle;
		}
		batch = stretch_next_to(kind, SCHED_IDLEBATCH, cycles) / base;
		idle = stretch_next_to(kind, SCHED_IDLE, cycles) / base;
		TH_LOG("%-26s %9.3f %9.3f %9.3f %9.3f", work_names[kind], batch, idle,
		       call_ms, over_idle);
		EXPECT_LT(batch, max_stretch)
			TH_LOG("%s: idle-batch background", work_names[kind]);
		EXPECT_LT(batch, idle + over_idle)
			TH_LOG("%s: worse than SCHED_IDLE", work_names[kind]);
	}
}

static const enum work_kind kernel_kinds[] = {
	WORK_READ, WORK_READ_BIG, WORK_MPROTECT, WORK_SYSCALLS, WORK_TREE_WALK,
	WORK_FORK_EXEC, WORK_YIELD,
};

/*
 * Next to a nice-0 hog, each kernel-heavy kind started there is parked at
 * the end of its first contended kernel stretch, and from then on gets
 * less than 0.1% of the CPU.  A first stretch that outlasts its grace runs
 * on at the lowest weight (idlebatch_stretch.c holds that to 0.5%), so
 * the kind may not be parked for seconds: then its share over the same
 * window is held to 0.5%.
 */
TEST_F_TIMEOUT(work, kernel_heavy_work_next_to_a_hog_gets_no_cpu, 120)
{
	pid_t hog = start_spinner(SCHED_OTHER, 0, CPU);

	usleep(100000);
	TH_LOG("%-26s %14s %12s", "idle-batch task", "first park", "CPU share");
	for (size_t i = 0; i < ARRAY_SIZE(kernel_kinds); i++) {
		enum work_kind kind = kernel_kinds[i];
		uint64_t t0 = now_ns(), parked_after, c0, c1, w0, w1;
		pid_t bg = start_work(kind, SCHED_IDLEBATCH, 0, CPU);
		bool parked;
		double share;

		while (task_parks(bg) < 1 && now_ns() - t0 < 2000000000ull)
			usleep(500);
		parked_after = now_ns() - t0;
		parked = task_parks(bg) >= 1;
		usleep(200000);
		w0 = now_ns();
		c0 = group_cputime_ns(bg);
		/* The lowest weight's share is noisier: a longer window for it */
		usleep(parked ? 1500000 : 3000000);
		c1 = group_cputime_ns(bg);
		w1 = now_ns();
		share = 100.0 * (double)(c1 - c0) / (double)(w1 - w0);
		if (parked)
			TH_LOG("%-26s %11.1f ms %11.3f%%", work_names[kind], parked_after / 1e6, share);
		else
			TH_LOG("%-26s %14s %11.3f%%", work_names[kind], "not in 2 s", share);
		EXPECT_LT(share, starved_share_bound(parked ? 0.1 : 0.5, (w1 - w0) / 1e9))
			TH_LOG("%s: CPU share", work_names[kind]);
		stop_work(bg);
	}
	stop_task(hog);
}

/*
 * Five equal-nice idle-batch tasks of different kinds alone on a CPU, for
 * 10 s with 100 ms timeslices: each gets its fifth within 9%, plus a tick
 * per slice: a slice's end is noticed at a tick, so a turn that starts
 * between ticks (after a nap or a read) may run up to a tick long (10%
 * at HZ=1000, 13% at HZ=250).
 */
TEST_F_TIMEOUT(work, equal_shares_whatever_the_work, 60)
{
	static const enum work_kind kinds[] = {
		WORK_SPIN, WORK_YIELD, WORK_READ_BIG, WORK_NAP, WORK_MPROTECT,
	};
	const int n = ARRAY_SIZE(kinds);
	uint64_t c0[ARRAY_SIZE(kinds)], w0, w1, total = 0;
	pid_t pids[ARRAY_SIZE(kinds)];
	double used[ARRAY_SIZE(kinds)], band;

	ASSERT_EQ(0, write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", "100"));
	for (int i = 0; i < n; i++)
		pids[i] = start_work(kinds[i], SCHED_IDLEBATCH, 0, CPU);
	sleep(1);
	w0 = now_ns();
	for (int i = 0; i < n; i++)
		c0[i] = group_cputime_ns(pids[i]);
	sleep(10);
	w1 = now_ns();
	for (int i = 0; i < n; i++) {
		used[i] = (double)(group_cputime_ns(pids[i]) - c0[i]);
		total += (uint64_t)used[i];
	}
	for (int i = 0; i < n; i++)
		stop_work(pids[i]);
	TH_LOG("CPU %d was %.1f%% used in %.1f s", CPU, 100.0 * total / (w1 - w0), (w1 - w0) / 1e9);
	band = 0.09 + (double)tick_ns() / 100e6;
	for (int i = 0; i < n; i++) {
		double share = used[i] / (double)total;

		TH_LOG("%-26s %5.1f%% of the time they got (a fifth within %.0f%%)",
		       work_names[kinds[i]], 100 * share, 100 * band);
		EXPECT_GT(share * n, 1 - band) TH_LOG("%s", work_names[kinds[i]]);
		EXPECT_LT(share * n, 1 + band) TH_LOG("%s", work_names[kinds[i]]);
	}
}

struct pi_pair {
	pthread_mutex_t *lock;
	volatile int *locked;
};

/* Take the lock, then hold it while using 100 ms of CPU, in user mode. */
static void *pi_owner(void *arg)
{
	struct pi_pair *pair = arg;

	pthread_mutex_lock(pair->lock);
	*pair->locked = 1;
	use_cpu_ns(100e6);
	pthread_mutex_unlock(pair->lock);
	spin_forever();
	return NULL;
}

static void *pi_waiter(void *arg)
{
	struct pi_pair *pair = arg;

	while (!*pair->locked)
		usleep(1000);
	pthread_mutex_lock(pair->lock);
	pthread_mutex_unlock(pair->lock);
	return NULL;
}

/*
 * An idle-batch thread holding a PI mutex that its idle-batch sibling waits
 * for is parked next to a hog all the same; a normal waiter that comes
 * later still brings it back and gets the lock first.
 */
TEST_F_TIMEOUT(work, an_idle_batch_pi_waiter_gives_no_boost, 60)
{
	struct pi_shared *sh = pi_shared_create();
	struct timespec deadline;
	pid_t hog, proc;
	uint64_t t0;
	double share;
	int ret;

	ASSERT_NE(NULL, sh);
	hog = start_spinner(SCHED_OTHER, 0, CPU);
	proc = fork();
	if (proc == 0) {
		struct pi_pair pair = { &sh->lock, &sh->locked };
		pthread_t owner, waiter;

		pin_to_cpu(0, CPU);
		set_policy(0, SCHED_IDLEBATCH);
		pthread_create(&owner, NULL, pi_owner, &pair);
		pthread_create(&waiter, NULL, pi_waiter, &pair);
		pthread_join(waiter, NULL);
		pause();
		_exit(0);
	}
	/* The owner takes the lock when it first gets idle time: give it some. */
	kill(hog, SIGSTOP);
	while (!sh->locked)
		usleep(1000);
	kill(hog, SIGCONT);
	usleep(500000);
	share = cpu_share(proc, 3.0);
	TH_LOG("owner and waiter next to a hog: %.3f%% of the CPU", share);
	EXPECT_LT(share, 1.0);

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	t0 = now_ns();
	ret = pthread_mutex_timedlock(&sh->lock, &deadline);
	TH_LOG("a normal waiter got the lock after %.1f ms (status %d)", (now_ns() - t0) / 1e6, ret);
	EXPECT_EQ(0, ret);
	EXPECT_LT(now_ns() - t0, 2000000000ull);
	if (!ret)
		pthread_mutex_unlock(&sh->lock);
	kill(proc, SIGKILL);
	waitpid(proc, NULL, 0);
	stop_task(hog);
	munmap(sh, sizeof(*sh));
}

/*
 * A child that makes itself idle-batch between vfork() and exec, as
 * posix_spawn() does for POSIX_SPAWN_SETSCHEDULER (glibc accepts only
 * SCHED_OTHER, SCHED_FIFO and SCHED_RR there, so this is done by hand):
 * the normal parent, waiting in the kernel, is not held up while hogs
 * keep every CPU busy.
 */
TEST_F(work, a_vfork_parent_is_not_held_by_an_idle_batch_child)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t hogs[16], child;
	uint64_t t0;

	for (long i = 0; i < ncpu && i < 16; i++)
		hogs[i] = start_spinner(SCHED_OTHER, 0, i);
	usleep(200000);
	t0 = now_ns();
	child = vfork();
	if (child == 0) {
		struct sched_param sp = { 0 };

		if (sched_setscheduler(0, SCHED_IDLEBATCH, &sp) == 0)
			execl("/bin/sleep", "sleep", "1000", (char *)NULL);
		_exit(1);
	}
	TH_LOG("vfork() returned after %.1f ms", (now_ns() - t0) / 1e6);
	ASSERT_GT(child, 0);
	EXPECT_LT(now_ns() - t0, 5000000000ull);
	EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(child));
	stop_task(child);
	for (long i = 0; i < ncpu && i < 16; i++)
		stop_task(hogs[i]);
}

/*
 * The vfork() exception is for parents that are not idle-batch: an
 * idle-batch parent's vfork() child that never execs is parked as usual.
 */
TEST_F(work, an_idle_batch_vfork_child_is_parked)
{
	pid_t hog = start_spinner(SCHED_OTHER, 0, CPU), parent, child = 0;
	double share;

	/* Next to the hog, the parent would be parked before its vfork(). */
	kill(hog, SIGSTOP);
	parent = fork();
	if (parent == 0) {
		pin_to_cpu(0, CPU);
		set_policy(0, SCHED_IDLEBATCH);
		if (vfork() == 0)
			for (;;)
				__asm__ volatile("" ::: "memory");
		_exit(0);
	}
	for (int i = 0; i < 1000 && !child; i++) {
		usleep(5000);
		child = find_child(parent);
	}
	kill(hog, SIGCONT);
	ASSERT_NE(0, child);
	usleep(500000);
	share = cpu_share(child, 3.0);
	TH_LOG("a spinning vfork() child of an idle-batch parent next to a hog: %.3f%%", share);
	EXPECT_LT(share, starved_share_bound(0.1, 3.0));
	stop_task(child);
	/* Back from vfork(), the parent is parked next to the hog. */
	stop_task(parent);
	stop_task(hog);
}

static void on_alarm(int sig)
{
}

/*
 * Signals unpark a task so the kernel side of each runs promptly; its
 * handler then waits for idle time.  A 1 kHz interval timer is the most a
 * task gets that way: measured, and bounded at 2% of the CPU.
 */
TEST_F(work, a_signal_storm_buys_only_its_kernel_side)
{
	pid_t hog = start_spinner(SCHED_OTHER, 0, CPU), pid;
	double share;

	pid = fork();
	if (pid == 0) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

		signal(SIGALRM, on_alarm);
		pin_to_cpu(0, CPU);
		set_policy(0, SCHED_IDLEBATCH);
		setitimer(ITIMER_REAL, &it, NULL);
		spin_forever();
	}
	usleep(500000);
	share = cpu_share(pid, 3.0);
	TH_LOG("idle-batch spinner with a 1 kHz SIGALRM next to a hog: %.3f%%", share);
	EXPECT_LT(share, 2.0);
	stop_task(pid);
	stop_task(hog);
}

/*
 * Families of short-lived idle-batch tasks: a relay, where each member
 * forks the next and exits; an idle-batch parent that forks one child at a
 * time and waits for it; and a normal parent, on CPU 0, whose children
 * make themselves idle-batch on CPU.  Each member spins for 2 ms of CPU
 * time and counts itself in @count before it exits.
 */
enum family_kind { FAMILY_RELAY, FAMILY_IDLEBATCH_PARENT, FAMILY_NORMAL_PARENT };

static const char *const family_names[] = {
	[FAMILY_RELAY] = "a relay of idle-batch tasks",
	[FAMILY_IDLEBATCH_PARENT] = "an idle-batch parent's children",
	[FAMILY_NORMAL_PARENT] = "a normal parent's idle-batch children",
};

static void family_member_work(unsigned long *count)
{
	use_cpu_ns(2e6);
	__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
}

/* The family's leader, in a group of its own for group_cputime_ns() */
static pid_t start_family(enum family_kind kind, unsigned long *count)
{
	pid_t pid = fork(), child;

	if (pid != 0)
		return pid;
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	switch (kind) {
	case FAMILY_RELAY:
		/* The leader, a normal task on CPU 0, reaps the relay's members */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		pin_to_cpu(0, 0);
		if (fork() == 0) {
			enter_policy_or_exit(SCHED_IDLEBATCH, 0, CPU);
			for (;;) {
				family_member_work(count);
				if (fork() > 0)
					_exit(0);
			}
		}
		for (;;)
			wait(NULL);
	case FAMILY_IDLEBATCH_PARENT:
		enter_policy_or_exit(SCHED_IDLEBATCH, 0, CPU);
		break;
	case FAMILY_NORMAL_PARENT:
		pin_to_cpu(0, 0);
		break;
	}
	for (;;) {
		child = fork();
		if (child == 0) {
			if (kind == FAMILY_NORMAL_PARENT)
				enter_policy_or_exit(SCHED_IDLEBATCH, 0, CPU);
			family_member_work(count);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
}

/*
 * An idle-batch spinner and a family on CPU for @seconds: the spinner's
 * share of the CPU time the two got (the family had the rest), and in
 * @count the members that ran.
 */
static double spinner_share_next_to(enum family_kind kind, double seconds,
				    unsigned long *count)
{
	pid_t spinner = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	pid_t family = start_family(kind, count);
	uint64_t s0, f0, s1, f1;
	unsigned long n0;

	usleep(500000);
	n0 = __atomic_load_n(count, __ATOMIC_RELAXED);
	s0 = cputime_ns(spinner);
	f0 = group_cputime_ns(family);
	usleep((useconds_t)(seconds * 1e6));
	s1 = cputime_ns(spinner);
	f1 = group_cputime_ns(family);
	*count = __atomic_load_n(count, __ATOMIC_RELAXED) - n0;
	stop_work(family);
	stop_task(spinner);
	return (double)(s1 - s0) / (double)(s1 - s0 + f1 - f0);
}

/*
 * A family of short-lived idle-batch tasks holds about one timeslice per
 * round, as a single task does: it neither starves a task waiting for the
 * next round (if each member brought a full timeslice into the round, the
 * round would never end) nor is starved itself (a parent halving its
 * timeslice at every fork).  With 100 ms timeslices for each kind of
 * family; then with the default timeslice for the parent that waits for
 * each child, whose share rests on getting back what its children leave
 * unused: close to half, where a family that gets only its parent's
 * timeslice back gets a third.
 */
TEST_F_TIMEOUT(work, a_family_of_short_lived_tasks_gets_one_share, 120)
{
	static const enum family_kind kinds[] = {
		FAMILY_RELAY, FAMILY_IDLEBATCH_PARENT, FAMILY_NORMAL_PARENT,
	};
	unsigned long *count = mmap(NULL, sizeof(*count), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double spinner;

	ASSERT_NE(MAP_FAILED, count);
	ASSERT_EQ(0, write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", "100"));
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		*count = 0;
		spinner = spinner_share_next_to(kinds[i], 4.0, count);
		TH_LOG("100 ms slices, %s: spinner %.1f%%, family %.1f%%, %lu members ran",
		       family_names[kinds[i]], 100 * spinner, 100 * (1 - spinner), *count);
		EXPECT_GT(spinner, 0.3) TH_LOG("%s", family_names[kinds[i]]);
		EXPECT_GE(*count, 10UL) TH_LOG("%s", family_names[kinds[i]]);
		/* A parent that waits for each child: measured 49% */
		if (kinds[i] == FAMILY_IDLEBATCH_PARENT)
			EXPECT_GT(1 - spinner, 0.35);
	}
	/* The default timeslice (1.5 s): about six rounds */
	ASSERT_EQ(0, write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", self->old_slice));
	*count = 0;
	spinner = spinner_share_next_to(FAMILY_IDLEBATCH_PARENT, 18.0, count);
	TH_LOG("%s ms slices, %s: spinner %.1f%%, family %.1f%%, %lu members ran",
	       self->old_slice, family_names[FAMILY_IDLEBATCH_PARENT], 100 * spinner,
	       100 * (1 - spinner), *count);
	/*
	 * Measured 45%.  A third (36%) before the parent took over the next
	 * round's timeslice its last child started and left unused.
	 */
	EXPECT_GT(spinner, 0.3);
	EXPECT_GT(1 - spinner, 0.35);
	munmap(count, sizeof(*count));
}

TEST_HARNESS_MAIN
