// SPDX-License-Identifier: GPL-2.0
/*
 * The idle-batch balancer on a 4-CPU guest: idle-batch tasks spread
 * evenly, leave a CPU that gets a normal CPU hog and come back when it
 * stops, get equal CPU time under uneven normal load, stay put under a
 * steady load, respect affinity, scale to 2,000 tasks without hurting a
 * normal task's wakeups, and survive CPU hotplug.  Measured from /proc.
 */
#include "../idlebatch.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"

#define NCPU		4
#define NSPIN		8
#define SAMPLE_US	250000

/* The CPU a task last ran on: field 39 of /proc/PID/stat */
static int task_cpu_of(pid_t pid)
{
	return (int)stat_field(pid, 39);
}

/* How many of @pids sit on each CPU; -1 if one of them is gone. */
static int count_per_cpu(const pid_t *pids, int n, int count[NCPU])
{
	memset(count, 0, NCPU * sizeof(count[0]));
	for (int i = 0; i < n; i++) {
		int cpu = task_cpu_of(pids[i]);

		if (cpu < 0 || cpu >= NCPU)
			return -1;
		count[cpu]++;
	}
	return 0;
}

static void format_counts(const int count[NCPU], char *buf, size_t size)
{
	snprintf(buf, size, "%d %d %d %d", count[0], count[1], count[2], count[3]);
}

/*
 * Poll until every CPU in @cpus (a bit mask) holds between @lo and @hi of
 * @pids and every other CPU none, in two samples in a row.  Returns the
 * seconds it took, or -1 after @timeout_s; the last counts in @count.
 */
static double wait_for_counts(const pid_t *pids, int n, unsigned int cpus, int lo, int hi,
			      double timeout_s, int count[NCPU])
{
	uint64_t start = now_ns();
	int good = 0;

	while ((now_ns() - start) / 1e9 < timeout_s) {
		int ok = count_per_cpu(pids, n, count) == 0;

		for (int c = 0; c < NCPU && ok; c++) {
			if (cpus & (1u << c))
				ok = count[c] >= lo && count[c] <= hi;
			else
				ok = count[c] == 0;
		}
		good = ok ? good + 1 : 0;
		if (good == 2)
			return (now_ns() - start) / 1e9;
		usleep(SAMPLE_US);
	}
	return -1;
}

/* se.nr_migrations of a task, from /proc/PID/sched (CONFIG_SCHED_DEBUG) */
static long long nr_migrations(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	return labelled_value(path, "se.nr_migrations : %lld");
}

static long long total_migrations(const pid_t *pids, int n)
{
	long long sum = 0;

	for (int i = 0; i < n; i++) {
		long long m = nr_migrations(pids[i]);

		if (m < 0)
			return -1;
		sum += m;
	}
	return sum;
}

/* Jain's fairness index: 1 when all are equal, 1/n when one gets all. */
static double jain_index(const double *x, int n)
{
	double sum = 0, squares = 0;

	for (int i = 0; i < n; i++) {
		sum += x[i];
		squares += x[i] * x[i];
	}
	return squares > 0 ? sum * sum / (n * squares) : 0;
}

/*
 * Wakeup delay of a normal task on CPU 0: it sleeps 1 ms @n times; the
 * delay is how much longer each sleep took.  Median and 95th percentile
 * in ms.
 */
static void wakeup_delays(int n, double *median, double *p95)
{
	double *delay = calloc(n, sizeof(*delay));
	struct timespec req = { 0, 1000000 };

	pin_to_cpu(0, 0);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		nanosleep(&req, NULL);
		delay[i] = (now_ns() - t0) / 1e6 - 1.0;
	}
	allow_all_cpus(0);
	qsort(delay, n, sizeof(*delay), cmp_double);
	*median = delay[n / 2];
	*p95 = delay[n * 95 / 100];
	free(delay);
}

FIXTURE(balance) {
	pid_t pids[NSPIN];
	int n;
	pid_t normal[3];
	int n_normal;
	pid_t threads;
};

