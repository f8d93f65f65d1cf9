// SPDX-License-Identifier: GPL-2.0
/*
 * batchtop: a view of SCHED_IDLEBATCH -- per CPU the idle-batch queue, the
 * idle history and the rates of parks and migrations, and per idle-batch
 * task its state, CPU use and time parked.  Rates come from the deltas of
 * /proc/batchstat and /proc/PID/task/TID/{stat,batchstat} between frames.
 *
 * Interactive (curses) by default; -b prints plain frames like top -b,
 * --json one JSON object per frame.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "batch_events.h"
#include "batch_tasks.h"
#include "batchstat_read.h"

#define BATCHTOP_VERSION	"0.2"

enum sort_key { SORT_PID, SORT_CPU, SORT_PARKED, SORT_PARKS, SORT_KEYS };
static const char *const sort_names[SORT_KEYS] = { "pid", "cpu", "parked", "parks" };

struct options {
	bool batch, json, events;
	enum sort_key sort;
	long frames;			/* 0: until stopped */
	double delay;			/* seconds */
	const char *root;		/* "/" or a recorded tree */
	const char *replay;		/* DIR/0, DIR/1, ...: recorded frames */
	pid_t pid;			/* 0: all */
	long uid;			/* -1: all */
};

/* One look at the system */
struct frame {
	struct batch_snapshot stat;
	struct batch_task *tasks;
	int ntasks;
};

static const char *prog = "batchtop";
static long clock_ticks;

/*
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT end batchtop the way q does: the
 * handler only notes the signal (removing a tracefs instance is not
 * async-signal-safe), the sleep or getch() it interrupts returns, the loop
 * ends and cleans up, and then the signal is raised again so the parent
 * still sees batchtop killed by it.  A second signal kills at once.
 */
static volatile sig_atomic_t quit_signal;

static void on_quit_signal(int sig)
{
	if (quit_signal) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	quit_signal = sig;
}

static void catch_quit_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_quit_signal };	/* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* After the cleanup: die of the signal that asked batchtop to quit */
static int finish(int status)
{
	if (quit_signal) {
		batch_events_stop();
		signal(quit_signal, SIG_DFL);
		raise(quit_signal);
	}
	return status;
}

/* -e: sched_batch event rates over the last frame, or why there are none */
static bool events_on;
static char events_why[160];
static double event_rates[EV_KINDS];

/* Count the events of the frame that ends now, over @dt seconds */
static void update_event_rates(double dt)
{
	unsigned long long counts[EV_KINDS] = { 0 };

	if (!events_on)
		return;
	batch_events_collect(counts);
	for (int i = 0; i < EV_KINDS; i++)
		event_rates[i] = dt > 0 ? counts[i] / dt : 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s -b [-n COUNT] [-d SECONDS] [--json] [-p PID] [-u USER] [--root DIR]\n"
		"\n"
		"Shows SCHED_IDLEBATCH at work: per CPU the idle-batch queue, the idle\n"
		"history of the last 10 s and the parks and migrations per second; per\n"
		"idle-batch task its state, CPU use and time parked.\n"
		"\n"
		"  -b, --batch          plain text frames for scripts and logs, like top -b\n"
		"  -n, --iterations N   stop after N frames (default: until interrupted)\n"
		"  -d, --delay SECONDS  between frames (default 1)\n"
		"      --json           one JSON object per frame, one per line\n"
		"  -p, --pid PID        only the threads of process PID\n"
		"  -u, --user USER      only tasks of USER (a name or a number)\n"
		"  -e, --events         also the rates of the sched_batch trace events, counted\n"
		"                       in a private tracefs instance (root or tracefs access)\n"
		"  -s, --sort KEY       order tasks by pid (default), cpu (%%CPU), parked\n"
		"                       (time parked) or parks (parks per second)\n"
		"      --root DIR       read DIR/proc instead of /proc (recorded snapshots)\n"
		"      --replay DIR     frames from DIR/0/proc, DIR/1/proc, ... without waiting\n"
		"  -h, --help           this text\n"
		"  -V, --version        the version\n",
		prog);
}

