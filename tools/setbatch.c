// SPDX-License-Identifier: GPL-2.0
/*
 * setbatch: run a command, or move tasks, under SCHED_IDLEBATCH, show
 * tasks' policies, or return tasks to SCHED_NORMAL.  See setbatch(8).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched_policy.h"

#define SETBATCH_VERSION	"1.0"

/* Exit statuses, documented in setbatch(8) */
enum {
	EXIT_OK		= 0,
	EXIT_TASK	= 1,	/* a task could not be changed or shown */
	EXIT_USAGE	= 2,
	EXIT_NO_POLICY	= 3,	/* the kernel has no SCHED_IDLEBATCH */
	EXIT_CANNOT_RUN	= 126,
	EXIT_NOT_FOUND	= 127,
};

enum action { RUN, SET, SHOW, RESET };

struct options {
	enum action action;
	bool all_tasks;
	bool set_nice;
	int nice;
	bool verbose;
};

static const char *prog = "setbatch";

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [options] -- COMMAND [ARG...]   run COMMAND as an idle-batch task\n"
		"       %s [options] -p PID...             make running tasks idle-batch tasks\n"
		"       %s PID                             the same, for one task\n"
		"       %s -q PID...                       show tasks' scheduling policies\n"
		"       %s --reset PID...                  return tasks to SCHED_NORMAL\n"
		"\n"
		"SCHED_IDLEBATCH tasks use only CPU time that no other task wants, yet never\n"
		"hold a kernel resource at idle priority.\n"
		"\n"
		"Options:\n"
		"  -p, --pid            the arguments are PIDs of tasks to change\n"
		"  -a, --all-tasks      every thread of each PID, not only the one named\n"
		"  -n, --nice NICE      set the nice value too (-20..19), which sets the\n"
		"                       task's share of the idle time\n"
		"  -q, --show           show the policy, nice value and idle-batch state\n"
		"  -r, --reset, --normal\n"
		"                       return the tasks to SCHED_NORMAL\n"
		"  -v, --verbose        say what was done when running a command\n"
		"  -h, --help           this text\n"
		"  -V, --version        the version\n"
		"\n"
		"Exit status: 0 done; 1 a task could not be changed or shown; 2 bad usage;\n"
		"3 the kernel has no SCHED_IDLEBATCH; 126 COMMAND could not run; 127 COMMAND\n"
		"not found.  See setbatch(8).\n",
		prog, prog, prog, prog, prog);
}

static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Explain a kernel without the policy, once. */
static void no_policy_message(void)
{
	fprintf(stderr,
		"%s: this kernel has no SCHED_IDLEBATCH (policy 8): it rejects the policy.\n"
		"%s: build a kernel with the idle-batch series and CONFIG_SCHED_IDLEBATCH=y\n"
		"%s: (see the project's README: make kernel, or make series for your own tree).\n",
		prog, prog, prog);
}

/* Nice value of @tid, or INT_MIN with errno set */
static int task_nice(pid_t tid)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, tid);
	if (nice == -1 && errno)
		return INT_MIN;
	return nice;
}

/* Change one task; prints what went wrong.  Returns an exit status. */
static int change_task(pid_t tid, const struct options *o, bool quiet)
{
	struct sched_attr attr = { .size = sizeof(attr) };
	int old = sched_getscheduler(tid), nice;

	if (old < 0)
		goto fail;
	nice = o->set_nice ? o->nice : task_nice(tid);
	if (nice == INT_MIN)
		goto fail;
	attr.sched_policy = o->action == RESET ? SCHED_OTHER : SCHED_IDLEBATCH;
	attr.sched_nice = nice;
	if (sched_setattr(tid, &attr, 0))
		goto fail;
	if (!quiet)
		printf("pid %d: %s, nice %d (was %s)\n", tid ? tid : getpid(),
		       policy_name(attr.sched_policy),
		       nice, policy_name(old & ~SCHED_RESET_ON_FORK));
	return EXIT_OK;

fail:
	switch (errno) {
	case ESRCH:
		fprintf(stderr, "%s: pid %d: no such process\n", prog, tid);
		return EXIT_TASK;
	case EPERM:
		if (o->action == RESET || (o->set_nice && o->nice < task_nice(tid)))
			fprintf(stderr, "%s: pid %d: permission denied: leaving SCHED_IDLEBATCH, like "
				"lowering a nice value, needs CAP_SYS_NICE or an RLIMIT_NICE that "
				"allows nice %d (ulimit -e); run it as root\n",
				prog, tid, o->set_nice ? o->nice : task_nice(tid));
		else
			fprintf(stderr, "%s: pid %d: permission denied: it belongs to another "
				"user; run it as that user or as root\n", prog, tid);
		return EXIT_TASK;
	case EINVAL:
		if (!policy_supported(SCHED_IDLEBATCH)) {
			no_policy_message();
			return EXIT_NO_POLICY;
		}
		/* fall through */
	default:
		fprintf(stderr, "%s: pid %d: %s\n", prog, tid, strerror(errno));
		return EXIT_TASK;
	}
}

