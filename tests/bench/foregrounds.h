/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The foreground work of foreground_bench: nice-0 tasks in the root
 * cgroup, on any CPU, each run for a window and reduced to a few figures
 * (struct metrics), the first of which is the headline the log prints.
 */
#ifndef TESTS_BENCH_FOREGROUNDS_H
#define TESTS_BENCH_FOREGROUNDS_H

#include "../kernel/idlebatch.h"
#include "redis_client.h"

enum fg_id { FG_REDIS_SAT, FG_REDIS_RATE, FG_WAKEUP, FG_DUTY, FG_NR };

static const char *const fg_names[FG_NR] = {
	[FG_REDIS_SAT]	= "redis-sat",
	[FG_REDIS_RATE] = "redis-rate",
	[FG_WAKEUP]	= "wakeup",
	[FG_DUTY]	= "duty",
};

#define METRICS_MAX 16
#define DIST_MAX 32

struct metrics {
	int n;
	const char *key[METRICS_MAX];
	double value[METRICS_MAX];
	/* A latency distribution: value at each percentile */
	int dist_n;
	double dist_pct[DIST_MAX], dist_value[DIST_MAX];
};

static inline void metrics_add(struct metrics *m, const char *key, double value)
{
	if (m->n < METRICS_MAX) {
		m->key[m->n] = key;
		m->value[m->n++] = value;
	}
}

static inline double metrics_get(const struct metrics *m, const char *key)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->key[i], key))
			return m->value[i];
	return 0;
}

/* The value below which @pct percent of the @n sorted samples lie */
static inline double percentile(const double *sorted, size_t n, double pct)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(pct / 100 * n);
	return sorted[i < n ? i : n - 1];
}

/* Sort @v and keep its distribution (and p50, p99, p99.9, max under @unit) */
static inline void metrics_latency(struct metrics *m, double *v, size_t n, const char *p50,
				   const char *p99, const char *p999, const char *max)
{
	static const double pcts[] = {
		0, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.5, 99.9, 99.99, 100,
	};

	qsort(v, n, sizeof(*v), cmp_double);
	metrics_add(m, p50, percentile(v, n, 50));
	metrics_add(m, p99, percentile(v, n, 99));
	if (p999)
		metrics_add(m, p999, percentile(v, n, 99.9));
	if (max)
		metrics_add(m, max, n ? v[n - 1] : 0);
	m->dist_n = 0;
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]) && i < DIST_MAX; i++) {
		m->dist_pct[m->dist_n] = pcts[i];
		m->dist_value[m->dist_n++] = percentile(v, n, pcts[i]);
	}
}

/* --- wakeup: one thread per CPU, timer wakeups every 1 ms ---------------- */

struct wakeup_arg {
	uint64_t end;
	double *lat_us;
	size_t n, cap;
};

static void *wakeup_thread(void *p)
{
	struct wakeup_arg *a = p;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (a->n < a->cap) {
		struct timespec now;
		int64_t late;

		timespec_add_ns(&next, 1000000);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		late = (now.tv_sec - next.tv_sec) * 1000000000ll + now.tv_nsec - next.tv_nsec;
		a->lat_us[a->n++] = late / 1e3;
		if ((uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec >= a->end)
			break;
		/* Overslept by more than a period: start again from now */
		if (late > 1000000)
			next = now;
	}
	return NULL;
}

static int fg_wakeup(double seconds, struct metrics *m)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct wakeup_arg args[ncpu];
	pthread_t threads[ncpu];
	size_t cap = (size_t)(seconds * 1000) + 16, total = 0;
	double *all = malloc(sizeof(double) * cap * ncpu);

	if (!all)
		return -1;
	for (int i = 0; i < ncpu; i++) {
		args[i] = (struct wakeup_arg){ now_ns() + (uint64_t)(seconds * 1e9),
					       all + i * cap, 0, cap };
		pthread_create(&threads[i], NULL, wakeup_thread, &args[i]);
	}
	for (int i = 0; i < ncpu; i++) {
		pthread_join(threads[i], NULL);
		memmove(all + total, args[i].lat_us, args[i].n * sizeof(double));
		total += args[i].n;
	}
	metrics_latency(m, all, total, "wakeup_p50_us", "wakeup_p99_us", "wakeup_p999_us",
			"wakeup_max_us");
	metrics_add(m, "wakeups", total);
	free(all);
	return 0;
}

