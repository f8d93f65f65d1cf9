// SPDX-License-Identifier: GPL-2.0
/*
 * The seed's demonstration, run inside the guest by `make demo`: start N
 * low-priority CPU hogs, let them spread, start one nice-0 CPU hog, stop
 * it, and print every second how many low-priority hogs each CPU has and
 * how busy each CPU is; then a summary of what happened.
 *
 * Usage: demo-scenario POLICY N SPREAD_S HOG_S AFTER_S
 *   POLICY  idlebatch (SCHED_IDLEBATCH), idle (SCHED_IDLE) or nice19
 */
#include "../kernel/idlebatch.h"

#include <math.h>
#include <stdbool.h>
#include <sys/wait.h>

#define MAX_CPUS	64
#define MAX_HOGS	256

struct cpu_times {
	unsigned long long busy, total;
};

struct sample {
	uint64_t when;				/* ns */
	int count[MAX_CPUS];			/* low-priority hogs per CPU */
	struct cpu_times cpu[MAX_CPUS];
	uint64_t low_ns, hog_ns;		/* CPU time used so far */
	int hog_cpu;
	long long migrations;
};

static int ncpu;
/* DEMO_QUIET: another program (batchtop) is the live view; print phases only */
static bool quiet;
static pid_t low[MAX_HOGS];
static int nlow;
static pid_t hog;

/* Per-CPU busy and total time from /proc/stat, in clock ticks */
static int read_cpu_times(struct cpu_times *t)
{
	unsigned long long v[10];
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	int cpu;

	if (!f)
		return -1;
	memset(t, 0, MAX_CPUS * sizeof(*t));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
			   &v[9]) != 11 || cpu < 0 || cpu >= MAX_CPUS)
			continue;
		/* idle and iowait are idle; the rest (guest time is in user) busy */
		t[cpu].busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		t[cpu].total = t[cpu].busy + v[3] + v[4];
	}
	fclose(f);
	return 0;
}

static long long migrations_of(pid_t pid)
{
	char path[64], line[256];
	long long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "se.nr_migrations : %lld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void take_sample(struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->when = now_ns();
	s->hog_cpu = -1;
	for (int i = 0; i < nlow; i++) {
		int cpu = (int)stat_field(low[i], 39);

		if (cpu >= 0 && cpu < MAX_CPUS)
			s->count[cpu]++;
		s->low_ns += cputime_ns(low[i]);
		s->migrations += migrations_of(low[i]);
	}
	if (hog) {
		s->hog_cpu = (int)stat_field(hog, 39);
		s->hog_ns = cputime_ns(hog);
	}
	read_cpu_times(s->cpu);
}

static void cleanup(void)
{
	for (int i = 0; i < nlow; i++)
		kill(low[i], SIGKILL);
	if (hog)
		kill(hog, SIGKILL);
	while (wait(NULL) > 0)
		;
}

static void on_signal(int sig)
{
	cleanup();
	_exit(128 + sig);
}

/* What a phase found, for the summary */
struct phase_result {
	double settled;		/* seconds until the wanted spread, -1: never */
	double hog_share;	/* the nice-0 hog's mean share after settling */
	double low_share;	/* low-priority hogs' mean total, % of one CPU */
	long long migrations;	/* in the phase */
	int last[MAX_CPUS];
	int hog_cpu;
};

/*
 * Is the spread what the phase wants: each CPU within one task of an even
 * share, and none on @avoid (the nice-0 hog's CPU), if >= 0?
 */
static int spread_ok(const int *count, int avoid)
{
	double even = (double)nlow / (ncpu - (avoid >= 0));

	for (int c = 0; c < ncpu; c++) {
		if (c == avoid ? count[c] != 0 : fabs(count[c] - even) > 1)
			return 0;
	}
	return 1;
}

static void run_phase(const char *name, int seconds, uint64_t t0, struct phase_result *r)
{
	struct sample prev, now;
	double hog_sum = 0, low_sum = 0;
	int hog_n = 0;

	memset(r, 0, sizeof(*r));
	r->settled = -1;
	take_sample(&prev);
	if (quiet) {
		printf("==== t=%.0f s: phase '%s' for %d s%s\n", (prev.when - t0) / 1e9, name, seconds,
		       hog ? ": a nice-0 CPU hog runs" : "");
		fflush(stdout);
	}
	uint64_t start = prev.when;
	long long m0 = prev.migrations;

	for (int s = 0; s < seconds; s++) {
		sleep(1);
		take_sample(&now);
		double dt = (now.when - prev.when) / 1e9;
		double hog_pct = hog ? 100.0 * (now.hog_ns - prev.hog_ns) / 1e9 / dt : 0;
		double low_pct = 100.0 * (now.low_ns - prev.low_ns) / 1e9 / dt;

		if (!quiet) {
			printf("%4.0f  %-6s |", (now.when - t0) / 1e9, name);
			for (int c = 0; c < ncpu; c++)
				printf(" %4d", now.count[c]);
			printf(" |");
			for (int c = 0; c < ncpu; c++) {
				unsigned long long total = now.cpu[c].total - prev.cpu[c].total;

				printf(" %4.0f", total ?
				       100.0 * (now.cpu[c].busy - prev.cpu[c].busy) / total : 0);
			}
			if (hog)
				printf(" | cpu%-2d %5.1f%%", now.hog_cpu, hog_pct);
			else
				printf(" |    -        ");
			printf(" | %6.0f%%\n", low_pct);
			fflush(stdout);
		}

		if (r->settled < 0 && spread_ok(now.count, hog ? now.hog_cpu : -1))
			r->settled = (now.when - start) / 1e9;
		if (r->settled >= 0) {
			hog_sum += hog_pct;
			low_sum += low_pct;
			hog_n++;
		}
		prev = now;
	}
	r->hog_share = hog_n ? hog_sum / hog_n : 0;
	r->low_share = hog_n ? low_sum / hog_n : 0;
	r->migrations = now.migrations - m0;
	memcpy(r->last, now.count, sizeof(r->last));
	r->hog_cpu = now.hog_cpu;
}

