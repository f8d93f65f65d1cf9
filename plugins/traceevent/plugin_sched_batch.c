// SPDX-License-Identifier: LGPL-2.1
/*
 * libtraceevent plugin for the sched_batch trace events of the idle-batch
 * scheduling class (SCHED_IDLEBATCH): one readable line per event in
 * `trace-cmd report` (and KernelShark's Info column).  The events and their
 * fields: Documentation/scheduler/sched-idlebatch.rst, "Trace events", and
 * include/trace/events/sched_batch.h (tracepoints/sched_batch.h here).
 *
 * Fields are looked up by name in the event's format, so a kernel that adds
 * or moves fields still decodes.  A field that is missing or lies beyond
 * the record makes the line fall back to the kernel's field=value list; an
 * enum value this plugin does not know is printed as its number.
 *
 * Options (trace-cmd report -O sched_batch:OPTION[=1|0]):
 *   raw  also print the kernel's field=value list
 *   ns   print durations in ns instead of ms
 */
#include <stdbool.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#define SB_SYSTEM	"sched_batch"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Not exported as TEP_PLUGIN_OPTIONS: libtraceevent applies the user's -O
 * settings to that array when it loads the plugin and again when the
 * loader registers it (which `trace-cmd list -O` needs), so a bare
 * "-O sched_batch:raw", a toggle, would cancel itself out.  The shipped
 * function plugin registers its options the same way.
 */
static struct tep_plugin_option sb_options[] = {
	{
		.name		= "raw",
		.plugin_alias	= SB_SYSTEM,
		.description	= "Also print the kernel's field=value list of sched_batch events",
	},
	{
		.name		= "ns",
		.plugin_alias	= SB_SYSTEM,
		.description	= "Print sched_batch durations in ns instead of ms",
	},
	{
		.name		= NULL,
	},
};

static struct tep_plugin_option *sb_opt_raw = &sb_options[0];
static struct tep_plugin_option *sb_opt_ns = &sb_options[1];

/* Loaded once per tep handle; the options are process-wide. */
static int sb_nr_loaded;

/* The symbolic values, indexed by the numbers the kernel exports */
static const char *const sb_decisions[] = {
	"parked",
	"requeued (already in the class: back to its queue)",
	"not parked: a signal is pending",
	"not parked: boosted by a PI waiter",
	"not parked: it is exiting",
	"not parked: it is not runnable",
	"not parked yet: other exit work first",
	"not parked: its vfork parent waits for it",
	"not parked: sched_ext runs it",
	"not parked: a uprobe single-steps it",
};

static const char *const sb_unpark_reasons[] = {
	"picked to run on an idle CPU",
	"to handle a signal",
	"boosted by a PI waiter",
	"policy changed",
};

static const char *const sb_migrate_kinds[] = {
	"balance pass",
	"pulled by an idle CPU",
	"swapped for fairness",
};

static const char *const sb_queues[] = {
	"the active queue",
	"the expired queue",
};

/*
 * One record being decoded.  The field readers remember the first field
 * they could not read instead of returning an error each, so that a
 * handler reads all its fields and checks once.
 */
struct sb_rec {
	struct tep_record	*record;
	struct tep_event	*event;
	const char		*bad_field;
	const char		*why;
};

static void sb_fail(struct sb_rec *r, const char *name, const char *why)
{
	if (!r->bad_field) {
		r->bad_field = name;
		r->why = why;
	}
}

static bool sb_field_fits(const struct sb_rec *r,
			  const struct tep_format_field *f)
{
	return f->offset >= 0 && f->size >= 0 &&
	       f->offset + f->size <= r->record->size;
}

static struct tep_format_field *sb_field(struct sb_rec *r, const char *name)
{
	struct tep_format_field *f = tep_find_field(r->event, name);

	if (!f) {
		sb_fail(r, name, "is not in the event's format");
		return NULL;
	}
	if (!sb_field_fits(r, f)) {
		sb_fail(r, name, "lies beyond the end of the record");
		return NULL;
	}
	return f;
}

/* A number field, sign-extended when the format says it is signed */
static long long sb_num(struct sb_rec *r, const char *name)
{
	struct tep_format_field *f = sb_field(r, name);
	unsigned long long val;

	if (!f)
		return 0;
	if ((f->flags & TEP_FIELD_IS_ARRAY) ||
	    tep_read_number_field(f, r->record->data, &val)) {
		sb_fail(r, name, "is not a number");
		return 0;
	}
	if (!(f->flags & TEP_FIELD_IS_SIGNED))
		return val;
	switch (f->size) {
	case 1:
		return (signed char)val;
	case 2:
		return (short)val;
	case 4:
		return (int)val;
	default:
		return val;
	}
}

