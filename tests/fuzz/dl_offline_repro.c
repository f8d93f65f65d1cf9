/*
 * Minimal reproducer (no SCHED_IDLEBATCH involved): a SCHED_DEADLINE task
 * uses most of its runtime and exits, leaving its inactive timer armed for
 * its 0-lag time; the CPU it died on goes offline before the timer fires.
 * inactive_task_timer() then divides by dl_bw_cpus(task_cpu(p)), which is
 * 0 for an offline CPU (def_root_domain has no active CPU).
 * Usage (as root, in the guest): dl_offline_repro [ROUNDS] [POLICY_AFTER]
 *   POLICY_AFTER -1 (default): the task exits as a DL task;
 *   otherwise it switches itself to that policy and sleeps instead.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct sched_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t util_min, util_max;
};

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int set_online(int cpu, int on)
{
	char path[80];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, after = argc > 2 ? atoi(argv[2]) : -1;

	for (int r = 0; r < rounds; r++) {
		int p[2], cpu = -1;
		pid_t pid;

		if (pipe(p))
			return 1;
		pid = fork();
		if (pid == 0) {
			struct sched_attr a = {
				.size = sizeof(a), .sched_policy = SCHED_DEADLINE,
				.sched_runtime = 20000000, .sched_deadline = 4000000000ull,
				.sched_period = 4000000000ull,
			};
			double t0;

			if (syscall(SYS_sched_setattr, 0, &a, 0)) {
				perror("sched_setattr DEADLINE");
				_exit(1);
			}
			t0 = cpu_ms();
			while (cpu_ms() - t0 < 18)	/* most of the 20 ms runtime */
				;
			cpu = sched_getcpu();
			if (after >= 0) {
				struct sched_param sp = { 0 };

				/* queued: switched_from_dl() arms the inactive timer */
				if (sched_setscheduler(0, after, &sp))
					perror("sched_setscheduler");
			}
			if (write(p[1], &cpu, sizeof(cpu)) != sizeof(cpu))
				_exit(1);
			if (after >= 0)
				pause();	/* sleep on that CPU */
			_exit(0);
		}
		close(p[1]);
		if (read(p[0], &cpu, sizeof(cpu)) != sizeof(cpu)) {
			fprintf(stderr, "child failed\n");
			waitpid(pid, NULL, 0);
			return 1;
		}
		close(p[0]);
		if (after < 0)
			waitpid(pid, NULL, 0);
		printf("round %d: the task %s on cpu%d; offlining it\n", r,
		       after < 0 ? "died" : "sleeps", cpu);
		fflush(stdout);
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (cpu > 0 && set_online(cpu, 0) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			printf("  offline took %.0f ms\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
			fflush(stdout);
			sleep(5);	/* the 0-lag timer fires meanwhile */
			set_online(cpu, 1);
		} else {
			printf("  (cpu%d: not offlined)\n", cpu);
		}
		if (after >= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	printf("survived %d rounds\n", rounds);
	return 0;
}
