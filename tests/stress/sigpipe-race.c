// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim that makes stress-ng 0.15.06's switch and pipe
 * stressors lose their race with their own run alarm every time
 * (tests/host/stress-sigpipe.t).
 *
 * Each stressor makes an O_DIRECT pipe, then forks the partner that reads
 * it.  Here the fork raises SIGALRM first, as the worker's run alarm does
 * when the worker reaches its fork only after the run time has passed (a
 * worker that waited long for a CPU), so the partner starts with "stop"
 * and closes its read end at once.  The worker then sleeps, as a worker
 * still waiting for a CPU would, so the partner gets there first, and the
 * worker's first write finds a pipe with no reader.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

static int partner_fork_next;

int pipe2(int fds[2], int flags)
{
	int (*real_pipe2)(int *, int) = (int (*)(int *, int))dlsym(RTLD_NEXT, "pipe2");

	if (flags & O_DIRECT)
		partner_fork_next = 1;
	return real_pipe2(fds, flags);
}

pid_t fork(void)
{
	pid_t (*real_fork)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
	int race = partner_fork_next;
	pid_t pid;

	partner_fork_next = 0;
	if (race)
		raise(SIGALRM);
	pid = real_fork();
	if (race && pid > 0)
		usleep(300 * 1000);
	return pid;
}