/* A fixed char array; it need not be NUL-terminated */
static const char *sb_str(struct sb_rec *r, const char *name, int *len)
{
	struct tep_format_field *f = sb_field(r, name);
	const char *p;

	*len = 0;
	if (!f)
		return "";
	if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) !=
	    TEP_FIELD_IS_ARRAY) {
		sb_fail(r, name, "is not a fixed-size string");
		return "";
	}
	p = (const char *)r->record->data + f->offset;
	*len = strnlen(p, f->size);
	return p;
}

/*
 * The kernel's field=value list, each value as `trace-cmd report -R` prints
 * it, but only for the fields that lie inside the record, and a string only
 * up to the end of its array: the library's printers trust the format and
 * the NUL, and would read past a short record or an unterminated string.
 */
static void sb_print_fields(struct trace_seq *s, struct sb_rec *r)
{
	struct tep_format_field *f;
	const char *sep = "";
	void *data = r->record->data;
	int size = r->record->size;

	for (f = r->event->format.fields; f; f = f->next) {
		trace_seq_printf(s, "%s%s=", sep, f->name);
		sep = " ";
		if (!sb_field_fits(r, f))
			trace_seq_puts(s, "<beyond the record>");
		else if ((f->flags & TEP_FIELD_IS_STRING) &&
			 !(f->flags & TEP_FIELD_IS_DYNAMIC) &&
			 !memchr((char *)data + f->offset, '\0', f->size))
			trace_seq_printf(s, "%.*s", f->size, (char *)data + f->offset);
		else
			tep_print_field_content(s, data, size, f);
	}
}

/* A symbolic value in words, or its number if this plugin predates it */
static void sb_print_sym(struct trace_seq *s, const char *const *words,
			 int nr, const char *what, long long val)
{
	if (val >= 0 && val < nr)
		trace_seq_puts(s, words[val]);
	else
		trace_seq_printf(s, "unknown %s %lld", what, val);
}

/* A duration: ms rounded to the microsecond, or ns with the ns option */
static void sb_print_ns(struct trace_seq *s, unsigned long long ns)
{
	unsigned long long us;

	if (sb_opt_ns->set) {
		trace_seq_printf(s, "%llu ns", ns);
		return;
	}
	/* Integer rounding: exact for any u64, unlike a double */
	us = ns / 1000 + (ns % 1000 >= 500);
	trace_seq_printf(s, "%llu.%03llu ms", us / 1000, us % 1000);
}

/* An idle average, kept in permille by the kernel, as a percentage */
static void sb_print_idle(struct trace_seq *s, unsigned long long pm)
{
	trace_seq_printf(s, "%llu.%llu%% idle", pm / 10, pm % 10);
}

static void sb_print_tasks(struct trace_seq *s, unsigned long long nr)
{
	trace_seq_printf(s, "%llu task%s", nr, nr == 1 ? "" : "s");
}

/* The task an event is about, printed as comm:pid */
struct sb_task {
	const char	*comm;
	int		comm_len;
	long long	pid;
};

static struct sb_task sb_read_task(struct sb_rec *r)
{
	struct sb_task t;

	t.comm = sb_str(r, "comm", &t.comm_len);
	t.pid = sb_num(r, "pid");
	return t;
}

static void sb_print_task(struct trace_seq *s, const struct sb_task *t)
{
	trace_seq_printf(s, "%.*s:%lld", t->comm_len, t->comm, t->pid);
}

/*
 * The printers, one per event: each reads all its fields first and prints
 * nothing if one of them could not be read (the caller then falls back to
 * the field list).
 */
static void sb_user_preempt(struct trace_seq *s, struct sb_rec *r)
{
	struct sb_task t = sb_read_task(r);
	long long cpu = sb_num(r, "cpu");
	long long decision = sb_num(r, "decision");

	if (r->bad_field)
		return;
	sb_print_task(s, &t);
	trace_seq_printf(s, " on cpu %lld preempted in user mode: ", cpu);
	sb_print_sym(s, sb_decisions, ARRAY_SIZE(sb_decisions), "decision",
		     decision);
}

static void sb_park(struct trace_seq *s, struct sb_rec *r)
{
	struct sb_task t = sb_read_task(r);
	long long cpu = sb_num(r, "cpu");
	long long queue = sb_num(r, "queue");
	unsigned long long nr = sb_num(r, "nr_queued");
	unsigned long long slice_left = sb_num(r, "slice_left");

	if (r->bad_field)
		return;
	sb_print_task(s, &t);
	trace_seq_printf(s, " parked on cpu %lld in ", cpu);
	sb_print_sym(s, sb_queues, ARRAY_SIZE(sb_queues), "queue", queue);
	trace_seq_printf(s, ", %llu queued, ", nr);
	sb_print_ns(s, slice_left);
	trace_seq_puts(s, " of its slice left");
}

