// SPDX-License-Identifier: GPL-2.0
/*
 * foreground_bench: how much a background job slows foreground work, and
 * how much of the foreground's idle time the background still gets, for
 * every way of running the background at low priority (peers.h), in one
 * guest run on one kernel.
 *
 * Foregrounds (nice 0, root cgroup, on any CPU):
 *   redis-sat   redis-server driven by redis-benchmark at saturation
 *   redis-rate  redis-server driven at half that rate, open loop, by
 *               redis_client.h (redis-benchmark has no rate limit)
 *   wakeup      a timer-wakeup latency probe: one SCHED_OTHER thread per
 *               CPU sleeping to an absolute deadline every 1 ms
 *               (cyclictest -p 0 does the same)
 *   duty        one thread per two CPUs doing 5 ms of CPU work, then
 *               sleeping 5 ms: how much longer each unit of work takes
 * Backgrounds (backgrounds.h): CPU spinners, kernel-heavy work, a
 * make -jN build, and 10 to 10,000 spinning threads.
 *
 * Every cell (foreground, background, peer) is one window of SECONDS; a
 * background is started under a peer, each foreground gets its window,
 * and the background is killed.  Each foreground alone ("none") is
 * measured before and after all the cells.  Raw values
 * only, one per line, in DIR/results.csv:
 *   fg,bg,peer,rep,key,value
 * and latency distributions in DIR/latency.csv:
 *   fg,bg,peer,percentile,value
 * tests/bench/report turns them into tables and plots.
 *
 * Usage: foreground_bench [--quick | --smoke] [--seconds S] [--build-src DIR]
 *                         [--fg LIST] [--bg LIST] [--peers LIST] --out DIR
 *   LISTs are comma-separated short names (see --help) and replace the
 *   mode's choice.
 */
#include "peers.h"
#include "backgrounds.h"
#include "foregrounds.h"

#include <getopt.h>

static FILE *results, *latency;

static void record(const char *fg, const char *bg, const char *peer, int rep,
		   const struct metrics *m)
{
	for (int i = 0; i < m->n; i++)
		fprintf(results, "%s,%s,%s,%d,%s,%.9g\n", fg, bg, peer, rep,
			m->key[i], m->value[i]);
	if (m->dist_n) {
		for (int i = 0; i < m->dist_n; i++)
			fprintf(latency, "%s,%s,%s,%g,%.9g\n", fg, bg, peer,
				m->dist_pct[i], m->dist_value[i]);
	}
	fflush(results);
	fflush(latency);
}

/*
 * The background's progress over a window, and its share of the CPU time
 * nothing else wanted: its own CPU time over that plus the time the CPUs
 * still spent idle.
 */
static void window_metrics(const struct window *w, struct metrics *m)
{
	double wall = (w->t1 - w->t0) / 1e9, bg_cpu = (w->bgcpu1 - w->bgcpu0) / 1e9;
	/*
	 * Field 23 of /proc/batchstat is the idle time less the time run by
	 * idle-batch tasks, which is folded in at their ticks: it can step
	 * back by up to a tick while one runs.  A window with no idle time
	 * then reads a little below zero.
	 */
	double idle = w->idle1 > w->idle0 ? (w->idle1 - w->idle0) / 1e9 : 0;

	metrics_add(m, "bg_units_per_s", (w->count1 - w->count0) / wall);
	metrics_add(m, "bg_cpu_s", bg_cpu);
	metrics_add(m, "idle_cpu_s", idle);
	metrics_add(m, "bg_share_of_idle", bg_cpu + idle > 0 ? bg_cpu / (bg_cpu + idle) : 0);
	metrics_add(m, "wall_s", wall);
}

/* The foreground alone: the baseline of its ratios */
static int run_alone(enum fg_id fg, double seconds, int rep)
{
	struct metrics m = { 0 };

	if (fg_run(fg, seconds, &m))
		return -1;
	record(fg_names[fg], "none", "none", rep, &m);
	fprintf(stderr, "foreground_bench: %-10s %-22s %-16s %s %.4g\n",
		fg_names[fg], "none", "none", m.key[0], m.value[0]);
	return 0;
}

