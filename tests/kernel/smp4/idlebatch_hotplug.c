// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug storm: CPUs 1-3 taken offline and brought back, again and
 * again, under idle-batch tasks of every kind -- parked and running
 * spinners, workers that live in system calls, tasks that sleep and wake
 * -- next to a normal hog.  No task may be lost or left on an offline CPU,
 * every one must still make progress and die at once when killed, and
 * the balancer's counters in /proc/batchstat must add up with the tasks'
 * own.  HOTPLUG_CYCLES (default 10) is the number of cycles of each CPU;
 * HOTPLUG_SEED picks the pauses.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "../idlebatch.h"
#include "kselftest_harness.h"

#define NCPU		4
#define NSPIN		6
#define NKERNEL		4
#define NSLEEP		2
#define NTASK		(NSPIN + NKERNEL + NSLEEP)

/* Counters of /proc/batchstat summed over the online CPUs */
struct batch_sums {
	long long waiting, running, parks, unparks, moved_in, moved_out;
	int cpus;
};

static int read_batch_sums(struct batch_sums *s)
{
	char line[1024];
	FILE *f = fopen("/proc/batchstat", "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long long v[23];
		char *p = line, *end;
		int n = 0;

		if (strncmp(line, "cpu", 3))
			continue;
		p = strchr(line, ' ');
		while (p && n < 22) {
			v[++n] = strtoll(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		if (n < 21)
			continue;
		/* Fields as Documentation/scheduler/sched-idlebatch.rst numbers them */
		s->waiting += v[1];
		s->running += v[2];
		s->parks += v[14];
		s->unparks += v[15] + v[16] + v[17] + v[18];
		s->moved_in += v[19];
		s->moved_out += v[20];
		s->cpus++;
	}
	fclose(f);
	return s->cpus ? 0 : -1;
}

/* An idle-batch task that spends its time in system calls */
static pid_t start_kernel_worker(void)
{
	pid_t pid = fork();
	static char buf[1 << 20];
	char *area;
	int fd;

	if (pid != 0)
		return pid;
	enter_policy_or_exit(SCHED_IDLEBATCH, 0, -1);
	fd = open("/dev/zero", O_RDONLY);
	area = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || area == MAP_FAILED)
		_exit(101);
	memset(area, 1, 4 << 20);
	for (;;) {
		if (read(fd, buf, sizeof(buf)) < 0)
			_exit(102);
		mprotect(area, 4 << 20, PROT_READ);
		mprotect(area, 4 << 20, PROT_READ | PROT_WRITE);
		getppid();
	}
}

/* An idle-batch task that sleeps 5 ms and spins 1 ms, over and over */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();
	struct timespec nap = { 0, 5000000 };

	if (pid != 0)
		return pid;
	enter_policy_or_exit(SCHED_IDLEBATCH, 0, -1);
	for (;;) {
		uint64_t end = now_ns() + 1000000;

		nanosleep(&nap, NULL);
		while (now_ns() < end)
			;
	}
}

FIXTURE(hotplug) {
	pid_t pids[NTASK];
	pid_t hog;
	int n;
};

FIXTURE_SETUP(hotplug)
{
	REQUIRE_IDLEBATCH();
	if (sysconf(_SC_NPROCESSORS_ONLN) != NCPU)
		SKIP(return, "needs %d CPUs online", NCPU);
	if (access("/sys/devices/system/cpu/cpu1/online", W_OK))
		SKIP(return, "CPU hotplug is not available");
	self->n = 0;
	self->hog = 0;
}

FIXTURE_TEARDOWN(hotplug)
{
	for (int cpu = 1; cpu < NCPU; cpu++)
		set_cpu_online(cpu, 1);
	for (int i = 0; i < self->n; i++)
		if (self->pids[i] > 0)
			stop_task(self->pids[i]);
	if (self->hog > 0)
		stop_task(self->hog);
}

