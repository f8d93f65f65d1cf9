// SPDX-License-Identifier: GPL-2.0
/*
 * SCHED_IDLEBATCH tasks use idle time only (semantics 2, 5 and 7 of the
 * policy): no CPU time next to a normal task, all of an idle CPU, turns
 * shared by nice, and no load average.  Measured from /proc over seconds.
 */
#include "idlebatch.h"
#include "workloads.h"
#include "kselftest_harness.h"

#define CPU 1

FIXTURE(idle) {
	pid_t pids[4];
	int n;
};

FIXTURE_SETUP(idle)
{
	REQUIRE_IDLEBATCH();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	self->n = 0;
}

FIXTURE_TEARDOWN(idle)
{
	for (int i = 0; i < self->n; i++)
		stop_task(self->pids[i]);
}

static pid_t add(struct _test_data_idle *self, int policy, int nice, int cpu)
{
	pid_t pid = start_spinner(policy, nice, cpu);

	self->pids[self->n++] = pid;
	return pid;
}

TEST_F(idle, alone_on_a_cpu_it_uses_all_of_it)
{
	pid_t batch = add(self, SCHED_IDLEBATCH, 0, CPU);
	double share;

	usleep(300000);
	share = cpu_share(batch, 2.0);
	TH_LOG("idle-batch task alone on CPU %d: %.1f%%", CPU, share);
	EXPECT_GT(share, 80.0);
}

TEST_F(idle, next_to_a_nice0_hog_it_gets_no_cpu)
{
	pid_t batch, hog;
	double share_batch, share_hog;

	hog = add(self, SCHED_OTHER, 0, CPU);
	batch = add(self, SCHED_IDLEBATCH, 0, CPU);
	usleep(300000);
	share_batch = cpu_share(batch, 4.0);
	share_hog = cpu_share(hog, 1.0);
	TH_LOG("idle-batch %.3f%%, nice-0 hog %.1f%%", share_batch, share_hog);
	/* SCHED_IDLE takes 0.35% here, nice 19 1.5%. */
	EXPECT_LT(share_batch, starved_share_bound(0.1, 4.0));
	EXPECT_GT(share_hog, 90.0);
	EXPECT_EQ('R', task_state(batch));
}

TEST_F(idle, it_runs_again_when_the_hog_stops)
{
	pid_t batch, hog;
	double share;

	hog = add(self, SCHED_OTHER, 0, CPU);
	batch = add(self, SCHED_IDLEBATCH, 0, CPU);
	usleep(500000);
	kill(hog, SIGSTOP);
	usleep(200000);
	share = cpu_share(batch, 1.0);
	kill(hog, SIGCONT);
	TH_LOG("idle-batch task once the hog stopped: %.1f%%", share);
	EXPECT_GT(share, 80.0);
}

/*
 * A task that sleeps and wakes again and again keeps its wakeup latency
 * next to an idle-batch hog: a waking task preempts it at once.
 */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

TEST_F(idle, waking_tasks_preempt_it_at_once)
{
	enum { N = 200 };
	uint64_t late[N];

	add(self, SCHED_IDLEBATCH, -20, CPU);
	ASSERT_EQ(0, pin_to_cpu(0, CPU));
	usleep(200000);
	for (int i = 0; i < N; i++) {
		uint64_t t0 = now_ns();

		usleep(2000);
		late[i] = now_ns() - t0 - 2000000;
	}
	pin_to_cpu(0, 0);
	qsort(late, N, sizeof(late[0]), cmp_u64);
	TH_LOG("wakeup delay next to a nice -20 idle-batch hog: median %.2f ms, 95th %.2f ms",
	       late[N / 2] / 1e6, late[N * 95 / 100] / 1e6);
	/* A nice -20 fair hog would keep the CPU for its slice, 3 ms or more. */
	EXPECT_LT(late[N / 2], 2000000ull);
	EXPECT_LT(late[N * 95 / 100], 15000000ull);
}