/*
 * Each foreground next to @bgid run as @peer says: the background is
 * started once (10,000 threads take a while), and each foreground gets a
 * window of its own.
 */
/*
 * Cells left out, with the reason the report gives: with thousands of
 * spinning threads at nice 0 (or 10,000 at nice 19) the foreground gets
 * a 1/N share by design, and redis-benchmark's fixed number of requests
 * would take many minutes; the redis foregrounds are left out next to
 * the thread backgrounds (their windows are not bounded in time).
 */
static const char *cell_left_out(enum fg_id fg, enum bg_id bg, enum peer_id peer)
{
	if (bg_threads[bg] && (fg == FG_REDIS_SAT || fg == FG_REDIS_RATE))
		return "redis next to thread backgrounds";
	if (bg_threads[bg] >= 1000 && peer == PEER_NICE0)
		return "1000+ threads at nice 0 starve the foreground by design";
	if (bg_threads[bg] >= 10000 && peer == PEER_NICE19)
		return "10000 threads at nice 19 starve the foreground by design";
	return NULL;
}

static int run_cells(const enum fg_id *fgs, int nfg, enum bg_id bgid, enum peer_id peer_id,
		     double seconds)
{
	const struct peer *peer = &peers[peer_id];
	pid_t bg;
	int n = 0;

	for (int f = 0; f < nfg; f++) {
		const char *why = cell_left_out(fgs[f], bgid, peer_id);

		if (why)
			fprintf(results, "%s,%s,%s,1,left_out,1\n", fg_names[fgs[f]],
				bg_names[bgid], peer->name);
		else
			n++;
	}
	if (!n)
		return 0;
	bg = bg_start(bgid, peer);
	if (bg < 0) {
		/* Said on stderr; the other cells still run */
		for (int f = 0; f < nfg; f++)
			if (!cell_left_out(fgs[f], bgid, peer_id))
				fprintf(results, "%s,%s,%s,1,did_not_start,1\n", fg_names[fgs[f]],
					bg_names[bgid], peer->name);
		return 0;
	}
	for (int f = 0; f < nfg; f++) {
		struct metrics m = { 0 };
		struct window w;
		int ret;

		if (cell_left_out(fgs[f], bgid, peer_id))
			continue;

		window_begin(&w, bg);
		ret = fg_run(fgs[f], seconds, &m);
		window_end(&w);
		if (ret) {
			bg_stop(bg);
			return -1;
		}
		window_metrics(&w, &m);
		record(fg_names[fgs[f]], bg_names[bgid], peer->name, 1, &m);
		fprintf(stderr, "foreground_bench: %-10s %-22s %-16s %s %.4g, "
			"background %.1f%% of idle\n", fg_names[fgs[f]], bg_names[bgid],
			peer->name, m.key[0], m.value[0], 100 * metrics_get(&m, "bg_share_of_idle"));
	}
	bg_stop(bg);
	return 0;
}

static const char *const fg_ids[FG_NR] = { "redis-sat", "redis-rate", "wakeup", "duty" };
static const char *const bg_ids[BG_NR] = {
	"cpu", "kernel", "build", "longread", "faults", "forkexec", "iouring", "backup",
	"threads10", "threads100", "threads1000", "threads10000",
};
static const char *const peer_ids[PEER_NR] = {
	"none", "nice0", "nice19", "idle", "cg-idle", "cg-weight1", "idlebatch",
};

static void usage(void)
{
	fprintf(stderr, "usage: foreground_bench [--quick | --smoke] [--seconds S] "
		"[--build-src DIR] [--fg LIST] [--bg LIST] [--peers LIST] --out DIR\n"
		"  --fg:    redis-sat redis-rate wakeup duty\n"
		"  --bg:    cpu kernel build longread faults forkexec iouring backup threads10\n"
		"           threads100 threads1000 threads10000\n"
		"  --peers: nice0 nice19 idle cg-idle cg-weight1 idlebatch\n"
		"  (comma-separated)\n");
	exit(2);
}