/* --- duty: 5 ms of CPU work, 5 ms of sleep ------------------------------- */

struct duty_arg {
	uint64_t end;
	double stretch_sum;
	long units;
};

static void *duty_thread(void *p)
{
	struct duty_arg *a = p;

	while (now_ns() < a->end) {
		uint64_t t0 = now_ns();
		double c0 = thread_cpu_ns();

		while (thread_cpu_ns() - c0 < 5e6)
			;
		a->stretch_sum += (now_ns() - t0) / 5e6;
		a->units++;
		usleep(5000);
	}
	return NULL;
}

static int fg_duty(double seconds, struct metrics *m)
{
	int n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
	double sum = 0;
	long units = 0;

	if (n < 1)
		n = 1;
	struct duty_arg args[n];
	pthread_t threads[n];

	for (int i = 0; i < n; i++) {
		args[i] = (struct duty_arg){ now_ns() + (uint64_t)(seconds * 1e9), 0, 0 };
		pthread_create(&threads[i], NULL, duty_thread, &args[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(threads[i], NULL);
		sum += args[i].stretch_sum;
		units += args[i].units;
	}
	metrics_add(m, "duty_stretch", units ? sum / units : 0);
	metrics_add(m, "duty_units", units);
	return 0;
}

/* --- redis --------------------------------------------------------------- */

static pid_t redis_pid;
static double redis_sat_rps;	/* at saturation, alone: sets the fixed rate */

/* Start what the foregrounds need: redis-server, if @redis */
static int foregrounds_setup(bool redis)
{
	if (!redis)
		return 0;
	redis_pid = redis_server_start();
	return redis_pid > 0 ? 0 : -1;
}

static void foregrounds_cleanup(void)
{
	if (redis_pid > 0)
		stop_task(redis_pid);
}

static int fg_redis_sat(double seconds, struct metrics *m)
{
	struct redis_bench r;
	/* About @seconds worth of requests at the rate measured alone */
	long requests = redis_sat_rps > 0 ? (long)(redis_sat_rps * seconds) : (long)(2000 * seconds);

	if (requests < 200)
		requests = 200;
	if (redis_benchmark(requests, &r))
		return -1;
	if (redis_sat_rps == 0)
		redis_sat_rps = r.rps;
	metrics_add(m, "redis_rps", r.rps);
	metrics_add(m, "redis_p50_ms", r.p50_ms);
	metrics_add(m, "redis_p99_ms", r.p99_ms);
	metrics_add(m, "redis_p999_ms", r.p999_ms);
	return 0;
}

static int fg_redis_rate(double seconds, struct metrics *m)
{
	double rate = redis_sat_rps > 0 ? redis_sat_rps / 2 : 500, achieved;
	size_t n = 0, cap = (size_t)(rate * seconds) + 16;
	double *lat_ms = malloc(cap * sizeof(double));

	if (!lat_ms || redis_open_loop(rate, seconds, lat_ms, cap, &n, &achieved)) {
		free(lat_ms);
		return -1;
	}
	metrics_latency(m, lat_ms, n, "redis_p50_ms", "redis_p99_ms", "redis_p999_ms",
			"redis_max_ms");
	metrics_add(m, "redis_rps", achieved);
	metrics_add(m, "redis_target_rps", rate);
	free(lat_ms);
	return 0;
}

static int fg_run(enum fg_id fg, double seconds, struct metrics *m)
{
	switch (fg) {
	case FG_REDIS_SAT:  return fg_redis_sat(seconds, m);
	case FG_REDIS_RATE: return fg_redis_rate(seconds, m);
	case FG_WAKEUP:	    return fg_wakeup(seconds, m);
	case FG_DUTY:	    return fg_duty(seconds, m);
	default:	    return -1;
	}
}

#endif