static void print_counts(const int *count)
{
	for (int c = 0; c < ncpu; c++)
		printf("%s%d", c ? " " : "", count[c]);
}

int main(int argc, char **argv)
{
	struct phase_result spread, busy, after;
	int policy, nice = 0, secs[3];
	const char *label;
	uint64_t t0;

	if (argc != 6) {
		fprintf(stderr, "usage: %s idlebatch|idle|nice19 N SPREAD_S HOG_S AFTER_S\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "idlebatch")) {
		policy = SCHED_IDLEBATCH;
		label = "SCHED_IDLEBATCH";
	} else if (!strcmp(argv[1], "idle")) {
		policy = SCHED_IDLE;
		label = "SCHED_IDLE";
	} else if (!strcmp(argv[1], "nice19")) {
		policy = SCHED_OTHER;
		nice = 19;
		label = "nice 19";
	} else {
		fprintf(stderr, "demo-scenario: unknown policy '%s'\n", argv[1]);
		return 2;
	}
	nlow = atoi(argv[2]);
	for (int i = 0; i < 3; i++)
		secs[i] = atoi(argv[3 + i]);
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nlow < 1 || nlow > MAX_HOGS || ncpu < 2 || ncpu > MAX_CPUS) {
		fprintf(stderr, "demo-scenario: needs 1..%d hogs and 2..%d CPUs\n", MAX_HOGS, MAX_CPUS);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (policy == SCHED_IDLEBATCH && !kernel_has_idlebatch()) {
		fprintf(stderr, "demo-scenario: this kernel has no SCHED_IDLEBATCH\n");
		return 1;
	}

	quiet = getenv("DEMO_QUIET") != NULL;
	printf("%d CPU hogs at %s on %d CPUs, then one nice-0 CPU hog for %d s, then without it.\n",
	       nlow, label, ncpu, secs[1]);
	if (quiet)
		goto start;
	printf("Each second: %s hogs per CPU, how busy each CPU was, the nice-0 hog's CPU and share,\n"
	       "and the CPU time all %s hogs got (100%% = one CPU).\n\n", label, label);
	printf("   t  phase  |");
	for (int c = 0; c < ncpu; c++)
		printf(" cpu%d", c);
	printf(" |");
	for (int c = 0; c < ncpu; c++)
		printf(" %%cpu%d", c);
	printf(" | nice-0 hog  | %s\n", label);
start:
	fflush(stdout);

	t0 = now_ns();
	for (int i = 0; i < nlow; i++)
		low[i] = start_spinner(policy, nice, -1);
	run_phase("spread", secs[0], t0, &spread);
	hog = start_spinner(SCHED_OTHER, 0, -1);
	run_phase("hog", secs[1], t0, &busy);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	hog = 0;
	run_phase("after", secs[2], t0, &after);

	printf("\nsummary (%s):\n", label);
	if (spread.settled >= 0)
		printf("  spread evenly (%.1f per CPU, give or take one) after %.0f s: ",
		       (double)nlow / ncpu, spread.settled);
	else
		printf("  never spread evenly in %d s: ", secs[0]);
	print_counts(spread.last);
	printf("; %lld migrations\n", spread.migrations);
	if (busy.settled >= 0)
		printf("  nice-0 hog on cpu%d: none of the %s hogs left there after %.0f s; "
		       "from then on the hog got %.1f%% of its CPU and they %.0f%%\n",
		       busy.hog_cpu, label, busy.settled, busy.hog_share, busy.low_share);
	else
		printf("  nice-0 hog on cpu%d: %s hogs were still queued there after %d s: ",
		       busy.hog_cpu, label, secs[1]);
	printf("  per CPU at the end of the hog phase: ");
	print_counts(busy.last);
	printf("; %lld migrations\n", busy.migrations);
	if (after.settled >= 0)
		printf("  hog stopped: spread evenly again after %.0f s: ", after.settled);
	else
		printf("  hog stopped: not spread evenly again in %d s: ", secs[2]);
	print_counts(after.last);
	printf("; %lld migrations\n", after.migrations);
	cleanup();
	return 0;
}