TEST_F_TIMEOUT(hotplug, storm_loses_no_task, 1800)
{
	const char *env = getenv("HOTPLUG_CYCLES"), *seed_env = getenv("HOTPLUG_SEED");
	int cycles = env ? atoi(env) : 10;
	unsigned int seed = seed_env ? (unsigned int)atoi(seed_env) : (unsigned int)getpid();
	struct batch_sums before, after;
	uint64_t progress[NTASK];
	long long task_parks_sum = 0;
	double worst_kill = 0, t0;
	int offline_hits = 0;

	ASSERT_GT(cycles, 0);
	TH_LOG("%d cycles of each of CPUs 1-%d, seed %u (HOTPLUG_SEED=%u reproduces the pauses)",
	       cycles, NCPU - 1, seed, seed);
	ASSERT_EQ(0, read_batch_sums(&before));
	ASSERT_EQ(NCPU, before.cpus);

	/* A normal hog on CPU 0, the one CPU that stays: tasks park behind it */
	self->hog = start_duty_hog(0, 9000, 1000);
	for (int i = 0; i < NSPIN; i++)
		self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, -1);
	for (int i = 0; i < NKERNEL; i++)
		self->pids[self->n++] = start_kernel_worker();
	for (int i = 0; i < NSLEEP; i++)
		self->pids[self->n++] = start_sleeper();
	sleep(2);

	t0 = now_ns() / 1e9;
	for (int c = 0; c < cycles; c++) {
		for (int cpu = 1; cpu < NCPU; cpu++) {
			ASSERT_EQ(0, set_cpu_online(cpu, 0)) TH_LOG("cycle %d: CPU %d offline", c, cpu);
			usleep(rand_r(&seed) % 50000);
			/* None of the tasks is on the CPU that went away */
			for (int i = 0; i < self->n; i++) {
				int on = (int)stat_field(self->pids[i], 39);

				ASSERT_GE(on, 0) TH_LOG("task %d is gone", self->pids[i]);
				if (on == cpu)
					offline_hits++;
			}
			ASSERT_EQ(0, set_cpu_online(cpu, 1)) TH_LOG("cycle %d: CPU %d online", c, cpu);
			usleep(rand_r(&seed) % 50000);
		}
	}
	TH_LOG("%d offline/online cycles in %.1f s", cycles * (NCPU - 1), now_ns() / 1e9 - t0);
	EXPECT_EQ(0, offline_hits);

	/* Every task is there and still makes progress */
	for (int i = 0; i < self->n; i++) {
		ASSERT_EQ(0, kill(self->pids[i], 0));
		progress[i] = cputime_ns(self->pids[i]);
	}
	sleep(3);
	for (int i = 0; i < self->n; i++) {
		EXPECT_GT(cputime_ns(self->pids[i]), progress[i]) {
			TH_LOG("task %d made no progress", self->pids[i]);
		}
	}

	/*
	 * Stopped, no task is in the class: each one's parks are final, and
	 * the CPUs' counters must account for exactly those.
	 */
	for (int i = 0; i < self->n; i++)
		ASSERT_EQ(0, kill(self->pids[i], SIGSTOP));
	for (int i = 0; i < self->n; i++) {
		int tries = 0;

		while (task_state(self->pids[i]) != 'T' && tries++ < 500)
			usleep(10000);
		ASSERT_EQ('T', task_state(self->pids[i]));
		task_parks_sum += task_parks(self->pids[i]);
	}
	ASSERT_EQ(0, read_batch_sums(&after));
	ASSERT_EQ(NCPU, after.cpus);
	TH_LOG("parks: %lld by the tasks' own count, %lld by the CPUs'; unparks %lld; moves %lld in, %lld out",
	       task_parks_sum, after.parks - before.parks, after.unparks - before.unparks,
	       after.moved_in - before.moved_in, after.moved_out - before.moved_out);
	EXPECT_GT(task_parks_sum, 0);
	EXPECT_EQ(task_parks_sum, after.parks - before.parks);
	EXPECT_EQ(after.parks - before.parks, after.unparks - before.unparks);
	EXPECT_EQ(after.moved_in - before.moved_in, after.moved_out - before.moved_out);
	EXPECT_EQ(0, after.waiting);
	EXPECT_EQ(0, after.running);

	/* Each dies at once when killed, stopped or not */
	kill(self->pids[0], SIGCONT);
	for (int i = 0; i < self->n; i++) {
		double t = now_ns() / 1e9, took;

		ASSERT_EQ(0, kill(self->pids[i], SIGKILL));
		ASSERT_EQ(self->pids[i], waitpid(self->pids[i], NULL, 0));
		took = now_ns() / 1e9 - t;
		if (took > worst_kill)
			worst_kill = took;
		self->pids[i] = 0;
	}
	TH_LOG("the slowest kill took %.1f ms", worst_kill * 1000);
	EXPECT_LT(worst_kill, 2.0);
}

TEST_HARNESS_MAIN