FIXTURE_SETUP(balance)
{
	REQUIRE_IDLEBATCH();
	if (sysconf(_SC_NPROCESSORS_ONLN) != NCPU)
		SKIP(return, "needs exactly %d online CPUs, has %ld", NCPU,
		     sysconf(_SC_NPROCESSORS_ONLN));
	self->n = 0;
	self->n_normal = 0;
	self->threads = 0;
}

FIXTURE_TEARDOWN(balance)
{
	for (int i = 0; i < self->n; i++)
		stop_task(self->pids[i]);
	for (int i = 0; i < self->n_normal; i++)
		stop_task(self->normal[i]);
	if (self->threads > 0) {
		/* A shell's children too, if it started any */
		kill(-self->threads, SIGKILL);
		stop_task(self->threads);
	}
	for (int c = 1; c < NCPU; c++)
		set_cpu_online(c, 1);
}

static void start_spinners(struct _test_data_balance *self, int n)
{
	for (int i = 0; i < n; i++)
		self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, -1);
}

/*
 * The seed's demonstration: eight idle-batch CPU hogs spread two per CPU;
 * a nice-0 CPU hog gets its CPU to itself and the hogs share the other
 * three; when it stops they spread back.
 */
TEST_F_TIMEOUT(balance, spread_leave_and_return, 120)
{
	const int hog_cpu = 2;
	int count[NCPU];
	char text[32];
	double t, share;

	start_spinners(self, NSPIN);
	t = wait_for_counts(self->pids, self->n, 0xf, 1, 3, 15, count);
	format_counts(count, text, sizeof(text));
	TH_LOG("8 idle-batch hogs spread to %s after %.1f s", text, t);
	ASSERT_GE(t, 0);
	/* Two per CPU, give or take one, for the next three seconds too */
	for (int s = 0; s < 12; s++) {
		usleep(SAMPLE_US);
		ASSERT_EQ(0, count_per_cpu(self->pids, self->n, count));
		for (int c = 0; c < NCPU; c++) {
			ASSERT_GE(count[c], 1);
			ASSERT_LE(count[c], 3);
		}
	}

	self->normal[self->n_normal++] = start_spinner(SCHED_OTHER, 0, hog_cpu);
	t = wait_for_counts(self->pids, self->n, 0xf & ~(1u << hog_cpu), 2, 3, 15, count);
	format_counts(count, text, sizeof(text));
	TH_LOG("nice-0 hog on CPU %d: idle-batch hogs at %s after %.1f s", hog_cpu, text, t);
	ASSERT_GE(t, 0);
	ASSERT_LE(t, 6);
	share = cpu_share(self->normal[0], 4);
	ASSERT_EQ(0, count_per_cpu(self->pids, self->n, count));
	format_counts(count, text, sizeof(text));
	TH_LOG("nice-0 hog's share of CPU %d: %.1f%% (idle-batch hogs at %s)", hog_cpu, share, text);
	ASSERT_GE(share, 95.0);
	ASSERT_EQ(0, count[hog_cpu]);

	stop_task(self->normal[0]);
	self->n_normal = 0;
	t = wait_for_counts(self->pids, self->n, 0xf, 1, 3, 15, count);
	format_counts(count, text, sizeof(text));
	TH_LOG("hog stopped: idle-batch hogs back at %s after %.1f s", text, t);
	ASSERT_GE(t, 0);
}

/* The pids of the processes running @prog, by their /proc/PID/cmdline */
static int pids_of(const char *prog, pid_t *pids, int max)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < max) {
		char path[300], cmd[400] = "";
		pid_t pid = atoi(d->d_name);
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(cmd, sizeof(cmd), f))
			cmd[0] = 0;
		fclose(f);
		if (strcmp(cmd, prog) == 0)
			pids[n++] = pid;
	}
	closedir(dir);
	return n;
}

