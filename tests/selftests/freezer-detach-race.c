// SPDX-License-Identifier: GPL-2.0
/*
 * The race in test_cgfreezer_ptrace (tools/testing/selftests/cgroup), as a
 * count: how often a frozen cgroup reads "frozen 0" right after waitpid()
 * of a PTRACE_INTERRUPT of its one frozen task, and right after
 * PTRACE_DETACH, when the task leaves the frozen state to go back into the
 * freezer trap (tests/selftests/excuses.sh).  Run it as usual and under
 * idle-batch in a guest:
 *
 *   gcc -static -O2 -Wall -Wextra -Werror -o build/freezer-race \
 *	tests/selftests/freezer-detach-race.c
 *   tests/vm/run -- sh -c 'build/freezer-race 2000;
 *	build/tools/setbatch -- build/freezer-race 2000'
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#define CG "/sys/fs/cgroup/frz_race"
static int frozen(void)
{
	char buf[256] = "";
	int fd = open(CG "/cgroup.events", O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) buf[n] = 0;
	return strstr(buf, "frozen 1") != NULL;
}
static void put(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY);
	if (fd < 0 || write(fd, val, strlen(val)) < 0) { perror(file); exit(1); }
	close(fd);
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, after_wait = 0, after_detach = 0, stuck = 0;
	double worst = 0;
	pid_t ppid = getpid(), pid;
	char s[32];
	rmdir(CG);
	if (mkdir(CG, 0755)) { perror("mkdir"); return 1; }
	pid = fork();
	if (!pid) { while (getppid() == ppid) usleep(1000); _exit(0); }
	snprintf(s, sizeof(s), "%d", pid);
	put(CG "/cgroup.procs", s);
	put(CG "/cgroup.freeze", "1");
	while (!frozen()) usleep(1000);
	for (int i = 0; i < n; i++) {
		if (ptrace(PTRACE_SEIZE, pid, 0, 0) || ptrace(PTRACE_INTERRUPT, pid, 0, 0)) { perror("ptrace"); return 1; }
		waitpid(pid, NULL, __WALL);
		after_wait += !frozen();
		if (ptrace(PTRACE_DETACH, pid, 0, 0)) { perror("detach"); return 1; }
		if (!frozen()) {
			double t0 = now();
			after_detach++;
			while (!frozen() && now() - t0 < 2) ;
			if (!frozen()) stuck++;
			if (now() - t0 > worst) worst = now() - t0;
		}
	}
	printf("freezer race, policy %d: %d rounds; not frozen after waitpid: %d; after PTRACE_DETACH: %d (longest %.1f us to frozen again; %d never within 2 s)\n",
	       sched_getscheduler(0), n, after_wait, after_detach, worst * 1e6, stuck);
	put(CG "/cgroup.freeze", "0");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	rmdir(CG);
	return 0;
}