/* Parse comma-separated @list of @names into @ids; the count, or usage() */
static int parse_list(char *list, const char *const *names, int nr, int *ids, int max)
{
	int n = 0;

	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int i;

		for (i = 0; i < nr && strcmp(tok, names[i]); i++)
			;
		if (i == nr || n == max || (names == peer_ids && i == PEER_NONE)) {
			fprintf(stderr, "foreground_bench: unknown or repeated name '%s'\n", tok);
			usage();
		}
		ids[n++] = i;
	}
	if (!n)
		usage();
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "smoke", no_argument, NULL, 'k' },
		{ "seconds", required_argument, NULL, 's' },
		{ "build-src", required_argument, NULL, 'b' },
		{ "out", required_argument, NULL, 'o' },
		{ "fg", required_argument, NULL, 'f' },
		{ "bg", required_argument, NULL, 'g' },
		{ "peers", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	enum { FULL, QUICK, SMOKE } mode = FULL;
	const char *out = NULL, *build_src = "build/linux/scripts/dtc";
	double seconds = 0;
	char path[512];
	int c, fg_pick[FG_NR], bg_pick[BG_NR], peer_pick[PEER_NR], nfg_pick = 0, nbg_pick = 0,
	    npeer_pick = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': mode = QUICK; break;
		case 'k': mode = SMOKE; break;
		case 's': seconds = atof(optarg); if (seconds <= 0) usage(); break;
		case 'b': build_src = optarg; break;
		case 'o': out = optarg; break;
		case 'f': nfg_pick = parse_list(optarg, fg_ids, FG_NR, fg_pick, FG_NR); break;
		case 'g': nbg_pick = parse_list(optarg, bg_ids, BG_NR, bg_pick, BG_NR); break;
		case 'p': npeer_pick = parse_list(optarg, peer_ids, PEER_NR, peer_pick, PEER_NR); break;
		default: usage();
		}
	}
	if (!out || optind != argc)
		usage();
	if (seconds == 0)
		seconds = mode == FULL ? 3 : mode == QUICK ? 1.5 : 0.3;
	if (!kernel_has_idlebatch()) {
		fprintf(stderr, "foreground_bench: this kernel has no SCHED_IDLEBATCH\n");
		return 2;
	}
	if (mkdir(out, 0755) && errno != EEXIST) {
		fprintf(stderr, "foreground_bench: mkdir %s: %s\n", out, strerror(errno));
		return 2;
	}
	snprintf(path, sizeof(path), "%s/results.csv", out);
	results = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/latency.csv", out);
	latency = fopen(path, "w");
	if (!results || !latency) {
		fprintf(stderr, "foreground_bench: cannot write to %s: %s\n", out, strerror(errno));
		return 2;
	}
	fprintf(results, "fg,bg,peer,rep,key,value\n");
	fprintf(latency, "fg,bg,peer,percentile,value\n");

	/* What runs in this mode */
	static const enum fg_id fg_full[] = { FG_REDIS_SAT, FG_REDIS_RATE, FG_WAKEUP, FG_DUTY };
	static const enum fg_id fg_quick[] = { FG_WAKEUP, FG_DUTY };
	static const enum fg_id fg_smoke[] = { FG_DUTY };
	static const enum bg_id bg_full[] = { BG_CPU, BG_KERNEL, BG_BUILD, BG_LONG_READ,
					      BG_FAULTS, BG_FORK_EXEC, BG_IO_URING, BG_BACKUP,
					      BG_THREADS_10,
					      BG_THREADS_100, BG_THREADS_1000, BG_THREADS_10000 };
	static const enum bg_id bg_quick[] = { BG_CPU, BG_KERNEL };
	static const enum bg_id bg_smoke[] = { BG_CPU };
	static const enum peer_id peer_full[] = { PEER_NICE0, PEER_NICE19, PEER_IDLE,
						  PEER_CG_IDLE, PEER_CG_WEIGHT1, PEER_IDLEBATCH };
	static const enum peer_id peer_quick[] = { PEER_NICE19, PEER_IDLE, PEER_CG_IDLE,
						   PEER_IDLEBATCH };
	static const enum peer_id peer_smoke[] = { PEER_IDLE, PEER_IDLEBATCH };
