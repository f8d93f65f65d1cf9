// SPDX-License-Identifier: GPL-2.0
/*
 * rundelay: how long normal tasks wait on a runqueue, under a
 * hackbench-like messaging load, with and without idle-batch hogs on every
 * CPU.  The hogs use only idle time, so they should not change it: a CPU
 * whose last normal task blocks must still pull a queued normal task from
 * a busier CPU at once (fair's newidle balancing) rather than run a parked
 * hog and leave the normal task to the next periodic balance.
 *
 * Each round runs the load once alone and once next to two idle-batch
 * hogs per CPU (and, for reference, next to SCHED_IDLE hogs), in turn, so
 * drift of the machine hits all of them.  A task's wait is its
 * /proc/thread-self/schedstat run delay, summed over the messaging
 * threads and divided by the times they were scheduled in.  Prints the
 * medians and their ratios to "none" as a table.
 *
 * Usage: rundelay [ROUNDS [GROUPS [LOOPS]]]   (default 5 4 200)
 */
#include "../kernel/idlebatch.h"

#include <sys/socket.h>

#define FDS_PER_GROUP	10	/* senders and receivers per group */
#define MSG_SIZE	100

struct load {
	int groups, loops;
	pthread_barrier_t start;
	pthread_mutex_t lock;
	uint64_t delay_ns, timeslices;
};

struct worker {
	struct load *load;
	int fds[FDS_PER_GROUP];	/* a sender writes to every receiver */
	int fd;			/* a receiver reads from its own */
	bool sender;
};

/* Run delay and timeslices of the calling thread so far */
static void thread_schedstat(uint64_t *delay_ns, uint64_t *timeslices)
{
	unsigned long long run, delay, slices;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f || fscanf(f, "%llu %llu %llu", &run, &delay, &slices) != 3) {
		perror("rundelay: /proc/thread-self/schedstat");
		exit(2);
	}
	fclose(f);
	*delay_ns = delay;
	*timeslices = slices;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct load *load = w->load;
	uint64_t delay0, slices0, delay1, slices1;
	char buf[MSG_SIZE] = { 0 };
	int i, j;

	thread_schedstat(&delay0, &slices0);
	pthread_barrier_wait(&load->start);
	for (i = 0; i < load->loops; i++) {
		if (w->sender) {
			for (j = 0; j < FDS_PER_GROUP; j++)
				if (write(w->fds[j], buf, sizeof(buf)) != sizeof(buf))
					exit(3);
		} else {
			for (j = 0; j < FDS_PER_GROUP; j++)
				if (read(w->fd, buf, sizeof(buf)) != sizeof(buf))
					exit(4);
		}
	}
	thread_schedstat(&delay1, &slices1);
	pthread_mutex_lock(&load->lock);
	load->delay_ns += delay1 - delay0;
	load->timeslices += slices1 - slices0;
	pthread_mutex_unlock(&load->lock);
	return NULL;
}

/* One run of the load: returns the mean run delay per timeslice in us. */
static double run_load(int groups, int loops, double *wall_s)
{
	int nr = groups * FDS_PER_GROUP * 2, g, i, n = 0;
	struct worker *workers = calloc(nr, sizeof(*workers));
	pthread_t *threads = calloc(nr, sizeof(*threads));
	int *fds = calloc(2 * groups * FDS_PER_GROUP, sizeof(*fds)), nfds = 0;
	struct load load = { .groups = groups, .loops = loops };
	uint64_t start;

	if (!workers || !threads || !fds)
		exit(2);
	pthread_barrier_init(&load.start, NULL, nr + 1);
	pthread_mutex_init(&load.lock, NULL);
	for (g = 0; g < groups; g++) {
		int receiver_fds[FDS_PER_GROUP];

		for (i = 0; i < FDS_PER_GROUP; i++) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
				perror("rundelay: socketpair");
				exit(2);
			}
			receiver_fds[i] = sv[1];
			fds[nfds++] = sv[0];
			fds[nfds++] = sv[1];
			workers[n] = (struct worker){ .load = &load, .fd = sv[0] };
			n++;
		}
		for (i = 0; i < FDS_PER_GROUP; i++) {
			workers[n] = (struct worker){ .load = &load, .sender = true };
			memcpy(workers[n].fds, receiver_fds, sizeof(receiver_fds));
			n++;
		}
	}
	for (i = 0; i < nr; i++)
		if (pthread_create(&threads[i], NULL, worker_fn, &workers[i]))
			exit(2);
	start = now_ns();
	pthread_barrier_wait(&load.start);
	for (i = 0; i < nr; i++)
		pthread_join(threads[i], NULL);
	*wall_s = (now_ns() - start) / 1e9;
	for (i = 0; i < 2 * groups * FDS_PER_GROUP; i++)
		close(fds[i]);
	free(fds);
	free(workers);
	free(threads);
	return load.timeslices ? load.delay_ns / 1e3 / load.timeslices : 0;
}

