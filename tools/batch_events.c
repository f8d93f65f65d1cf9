// SPDX-License-Identifier: GPL-2.0
/* Live counts of the sched_batch trace events: see batch_events.h */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
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

static void on_fatal_signal(int sig)
{
	batch_events_stop();
	signal(sig, SIG_DFL);
	raise(sig);
}

bool batch_events_start(char *why, size_t size)
{
	static const char *const systems[] = { "sched_batch", NULL };
	char name[64], filter[64];

	snprintf(name, sizeof(name), "batchtop_%d", getpid());
	instance = tracefs_instance_create(name);
	if (!instance) {
		snprintf(why, size, "no tracefs instance (%s): needs root or tracefs access",
			 strerror(errno));
		return false;
	}
	atexit(batch_events_stop);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGHUP, on_fatal_signal);
	signal(SIGQUIT, on_fatal_signal);

	tep = tracefs_local_events_system(NULL, systems);
	if (!tep) {
		snprintf(why, size, "the sched_batch events cannot be read");
		goto fail;
	}
	for (int i = 0; i < EV_KINDS; i++) {
		struct tep_event *ev = tep_find_event_by_name(tep, "sched_batch",
							       batch_event_names[i]);

		if (!ev) {
			snprintf(why, size, "this kernel has no %s event", batch_event_names[i]);
			goto fail;
		}
		event_ids[i] = ev->id;
	}
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
