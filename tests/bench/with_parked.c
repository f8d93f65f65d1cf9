// SPDX-License-Identifier: GPL-2.0
/*
 * with_parked: run a command next to N parked idle-batch tasks.
 *
 * Starts one process of N idle-batch threads that spin in user mode,
 * parks them all by running a nice-0 spinner until /proc/batchstat counts
 * N parked tasks, stops the spinner, runs CMD, and kills the threads after
 * it.  The CPUs are then never idle while CMD runs (as on the 1-CPU guest
 * of tests/bench/overhead), so the parked tasks stay parked and what CMD
 * measures is what they cost everyone else.  N = 0 runs CMD alone.
 *
 * Usage: with_parked N -- CMD [ARGS...]
 * Exit status: CMD's; 2 on bad usage, 3 when the tasks could not be parked.
 */
#include "../kernel/idlebatch.h"

#include <stdatomic.h>
#include <sys/prctl.h>

static atomic_long *started;

static void *spin_thread(void *arg)
{
	(void)arg;
	/*
	 * Counted first: once idle-batch, a thread parked on its way back
	 * from sched_setattr() may wait a whole round of 1.5 s timeslices,
	 * one per parked thread, before it runs again.
	 */
	atomic_fetch_add(started, 1);
	if (set_policy(0, SCHED_IDLEBATCH))
		_exit(103);
	spin_forever();
}

/* Parked tasks waiting on all CPUs: the sum of field 2 of /proc/batchstat */
static long parked_now(void)
{
	char line[1024];
	long sum = 0, n;
	FILE *f = fopen("/proc/batchstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu%*d %ld", &n) == 1)
			sum += n;
	fclose(f);
	return sum;
}

int main(int argc, char **argv)
{
	long want;
	char *end;
	pid_t threads = 0, hog, cmd;
	uint64_t t0;
	int status;

	if (argc < 4 || strcmp(argv[2], "--") || (want = strtol(argv[1], &end, 10)) < 0 || *end) {
		fprintf(stderr, "usage: with_parked N -- CMD [ARGS...]\n");
		return 2;
	}
	if (want > 0) {
		if (!kernel_has_idlebatch()) {
			fprintf(stderr, "with_parked: this kernel has no SCHED_IDLEBATCH\n");
			return 3;
		}
		started = mmap(NULL, sizeof(*started), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (started == MAP_FAILED)
			return 3;
		threads = fork();
		if (threads == 0) {
			pthread_attr_t attr;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pthread_attr_init(&attr);
			pthread_attr_setstacksize(&attr, 64 << 10);
			/*
			 * This creator stays nice 0: each thread enters the
			 * policy itself, and the creator's wakeup from the
			 * short sleep parks it (an idle-batch creator would
			 * wait whole timeslices for its CPU between threads).
			 */
			for (long i = 0; i < want; i++) {
				pthread_t t;

				if (pthread_create(&t, &attr, spin_thread, NULL))
					_exit(104);
				usleep(100);
			}
			for (;;)
				pause();
		}
		t0 = now_ns();
		while (atomic_load(started) < want) {
			if (waitpid(threads, &status, WNOHANG) == threads) {
				fprintf(stderr, "with_parked: the thread creator failed (%d)\n",
					WEXITSTATUS(status));
				return 3;
			}
			usleep(10000);
		}
		fprintf(stderr, "with_parked: %ld threads started in %.1f s\n", want,
			(now_ns() - t0) / 1e9);
		hog = start_spinner(SCHED_OTHER, 0, -1);
		while (parked_now() < want) {
			if (now_ns() - t0 > 600000000000ull) {
				fprintf(stderr, "with_parked: only %ld of %ld tasks parked in 600 s\n",
					parked_now(), want);
				stop_task(hog);
				stop_task(threads);
				return 3;
			}
			usleep(10000);
		}
		stop_task(hog);
		fprintf(stderr, "with_parked: %ld tasks parked in %.1f s\n", want,
			(now_ns() - t0) / 1e9);
	}
	fflush(stdout);
	cmd = fork();
	if (cmd == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "with_parked: cannot run %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	waitpid(cmd, &status, 0);
	if (threads > 0)
		stop_task(threads);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
