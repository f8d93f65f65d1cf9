// SPDX-License-Identifier: GPL-2.0
/* Live counts of the sched_batch trace events: see batch_events.h */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "batch_events.h"

const char *const batch_event_names[EV_KINDS] = {
	"sched_batch_user_preempt", "sched_batch_park", "sched_batch_unpark",
	"sched_batch_migrate", "sched_batch_slice_expired", "sched_batch_queue_swap",
};

static struct tracefs_instance *instance;
static struct tep_handle *tep;
static int event_ids[EV_KINDS];

void batch_events_stop(void)
{
	if (instance) {
		tracefs_instance_destroy(instance);
		tracefs_instance_free(instance);
		instance = NULL;
	}
	if (tep) {
		tep_free(tep);
		tep = NULL;
	}
}

/*
 * A parser for the six sched_batch formats and the ring buffer's page
 * header, nothing else.  tracefs_local_events_system() would also parse
 * /proc/kallsyms, saved_cmdlines and printk_formats: 20 s in a sanitized
 * build on a lockdep kernel under TCG, for symbols batchtop never prints.
 */
static struct tep_handle *load_batch_events(char *why, size_t size)
{
	struct tep_handle *t = tep_alloc();
	char *buf;
	int len;

	if (!t) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	buf = tracefs_instance_file_read(NULL, "events/header_page", &len);
	if (!buf || tep_parse_header_page(t, buf, len, sizeof(long))) {
		snprintf(why, size, "the trace ring buffer's page header cannot be read");
		goto fail;
	}
	free(buf);
	tep_set_long_size(t, tep_get_header_page_size(t));
	tep_set_cpus(t, sysconf(_SC_NPROCESSORS_CONF));
	for (int i = 0; i < EV_KINDS; i++) {
		buf = tracefs_event_file_read(NULL, "sched_batch", batch_event_names[i],
					      "format", &len);
		if (!buf) {
			snprintf(why, size, "this kernel has no %s event", batch_event_names[i]);
			goto fail;
		}
		if (tep_parse_event(t, buf, len, "sched_batch")) {
			snprintf(why, size, "the format of %s cannot be parsed",
				 batch_event_names[i]);
			goto fail;
		}
		free(buf);
		event_ids[i] = tep_find_event_by_name(t, "sched_batch",
						      batch_event_names[i])->id;
	}
	return t;
fail:
	free(buf);
	tep_free(t);
	return NULL;
}

bool batch_events_start(char *why, size_t size)
{
	char name[64], filter[64];

	snprintf(name, sizeof(name), "batchtop_%d", getpid());
	instance = tracefs_instance_create(name);
	if (!instance) {
		snprintf(why, size, "no tracefs instance (%s): needs root or tracefs access",
			 strerror(errno));
		return false;
	}
	atexit(batch_events_stop);

	tep = load_batch_events(why, size);
	if (!tep)
		goto fail;
	/* Leave out what batchtop itself causes */
	snprintf(filter, sizeof(filter), "common_pid != %d", getpid());
	if (tracefs_instance_file_write(instance, "events/sched_batch/filter", filter) < 0 ||
	    tracefs_event_enable(instance, "sched_batch", NULL) ||
	    tracefs_trace_on(instance)) {
		snprintf(why, size, "cannot enable the sched_batch events");
		goto fail;
	}
	return true;
fail:
	batch_events_stop();
	return false;
}

static int count_event(struct tep_event *event, struct tep_record *record, int cpu, void *ctx)
{
	unsigned long long *counts = ctx;

	(void)record;
	(void)cpu;
	for (int i = 0; i < EV_KINDS; i++)
		if (event->id == event_ids[i])
			counts[i]++;
	return 0;
}

void batch_events_collect(unsigned long long counts[EV_KINDS])
{
	if (instance && tep)
		tracefs_iterate_raw_events(tep, instance, NULL, 0, count_event, counts);
}