static int load_frame(const char *root, struct frame *f, char *err, size_t errlen)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/proc/batchstat", root) >= (int)sizeof(path)) {
		snprintf(err, errlen, "the root folder's name is too long");
		return -1;
	}
	if (batchstat_read(path, &f->stat, err, errlen))
		return -1;
	/* Shorter than the batchstat path, which fitted */
	if (snprintf(path, sizeof(path), "%s/proc", root) >= (int)sizeof(path))
		return -1;
	f->ntasks = batch_tasks_scan(path, &f->tasks);
	if (f->ntasks < 0) {
		if (snprintf(err, errlen, "%s/proc: %s", root, "cannot read it") >= (int)errlen)
			err[errlen - 1] = 0;
		batchstat_free(&f->stat);
		return -1;
	}
	return 0;
}

static void free_frame(struct frame *f)
{
	batchstat_free(&f->stat);
	free(f->tasks);
	f->tasks = NULL;
	f->ntasks = 0;
}

static const struct batch_task *find_task(const struct frame *f, pid_t tid)
{
	for (int i = 0; i < f->ntasks; i++)
		if (f->tasks[i].tid == tid)
			return &f->tasks[i];
	return NULL;
}

static bool shown(const struct batch_task *t, const struct options *o)
{
	return (!o->pid || t->pid == o->pid) && (o->uid < 0 || (long)t->uid == o->uid);
}

static const char *user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u", (unsigned int)uid);
	return buf;
}

static const char *state_word(char s)
{
	switch (s) {
	case 'P': return "parked";
	case 'R': return "running";
	case 'B': return "boosted";
	case 'N': return "kernel";
	default: return "?";
	}
}

/* The history as ten digits, newest first: 9 is 90-100% idle */
static void history_digits(const struct batch_cpu *c, char out[BATCHSTAT_HISTORY + 1])
{
	for (int i = 0; i < BATCHSTAT_HISTORY; i++) {
		unsigned int v = c->history[i] / 100;

		out[i] = (char)('0' + (v > 9 ? 9 : v));
	}
	out[BATCHSTAT_HISTORY] = 0;
}

static double rate(unsigned long long now, unsigned long long before, double dt)
{
	return dt > 0 && now >= before ? (now - before) / dt : 0;
}

/* A task as shown: with its rates over the frame's interval */
struct task_row {
	const struct batch_task *task;
	double cpu_percent, parks_rate;
};

static enum sort_key row_sort;

static int row_cmp(const void *a, const void *b)
{
	const struct task_row *x = a, *y = b;
	double dx = 0, dy = 0;

	switch (row_sort) {
	case SORT_CPU:
		dx = x->cpu_percent, dy = y->cpu_percent;
		break;
	case SORT_PARKED:
		dx = (double)x->task->parked_ns, dy = (double)y->task->parked_ns;
		break;
	case SORT_PARKS:
		dx = x->parks_rate, dy = y->parks_rate;
		break;
	default:
		break;
	}
	if (dx != dy)
		return dx < dy ? 1 : -1;	/* largest first */
	return (x->task->tid > y->task->tid) - (x->task->tid < y->task->tid);
}

/* The tasks to show, with their rates, in the order asked for (malloc'd) */
static struct task_row *task_rows(const struct frame *prev, const struct frame *cur, double dt,
				  const struct options *o, int *nrows)
{
	struct task_row *rows = calloc(cur->ntasks ? cur->ntasks : 1, sizeof(*rows));
	int n = 0;

	for (int i = 0; rows && i < cur->ntasks; i++) {
		const struct batch_task *t = &cur->tasks[i];
		const struct batch_task *b = prev ? find_task(prev, t->tid) : NULL;

		if (!shown(t, o))
			continue;
		rows[n].task = t;
		rows[n].cpu_percent = b ? 100.0 * rate(t->cpu_ticks, b->cpu_ticks, dt) / clock_ticks : 0;
		rows[n].parks_rate = b ? rate(t->parks, b->parks, dt) : 0;
		n++;
	}
	row_sort = o->sort;
	if (n)
		qsort(rows, n, sizeof(*rows), row_cmp);
	*nrows = n;
	return rows;
}