/* Round robin: nice sets the share of the idle time, as the slices scale. */
TEST_F(idle, nice_sets_the_share_of_idle_time)
{
	pid_t a, b;
	uint64_t a0, b0, a1, b1;
	double ratio;

	a = add(self, SCHED_IDLEBATCH, 0, CPU);
	b = add(self, SCHED_IDLEBATCH, 19, CPU);
	usleep(200000);
	a0 = cputime_ns(a);
	b0 = cputime_ns(b);
	sleep(7);
	a1 = cputime_ns(a);
	b1 = cputime_ns(b);
	ratio = (double)(a1 - a0) / (double)(b1 - b0 + 1);
	TH_LOG("nice 0: %.2f s, nice 19: %.2f s, ratio %.1f (slices 1.5 s : 0.1 s)",
	       (a1 - a0) / 1e9, (b1 - b0) / 1e9, ratio);
	EXPECT_GT(b1 - b0, 50000000ull);	/* nice 19 still gets its turns */
	EXPECT_GT(ratio, 5.0);
}

TEST_F(idle, equal_nice_takes_equal_turns)
{
	pid_t a, b;
	uint64_t a0, b0, da, db;

	a = add(self, SCHED_IDLEBATCH, 10, CPU);
	b = add(self, SCHED_IDLEBATCH, 10, CPU);
	usleep(200000);
	a0 = cputime_ns(a);
	b0 = cputime_ns(b);
	sleep(6);	/* several rounds of ~0.85 s slices */
	da = cputime_ns(a) - a0;
	db = cputime_ns(b) - b0;
	TH_LOG("two nice-10 idle-batch tasks: %.2f s and %.2f s", da / 1e9, db / 1e9);
	EXPECT_GT(da, 1000000000ull);
	EXPECT_GT(db, 1000000000ull);
	EXPECT_LT(da > db ? da - db : db - da, (da + db) / 3);
}

/*
 * Fair is not misled: a CPU that runs only idle-batch tasks counts as
 * idle.  A normal task that sleeps and wakes is placed there rather than
 * next to a normal hog, and the load balancer moves a normal hog there.
 */
TEST_F(idle, waking_normal_tasks_are_placed_on_a_cpu_with_only_idle_batch_work)
{
	int on_batch_cpu = 0;

	add(self, SCHED_OTHER, 0, 0);
	add(self, SCHED_IDLEBATCH, 0, CPU);
	usleep(300000);
	for (int i = 0; i < 200; i++) {
		usleep(3000);
		on_batch_cpu += sched_getcpu() == CPU;
	}
	TH_LOG("%d of 200 wakeups ran on CPU %d (idle-batch work only), not next to the hog",
	       on_batch_cpu, CPU);
	EXPECT_GT(on_batch_cpu, 180);
}

TEST_F(idle, fair_balancing_moves_normal_work_to_a_cpu_with_only_idle_batch_work)
{
	pid_t a, b;
	double sa, sb;

	add(self, SCHED_IDLEBATCH, 0, CPU);
	a = add(self, SCHED_OTHER, 0, 0);
	b = add(self, SCHED_OTHER, 0, 0);
	usleep(200000);
	/* Both normal hogs start on CPU 0; now let them go anywhere. */
	ASSERT_EQ(0, allow_all_cpus(a));
	ASSERT_EQ(0, allow_all_cpus(b));
	sleep(2);
	sa = cpu_share(a, 2.0);
	sb = cpu_share(b, 2.0);
	TH_LOG("normal hogs after balancing: %.1f%% and %.1f%%", sa, sb);
	EXPECT_GT(sa, 80.0);
	EXPECT_GT(sb, 80.0);
}

/*
 * Idle time expected to be short is left idle: next to a service that
 * idles for about a hundred microseconds at a time, an idle-batch task
 * runs in few of those gaps (it is parked each time the service wakes, so
 * parks count the gaps it ran in), while with sched_idlebatch_min_idle_us
 * 0 it runs in nearly every one.  Gaps of milliseconds are filled either
 * way, and so is a CPU whose service has stopped.  Both settings are
 * measured in the same test, in turns, and the setting found is put back.
 */