static void sb_unpark(struct trace_seq *s, struct sb_rec *r)
{
	struct sb_task t = sb_read_task(r);
	long long cpu = sb_num(r, "cpu");
	long long reason = sb_num(r, "reason");
	unsigned long long parked_ns = sb_num(r, "parked_ns");

	if (r->bad_field)
		return;
	sb_print_task(s, &t);
	trace_seq_printf(s, " unparked on cpu %lld after ", cpu);
	sb_print_ns(s, parked_ns);
	trace_seq_puts(s, ": ");
	sb_print_sym(s, sb_unpark_reasons, ARRAY_SIZE(sb_unpark_reasons),
		     "reason", reason);
}

/* One side of a migration: the numbers the balancer decided on */
static void sb_print_cpu_state(struct trace_seq *s, long long cpu,
			       unsigned long long nr, unsigned long long idle)
{
	trace_seq_printf(s, "cpu %lld had ", cpu);
	sb_print_tasks(s, nr);
	trace_seq_puts(s, ", ");
	sb_print_idle(s, idle);
}

static void sb_migrate(struct trace_seq *s, struct sb_rec *r)
{
	struct sb_task t = sb_read_task(r);
	long long src = sb_num(r, "src_cpu");
	long long dst = sb_num(r, "dst_cpu");
	unsigned long long src_nr = sb_num(r, "src_nr");
	unsigned long long dst_nr = sb_num(r, "dst_nr");
	unsigned long long src_idle = sb_num(r, "src_idle_avg");
	unsigned long long dst_idle = sb_num(r, "dst_idle_avg");
	long long kind = sb_num(r, "kind");

	if (r->bad_field)
		return;
	sb_print_task(s, &t);
	trace_seq_printf(s, " moved cpu %lld -> cpu %lld (", src, dst);
	sb_print_sym(s, sb_migrate_kinds, ARRAY_SIZE(sb_migrate_kinds),
		     "kind", kind);
	trace_seq_puts(s, "): ");
	sb_print_cpu_state(s, src, src_nr, src_idle);
	trace_seq_puts(s, "; ");
	sb_print_cpu_state(s, dst, dst_nr, dst_idle);
}

static void sb_slice_expired(struct trace_seq *s, struct sb_rec *r)
{
	struct sb_task t = sb_read_task(r);
	long long cpu = sb_num(r, "cpu");
	unsigned long long slice = sb_num(r, "slice");

	if (r->bad_field)
		return;
	sb_print_task(s, &t);
	trace_seq_printf(s, " on cpu %lld used up its slice, new slice ", cpu);
	sb_print_ns(s, slice);
}

static void sb_queue_swap(struct trace_seq *s, struct sb_rec *r)
{
	long long cpu = sb_num(r, "cpu");
	unsigned long long nr = sb_num(r, "nr_queued");

	if (r->bad_field)
		return;
	trace_seq_printf(s, "cpu %lld: active queue ran dry, swapped in the expired one (",
			 cpu);
	sb_print_tasks(s, nr);
	trace_seq_putc(s, ')');
}

struct sb_event {
	const char	*name;
	void		(*print)(struct trace_seq *s, struct sb_rec *r);
};

static const struct sb_event sb_events[] = {
	{ "sched_batch_user_preempt",	sb_user_preempt },
	{ "sched_batch_park",		sb_park },
	{ "sched_batch_unpark",		sb_unpark },
	{ "sched_batch_migrate",	sb_migrate },
	{ "sched_batch_slice_expired",	sb_slice_expired },
	{ "sched_batch_queue_swap",	sb_queue_swap },
};

/* The handler of every sched_batch event; @context is its struct sb_event */
static int sb_handler(struct trace_seq *s, struct tep_record *record,
		      struct tep_event *event, void *context)
{
	const struct sb_event *sbe = context;
	struct sb_rec r = { .record = record, .event = event };

	sbe->print(s, &r);
	if (r.bad_field) {
		trace_seq_printf(s, "<cannot decode: field '%s' %s> ",
				 r.bad_field, r.why);
		sb_print_fields(s, &r);
	} else if (sb_opt_raw->set) {
		trace_seq_puts(s, " | ");
		sb_print_fields(s, &r);
	}
	/* 0: the line is complete, the kernel's print format is not wanted */
	return 0;
}

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	unsigned int i;

	/* Id -1: match by name, as the ids differ from kernel to kernel */
	for (i = 0; i < ARRAY_SIZE(sb_events); i++)
		tep_register_event_handler(tep, -1, SB_SYSTEM, sb_events[i].name,
					   sb_handler, (void *)&sb_events[i]);

	/* Once per process: a second registration would list them twice */
	if (sb_nr_loaded++ == 0)
		tep_plugin_add_options(SB_SYSTEM, sb_options);
	return 0;
}

int TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sb_events); i++)
		tep_unregister_event_handler(tep, -1, SB_SYSTEM,
					     sb_events[i].name, sb_handler,
					     (void *)&sb_events[i]);

	if (--sb_nr_loaded == 0)
		tep_plugin_remove_options(sb_options);
	return 0;
}
