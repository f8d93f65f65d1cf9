// SPDX-License-Identifier: GPL-2.0
/*
 * balscale: the idle-batch balancer on a bigger guest (make bench-scale: 16
 * CPUs in 2 NUMA nodes).  What it costs, and whether idle-batch work there
 * changes how late normal tasks wake up.
 *
 * Each round measures, in turn, with no background, next to two idle-batch
 * hogs per CPU and next to two SCHED_IDLE hogs per CPU:
 * - the wakeup lateness of normal threads, each sleeping to an absolute
 *   deadline every millisecond (a schbench-like probe): p50, p99, max;
 * - the balance passes that ran (the workqueue events of
 *   idlebatch_balance_workfn): how many, and how long each took;
 * - the moves of parked tasks (sched_batch_migrate), by kind.
 * On a kernel without the policy the idle-batch rounds are skipped, so the
 * same program gives the figures of the kernel without it.
 *
 * Usage: balscale [ROUNDS [SECONDS [PROBES]]]   (default 3 5 8)
 */
#include "../kernel/idlebatch.h"

#include <math.h>

#define TRACEFS		"/sys/kernel/tracing"
#define MAX_SAMPLES	400000
#define MAX_HOGS	512

enum { BG_NONE, BG_IDLEBATCH, BG_IDLE, NR_BG };
static const char *const bg_names[NR_BG] = { "none", "idle-batch", "SCHED_IDLE" };

struct probe_shared {
	pthread_barrier_t start;
	pthread_mutex_t lock;
	double seconds;
	uint64_t *samples;
	size_t nr;
};

struct figures {
	double p50, p99, max;		/* wakeup lateness, us */
	int passes;
	double pass_mean, pass_max;	/* us */
	int moves[3];			/* balance, pull, swap */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A normal thread: sleep to a deadline every ms, note how late it woke. */
static void *probe_fn(void *arg)
{
	struct probe_shared *sh = arg;
	static __thread uint64_t local[20000];
	size_t n = 0, i;
	struct timespec next, now;
	uint64_t end;

	pthread_barrier_wait(&sh->start);
	end = now_ns() + (uint64_t)(sh->seconds * 1e9);
	while (now_ns() < end && n < sizeof(local) / sizeof(local[0])) {
		uint64_t want, got;

		/* A millisecond from now, so that lateness does not add up */
		clock_gettime(CLOCK_MONOTONIC, &next);
		timespec_add_ns(&next, 1000000);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		got = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		want = (uint64_t)next.tv_sec * 1000000000ull + (uint64_t)next.tv_nsec;
		local[n++] = got > want ? got - want : 0;
	}
	pthread_mutex_lock(&sh->lock);
	for (i = 0; i < n && sh->nr < MAX_SAMPLES; i++)
		sh->samples[sh->nr++] = local[i];
	pthread_mutex_unlock(&sh->lock);
	return NULL;
}

static int trace_set(const char *file, const char *value)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	return write_file(path, value);
}

static bool tracing_ok;

static void trace_begin(bool batch_events)
{
	tracing_ok = !trace_set("tracing_on", "0") && !truncate_file(TRACEFS "/trace") &&
		     !trace_set("buffer_size_kb", "4096") &&
		     !trace_set("events/workqueue/workqueue_execute_start/enable", "1") &&
		     !trace_set("events/workqueue/workqueue_execute_end/enable", "1");
	if (batch_events)
		trace_set("events/sched_batch/sched_batch_migrate/enable", "1");
	trace_set("tracing_on", "1");
}

/* Time stamp (s) of a trace line, from its "  123.456789: " field */
static double line_ts(const char *line, const char *event)
{
	const char *e = strstr(line, event), *p;

	if (!e)
		return -1;
	for (p = e - 2; p > line && *p != ' '; p--)
		;
	return atof(p);
}

static void trace_end(struct figures *f)
{
	char line[512], cpu_work[64][64];
	double start_ts[64], sum = 0;
	FILE *tf;
	int i;

	trace_set("tracing_on", "0");
	trace_set("events/workqueue/workqueue_execute_start/enable", "0");
	trace_set("events/workqueue/workqueue_execute_end/enable", "0");
	trace_set("events/sched_batch/sched_batch_migrate/enable", "0");
	f->passes = 0;
	f->pass_max = 0;
	memset(f->moves, 0, sizeof(f->moves));
	for (i = 0; i < 64; i++) {
		start_ts[i] = -1;
		cpu_work[i][0] = 0;
	}
	tf = tracing_ok ? fopen(TRACEFS "/trace", "r") : NULL;
	while (tf && fgets(line, sizeof(line), tf)) {
		char *b = strchr(line, '['), *w = strstr(line, "work struct ");
		int cpu = b ? atoi(b + 1) : -1;

		if (strstr(line, "sched_batch_migrate:")) {
			f->moves[0] += !!strstr(line, "kind=balance");
			f->moves[1] += !!strstr(line, "kind=pull");
			f->moves[2] += !!strstr(line, "kind=swap");
			continue;
		}
		if (cpu < 0 || cpu >= 64 || !w || !strstr(line, "idlebatch_balance_workfn"))
			continue;
		w += strlen("work struct ");
		if (strstr(line, "workqueue_execute_start:")) {
			start_ts[cpu] = line_ts(line, "workqueue_execute_start:");
			snprintf(cpu_work[cpu], sizeof(cpu_work[cpu]), "%.*s",
				 (int)strcspn(w, ":"), w);
		} else if (strstr(line, "workqueue_execute_end:") && start_ts[cpu] >= 0 &&
			   !strncmp(w, cpu_work[cpu], strlen(cpu_work[cpu]))) {
			double us = (line_ts(line, "workqueue_execute_end:") - start_ts[cpu]) * 1e6;

			f->passes++;
			sum += us;
			if (us > f->pass_max)
				f->pass_max = us;
			start_ts[cpu] = -1;
		}
	}
	if (tf)
		fclose(tf);
	f->pass_mean = f->passes ? sum / f->passes : 0;
}