static void print_text(FILE *out, const struct frame *prev, const struct frame *cur, double dt,
		       const struct options *o)
{
	int parked = 0, running = 0, kernel = 0, boosted = 0, n = 0, nrows;
	struct task_row *rows;
	char hist[BATCHSTAT_HISTORY + 1], user[32];

	for (int i = 0; i < cur->ntasks; i++) {
		if (!shown(&cur->tasks[i], o))
			continue;
		n++;
		parked += cur->tasks[i].batch_state == 'P';
		running += cur->tasks[i].batch_state == 'R';
		kernel += cur->tasks[i].batch_state == 'N';
		boosted += cur->tasks[i].batch_state == 'B';
	}
	fprintf(out, "batchtop: %d CPUs, batchstat version %d, %.1f s between frames\n",
	       cur->stat.ncpu, cur->stat.version, dt);
	fprintf(out, "idle-batch tasks: %d (%d running, %d parked, %d in the kernel or asleep",
		n, running, parked, kernel);
	if (boosted)
		fprintf(out, ", %d boosted by priority inheritance", boosted);
	fprintf(out, ")\n");
	if (events_on) {
		fprintf(out, "events/s (tracefs):");
		for (int i = 0; i < EV_KINDS; i++)
			fprintf(out, " %s %.1f", batch_event_names[i] + 12, event_rates[i]);
		fprintf(out, "\n");
	} else if (events_why[0]) {
		fprintf(out, "events: not shown: %s\n", events_why);
	}
	fprintf(out, "CPU  QUEUED RUN  IDLE10S  HISTORY     PARKS/S  MIGR/S\n");
	for (int i = 0; i < cur->stat.ncpu; i++) {
		const struct batch_cpu *c = &cur->stat.cpu[i];
		const struct batch_cpu *p = prev ? batchstat_cpu(&prev->stat, c->cpu) : NULL;

		history_digits(c, hist);
		fprintf(out, "%3d  %6u %3u  %6.1f%%  %s %8.1f %7.1f\n", c->cpu, c->waiting, c->running,
		       c->idle_avg / 10.0, hist, p ? rate(c->parks, p->parks, dt) : 0,
		       p ? rate(c->migrations_in + c->migrations_out,
				p->migrations_in + p->migrations_out, dt) : 0);
	}
	fprintf(out, "\n    PID     TID USER       NI CPU STATE    %%CPU  PARKED_S  PARKS/S COMMAND\n");
	rows = task_rows(prev, cur, dt, o, &nrows);
	for (int i = 0; i < nrows; i++) {
		const struct batch_task *t = rows[i].task;

		fprintf(out, "%7d %7d %-10s %3d %3d %-7s %6.1f %9.3f %8.1f %s\n", t->pid, t->tid,
			user_name(t->uid, user, sizeof(user)), t->nice, t->cpu,
			state_word(t->batch_state), rows[i].cpu_percent, t->parked_ns / 1e9,
			rows[i].parks_rate, t->comm);
	}
	free(rows);
	fprintf(out, "\n");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const struct frame *prev, const struct frame *cur, double dt,
		       const struct options *o)
{
	bool first = true;

	printf("{\"version\":%d,\"timestamp_ns\":%llu,\"interval_s\":%.3f,\"cpus\":[",
	       cur->stat.version, cur->stat.timestamp, dt);
	for (int i = 0; i < cur->stat.ncpu; i++) {
		const struct batch_cpu *c = &cur->stat.cpu[i];
		const struct batch_cpu *p = prev ? batchstat_cpu(&prev->stat, c->cpu) : NULL;

		printf("%s{\"cpu\":%d,\"queued\":%u,\"running\":%u,\"idle_avg_permille\":%u,"
		       "\"history_permille\":[", i ? "," : "", c->cpu, c->waiting, c->running,
		       c->idle_avg);
		for (int h = 0; h < BATCHSTAT_HISTORY; h++)
			printf("%s%u", h ? "," : "", c->history[h]);
		printf("],\"parks_per_s\":%.2f,\"migrations_per_s\":%.2f}",
		       p ? rate(c->parks, p->parks, dt) : 0,
		       p ? rate(c->migrations_in + c->migrations_out,
				p->migrations_in + p->migrations_out, dt) : 0);
	}
	printf("],\"events_per_s\":");
	if (events_on) {
		for (int i = 0; i < EV_KINDS; i++)
			printf("%s\"%s\":%.2f", i ? "," : "{", batch_event_names[i] + 12,
			       event_rates[i]);
		printf("}");
	} else {
		printf("null");
	}
	printf(",\"tasks\":[");
	for (int i = 0; i < cur->ntasks; i++) {
		const struct batch_task *t = &cur->tasks[i];
		const struct batch_task *b = prev ? find_task(prev, t->tid) : NULL;

		if (!shown(t, o))
			continue;
		printf("%s{\"pid\":%d,\"tid\":%d,\"uid\":%ld,\"nice\":%d,\"cpu\":%d,\"state\":",
		       first ? "" : ",", t->pid, t->tid, (long)(int)t->uid, t->nice, t->cpu);
		json_string(state_word(t->batch_state));
		printf(",\"cpu_percent\":%.1f,\"parked_s\":%.3f,\"parks\":%llu,\"parks_per_s\":%.2f,"
		       "\"command\":",
		       b ? 100.0 * rate(t->cpu_ticks, b->cpu_ticks, dt) / clock_ticks : 0,
		       t->parked_ns / 1e9, t->parks, b ? rate(t->parks, b->parks, dt) : 0);
		json_string(t->comm);
		printf("}");
		first = false;
	}
	printf("]}\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "batch",	no_argument,		NULL, 'b' },
		{ "iterations",	required_argument,	NULL, 'n' },
		{ "delay",	required_argument,	NULL, 'd' },
		{ "json",	no_argument,		NULL, 'J' },
		{ "pid",	required_argument,	NULL, 'p' },
		{ "user",	required_argument,	NULL, 'u' },
		{ "root",	required_argument,	NULL, 'R' },
		{ "replay",	required_argument,	NULL, 'P' },
		{ "sort",	required_argument,	NULL, 's' },
		{ "events",	no_argument,		NULL, 'e' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "bn:d:p:u:s:ehV", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o->batch = true;
			break;
		case 'n':
			o->frames = strtol(optarg, &end, 10);
			if (*end || o->frames < 1) {
				fprintf(stderr, "%s: -n needs a count of frames, not '%s'\n", prog, optarg);
				return 2;
			}
			break;
		case 'd':
			o->delay = strtod(optarg, &end);
			if (*end || !(o->delay >= 0.1 && o->delay <= 3600)) {
				fprintf(stderr, "%s: -d needs seconds from 0.1 to 3600, not '%s'\n",
					prog, optarg);
				return 2;
			}
			break;
		case 'J':
			o->json = true;
			break;
		case 'e':
			o->events = true;
			break;
		case 'p':
			o->pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || o->pid < 1) {
				fprintf(stderr, "%s: '%s' is not a PID\n", prog, optarg);
				return 2;
			}
			break;
		case 'u': {
			struct passwd *pw = getpwnam(optarg);

			o->uid = strtol(optarg, &end, 10);
			if (pw)
				o->uid = pw->pw_uid;
			else if (*end || o->uid < 0) {
				fprintf(stderr, "%s: no such user '%s'\n", prog, optarg);
				return 2;
			}
			break;
		}
		case 'R':
			o->root = optarg;
			break;
		case 's':
			for (o->sort = 0; o->sort < SORT_KEYS; o->sort++)
				if (!strcmp(optarg, sort_names[o->sort]))
					break;
			if (o->sort == SORT_KEYS) {
				fprintf(stderr, "%s: -s takes pid, cpu, parked or parks, not '%s'\n",
					prog, optarg);
				return 2;
			}
			break;
		case 'P':
			o->replay = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s %s\n", prog, BATCHTOP_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\nTry '%s --help'.\n", prog,
			argv[optind], prog);
		return 2;
	}
	if (!o->batch && !o->json && o->replay) {
		fprintf(stderr, "%s: --replay needs -b or --json\n", prog);
		return 2;
	}
	if (!o->batch && !o->json && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "%s: standard output is not a terminal: use -b or --json\n", prog);
		return 2;
	}
	return -1;
}

