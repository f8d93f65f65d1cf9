// SPDX-License-Identifier: LGPL-2.1
/*
 * KernelShark plugin for the sched_batch trace events: the data part.
 * See sched_batch.h for what it collects and builds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "libkshark-tepdata.h"
#include "sched_batch.h"

/* What one analysis builds; freed before the next */
static void free_analysis(struct plugin_sched_batch_context *ctx)
{
	free(ctx->intervals);
	free(ctx->queue);
	free(ctx->ends);
	ctx->intervals = NULL;
	ctx->queue = NULL;
	ctx->ends = NULL;
	ctx->nr_intervals = ctx->nr_queue = ctx->nr_ends = 0;
	ctx->max_queue_len = 0;
	ctx->analysed = false;
}

/* Forget one load of the entries: a new one is starting */
static void forget_load(struct plugin_sched_batch_context *ctx)
{
	free_analysis(ctx);
	ctx->nr_parks = ctx->nr_unparks = ctx->nr_migrations = 0;
	for (int c = 0; c < ctx->nr_cpus; c++)
		ctx->last_offset[c] = -1;
}

static void sched_batch_free_context(struct plugin_sched_batch_context *ctx)
{
	if (!ctx)
		return;
	free_analysis(ctx);
	free(ctx->parks);
	free(ctx->unparks);
	free(ctx->migrations);
	free(ctx->last_offset);
	free(ctx);
}

KS_DEFINE_PLUGIN_CONTEXT(struct plugin_sched_batch_context, sched_batch_free_context);

/* Room for one more element of @size bytes in *@arr; NULL if out of memory */
static void *grow(void **arr, size_t *nr, size_t *cap, size_t size)
{
	if (*nr == *cap) {
		size_t cap_new = *cap ? *cap * 2 : 256;
		void *arr_new = realloc(*arr, cap_new * size);

		if (!arr_new)
			return NULL;
		*arr = arr_new;
		*cap = cap_new;
	}
	return (char *)*arr + (*nr)++ * size;
}

