// SPDX-License-Identifier: GPL-2.0
/* Reading /proc/batchstat: see batchstat_read.h */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchstat_read.h"

/* Store field @i (0-based, after "cpuN") of a CPU line */
static void set_field(struct batch_cpu *c, int i, unsigned long long v)
{
	if (i == 0)
		c->waiting = (unsigned int)v;
	else if (i == 1)
		c->running = (unsigned int)v;
	else if (i == 2)
		c->idle_avg = (unsigned int)v;
	else if (i < 3 + BATCHSTAT_HISTORY)
		c->history[i - 3] = (unsigned int)v;
	else if (i == 13)
		c->parks = v;
	else if (i < 14 + BATCHSTAT_REASONS)
		c->unparks[i - 14] = v;
	else if (i == 18)
		c->migrations_in = v;
	else if (i == 19)
		c->migrations_out = v;
	else if (i == 20)
		c->run_ns = v;
	else if (i == 21)
		c->idle_ns = v;
}

static int parse_cpu_line(const char *line, struct batch_cpu *c)
{
	const char *p;
	char *end;
	int i;

	memset(c, 0, sizeof(*c));
	if (sscanf(line, "cpu%d", &c->cpu) != 1 || c->cpu < 0)
		return -1;
	p = strchr(line, ' ');
	for (i = 0; p && i < BATCHSTAT_V1_FIELDS; i++) {
		unsigned long long v;

		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p || errno)
			break;
		set_field(c, i, v);
		p = end;
	}
	c->nfields = i;
	return 0;
}

int batchstat_read(const char *path, struct batch_snapshot *snap, char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	int ret = -1, size = 0;
	FILE *f;

	memset(snap, 0, sizeof(*snap));
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, errno == ENOENT ?
			 "%s does not exist: this kernel has no SCHED_IDLEBATCH" : "%s: %s",
			 path, strerror(errno));
		return -1;
	}
	if (getline(&line, &cap, f) < 0 || sscanf(line, "version %d", &snap->version) != 1 ||
	    snap->version < 1) {
		snprintf(err, errlen, "%s: no 'version N' line: not a batchstat file", path);
		goto out;
	}
	if (getline(&line, &cap, f) < 0 ||
	    sscanf(line, "timestamp %llu", &snap->timestamp) != 1) {
		snprintf(err, errlen, "%s: no 'timestamp' line", path);
		goto out;
	}
	while (getline(&line, &cap, f) >= 0) {
		struct batch_cpu c;

		if (strncmp(line, "cpu", 3))
			continue;	/* a line a newer version added */
		if (parse_cpu_line(line, &c))
			continue;
		if (snap->ncpu == size) {
			struct batch_cpu *more;

			size = size ? 2 * size : 16;
			more = realloc(snap->cpu, size * sizeof(*more));
			if (!more) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			snap->cpu = more;
		}
		snap->cpu[snap->ncpu++] = c;
	}
	ret = 0;
out:
	free(line);
	fclose(f);
	if (ret)
		batchstat_free(snap);
	return ret;
}

void batchstat_free(struct batch_snapshot *snap)
{
	free(snap->cpu);
	snap->cpu = NULL;
	snap->ncpu = 0;
}

const struct batch_cpu *batchstat_cpu(const struct batch_snapshot *snap, int cpu)
{
	for (int i = 0; i < snap->ncpu; i++)
		if (snap->cpu[i].cpu == cpu)
			return &snap->cpu[i];
	return NULL;
}