static void measure(int bg, int nr_cpus, double seconds, int probes, struct figures *f,
		    struct probe_shared *sh)
{
	pid_t hogs[MAX_HOGS];
	pthread_t tids[64];
	int nr_hogs = 0, i;

	if (bg != BG_NONE) {
		for (i = 0; i < 2 * nr_cpus && i < MAX_HOGS; i++)
			hogs[nr_hogs++] = start_spinner(bg == BG_IDLEBATCH ? SCHED_IDLEBATCH : SCHED_IDLE,
							0, -1);
		sleep(3);	/* spread over the CPUs */
	}
	trace_begin(bg == BG_IDLEBATCH);
	sh->nr = 0;
	sh->seconds = seconds;
	pthread_barrier_init(&sh->start, NULL, (unsigned int)probes);
	for (i = 0; i < probes; i++)
		pthread_create(&tids[i], NULL, probe_fn, sh);
	for (i = 0; i < probes; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&sh->start);
	trace_end(f);
	while (nr_hogs > 0)
		stop_task(hogs[--nr_hogs]);

	qsort(sh->samples, sh->nr, sizeof(sh->samples[0]), cmp_u64);
	f->p50 = sh->nr ? sh->samples[sh->nr / 2] / 1e3 : 0;
	f->p99 = sh->nr ? sh->samples[sh->nr * 99 / 100] / 1e3 : 0;
	f->max = sh->nr ? sh->samples[sh->nr - 1] / 1e3 : 0;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n ? v[n / 2] : 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3, probes = argc > 3 ? atoi(argv[3]) : 8;
	double seconds = argc > 2 ? atof(argv[2]) : 5;
	int nr_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN), r, bg;
	bool have_policy = kernel_has_idlebatch() == 1;
	static struct figures fig[NR_BG][32];
	struct probe_shared sh = { .lock = PTHREAD_MUTEX_INITIALIZER };

	if (rounds < 1 || rounds > 32 || seconds <= 0 || probes < 1 || probes > 64) {
		fprintf(stderr, "usage: balscale [ROUNDS (1-32) [SECONDS [PROBES (1-64)]]]\n");
		return 2;
	}
	sh.samples = calloc(MAX_SAMPLES, sizeof(sh.samples[0]));
	if (!sh.samples)
		return 2;
	printf("# balscale: %d CPUs, %s, %d rounds of %.0f s, %d probe threads waking every 1 ms\n",
	       nr_cpus, have_policy ? "kernel with SCHED_IDLEBATCH" : "kernel without SCHED_IDLEBATCH",
	       rounds, seconds, probes);
	for (r = 0; r < rounds; r++) {
		for (bg = 0; bg < NR_BG; bg++) {
			if (bg == BG_IDLEBATCH && !have_policy)
				continue;
			measure(bg, nr_cpus, seconds, probes, &fig[bg][r], &sh);
			printf("# round %d, %-10s: wake p50 %.0f us p99 %.0f us max %.0f us; %d passes, mean %.0f us, max %.0f us; moves %d/%d/%d\n",
			       r + 1, bg_names[bg], fig[bg][r].p50, fig[bg][r].p99, fig[bg][r].max,
			       fig[bg][r].passes, fig[bg][r].pass_mean, fig[bg][r].pass_max,
			       fig[bg][r].moves[0], fig[bg][r].moves[1], fig[bg][r].moves[2]);
			fflush(stdout);
		}
	}

	printf("\n| background | wake p50 (us) | wake p99 (us) | p99 / none | passes per round | pass mean (us) | pass max (us) | moves per round: balance / pull / swap |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	double none_p99 = 0;

	for (bg = 0; bg < NR_BG; bg++) {
		double p50[32], p99[32], passes[32], mean[32], mx[32], mv[3][32];
		int k;

		if (bg == BG_IDLEBATCH && !have_policy)
			continue;
		for (r = 0; r < rounds; r++) {
			p50[r] = fig[bg][r].p50;
			p99[r] = fig[bg][r].p99;
			passes[r] = fig[bg][r].passes;
			mean[r] = fig[bg][r].pass_mean;
			mx[r] = fig[bg][r].pass_max;
			for (k = 0; k < 3; k++)
				mv[k][r] = fig[bg][r].moves[k];
		}
		double m99 = median(p99, rounds);

		if (bg == BG_NONE)
			none_p99 = m99;
		printf("| %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.0f | %.0f / %.0f / %.0f |\n",
		       bg_names[bg], median(p50, rounds), m99, none_p99 ? m99 / none_p99 : 0,
		       median(passes, rounds), median(mean, rounds), median(mx, rounds),
		       median(mv[0], rounds), median(mv[1], rounds), median(mv[2], rounds));
	}
	free(sh.samples);
	return 0;
}