#define MAX_ROUNDS	50
#define MAX_HOGS	64

struct background {
	const char *name;
	int policy;	/* -1: none */
	double delay_us[MAX_ROUNDS], wall_s[MAX_ROUNDS];
};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	int groups = argc > 2 ? atoi(argv[2]) : 4;
	int loops = argc > 3 ? atoi(argv[3]) : 200;
	struct background bg[] = {
		{ .name = "none", .policy = -1 },
		{ .name = "SCHED_IDLEBATCH", .policy = SCHED_IDLEBATCH },
		{ .name = "SCHED_IDLE", .policy = SCHED_IDLE },
	};
	const int nr_bg = sizeof(bg) / sizeof(bg[0]);
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), r, b, i;
	pid_t hogs[MAX_HOGS];

	if (argc > 4 || rounds < 1 || rounds > MAX_ROUNDS || groups < 1 || loops < 1 ||
	    2 * ncpu > MAX_HOGS) {
		fprintf(stderr, "usage: rundelay [ROUNDS(1-%d) [GROUPS [LOOPS]]]\n", MAX_ROUNDS);
		return 2;
	}
	if (bg[1].policy == SCHED_IDLEBATCH && !kernel_has_idlebatch()) {
		fprintf(stderr, "rundelay: this kernel has no SCHED_IDLEBATCH\n");
		return 2;
	}
	printf("# rundelay: %d CPUs, %d rounds, %d groups of %d senders and %d receivers, %d loops\n",
	       ncpu, rounds, groups, FDS_PER_GROUP, FDS_PER_GROUP, loops);
	for (r = 0; r < rounds; r++) {
		for (b = 0; b < nr_bg; b++) {
			int nr_hogs = bg[b].policy < 0 ? 0 : 2 * ncpu;

			for (i = 0; i < nr_hogs; i++)
				hogs[i] = start_spinner(bg[b].policy, 0, i % ncpu);
			/* Let the hogs settle into their queues */
			if (nr_hogs)
				usleep(500000);
			bg[b].delay_us[r] = run_load(groups, loops, &bg[b].wall_s[r]);
			for (i = 0; i < nr_hogs; i++)
				stop_task(hogs[i]);
			printf("# round %d %-16s run delay %8.1f us/timeslice, wall %6.2f s\n",
			       r + 1, bg[b].name, bg[b].delay_us[r], bg[b].wall_s[r]);
			fflush(stdout);
		}
	}

	printf("\n| background (2 hogs per CPU) | run delay us/timeslice (median) | ratio to none | wall s (median) | ratio to none |\n");
	printf("|---|---|---|---|---|\n");
	for (b = 0; b < nr_bg; b++) {
		qsort(bg[b].delay_us, rounds, sizeof(double), cmp_double);
		qsort(bg[b].wall_s, rounds, sizeof(double), cmp_double);
	}
	for (b = 0; b < nr_bg; b++) {
		double d = bg[b].delay_us[rounds / 2], w = bg[b].wall_s[rounds / 2];

		printf("| %s | %.1f | %.2f | %.2f | %.2f |\n", bg[b].name, d,
		       d / bg[0].delay_us[rounds / 2], w, w / bg[0].wall_s[rounds / 2]);
	}
	return 0;
}