/* The running count of /proc/loadavg: "0.00 0.00 0.00 R/T LAST" */
static int loadavg_running(void)
{
	double a, b, c;
	int running = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lf %lf %lf %d/", &a, &b, &c, &running) != 4)
		running = -1;
	fclose(f);
	return running;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * As a user would start them: eight CPU hogs started one by one from a
 * shell, each making itself idle-batch after its exec, so that nothing
 * placed them as idle-batch tasks when they started.  Within two seconds
 * of the last one they must be spread evenly (at most one apart) and stay
 * so, and they must not be in fair, where /proc/loadavg counts them.
 */
TEST_F_TIMEOUT(balance, spread_when_started_from_a_shell, 120)
{
	char spin[400], script[1024], text[32];
	int count[NCPU], worst = 0, s, max, min, running[10], in_fair[10];
	pid_t shell;

	ASSERT_EQ(0, test_helper("spin", spin, sizeof(spin)));
	snprintf(script, sizeof(script),
		 "for i in 1 2 3 4 5 6 7 8; do \"%s\" -b & sleep 0.3; done; wait", spin);
	shell = fork();
	if (shell == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	self->threads = shell;
	/* Every start is an exec over 9p under TCG: wait for the eighth */
	for (s = 0; s < 600 && self->n < NSPIN; s++) {
		usleep(100000);
		self->n = pids_of(spin, self->pids, NSPIN);
	}
	ASSERT_EQ(NSPIN, self->n);
	TH_LOG("the eighth started %.1f s after the first", s / 10.0);
	/* Two seconds to spread */
	sleep(2);
	for (s = 0; s < 10; s++) {
		ASSERT_EQ(0, count_per_cpu(self->pids, self->n, count));
		max = min = count[0];
		for (int c = 1; c < NCPU; c++) {
			max = count[c] > max ? count[c] : max;
			min = count[c] < min ? count[c] : min;
		}
		format_counts(count, text, sizeof(text));
		TH_LOG("%.1f s after the last start: %s", 2.0 + s * 0.5, text);
		worst = max - min > worst ? max - min : worst;
		running[s] = loadavg_running();
		in_fair[s] = 0;
		for (int i = 0; i < self->n; i++)
			in_fair[s] += batch_state(self->pids[i]) == 'N';
		usleep(500000);
	}
	EXPECT_LE(worst, 1);
	/*
	 * The running count of /proc/loadavg counts this reader and any
	 * other task that waits for a CPU (kernel threads wait longer when
	 * the host is busy), and an idle-batch hog only while it is in fair.
	 * The reader's wakeup preempts the hog on its CPU; a hog sent to fair
	 * by that preemption rather than parked was in fair, and counted, in
	 * most samples.
	 */
	qsort(running, 10, sizeof(running[0]), cmp_int);
	qsort(in_fair, 10, sizeof(in_fair[0]), cmp_int);
	TH_LOG("running count of /proc/loadavg: median %d, highest %d; hogs in fair: median %d, highest %d",
	       running[5], running[9], in_fair[5], in_fair[9]);
	EXPECT_EQ(0, in_fair[5]);
}

/* Under a steady load, tasks stay where they are. */
TEST_F_TIMEOUT(balance, no_bouncing, 90)
{
	long long m0, m1;
	int count[NCPU];
	double rate;

	start_spinners(self, NSPIN);
	ASSERT_GE(wait_for_counts(self->pids, self->n, 0xf, 2, 2, 20, count), 0);
	sleep(5);
	m0 = total_migrations(self->pids, self->n);
	sleep(10);
	m1 = total_migrations(self->pids, self->n);
	ASSERT_GE(m0, 0);
	ASSERT_GE(m1, m0);
	rate = (m1 - m0) / 10.0;
	TH_LOG("8 idle-batch hogs on 4 idle CPUs: %lld migrations in 10 s (%.2f/s)",
	       m1 - m0, rate);
	ASSERT_LE(rate, 0.2);
}

/*
 * Over half a minute with uneven normal load -- a CPU hog on CPU 0, a task
 * that is busy half the time on CPU 1 -- eight idle-batch hogs get equal
 * CPU time: Jain's index of at least 0.95.
 */
TEST_F_TIMEOUT(balance, fair_under_uneven_load, 150)
{
	uint64_t before[NSPIN], t0, t1;
	double got[NSPIN], lo = 1e30, hi = 0, jain;
	long long m0, m1;
	int count[NCPU];
	char text[32];

	self->normal[self->n_normal++] = start_spinner(SCHED_OTHER, 0, 0);
	self->normal[self->n_normal++] = start_duty_hog(1, 5000, 5000);
	start_spinners(self, NSPIN);
	sleep(8);

	m0 = total_migrations(self->pids, self->n);
	t0 = now_ns();
	for (int i = 0; i < self->n; i++)
		before[i] = cputime_ns(self->pids[i]);
	sleep(30);
	for (int i = 0; i < self->n; i++) {
		got[i] = (cputime_ns(self->pids[i]) - before[i]) / 1e9;
		lo = fmin(lo, got[i]);
		hi = fmax(hi, got[i]);
	}
	t1 = now_ns();
	m1 = total_migrations(self->pids, self->n);
	jain = jain_index(got, self->n);
	ASSERT_EQ(0, count_per_cpu(self->pids, self->n, count));
	format_counts(count, text, sizeof(text));
	TH_LOG("over %.0f s: idle-batch CPU time %.2f .. %.2f s (min/max %.2f), Jain %.3f, "
	       "%lld migrations; now at %s", (t1 - t0) / 1e9, lo, hi, lo / hi, jain,
	       m1 - m0, text);
	ASSERT_GE(jain, 0.95);
	/* They used the idle time: about 2.5 CPUs of it */
	ASSERT_GE((got[0] + got[1] + got[2] + got[3] + got[4] + got[5] + got[6] + got[7]) /
		  ((t1 - t0) / 1e9), 1.5);
}

/* Tasks allowed on CPUs 0 and 1 only stay there and split evenly. */
/*
 * Goals are fractions of tasks.  With CPUs 1-3 70% busy with normal work,
 * four idle-batch tasks have goals of about 2.1 on CPU 0 and 0.6 on each
 * other CPU.  Started on CPU 0, they spread so that every CPU with idle
 * time has one: by the margins alone the last move (0.4 above its goal to
 * 0.6 below) was not worth it, and a CPU stayed idle next to two tasks
 * sharing CPU 0.
 */
TEST_F_TIMEOUT(balance, no_cpu_with_idle_time_left_empty, 90)
{
	int count[NCPU], empty = 0;
	char text[32];
	double took;

	for (int c = 1; c < NCPU; c++)
		self->normal[self->n_normal++] = start_duty_hog(c, 7000, 3000);
	for (int i = 0; i < 4; i++)
		self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, 0);
	sleep(4);
	for (int i = 0; i < self->n; i++)
		ASSERT_EQ(0, allow_all_cpus(self->pids[i]));
	took = wait_for_counts(self->pids, self->n, 0xf, 1, 1, 15, count);
	format_counts(count, text, sizeof(text));
	for (int c = 0; c < NCPU; c++)
		empty += count[c] == 0;
	TH_LOG("CPUs 1-3 70%% busy, 4 tasks from CPU 0: %s after %.1f s (-1: not within 15 s)",
	       text, took);
	EXPECT_EQ(0, empty);
}

TEST_F_TIMEOUT(balance, affinity, 60)
{
	cpu_set_t set;
	int count[NCPU];
	char text[32];
	double t;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	for (int i = 0; i < NSPIN; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			if (sched_setaffinity(0, sizeof(set), &set) || set_policy(0, SCHED_IDLEBATCH))
				_exit(101);
			spin_forever();
		}
		self->pids[self->n++] = pid;
	}
	t = wait_for_counts(self->pids, self->n, 0x3, 3, 5, 15, count);
	format_counts(count, text, sizeof(text));
	TH_LOG("8 idle-batch hogs allowed on CPUs 0-1: %s after %.1f s", text, t);
	ASSERT_GE(t, 0);
	for (int s = 0; s < 16; s++) {
		usleep(SAMPLE_US);
		ASSERT_EQ(0, count_per_cpu(self->pids, self->n, count));
		ASSERT_EQ(0, count[2] + count[3]);
	}
}