#define MIN_IDLE_SYSCTL "/proc/sys/kernel/sched_idlebatch_min_idle_us"

struct gap_fill {
	double parks_per_s, share;
	double share_after;	/* once the service has stopped */
};

static int fill_gaps(unsigned int busy_us, unsigned int idle_us, const char *min_idle,
		     struct gap_fill *fill)
{
	pid_t service, batch;
	long p0, p1;
	uint64_t c0, c1, t0, t1;

	if (write_file(MIN_IDLE_SYSCTL, min_idle))
		return -1;
	batch = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	service = start_duty_hog(CPU, busy_us, idle_us);
	usleep(300000);
	p0 = task_parks(batch);
	c0 = cputime_ns(batch);
	t0 = now_ns();
	usleep(1500000);
	p1 = task_parks(batch);
	c1 = cputime_ns(batch);
	t1 = now_ns();
	stop_task(service);
	usleep(100000);
	fill->share_after = cpu_share(batch, 0.5);
	stop_task(batch);
	if (p0 < 0 || p1 < 0)
		return -1;
	fill->parks_per_s = (double)(p1 - p0) / ((double)(t1 - t0) / 1e9);
	fill->share = 100.0 * (double)(c1 - c0) / (double)(t1 - t0);
	return 0;
}

TEST_F_TIMEOUT(idle, only_idle_time_expected_to_last_is_filled, 60)
{
	struct gap_fill held[2] = { 0 }, all[2] = { 0 }, f = { 0 };
	double held_after = 100;
	static const unsigned int idle_us[2] = { 50, 3000 };
	char saved[32];
	int failed = 0;

	ASSERT_NE(0, read_line(MIN_IDLE_SYSCTL, saved, sizeof(saved))[0])
		TH_LOG("%s: %s", MIN_IDLE_SYSCTL, strerror(errno));
	for (int round = 0; round < 2 && !failed; round++) {
		for (int g = 0; g < 2 && !failed; g++) {
			failed |= fill_gaps(300, idle_us[g], "500", &f);
			held[g].parks_per_s += f.parks_per_s / 2;
			held[g].share += f.share / 2;
			held_after = f.share_after < held_after ? f.share_after : held_after;
			failed |= fill_gaps(300, idle_us[g], "0", &f);
			all[g].parks_per_s += f.parks_per_s / 2;
			all[g].share += f.share / 2;
		}
	}
	ASSERT_EQ(0, write_file(MIN_IDLE_SYSCTL, saved));
	ASSERT_EQ(0, failed);
	for (int g = 0; g < 2; g++)
		TH_LOG("service 300 us on, usleep(%u) off: idle-batch parks/s %.0f, CPU %.1f%% "
		       "(min_idle_us 500); %.0f, %.1f%% (0)", idle_us[g], held[g].parks_per_s,
		       held[g].share, all[g].parks_per_s, all[g].share);
	/* Short gaps: every one filled without the hold, few with it */
	EXPECT_GT(all[0].parks_per_s, 200);
	EXPECT_LT(held[0].parks_per_s, all[0].parks_per_s / 4);
	TH_LOG("once the service stopped, the held idle-batch task took at least %.1f%%", held_after);
	EXPECT_GT(held_after, 80.0);
	/* Long gaps: filled at once either way */
	EXPECT_GT(held[1].parks_per_s, all[1].parks_per_s * 3 / 4);
	EXPECT_GT(held[1].share, all[1].share * 0.8);
}

static long procs_running(void)
{
	return (long)labelled_value("/proc/stat", "procs_running %lld");
}

static double loadavg1(long *running)
{
	double l1 = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf %*f %*f %ld/", &l1, running) != 2)
			l1 = -1;
		fclose(f);
	}
	return l1;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/*
 * A normal task limited by cpu.max (Kubernetes' CPU limits, systemd's
 * CPUQuota=) gets its quota beside an idle-batch task, and all of the CPU
 * once the limit is lifted: bandwidth control puts a throttled group back
 * without a wakeup, so unthrottle_cfs_rq() must reschedule a CPU that runs
 * an idle-batch task as it does an idle one.  The background is a spinner
 * (in user mode when the group comes back) and then one 64 MiB read()
 * after another (in the kernel).  The idle-batch task gets the rest.
 */