static const char help_text[] =
	"batchtop: SCHED_IDLEBATCH at work\n"
	"\n"
	"  q        quit\n"
	"  h or ?   this help (any key returns)\n"
	"  s        next sort order: pid, cpu, parked, parks\n"
	"  d        delay between frames, in seconds\n"
	"  p        pause / resume\n"
	"  u        show only one user's tasks (empty: all)\n"
	"  P        show only one process's threads (empty: all)\n"
	"\n"
	"Per CPU: QUEUED parked idle-batch tasks waiting, RUN 1 if one runs,\n"
	"IDLE10S the idle average of the last 10 s, HISTORY each of those\n"
	"seconds, newest first (9: 90-100% idle), parks and migrations per s.\n"
	"Per task: STATE running (on idle time), parked, or kernel (in the\n"
	"kernel or asleep, at normal priority); PARKED_S its time parked.\n";

/* Ask for a line at the bottom of the screen */
static void prompt(const char *question, char *answer, int size)
{
	move(LINES - 1, 0);
	clrtoeol();
	addstr(question);
	echo();
	curs_set(1);
	getnstr(answer, size - 1);
	curs_set(0);
	noecho();
}

/* Draw @text from the top, cut to the screen, and a status line */
static void draw(const char *text, const struct options *o, bool paused, const char *note)
{
	int row = 0;

	erase();
	for (const char *p = text; *p && row < LINES - 1; row++) {
		const char *end = strchr(p, '\n');
		int len = end ? (int)(end - p) : (int)strlen(p);

		mvaddnstr(row, 0, p, len < COLS ? len : COLS);
		p = end ? end + 1 : p + len;
	}
	attron(A_REVERSE);
	mvprintw(LINES - 1, 0, " q quit  h help  s sort:%s  d delay:%.1fs  p %s  u user  P pid %s",
		 sort_names[o->sort], o->delay, paused ? "resume" : "pause", note);
	attroff(A_REVERSE);
	refresh();
}