/* A CPU whose idle-batch tasks exit gets others from a crowded CPU. */
TEST_F_TIMEOUT(balance, refill_after_exit, 60)
{
	int count[NCPU], killed = 0;
	char text[32];
	double t;

	start_spinners(self, NSPIN);
	ASSERT_GE(wait_for_counts(self->pids, self->n, 0xf, 2, 2, 20, count), 0);
	sleep(3);
	for (int i = 0; i < self->n; i++) {
		if (task_cpu_of(self->pids[i]) == 3) {
			stop_task(self->pids[i]);
			self->pids[i--] = self->pids[--self->n];
			killed++;
		}
	}
	ASSERT_GE(killed, 1);
	t = wait_for_counts(self->pids, self->n, 0xf, 1, 2, 10, count);
	format_counts(count, text, sizeof(text));
	TH_LOG("%d idle-batch hogs on CPU 3 exited: the others at %s after %.1f s",
	       killed, text, t);
	ASSERT_GE(t, 0);
	ASSERT_LE(t, 3);
}

/* Offlining and onlining CPUs in a loop loses no idle-batch task. */
TEST_F_TIMEOUT(balance, hotplug, 120)
{
	uint64_t before[NSPIN];
	int count[NCPU];
	char text[32];
	double t;

	if (access("/sys/devices/system/cpu/cpu1/online", W_OK))
		SKIP(return, "CPU hotplug is not available");
	start_spinners(self, NSPIN);
	ASSERT_GE(wait_for_counts(self->pids, self->n, 0xf, 1, 3, 20, count), 0);
	for (int round = 0; round < 12; round++) {
		int cpu = 1 + round % (NCPU - 1);

		ASSERT_EQ(0, set_cpu_online(cpu, 0));
		usleep(200000);
		ASSERT_EQ(0, count_per_cpu(self->pids, self->n, count));
		ASSERT_EQ(0, count[cpu]);
		ASSERT_EQ(0, set_cpu_online(cpu, 1));
		usleep(200000);
	}
	for (int i = 0; i < self->n; i++) {
		ASSERT_EQ(0, kill(self->pids[i], 0));
		ASSERT_EQ('R', task_state(self->pids[i]));
		before[i] = cputime_ns(self->pids[i]);
	}
	t = wait_for_counts(self->pids, self->n, 0xf, 1, 3, 20, count);
	format_counts(count, text, sizeof(text));
	TH_LOG("after 12 offline/online rounds: all 8 running, at %s after %.1f s", text, t);
	ASSERT_GE(t, 0);
	sleep(2);
	for (int i = 0; i < self->n; i++)
		ASSERT_GT(cputime_ns(self->pids[i]), before[i]);
}

