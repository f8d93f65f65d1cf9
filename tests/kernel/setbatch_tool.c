// SPDX-License-Identifier: GPL-2.0
/*
 * setbatch against the real policy: running a command under it (and its
 * children inheriting it), the 2002 "setbatch PID" form, -p with -a on a
 * threaded process, -n, --show of a parked task, --reset with and without
 * the privilege, and commands that cannot run.  The tool is the ASan/UBSan
 * build; a sanitizer report fails the test.
 */
#include "idlebatch.h"

#include <pthread.h>

#include "kselftest_harness.h"

#define CPU 1

static char tool[600];

/* Run "setbatch ARGS"; its output in @out; its exit status */
static int setbatch(char *out, size_t size, const char *args)
{
	return run_tool(tool, args, true, out, size);
}

static void *sleeper(void *arg)
{
	pause();
	return arg;
}

/* A process with three more threads, all asleep */
static pid_t start_threaded(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t t;

		for (int i = 0; i < 3; i++)
			if (pthread_create(&t, NULL, sleeper, NULL))
				_exit(101);
		pause();
		_exit(0);
	}
	return pid;
}

struct policy_count {
	int policy;
	int n;
};

static void count_policy(pid_t tid, void *arg)
{
	struct policy_count *c = arg;

	c->n += sched_getscheduler(tid) == c->policy;
}

/* Policy of every thread of @pid: how many have @policy, of how many */
static int threads_with_policy(pid_t pid, int policy, int *total)
{
	struct policy_count c = { .policy = policy };

	*total = for_each_thread(pid, count_policy, &c);
	return *total < 0 ? -1 : c.n;
}

FIXTURE(setbatch) {
	pid_t pids[4];
	int n;
	char out[4096];
};

FIXTURE_SETUP(setbatch)
{
	REQUIRE_IDLEBATCH();
	if (sanitized_tool("setbatch", tool, sizeof(tool)))
		SKIP(return, "%s is not built (make tools)", tool);
	self->n = 0;
}

FIXTURE_TEARDOWN(setbatch)
{
	for (int i = 0; i < self->n; i++)
		stop_task(self->pids[i]);
}

TEST_F(setbatch, runs_a_command_and_its_children_inherit)
{
	char args[128];
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		execl(tool, "setbatch", "--", "sh", "-c", "sleep 30 & wait", (char *)NULL);
		_exit(127);
	}
	self->pids[self->n++] = pid;
	/* The sanitized build takes a while to start under TCG */
	for (int i = 0; i < 100 && sched_getscheduler(pid) != SCHED_IDLEBATCH; i++)
		usleep(100000);
	usleep(300000);
	EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(pid));
	/* The shell's child, sleep, inherited it */
	snprintf(args, sizeof(args), "pgrep -P %d sleep", pid);
	{
		FILE *p = popen(args, "r");
		int child = 0;

		ASSERT_NE(NULL, p);
		ASSERT_EQ(1, fscanf(p, "%d", &child));
		pclose(p);
		/*
		 * Killing the shell leaves its child to init: stop it too, or
		 * an idle-batch sleep outlives the test into the next program.
		 */
		self->pids[self->n++] = child;
		EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(child));
	}
}