/* /proc/TID/batchstat: "STATE PARKS PARKED_NS"; false if absent */
static bool read_task_batchstat(pid_t tid, char *state, unsigned long long *parks,
				unsigned long long *parked_ns)
{
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/batchstat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fscanf(f, " %c %llu %llu", state, parks, parked_ns);
	fclose(f);
	return n == 3;
}

static const char *state_name(char state)
{
	switch (state) {
	case 'P': return "parked";
	case 'R': return "running on idle time";
	case 'B': return "boosted by priority inheritance (holds a lock a real-time or deadline task waits for)";
	case 'N': return "in the kernel, asleep or about to be parked (normal priority)";
	default: return "not idle-batch";
	}
}

static int show_task(pid_t tid)
{
	unsigned long long parks, parked_ns;
	int policy = sched_getscheduler(tid), nice;
	char state;

	if (policy < 0) {
		fprintf(stderr, "%s: pid %d: %s\n", prog, tid,
			errno == ESRCH ? "no such process" : strerror(errno));
		return EXIT_TASK;
	}
	nice = task_nice(tid);
	printf("pid %d: %s%s, nice %d", tid, policy_name(policy & ~SCHED_RESET_ON_FORK),
	       policy & SCHED_RESET_ON_FORK ? "|SCHED_RESET_ON_FORK" : "", nice);
	if ((policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLEBATCH &&
	    read_task_batchstat(tid, &state, &parks, &parked_ns))
		printf(": %s; parked %llu times, %.3f s in all", state_name(state), parks,
		       parked_ns / 1e9);
	printf("\n");
	return EXIT_OK;
}

/* Apply @fn to @pid, or with -a to every thread of it. */
static int for_tasks(pid_t pid, const struct options *o, int (*fn)(pid_t, const struct options *))
{
	char path[64];
	struct dirent *d;
	int status = EXIT_OK;
	DIR *dir;

	if (!o->all_tasks)
		return fn(pid, o);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "%s: pid %d: no such process\n", prog, pid);
		return EXIT_TASK;
	}
	while ((d = readdir(dir))) {
		long tid;
		int s;

		if (parse_int(d->d_name, 1, INT_MAX, &tid))
			continue;
		s = fn((pid_t)tid, o);
		/* A thread that exits meanwhile is not an error. */
		if (s != EXIT_OK && kill((pid_t)tid, 0) && errno == ESRCH)
			continue;
		if (s > status)
			status = s;
		if (status == EXIT_NO_POLICY)
			break;
	}
	closedir(dir);
	return status;
}

static int change_one(pid_t tid, const struct options *o)
{
	return change_task(tid, o, false);
}

static int show_one(pid_t tid, const struct options *o)
{
	(void)o;
	return show_task(tid);
}

static int run_command(char **argv, const struct options *o)
{
	int status = change_task(0, o, !o->verbose);

	if (status != EXIT_OK)
		return status;
	execvp(argv[0], argv);
	fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
	return errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid",	no_argument,		NULL, 'p' },
		{ "all-tasks",	no_argument,		NULL, 'a' },
		{ "nice",	required_argument,	NULL, 'n' },
		{ "show",	no_argument,		NULL, 'q' },
		{ "reset",	no_argument,		NULL, 'r' },
		{ "normal",	no_argument,		NULL, 'r' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .action = RUN };
	bool pids = false;
	int c, status = EXIT_OK;
	long v;

	if (argc > 0 && argv[0][0])
		prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	/* '+': options end at the command, as for chrt and nice */
	while ((c = getopt_long(argc, argv, "+pan:qrvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pids = true;
			break;
		case 'a':
			o.all_tasks = true;
			break;
		case 'n':
			if (parse_int(optarg, -20, 19, &v)) {
				fprintf(stderr, "%s: nice value must be a number from -20 to 19, not '%s'\n",
					prog, optarg);
				return EXIT_USAGE;
			}
			o.set_nice = true;
			o.nice = (int)v;
			break;
		case 'q':
			o.action = SHOW;
			break;
		case 'r':
			o.action = RESET;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("%s %s (SCHED_IDLEBATCH = %d)\n", prog, SETBATCH_VERSION, SCHED_IDLEBATCH);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;

	/* The 2002 form: setbatch PID */
	if (o.action == RUN && !pids && argc == 1 && !parse_int(argv[0], 1, INT_MAX, &v) &&
	    strcmp(argv[-1], "--"))
		pids = true;
	if (o.action == RUN && pids)
		o.action = SET;

	if (argc == 0) {
		fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog,
			o.action == RUN ? "no command to run" : "no PID given", prog);
		return EXIT_USAGE;
	}
	if (o.action == RUN)
		return run_command(argv, &o);
	if (o.action == SHOW && o.set_nice) {
		fprintf(stderr, "%s: --show changes nothing; -n makes no sense with it\n", prog);
		return EXIT_USAGE;
	}

	for (int i = 0; i < argc; i++) {
		int s;

		if (parse_int(argv[i], 1, INT_MAX, &v)) {
			fprintf(stderr, "%s: '%s' is not a PID\n", prog, argv[i]);
			return EXIT_USAGE;
		}
		s = for_tasks((pid_t)v, &o, o.action == SHOW ? show_one : change_one);
		if (s > status)
			status = s;
		if (status == EXIT_NO_POLICY)
			break;
	}
	return status;
}