/* 2,000 idle-batch threads in one process, each spinning */
#define NTHREADS	2000

/* An idle-batch thread: it enters the policy itself, then spins. */
static void *spin_thread(void *arg)
{
	if (set_policy(0, SCHED_IDLEBATCH))
		_exit(103);
	spin_forever();
	return arg;
}

static pid_t start_thread_spinners(int n)
{
	pthread_attr_t attr;
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/*
	 * The creator stays a normal task: an idle-batch creator would get
	 * one timeslice per round among its own threads, and making 2,000
	 * would take the sum of ever longer rounds.  Each thread makes
	 * itself idle-batch, and the balancer spreads them.
	 */
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 64 * 1024))
		_exit(101);
	for (int i = 0; i < n; i++) {
		pthread_t thread;

		if (pthread_create(&thread, &attr, spin_thread, NULL))
			_exit(102);
	}
	for (;;)
		pause();
}

static void count_one(pid_t tid, void *arg)
{
	(void)tid;
	(*(int *)arg)++;
}

/* The threads @pid started (itself left out), without reading their stat */
static int count_threads(pid_t pid)
{
	int n = 0;

	return for_each_thread(pid, count_one, &n) < 0 ? -1 : n - 1;
}

struct per_cpu_count {
	pid_t leader;
	int *count;
	int n;
};

static void count_on_cpu(pid_t tid, void *arg)
{
	struct per_cpu_count *c = arg;
	int cpu = tid == c->leader ? -1 : task_cpu_of(tid);

	if (cpu >= 0 && cpu < NCPU) {
		c->count[cpu]++;
		c->n++;
	}
}

/* The threads @pid started, per CPU; returns how many were counted. */
static int count_threads_per_cpu(pid_t pid, int count[NCPU])
{
	struct per_cpu_count c = { .leader = pid, .count = count };

	memset(count, 0, NCPU * sizeof(count[0]));
	return for_each_thread(pid, count_on_cpu, &c) < 0 ? -1 : c.n;
}