#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define PICK(full, quick, smoke, n) \
	(n = mode == FULL ? ARRAY_LEN(full) : mode == QUICK ? ARRAY_LEN(quick) : ARRAY_LEN(smoke), \
	 mode == FULL ? full : mode == QUICK ? quick : smoke)
	int nfg, nbg, npeer;
	const enum fg_id *fgs = PICK(fg_full, fg_quick, fg_smoke, nfg);
	const enum bg_id *bgs = PICK(bg_full, bg_quick, bg_smoke, nbg);
	const enum peer_id *ps = PICK(peer_full, peer_quick, peer_smoke, npeer);

	if (nfg_pick)
		fgs = (const enum fg_id *)fg_pick, nfg = nfg_pick;
	if (nbg_pick)
		bgs = (const enum bg_id *)bg_pick, nbg = nbg_pick;
	if (npeer_pick)
		ps = (const enum peer_id *)peer_pick, npeer = npeer_pick;
	uint64_t t_start = now_ns();
	bool redis = false, build = false;

	for (int f = 0; f < nfg; f++)
		redis |= fgs[f] == FG_REDIS_SAT || fgs[f] == FG_REDIS_RATE;
	for (int b = 0; b < nbg; b++)
		build |= bgs[b] == BG_BUILD;
	if (peers_setup() || backgrounds_setup(build_src, build) || foregrounds_setup(redis))
		return 2;

	allow_all_cpus(0);
	fprintf(stderr, "foreground_bench: %d foregrounds x %d backgrounds x %d peers, "
		"%.1f s each, %ld CPUs\n", nfg, nbg, npeer, seconds,
		sysconf(_SC_NPROCESSORS_ONLN));

	/*
	 * Each background alone: its progress with the whole machine idle,
	 * where its policy makes no difference; SCHED_IDLE, because 10,000
	 * threads at nice 0 leave this program no CPU to see them start.
	 */
	for (int b = 0; b < nbg; b++) {
		struct metrics m = { 0 };
		struct window w;
		pid_t bg = bg_start(bgs[b], &peers[PEER_IDLE]);

		if (bg < 0)
			return 1;
		window_begin(&w, bg);
		usleep(seconds * 1e6);
		window_end(&w);
		bg_stop(bg);
		window_metrics(&w, &m);
		record("alone", bg_names[bgs[b]], peers[PEER_IDLE].name, 1, &m);
		fprintf(stderr, "foreground_bench: %-22s alone: %.1f units/s (%lu units in %.2f s)\n",
			bg_names[bgs[b]], m.value[0], (unsigned long)(w.count1 - w.count0),
			(w.t1 - w.t0) / 1e9);
	}

	/* Every foreground alone, before and after its cells: the baselines */
	for (int f = 0; f < nfg; f++)
		if (run_alone(fgs[f], seconds, 1))
			return 1;
	for (int b = 0; b < nbg; b++)
		for (int p = 0; p < npeer; p++)
			if (run_cells(fgs, nfg, bgs[b], ps[p], seconds))
				return 1;
	for (int f = 0; f < nfg; f++)
		if (run_alone(fgs[f], seconds, 2))
			return 1;
	foregrounds_cleanup();
	fprintf(stderr, "foreground_bench: done in %.0f s\n", (now_ns() - t_start) / 1e9);
	return 0;
}
