// SPDX-License-Identifier: GPL-2.0
/*
 * What sched_getattr() says of a SCHED_DEADLINE process that has exited
 * and is not reaped yet: Linux 6.12 clears a dead task's DL parameters
 * when it leaves the runqueue for good (task_non_contending() or the
 * inactive timer, kernel/sched/deadline.c, __dl_clear_params()), while
 * its policy stays SCHED_DEADLINE.  So a zombie reports policy 6 with
 * runtime, deadline and period 0: the fuzzer's policy check must allow
 * that of a dead task.  The series does not touch deadline.c; run this on
 * a kernel without the policy too (tests/vm/run, as root).
 *
 * Prints TAP; exits 0 when the zombie reports DEADLINE with cleared
 * parameters, 1 when it reports anything else, 2 when DEADLINE cannot be
 * set here.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

struct dl_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

int main(void)
{
	struct dl_attr a;
	int go[2], status, ok;
	pid_t child;
	char c = 0, st;

	if (pipe(go))
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.sched_policy = SCHED_DEADLINE;
		a.sched_runtime = 10 * 1000 * 1000;
		a.sched_deadline = a.sched_period = 100 * 1000 * 1000;
		c = syscall(SYS_sched_setattr, 0, &a, 0) ? 'n' : 'y';
		if (write(go[1], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	close(go[1]);
	if (read(go[0], &c, 1) != 1 || c != 'y') {
		printf("1..0 # SKIP SCHED_DEADLINE could not be set here (root and DL bandwidth are needed)\n");
		waitpid(child, &status, 0);
		return 2;
	}
	/* Let it exit and leave the runqueue for good (the inactive timer
	 * fires by the end of its 100 ms period), but do not reap it. */
	for (int i = 0; i < 100 && proc_state(child) != 'Z'; i++)
		usleep(10000);
	usleep(300000);
	st = proc_state(child);
	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, child, &a, sizeof(a), 0)) {
		perror("sched_getattr");
		waitpid(child, &status, 0);
		return 1;
	}
	printf("# pid %d, state %c: sched_getscheduler %d; sched_getattr: policy %u dl %llu/%llu/%llu\n",
	       child, st, sched_getscheduler(child), a.sched_policy,
	       (unsigned long long)a.sched_runtime, (unsigned long long)a.sched_deadline,
	       (unsigned long long)a.sched_period);
	ok = st == 'Z' && a.sched_policy == SCHED_DEADLINE && !a.sched_runtime &&
	     !a.sched_deadline && !a.sched_period;
	printf("1..1\n%s 1 - an unreaped SCHED_DEADLINE zombie reports policy %d with DL parameters 0/0/0\n",
	       ok ? "ok" : "not ok", SCHED_DEADLINE);
	waitpid(child, &status, 0);
	return ok ? 0 : 1;
}