/*
 * Runnable tasks per CPU from the scheduler's debug file: one cheap read,
 * where reading 2,000 stat files is seconds of CPU under TCG, a normal
 * load of its own that the balancer rightly makes room for.
 */
static int nr_running_per_cpu(int count[NCPU])
{
	FILE *f = fopen("/sys/kernel/debug/sched/debug", "r");
	int cpu = -1, n = 0, value;
	char line[256];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "cpu#%d", &value) == 1)
			cpu = value;
		else if (cpu >= 0 && cpu < NCPU &&
			 sscanf(line, " .nr_running : %d", &value) == 1) {
			count[cpu] = value;
			n++;
			cpu = -1;
		}
	}
	fclose(f);
	return n == NCPU ? 0 : -1;
}

/* Is every CPU within 15% of an even share of the threads? */
static int evenly_spread(const int count[NCPU], int n)
{
	for (int c = 0; c < NCPU; c++)
		if (abs(count[c] - n / NCPU) > n / NCPU * 15 / 100)
			return 0;
	return 1;
}

/*
 * 2,000 idle-batch tasks: spread evenly and kept so, and a normal task's
 * wakeups are not visibly slower than next to 8 idle-batch tasks.  The
 * test reads 2,000 stat files only now and then: reading them is a normal
 * load of its own, which the balancer rightly weighs.
 */
TEST_F_TIMEOUT(balance, scale_2000, 400)
{
	double med8, p95_8, med2k, p95_2k, created;
	int count[NCPU], n;
	uint64_t start;
	char text[48];

	if (nr_running_per_cpu(count))
		SKIP(return, "no /sys/kernel/debug/sched/debug (CONFIG_SCHED_DEBUG, debugfs)");
	start_spinners(self, NSPIN);
	ASSERT_GE(wait_for_counts(self->pids, self->n, 0xf, 1, 3, 20, count), 0);
	wakeup_delays(400, &med8, &p95_8);
	for (int i = 0; i < self->n; i++)
		stop_task(self->pids[i]);
	self->n = 0;

	self->threads = start_thread_spinners(NTHREADS);
	start = now_ns();
	while (count_threads(self->threads) < NTHREADS && (now_ns() - start) / 1e9 < 200)
		sleep(1);
	created = (now_ns() - start) / 1e9;
	ASSERT_EQ(NTHREADS, count_threads(self->threads));
	sleep(15);
	ASSERT_EQ(0, nr_running_per_cpu(count));
	snprintf(text, sizeof(text), "%d %d %d %d", count[0], count[1], count[2], count[3]);
	TH_LOG("%d idle-batch threads created in %.0f s; 15 s later, runnable per CPU: %s",
	       NTHREADS, created, text);
	ASSERT_TRUE(evenly_spread(count, NTHREADS));

	wakeup_delays(400, &med2k, &p95_2k);
	TH_LOG("normal task's wakeup delay: next to 8 idle-batch tasks median %.3f ms, "
	       "95th %.3f ms; next to %d: median %.3f ms, 95th %.3f ms",
	       med8, p95_8, NTHREADS, med2k, p95_2k);
	ASSERT_LE(med2k, 2 * med8 + 0.5);
	ASSERT_LE(p95_2k, 2 * p95_8 + 1.0);

	sleep(10);
	ASSERT_EQ(0, nr_running_per_cpu(count));
	snprintf(text, sizeof(text), "%d %d %d %d", count[0], count[1], count[2], count[3]);
	TH_LOG("and 10 s later: %s", text);
	ASSERT_TRUE(evenly_spread(count, NTHREADS));

	/* The threads' own view, which takes the guest seconds to read */
	n = count_threads_per_cpu(self->threads, count);
	snprintf(text, sizeof(text), "%d %d %d %d", count[0], count[1], count[2], count[3]);
	TH_LOG("/proc/PID/task/*/stat: %d threads, per CPU %s", n, text);
	ASSERT_EQ(NTHREADS, n);
}

TEST_HARNESS_MAIN
