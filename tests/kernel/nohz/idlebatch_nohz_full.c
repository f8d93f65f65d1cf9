// SPDX-License-Identifier: GPL-2.0
/*
 * Idle-batch tasks on a nohz_full CPU (tests/kernel/nohz.t boots the
 * test kernel with nohz_full=1).  There the tick stops while one task
 * runs, and the tick is what parks an idle-batch task running in fair and
 * what ends a timeslice, so the kernel must keep it while idle-batch
 * tasks have to take turns.
 */
#include "../idlebatch.h"

#include "kselftest_harness.h"

#define NOHZ_CPU 1

/* Is @cpu in the nohz_full set the kernel was booted with? */
static bool cpu_is_nohz_full(int cpu)
{
	char buf[256], want[16];

	snprintf(want, sizeof(want), "%d", cpu);
	/* The test boots with a single CPU in the set: "1" */
	return !strcmp(read_line("/sys/devices/system/cpu/nohz_full", buf, sizeof(buf)), want);
}

/* Local timer interrupts @cpu took so far: /proc/interrupts' LOC line */
static long long local_timer_irqs(int cpu)
{
	char line[1024];
	long long n = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " ");
		int i;

		if (strncmp(p, "LOC:", 4))
			continue;
		p += 4;
		for (i = 0; i <= cpu; i++)
			n = strtoll(p, &p, 10);
		break;
	}
	fclose(f);
	return n;
}

FIXTURE(nohz) {
	pid_t tasks[3];
	int nr;
};

FIXTURE_SETUP(nohz)
{
	REQUIRE_IDLEBATCH();
	if (!config_has("CONFIG_NO_HZ_FULL"))
		SKIP(return, "kernel built without CONFIG_NO_HZ_FULL (the test kernel, make kernel, has it)");
	if (!cpu_is_nohz_full(NOHZ_CPU))
		SKIP(return, "CPU %d is not nohz_full: boot with nohz_full=%d (nohz.t does)",
		     NOHZ_CPU, NOHZ_CPU);
	self->nr = 0;
}

FIXTURE_TEARDOWN(nohz)
{
	while (self->nr > 0)
		stop_task(self->tasks[--self->nr]);
}

/*
 * A task made idle-batch while it ran alone on the nohz_full CPU is in
 * fair there, in user mode, with the tick stopped.  A parked task that
 * moves to that CPU must get its turn: the tick has to come back and park
 * the task in fair.  Without it the parked task got no CPU time at all.
 */
TEST_F_TIMEOUT(nohz, a_parked_task_moved_next_to_a_task_in_fair_runs, 60)
{
	pid_t in_fair, parked, hog;
	long long irqs0, irqs1;
	double share;
	int i;

	/* Alone on the nohz_full CPU: its tick stops. */
	in_fair = start_spinner(SCHED_OTHER, 0, NOHZ_CPU);
	self->tasks[self->nr++] = in_fair;
	/* On CPU 0, next to a normal hog, the other one is parked. */
	hog = start_spinner(SCHED_OTHER, 0, 0);
	self->tasks[self->nr++] = hog;
	parked = start_spinner(SCHED_IDLEBATCH, 0, 0);
	self->tasks[self->nr++] = parked;
	sleep(2);

	irqs0 = local_timer_irqs(NOHZ_CPU);
	usleep(500000);
	irqs1 = local_timer_irqs(NOHZ_CPU);
	TH_LOG("CPU %d took %lld local timer interrupts in 0.5 s with one task", NOHZ_CPU,
	       irqs1 - irqs0);

	/* Idle-batch now, still in fair: nothing kicks its CPU. */
	ASSERT_EQ(0, set_policy(in_fair, SCHED_IDLEBATCH));
	for (i = 0; i < 50 && batch_state(parked) != 'P'; i++)
		usleep(100000);
	ASSERT_EQ('P', batch_state(parked));
	TH_LOG("before the move: the task on CPU %d is '%c' (N: in fair), the other '%c'",
	       NOHZ_CPU, batch_state(in_fair), batch_state(parked));

	ASSERT_EQ(0, pin_to_cpu(parked, NOHZ_CPU));
	share = cpu_share(parked, 6.0);
	TH_LOG("the moved task got %.1f%% of CPU %d over 6 s; the one in fair is now '%c'",
	       share, NOHZ_CPU, batch_state(in_fair));
	/* Equal timeslices of 1.5 s: about half, and never nothing */
	EXPECT_GT(share, 25.0);
}

#define SLICE_SYSCTL	"/proc/sys/kernel/sched_idlebatch_slice_ms"

/*
 * Two idle-batch tasks on the nohz_full CPU take turns by timeslice as on
 * any other CPU, at the tick: with 100 ms timeslices each is parked about
 * 25 times in 5 s.  Had the CPU stopped its tick (with two tasks in the
 * class and none in fair, nothing else asked for it), only the 1 Hz
 * remote tick would end a timeslice: five turns each at most.
 */
TEST_F_TIMEOUT(nohz, idle_batch_tasks_take_turns_at_the_tick, 60)
{
	char old_slice[32] = "";
	long a0, b0, a1, b1;
	pid_t a, b;

	ASSERT_NE(0, read_line(SLICE_SYSCTL, old_slice, sizeof(old_slice))[0]);
	ASSERT_EQ(0, write_file(SLICE_SYSCTL, "100"));

	a = start_spinner(SCHED_IDLEBATCH, 0, NOHZ_CPU);
	self->tasks[self->nr++] = a;
	b = start_spinner(SCHED_IDLEBATCH, 0, NOHZ_CPU);
	self->tasks[self->nr++] = b;
	sleep(1);
	a0 = task_parks(a);
	b0 = task_parks(b);
	sleep(5);
	a1 = task_parks(a);
	b1 = task_parks(b);
	write_file(SLICE_SYSCTL, old_slice);
	TH_LOG("100 ms timeslices, over 5 s: parked %ld and %ld times", a1 - a0, b1 - b0);
	EXPECT_GE(a1 - a0, 12);
	EXPECT_GE(b1 - b0, 12);
}

TEST_HARNESS_MAIN
