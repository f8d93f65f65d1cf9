// SPDX-License-Identifier: GPL-2.0
/* The idle-batch tasks under a /proc root: see batch_tasks.h */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_tasks.h"
#include "sched_policy.h"

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char *got;

	if (!f)
		return -1;
	got = fgets(buf, (int)size, f);
	fclose(f);
	return got ? 0 : -1;
}

/*
 * Fields of /proc/PID/task/TID/stat (proc(5)): the command in parentheses,
 * then from field 3 on, separated by spaces.  Returns 1 for an idle-batch
 * task, 0 for another, -1 if unreadable.
 */
static int parse_stat(const char *path, struct batch_task *t)
{
	char buf[1024], *open, *close, *p;
	unsigned long long utime = 0, stime = 0;
	long policy = -1;
	int field;

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -1;
	snprintf(t->comm, sizeof(t->comm), "%.*s", (int)(close - open - 1), open + 1);
	p = close + 2;
	for (field = 3; p && *p; field++) {
		switch (field) {
		case 3:
			t->sched_state = *p;
			break;
		case 14:
			utime = strtoull(p, NULL, 10);
			break;
		case 15:
			stime = strtoull(p, NULL, 10);
			break;
		case 19:
			t->nice = (int)strtol(p, NULL, 10);
			break;
		case 39:
			t->cpu = (int)strtol(p, NULL, 10);
			break;
		case 41:
			policy = strtol(p, NULL, 10);
			break;
		}
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	t->cpu_ticks = utime + stime;
	if (policy < 0)
		return -1;
	return (policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLEBATCH;
}

static void read_uid(const char *dir, struct batch_task *t)
{
	char path[600], line[256];
	FILE *f;

	t->uid = (uid_t)-1;
	if (snprintf(path, sizeof(path), "%s/status", dir) >= (int)sizeof(path))
		return;
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int uid;

		if (sscanf(line, "Uid: %u", &uid) == 1) {
			t->uid = uid;
			break;
		}
	}
	fclose(f);
}

static void read_batchstat(const char *dir, struct batch_task *t)
{
	char path[600], buf[128];

	t->batch_state = '?';
	if (snprintf(path, sizeof(path), "%s/batchstat", dir) >= (int)sizeof(path) ||
	    read_line(path, buf, sizeof(buf)) ||
	    sscanf(buf, " %c %llu %llu", &t->batch_state, &t->parks, &t->parked_ns) != 3)
		t->batch_state = '?';
}

static int by_tid(const void *a, const void *b)
{
	const struct batch_task *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Append the idle-batch threads of process @pid */
static int scan_process(const char *proc, pid_t pid, struct batch_task **tasks, int *n, int *size)
{
	char dir[512], path[600];
	struct dirent *d;
	DIR *tdir;

	snprintf(dir, sizeof(dir), "%s/%d/task", proc, pid);
	tdir = opendir(dir);
	if (!tdir)
		return 0;	/* it exited */
	while ((d = readdir(tdir))) {
		struct batch_task t = { .pid = pid };
		char tdirname[560];

		t.tid = (pid_t)atoi(d->d_name);
		if (t.tid <= 0)
			continue;
		snprintf(tdirname, sizeof(tdirname), "%s/%d", dir, t.tid);
		snprintf(path, sizeof(path), "%s/stat", tdirname);
		if (parse_stat(path, &t) != 1)
			continue;
		read_uid(tdirname, &t);
		read_batchstat(tdirname, &t);
		if (*n == *size) {
			struct batch_task *more;

			*size = *size ? 2 * *size : 64;
			more = realloc(*tasks, *size * sizeof(*more));
			if (!more) {
				closedir(tdir);
				return -1;
			}
			*tasks = more;
		}
		(*tasks)[(*n)++] = t;
	}
	closedir(tdir);
	return 0;
}

int batch_tasks_scan(const char *proc, struct batch_task **tasks)
{
	int n = 0, size = 0;
	struct dirent *d;
	DIR *dir;

	*tasks = NULL;
	dir = opendir(proc);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		pid_t pid = (pid_t)atoi(d->d_name);

		if (pid > 0 && scan_process(proc, pid, tasks, &n, &size)) {
			closedir(dir);
			free(*tasks);
			*tasks = NULL;
			return -1;
		}
	}
	closedir(dir);
	if (n)
		qsort(*tasks, n, sizeof(**tasks), by_tid);
	return n;
}