/* The curses view: a frame every o->delay seconds until q */
static int run_interactive(struct options *o)
{
	struct frame prev = { 0 }, cur = { 0 };
	char err[512], *text = NULL, answer[64], note[80] = "";
	bool paused = false, have_prev = false, running = true;
	size_t len;
	int status = 0;

	if (!initscr()) {
		fprintf(stderr, "%s: cannot start the terminal view\n", prog);
		return 1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	while (running && !quit_signal) {
		if (!paused) {
			if (load_frame(o->root, &cur, err, sizeof(err))) {
				status = 1;
				break;
			}
			if (have_prev) {
				FILE *m;

				free(text);
				text = NULL;
				m = open_memstream(&text, &len);

				if (!m) {
					snprintf(err, sizeof(err), "out of memory");
					status = 1;
					break;
				}
				update_event_rates((cur.stat.timestamp - prev.stat.timestamp) / 1e9);
				print_text(m, &prev, &cur, (cur.stat.timestamp - prev.stat.timestamp) / 1e9, o);
				fclose(m);
				free_frame(&prev);
			}
			prev = cur;
			have_prev = true;
			memset(&cur, 0, sizeof(cur));
		}
		draw(text ? text : "batchtop: first look taken, the first frame follows...\n",
		     o, paused, note);
		timeout(text ? (int)(o->delay * 1000) : 200);
		switch (quit_signal ? 'q' : getch()) {
		case 'q':
		case 'Q':
			running = false;
			break;
		case 'h':
		case '?':
			erase();
			mvaddstr(0, 0, help_text);
			refresh();
			timeout(-1);
			getch();
			break;
		case 's':
			o->sort = (o->sort + 1) % SORT_KEYS;
			break;
		case 'p':
			paused = !paused;
			break;
		case 'd': {
			double d;

			prompt("delay in seconds (0.1-3600): ", answer, sizeof(answer));
			d = atof(answer);
			if (d >= 0.1 && d <= 3600)
				o->delay = d;
			else
				snprintf(note, sizeof(note), "(bad delay '%.20s')", answer);
			break;
		}
		case 'u': {
			struct passwd *pw;

			prompt("user (empty: all): ", answer, sizeof(answer));
			pw = getpwnam(answer);
			o->uid = !answer[0] ? -1 : pw ? (long)pw->pw_uid : atol(answer);
			break;
		}
		case 'P':
			prompt("process ID (empty: all): ", answer, sizeof(answer));
			o->pid = (pid_t)atol(answer);
			break;
		case KEY_RESIZE:
		default:
			break;	/* a new size is drawn with the next frame */
		}
	}
	endwin();
	free(text);
	free_frame(&prev);
	free_frame(&cur);
	if (status)
		fprintf(stderr, "%s: %s\n", prog, err);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = { .delay = 1, .root = "", .uid = -1 };
	struct frame prev = { 0 }, cur = { 0 };
	bool have_prev = false;
	char err[512], root[PATH_MAX];
	int status;

	status = parse_options(argc, argv, &o);
	if (status >= 0)
		return status;
	clock_ticks = sysconf(_SC_CLK_TCK);
	catch_quit_signals();	/* before an instance exists to clean up */
	if (o.events && o.replay)
		snprintf(events_why, sizeof(events_why), "a replay has no live events");
	else if (o.events)
		events_on = batch_events_start(events_why, sizeof(events_why));
	if (!o.batch && !o.json)
		return finish(run_interactive(&o));
	/* One write per frame, so frames do not interleave with other output */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	/* n frames need n + 1 looks: every frame shows rates over its interval */
	for (long i = 0; (!o.frames || i <= o.frames) && !quit_signal; i++) {
		double dt;

		if (o.replay)
			snprintf(root, sizeof(root), "%s/%ld", o.replay, i);
		else
			snprintf(root, sizeof(root), "%s", o.root);
		if (o.replay && i > 0 && access(root, F_OK))
			break;	/* the recording ends */
		if (load_frame(root, &cur, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", prog, err);
			free_frame(&prev);
			return 1;
		}
		if (have_prev) {
			dt = (cur.stat.timestamp - prev.stat.timestamp) / 1e9;
			update_event_rates(dt);
			if (o.json)
				print_json(&prev, &cur, dt, &o);
			else
				print_text(stdout, &prev, &cur, dt, &o);
			fflush(stdout);
			free_frame(&prev);
		}
		prev = cur;
		have_prev = true;
		memset(&cur, 0, sizeof(cur));
		if (!o.replay && (!o.frames || i < o.frames)) {
			struct timespec ts = { (time_t)o.delay,
					       (long)((o.delay - (time_t)o.delay) * 1e9) };

			while (nanosleep(&ts, &ts) && errno == EINTR && !quit_signal)
				;
		}
	}
	free_frame(&prev);
	return finish(0);
}