#define PUSH(ctx, name) \
	grow((void **)&(ctx)->name, &(ctx)->nr_##name, &(ctx)->cap_##name, sizeof(*(ctx)->name))

/*
 * The stream's context for an entry being loaded, after noting where the
 * entry lies in the file: one at or before the last seen on its CPU
 * means KernelShark is loading the entries again.
 */
static struct plugin_sched_batch_context *context_for(struct kshark_data_stream *stream,
						      const struct kshark_entry *entry)
{
	struct plugin_sched_batch_context *ctx = __get_context(stream->stream_id);

	if (!ctx)
		return NULL;
	if (entry->cpu >= 0 && entry->cpu < ctx->nr_cpus) {
		if (entry->offset <= ctx->last_offset[entry->cpu])
			forget_load(ctx);
		ctx->last_offset[entry->cpu] = entry->offset;
	}
	return ctx;
}

static int32_t read_int(struct tep_format_field *field, struct tep_record *record)
{
	unsigned long long val = 0;

	tep_read_number_field(field, record->data, &val);
	return (int32_t)val;
}

static void on_park(struct kshark_data_stream *stream, void *rec, struct kshark_entry *entry)
{
	struct plugin_sched_batch_context *ctx = context_for(stream, entry);
	struct sb_park *p;

	if (!ctx || !(p = PUSH(ctx, parks)))
		return;
	p->entry = entry;
	p->pid = read_int(ctx->park_pid, rec);
	p->cpu = read_int(ctx->park_cpu, rec);
	p->nr_queued = read_int(ctx->park_nr, rec);
}

static void on_unpark(struct kshark_data_stream *stream, void *rec, struct kshark_entry *entry)
{
	struct plugin_sched_batch_context *ctx = context_for(stream, entry);
	struct sb_unpark *u;

	if (!ctx || !(u = PUSH(ctx, unparks)))
		return;
	u->entry = entry;
	u->pid = read_int(ctx->unpark_pid, rec);
	u->cpu = read_int(ctx->unpark_cpu, rec);
	u->reason = read_int(ctx->unpark_reason, rec);
	if (u->reason < 0 || u->reason > SB_UNPARK_OTHER)
		u->reason = SB_UNPARK_OTHER;
}

static void on_migrate(struct kshark_data_stream *stream, void *rec, struct kshark_entry *entry)
{
	struct plugin_sched_batch_context *ctx = context_for(stream, entry);
	struct sb_migration *m;

	if (!ctx || !(m = PUSH(ctx, migrations)))
		return;
	m->entry = entry;
	m->src_cpu = read_int(ctx->mig_src, rec);
	m->dst_cpu = read_int(ctx->mig_dst, rec);
}

/*
 * Look up @event and its fields.  Returns 1 when all are there, 0 when the
 * trace lacks the event (it was not recorded), -1 (and why, on stderr)
 * when the event lacks a field.
 */
static int find_fields(struct tep_handle *tep, const char *event, int *id,
		       const char *const *names, struct tep_format_field **fields[])
{
	struct tep_event *ev = tep_find_event_by_name(tep, "sched_batch", event);

	if (!ev)
		return 0;
	*id = ev->id;
	for (int i = 0; names[i]; i++) {
		*fields[i] = tep_find_field(ev, names[i]);
		if (!*fields[i]) {
			fprintf(stderr, "sched_batch plugin: sched_batch/%s has no field %s\n",
				event, names[i]);
			return -1;
		}
	}
	return 1;
}

/*
 * The plugin needs the park and unpark events; without the migrate event
 * (a trace of only some sched_batch events) the CPU graphs show no
 * migrations and the queue lengths leave them out.
 */
static bool init_context(struct kshark_data_stream *stream, struct plugin_sched_batch_context *ctx)
{
	static const char *const park[] = { "pid", "cpu", "nr_queued", NULL };
	static const char *const unpark[] = { "pid", "cpu", "reason", NULL };
	static const char *const migrate[] = { "src_cpu", "dst_cpu", NULL };
	struct tep_format_field **park_f[] = { &ctx->park_pid, &ctx->park_cpu, &ctx->park_nr };
	struct tep_format_field **unpark_f[] = { &ctx->unpark_pid, &ctx->unpark_cpu,
						 &ctx->unpark_reason };
	struct tep_format_field **migrate_f[] = { &ctx->mig_src, &ctx->mig_dst };
	struct tep_handle *tep;

	if (!kshark_is_tep(stream) || !(tep = kshark_get_tep(stream)))
		return false;
	if (find_fields(tep, "sched_batch_park", &ctx->park_id, park, park_f) != 1 ||
	    find_fields(tep, "sched_batch_unpark", &ctx->unpark_id, unpark, unpark_f) != 1)
		return false;
	if (find_fields(tep, "sched_batch_migrate", &ctx->migrate_id, migrate, migrate_f) != 1)
		ctx->migrate_id = -1;
	ctx->nr_cpus = stream->n_cpus > 0 ? stream->n_cpus : 1;
	ctx->last_offset = malloc(ctx->nr_cpus * sizeof(*ctx->last_offset));
	if (!ctx->last_offset)
		return false;
	forget_load(ctx);
	return true;
}

/* Events in time order; the file offset keeps ties in the order recorded */
static int by_time(const struct kshark_entry *a, const struct kshark_entry *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static int park_cmp(const void *a, const void *b)
{
	return by_time(((const struct sb_park *)a)->entry, ((const struct sb_park *)b)->entry);
}

static int unpark_cmp(const void *a, const void *b)
{
	return by_time(((const struct sb_unpark *)a)->entry, ((const struct sb_unpark *)b)->entry);
}

static int migration_cmp(const void *a, const void *b)
{
	return by_time(((const struct sb_migration *)a)->entry,
		       ((const struct sb_migration *)b)->entry);
}

#define CMP(a, b)	((a) < (b) ? -1 : (a) > (b))

static int interval_cmp(const void *a, const void *b)
{
	const struct sb_interval *x = a, *y = b;

	return x->pid != y->pid ? CMP(x->pid, y->pid) : CMP(x->start, y->start);
}

static int queue_cmp(const void *a, const void *b)
{
	const struct sb_queue_point *x = a, *y = b;

	return x->cpu != y->cpu ? CMP(x->cpu, y->cpu) : CMP(x->ts, y->ts);
}

static int end_cmp(const void *a, const void *b)
{
	const struct sb_migration_end *x = a, *y = b;

	return x->cpu != y->cpu ? CMP(x->cpu, y->cpu) : CMP(x->ts, y->ts);
}

static size_t pid_slot(int32_t pid, size_t slots)
{
	return ((uint32_t)pid * 2654435761u) & (slots - 1);
}

/*
 * Pair each park with the next unpark of the same task.  Walking both
 * lists in time order, a task has at most one open park; the open ones
 * are kept in a small open-addressing table keyed by PID.
 */
static bool pair_intervals(struct plugin_sched_batch_context *ctx)
{
	size_t slots = 64, ip = 0, iu = 0, n = 0;
	struct sb_interval *iv;
	ssize_t *open;

	while (slots < 2 * ctx->nr_parks)
		slots *= 2;
	iv = calloc(ctx->nr_parks + ctx->nr_unparks + 1, sizeof(*iv));
	open = malloc(slots * sizeof(*open));
	if (!iv || !open) {
		free(iv);
		free(open);
		return false;
	}
	memset(open, 0xff, slots * sizeof(*open));	/* -1: empty */

	while (ip < ctx->nr_parks || iu < ctx->nr_unparks) {
		bool park_next = iu == ctx->nr_unparks ||
			(ip < ctx->nr_parks &&
			 by_time(ctx->parks[ip].entry, ctx->unparks[iu].entry) < 0);
		int32_t pid = park_next ? ctx->parks[ip].pid : ctx->unparks[iu].pid;
		size_t h = pid_slot(pid, slots);

		/* The task's slot, or the empty one where it would go */
		while (open[h] >= 0 && iv[open[h]].pid != pid)
			h = (h + 1) & (slots - 1);
		if (park_next) {
			const struct kshark_entry *e = ctx->parks[ip++].entry;

			if (open[h] >= 0) {	/* its unpark was lost: end it here */
				iv[open[h]].end = e->ts;
				iv[open[h]].reason = SB_UNPARK_OTHER;
			}
			iv[n] = (struct sb_interval){ .start = e->ts, .end = INT64_MAX,
						      .pid = pid, .reason = SB_STILL_PARKED };
			open[h] = (ssize_t)n++;
			continue;
		}
		if (open[h] < 0) {	/* parked before the trace began */
			iv[n++] = (struct sb_interval){ .start = INT64_MIN,
							.end = ctx->unparks[iu].entry->ts,
							.pid = pid, .reason = ctx->unparks[iu].reason };
			iu++;
			continue;
		}
		iv[open[h]].end = ctx->unparks[iu].entry->ts;
		iv[open[h]].reason = ctx->unparks[iu++].reason;
		/* Close the slot and re-insert the rest of its cluster */
		open[h] = -1;
		for (size_t j = (h + 1) & (slots - 1); open[j] >= 0; j = (j + 1) & (slots - 1)) {
			ssize_t moved = open[j];
			size_t k = pid_slot(iv[moved].pid, slots);

			open[j] = -1;
			while (open[k] >= 0)
				k = (k + 1) & (slots - 1);
			open[k] = moved;
		}
	}
	free(open);
	qsort(iv, n, sizeof(*iv), interval_cmp);
	ctx->intervals = iv;
	ctx->nr_intervals = n;
	return true;
}

/* Add a point of @cpu's queue: the length after the event at @ts */
static void queue_point(struct plugin_sched_batch_context *ctx, int32_t *len, int cpu,
			int delta, int64_t ts)
{
	if (cpu < 0 || cpu >= ctx->nr_cpus || len[cpu] < 0)
		return;		/* not known yet on this CPU */
	len[cpu] += delta;
	if (len[cpu] < 0)	/* an event was lost: start from empty */
		len[cpu] = 0;
	ctx->queue[ctx->nr_queue++] = (struct sb_queue_point){ .ts = ts, .cpu = cpu,
							       .len = len[cpu] };
	if (len[cpu] > ctx->max_queue_len)
		ctx->max_queue_len = len[cpu];
}

/* Each CPU's queue length over time, and the migrations by CPU */
static bool rebuild_queues(struct plugin_sched_batch_context *ctx)
{
	size_t ip = 0, iu = 0, im = 0;
	int32_t *len = malloc(ctx->nr_cpus * sizeof(*len));

	ctx->queue = calloc(ctx->nr_parks + ctx->nr_unparks + 2 * ctx->nr_migrations + 1,
			    sizeof(*ctx->queue));
	ctx->ends = calloc(2 * ctx->nr_migrations + 1, sizeof(*ctx->ends));
	if (!len || !ctx->queue || !ctx->ends) {
		free(len);
		return false;
	}
	for (int c = 0; c < ctx->nr_cpus; c++)
		len[c] = -1;

	while (ip < ctx->nr_parks || iu < ctx->nr_unparks || im < ctx->nr_migrations) {
		const struct kshark_entry *e[3] = {
			ip < ctx->nr_parks ? ctx->parks[ip].entry : NULL,
			iu < ctx->nr_unparks ? ctx->unparks[iu].entry : NULL,
			im < ctx->nr_migrations ? ctx->migrations[im].entry : NULL,
		};
		int first = -1;

		for (int i = 0; i < 3; i++)
			if (e[i] && (first < 0 || by_time(e[i], e[first]) < 0))
				first = i;
		if (first == 0) {
			const struct sb_park *p = &ctx->parks[ip++];

			if (p->cpu >= 0 && p->cpu < ctx->nr_cpus)
				len[p->cpu] = p->nr_queued;
			queue_point(ctx, len, p->cpu, 0, p->entry->ts);
		} else if (first == 1) {
			queue_point(ctx, len, ctx->unparks[iu++].cpu, -1, e[1]->ts);
		} else {
			const struct sb_migration *m = &ctx->migrations[im++];

			queue_point(ctx, len, m->src_cpu, -1, m->entry->ts);
			queue_point(ctx, len, m->dst_cpu, 1, m->entry->ts);
			ctx->ends[ctx->nr_ends++] = (struct sb_migration_end){
				.ts = m->entry->ts, .cpu = m->src_cpu, .in = false };
			ctx->ends[ctx->nr_ends++] = (struct sb_migration_end){
				.ts = m->entry->ts, .cpu = m->dst_cpu, .in = true };
		}
	}
	free(len);
	qsort(ctx->queue, ctx->nr_queue, sizeof(*ctx->queue), queue_cmp);
	qsort(ctx->ends, ctx->nr_ends, sizeof(*ctx->ends), end_cmp);
	return true;
}

struct plugin_sched_batch_context *sched_batch_analysed_context(int sd)
{
	struct plugin_sched_batch_context *ctx = __get_context(sd);

	if (!ctx || ctx->analysed)
		return ctx;
	qsort(ctx->parks, ctx->nr_parks, sizeof(*ctx->parks), park_cmp);
	qsort(ctx->unparks, ctx->nr_unparks, sizeof(*ctx->unparks), unpark_cmp);
	qsort(ctx->migrations, ctx->nr_migrations, sizeof(*ctx->migrations), migration_cmp);
	if (!pair_intervals(ctx) || !rebuild_queues(ctx)) {
		free_analysis(ctx);
		return NULL;
	}
	ctx->analysed = true;
	return ctx;
}

/* Load the plugin for @stream: > 0 when its trace has the events it needs */
int KSHARK_PLOT_PLUGIN_INITIALIZER(struct kshark_data_stream *stream)
{
	struct plugin_sched_batch_context *ctx = __init(stream->stream_id);

	if (!ctx || !init_context(stream, ctx)) {
		__close(stream->stream_id);
		return 0;
	}
	kshark_register_event_handler(stream, ctx->park_id, on_park);
	kshark_register_event_handler(stream, ctx->unpark_id, on_unpark);
	if (ctx->migrate_id >= 0)
		kshark_register_event_handler(stream, ctx->migrate_id, on_migrate);
	kshark_register_draw_handler(stream, sched_batch_draw);
	return 1;
}

int KSHARK_PLOT_PLUGIN_DEINITIALIZER(struct kshark_data_stream *stream)
{
	struct plugin_sched_batch_context *ctx = __get_context(stream->stream_id);
	int ret = 0;

	if (ctx) {
		kshark_unregister_event_handler(stream, ctx->park_id, on_park);
		kshark_unregister_event_handler(stream, ctx->unpark_id, on_unpark);
		if (ctx->migrate_id >= 0)
			kshark_unregister_event_handler(stream, ctx->migrate_id, on_migrate);
		kshark_unregister_draw_handler(stream, sched_batch_draw);
		ret = 1;
	}
	__close(stream->stream_id);
	return ret;
}