TEST_F(setbatch, the_2002_form_and_nice)
{
	char args[64];
	pid_t pid = start_spinner(SCHED_OTHER, 0, CPU);

	self->pids[self->n++] = pid;
	snprintf(args, sizeof(args), "%d", pid);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	EXPECT_NE(NULL, strstr(self->out, "SCHED_IDLEBATCH, nice 0 (was SCHED_OTHER)"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(pid));

	snprintf(args, sizeof(args), "-n 10 -p %d", pid);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	EXPECT_EQ(10, getpriority(PRIO_PROCESS, pid));
	EXPECT_EQ(SCHED_IDLEBATCH, sched_getscheduler(pid));
}

TEST_F(setbatch, all_tasks_of_a_threaded_process)
{
	char args[64];
	int total, n;
	pid_t pid = start_threaded();

	self->pids[self->n++] = pid;
	usleep(200000);
	snprintf(args, sizeof(args), "-p %d", pid);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	n = threads_with_policy(pid, SCHED_IDLEBATCH, &total);
	EXPECT_EQ(4, total);
	EXPECT_EQ(1, n);
	snprintf(args, sizeof(args), "-a -p %d", pid);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	EXPECT_EQ(4, threads_with_policy(pid, SCHED_IDLEBATCH, &total));
	snprintf(args, sizeof(args), "-a --reset %d", pid);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	EXPECT_EQ(4, threads_with_policy(pid, SCHED_OTHER, &total));
}

TEST_F(setbatch, show_a_parked_task)
{
	char args[64], *line;
	int parks = 0;
	pid_t hog = start_spinner(SCHED_OTHER, 0, CPU);
	pid_t pid = start_spinner(SCHED_IDLEBATCH, 0, CPU);

	self->pids[self->n++] = hog;
	self->pids[self->n++] = pid;
	usleep(500000);
	snprintf(args, sizeof(args), "-q %d %d", pid, hog);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	TH_LOG("%s", self->out);
	/*
	 * Parked at least once: once, if the hog was on the CPU first; more
	 * if the test itself preempted the task there before the hog came.
	 */
	line = strstr(self->out, "SCHED_IDLEBATCH, nice 0: parked; parked ");
	ASSERT_NE(NULL, line);
	EXPECT_EQ(1, sscanf(line, "SCHED_IDLEBATCH, nice 0: parked; parked %d times", &parks));
	EXPECT_GE(parks, 1);
	EXPECT_NE(NULL, strstr(self->out, "SCHED_OTHER, nice 0\n"));
}

TEST_F(setbatch, reset_needs_the_privilege)
{
	char args[64], copy[sizeof(tool)];
	pid_t pid = start_spinner(SCHED_IDLEBATCH, 5, -1), child;
	int status;

	self->pids[self->n++] = pid;
	usleep(100000);
	/* As root it works and keeps the nice value */
	snprintf(args, sizeof(args), "--reset %d", pid);
	ASSERT_EQ(0, setbatch(self->out, sizeof(self->out), args));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(pid));
	EXPECT_EQ(5, getpriority(PRIO_PROCESS, pid));

	/*
	 * An unprivileged user (no CAP_SYS_NICE, RLIMIT_NICE 0) may put its own
	 * task into the policy, but not take it out: status 1 and a message
	 * that says what is missing; another user's task is refused too.  It
	 * runs a copy of setbatch that it can reach wherever the checkout is.
	 */
	ASSERT_EQ(0, reachable_copy(tool, copy, sizeof(copy))) TH_LOG("copy of %s: %m", tool);
	child = fork();
	if (child == 0) {
		struct rlimit rl = { 0, 0 };
		char out[4096], own[64], other[64];
		pid_t mine;
		int ok;

		snprintf(tool, sizeof(tool), "%s", copy);
		if (setrlimit(RLIMIT_NICE, &rl) || setgid(65534) || setuid(65534))
			_exit(90);
		mine = start_spinner(SCHED_OTHER, 0, -1);
		snprintf(own, sizeof(own), "-p %d", mine);
		ok = setbatch(out, sizeof(out), own) == 0 &&
		     sched_getscheduler(mine) == SCHED_IDLEBATCH;
		snprintf(own, sizeof(own), "--reset %d", mine);
		ok = ok && setbatch(out, sizeof(out), own) == 1 &&
		     strstr(out, "needs CAP_SYS_NICE") &&
		     sched_getscheduler(mine) == SCHED_IDLEBATCH;
		snprintf(other, sizeof(other), "-p %d", getppid());
		ok = ok && setbatch(out, sizeof(out), other) == 1 &&
		     strstr(out, "permission denied");
		stop_task(mine);
		_exit(ok ? 0 : 91);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	remove_reachable_copy(copy);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(setbatch, commands_that_cannot_run)
{
	EXPECT_EQ(127, setbatch(self->out, sizeof(self->out), "-- /nonexistent/command"));
	EXPECT_NE(NULL, strstr(self->out, "No such file or directory"));
	EXPECT_EQ(126, setbatch(self->out, sizeof(self->out), "-- /proc/version"));
	EXPECT_NE(NULL, strstr(self->out, "Permission denied"));
}

TEST_HARNESS_MAIN