static void quota_beside(struct _test_data_idle *self, struct __test_metadata *_metadata,
			 pid_t batch, const char *what)
{
	static const char cg[] = "/sys/fs/cgroup/idlebatch-quota";
	char pidbuf[32], path[128];
	double limited, filler, unlimited;
	pid_t normal;

	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	snprintf(path, sizeof(path), "%s/cpu.max", cg);
	ASSERT_EQ(0, write_file(path, "40000 100000"));
	normal = add(self, SCHED_OTHER, 0, CPU);
	snprintf(pidbuf, sizeof(pidbuf), "%d", normal);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	ASSERT_EQ(0, write_file(path, pidbuf));
	usleep(500000);
	limited = cpu_share(normal, 3.0);
	filler = (double)threads_cputime_ns(batch);
	usleep(1000000);
	filler = ((double)threads_cputime_ns(batch) - filler) / 1e7;
	snprintf(path, sizeof(path), "%s/cpu.max", cg);
	ASSERT_EQ(0, write_file(path, "max"));
	usleep(100000);
	unlimited = cpu_share(normal, 1.0);
	TH_LOG("beside %s: normal task with cpu.max 40000 100000: %.1f%% (idle-batch: %.1f%%); with max: %.1f%%",
	       what, limited, filler, unlimited);
	EXPECT_GT(limited, 34.0);
	EXPECT_LT(limited, 42.0);
	EXPECT_GT(filler, 40.0);
	EXPECT_GT(unlimited, 90.0);
	stop_task(normal);
	self->pids[--self->n] = 0;
	EXPECT_EQ(0, rmdir(cg));
}

TEST_F(idle, a_cpu_max_limited_task_gets_its_quota)
{
	pid_t batch;

	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
	if (!config_has("CONFIG_CFS_BANDWIDTH"))
		SKIP(return, "no cpu.max: the kernel lacks CONFIG_CFS_BANDWIDTH");
	batch = add(self, SCHED_IDLEBATCH, 0, CPU);
	quota_beside(self, _metadata, batch, "an idle-batch spinner");
	stop_task(batch);
	self->n--;
	batch = start_work(WORK_READ_HUGE, SCHED_IDLEBATCH, 0, CPU);
	ASSERT_LT(0, batch);
	quota_beside(self, _metadata, batch, "idle-batch 64 MiB read()s");
	stop_work(batch);
}

TEST_F(idle, idle_batch_tasks_are_not_load)
{
	long running = -1, run_samples[9];
	double before, after;

	before = loadavg1(&running);
	for (int i = 0; i < 4; i++)
		add(self, SCHED_IDLEBATCH, 0, -1);
	sleep(11);	/* two load-average updates (every 5 s) */
	after = loadavg1(&running);
	/*
	 * Counted, the four hogs and this task would make 5 or more in every
	 * sample.  The median of 9 samples, 0.1 s apart, leaves out the
	 * moments when a few of the guest's kernel threads run at once (one
	 * sample read 4 in a full suite run, right after a reading of 1).
	 */
	for (int i = 0; i < 9; i++) {
		run_samples[i] = procs_running();
		usleep(100000);
	}
	qsort(run_samples, 9, sizeof(run_samples[0]), cmp_long);
	TH_LOG("4 idle-batch hogs: loadavg %.2f -> %.2f, running %ld, procs_running %ld .. %ld, median %ld",
	       before, after, running, run_samples[0], run_samples[8], run_samples[4]);
	/* Four hogs that counted would raise it by 0.5 or more in 11 s. */
	EXPECT_LT(after - before, 0.15);
	EXPECT_LE(running, 3);
	EXPECT_LE(run_samples[4], 3);
}

TEST_HARNESS_MAIN
