// SPDX-License-Identifier: GPL-2.0
/*
 * Drives the libtraceevent plugin for the sched_batch events headlessly,
 * without a kernel or a trace file: it parses the events' format files
 * (tests/host/traceevent/formats/, as recorded by the kernel), loads the
 * plugin from one folder only, builds records field by field from the
 * offsets the formats give, and compares the line the plugin prints for
 * each with the one expected here.
 *
 * Prints a line per check, "ok - WHAT" or "not ok - WHAT" followed by
 * "# " lines, for tests/host/traceevent-plugin.t to number; exits 1 if a
 * check failed, 2 if it could not run.
 *
 * Usage: plugin_check FORMATS_DIR PLUGIN_DIR
 */
#define _GNU_SOURCE	/* asprintf */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const event_names[] = {
	"sched_batch_user_preempt",
	"sched_batch_park",
	"sched_batch_unpark",
	"sched_batch_migrate",
	"sched_batch_slice_expired",
	"sched_batch_queue_swap",
};

static const char *formats_dir, *plugin_dir;
static int failures;

static void ok(bool pass, const char *what)
{
	printf("%s - %s\n", pass ? "ok" : "not ok", what);
	failures += !pass;
}

static void __attribute__((noreturn)) die(const char *what, const char *arg)
{
	fprintf(stderr, "plugin_check: %s %s\n", what, arg);
	exit(2);
}

/* The whole of a file; format files are small */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n;

	if (!f)
		die("cannot open", path);
	*len = 0;
	do {
		if (*len + 4096 > cap) {
			cap = *len + 8192;
			buf = realloc(buf, cap + 1);
			if (!buf)
				die("out of memory reading", path);
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* Replace the first @from in @text by @to (same buffer, freed) */
static char *edit(char *text, const char *from, const char *to)
{
	char *at = strstr(text, from), *out;

	if (!at)
		die("format has no", from);
	if (asprintf(&out, "%.*s%s%s", (int)(at - text), text, to,
		     at + strlen(from)) < 0)
		die("out of memory editing", from);
	free(text);
	return out;
}

/*
 * A tep handle the way trace-cmd sets one up for a 64-bit little- or
 * big-endian machine's trace, with the six formats and only the plugin
 * under test.  @edit_event's format text has @from replaced by @to first;
 * @extra is one more format (a newer kernel's version of an event) parsed
 * instead of the one of the same name.
 */
struct setup {
	bool		big_endian;
	const char	*edit_event, *from, *to, *from2, *to2;
	const char	*extra;
};

struct tep {
	struct tep_handle	*tep;
	struct tep_plugin_list	*plugins;
	bool			big_endian;
};

static void parse_formats(struct tep_handle *tep, const struct setup *set)
{
	struct tep_event *ev;
	char path[4096], *text;
	size_t len, i;

	for (i = 0; i < ARRAY_SIZE(event_names); i++) {
		const char *name = event_names[i];

		snprintf(path, sizeof(path), "name: %s\n", name);
		if (set->extra && !strncmp(set->extra, path, strlen(path)))
			text = strdup(set->extra);
		else {
			snprintf(path, sizeof(path), "%s/%s", formats_dir, name);
			text = read_file(path, &len);
		}
		if (set->edit_event && !strcmp(set->edit_event, name)) {
			text = edit(text, set->from, set->to);
			if (set->from2)
				text = edit(text, set->from2, set->to2);
		}
		if (tep_parse_format(tep, &ev, text, strlen(text), "sched_batch"))
			die("cannot parse the format of", name);
		free(text);
	}
}

static struct tep setup_tep(const struct setup *set)
{
	struct tep t = { .big_endian = set->big_endian };

	t.tep = tep_alloc();
	if (!t.tep)
		die("tep_alloc", "failed");
	tep_set_long_size(t.tep, 8);
	tep_set_page_size(t.tep, 4096);
	tep_set_file_bigendian(t.tep, set->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t.tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	parse_formats(t.tep, set);
	/* Only the plugin under test (main() hides $HOME's and the environment's) */
	tep_set_flag(t.tep, TEP_DISABLE_SYS_PLUGINS);
	if (tep_add_plugin_path(t.tep, (char *)plugin_dir, TEP_PLUGIN_FIRST))
		die("tep_add_plugin_path failed for", plugin_dir);
	t.plugins = tep_load_plugins(t.tep);
	return t;
}

static void free_tep(struct tep *t)
{
	tep_unload_plugins(t->plugins, t->tep);
	tep_free(t->tep);
}

/* Store @val in @size bytes at @p in the trace's byte order */
static void put(unsigned char *p, int size, unsigned long long val, bool big)
{
	int i;

	for (i = 0; i < size; i++)
		p[big ? size - 1 - i : i] = val >> (8 * i);
}

/* The size of an event's record: where its last field ends */
static int record_size(struct tep_event *ev)
{
	struct tep_format_field *f;
	int end = 0;

	for (f = ev->format.common_fields; f; f = f->next)
		end = f->offset + f->size > end ? f->offset + f->size : end;
	for (f = ev->format.fields; f; f = f->next)
		end = f->offset + f->size > end ? f->offset + f->size : end;
	return end;
}

/*
 * Set the fields of @data from "name=value ..." (@fields): arrays get the
 * value as a string (not NUL-terminated if it fills them), numbers are
 * stored with the field's size and the trace's byte order.
 */
static void fill(struct tep *t, struct tep_event *ev, unsigned char *data,
		 const char *fields)
{
	char *copy = strdup(fields), *save = NULL, *tok;

	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *val = strchr(tok, '=');
		struct tep_format_field *f;

		if (!val)
			die("bad field spec", tok);
		*val++ = '\0';
		f = tep_find_field(ev, tok);
		if (!f)
			die("no such field in the format:", tok);
		if (f->flags & TEP_FIELD_IS_ARRAY)
			strncpy((char *)data + f->offset, val, f->size);
		else
			put(data + f->offset, f->size,
			    *val == '-' ? (unsigned long long)strtoll(val, NULL, 0)
					: strtoull(val, NULL, 0),
			    t->big_endian);
	}
	free(copy);
}

/*
 * What the plugin prints for one record of @event with @fields.  @size
 * cuts the record short when positive; the buffer is allocated with the
 * record's exact size so that ASan catches a read beyond it.
 */
static char *print_record(struct tep *t, const char *event, const char *fields,
			  int size)
{
	struct tep_event *ev = tep_find_event_by_name(t->tep, "sched_batch", event);
	struct tep_record rec = { .cpu = 1, .ts = 1000000 };
	struct trace_seq s;
	unsigned char *data;
	char *line;
	int full;

	if (!ev)
		die("no event", event);
	full = record_size(ev);
	data = calloc(1, full);
	if (!data)
		die("out of memory for", event);
	put(data, 2, ev->id, t->big_endian);	/* common_type */
	fill(t, ev, data, fields);
	rec.size = size > 0 ? size : full;
	rec.data = malloc(rec.size);
	memcpy(rec.data, data, rec.size);

	trace_seq_init(&s);
	tep_print_event(t->tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	line = strdup(s.buffer);
	trace_seq_destroy(&s);
	free(rec.data);
	free(data);
	return line;
}

/* Set a plugin option ("raw", "ns") on or off */
static void option(const char *name, bool on)
{
	char opt[64];

	snprintf(opt, sizeof(opt), "sched_batch:%s", name);
	tep_plugin_add_option(opt, on ? "1" : "0");
}

struct expect {
	const char	*what;
	const char	*event;
	const char	*fields;
	const char	*line;		/* what the plugin must print */
	const char	*options;	/* set for this record only */
	int		size;		/* a short record */
};

static bool check(struct tep *t, const struct expect *e)
{
	char *got, *opts = e->options ? strdup(e->options) : NULL, *o, *save;
	bool pass;

	for (o = opts ? strtok_r(opts, ",", &save) : NULL; o; o = strtok_r(NULL, ",", &save))
		option(o, true);
	got = print_record(t, e->event, e->fields, e->size);
	if (opts) {
		strcpy(opts, e->options);
		for (o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
			option(o, false);
	}
	pass = !strcmp(got, e->line);
	ok(pass, e->what);
	if (!pass)
		printf("#   want: %s\n#   got:  %s\n", e->line, got);
	free(got);
	free(opts);
	return pass;
}

#define TASK	"comm=spin pid=4242 "
#define LINE(what, event, fields, line)	{ what, event, fields, line, NULL, 0 }
/* ... with plugin options set, "raw,ns" */
#define LINE_OPT(what, event, fields, line, options) \
	{ what, event, fields, line, options, 0 }
/* ... for a record cut short to @size bytes */
#define LINE_SHORT(what, event, fields, line, size) \
	{ what, event, fields, line, NULL, size }

/* The plugin's lines, written from the event documentation */
static const struct expect lines[] = {
	/* sched_batch_user_preempt: every decision, and one from a newer kernel */
	LINE("decision parked", "sched_batch_user_preempt", TASK "cpu=2 decision=0",
	  "spin:4242 on cpu 2 preempted in user mode: parked"),
	LINE("decision requeued", "sched_batch_user_preempt", TASK "cpu=2 decision=1",
	  "spin:4242 on cpu 2 preempted in user mode: requeued (already in the class: back to its queue)"),
	LINE("decision signal_pending", "sched_batch_user_preempt", TASK "cpu=2 decision=2",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: a signal is pending"),
	LINE("decision pi_boosted", "sched_batch_user_preempt", TASK "cpu=2 decision=3",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: boosted by a PI waiter"),
	LINE("decision exiting", "sched_batch_user_preempt", TASK "cpu=2 decision=4",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: it is exiting"),
	LINE("decision not_runnable", "sched_batch_user_preempt", TASK "cpu=2 decision=5",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: it is not runnable"),
	LINE("decision exit_work_pending", "sched_batch_user_preempt", TASK "cpu=2 decision=6",
	  "spin:4242 on cpu 2 preempted in user mode: not parked yet: other exit work first"),
	LINE("decision vfork_parent_waits", "sched_batch_user_preempt", TASK "cpu=2 decision=7",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: its vfork parent waits for it"),
	LINE("decision sched_ext", "sched_batch_user_preempt", TASK "cpu=2 decision=8",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: sched_ext runs it"),
	LINE("decision uprobe_single_step", "sched_batch_user_preempt", TASK "cpu=2 decision=9",
	  "spin:4242 on cpu 2 preempted in user mode: not parked: a uprobe single-steps it"),
	LINE("an unknown decision (10) prints as its number", "sched_batch_user_preempt",
	  TASK "cpu=2 decision=10",
	  "spin:4242 on cpu 2 preempted in user mode: unknown decision 10"),
	LINE("a negative decision prints as its number", "sched_batch_user_preempt",
	  TASK "cpu=2 decision=-1",
	  "spin:4242 on cpu 2 preempted in user mode: unknown decision -1"),

	/* sched_batch_park: both queues */
	LINE("park in the active queue", "sched_batch_park",
	  TASK "cpu=3 queue=0 nr_queued=1 slice_left=1495822762",
	  "spin:4242 parked on cpu 3 in the active queue, 1 queued, 1495.823 ms of its slice left"),
	LINE("park in the expired queue", "sched_batch_park",
	  TASK "cpu=0 queue=1 nr_queued=12 slice_left=1500000000",
	  "spin:4242 parked on cpu 0 in the expired queue, 12 queued, 1500.000 ms of its slice left"),
	LINE("an unknown queue (2) prints as its number", "sched_batch_park",
	  TASK "cpu=0 queue=2 nr_queued=1 slice_left=0",
	  "spin:4242 parked on cpu 0 in unknown queue 2, 1 queued, 0.000 ms of its slice left"),

	/* sched_batch_unpark: every reason */
	LINE("unpark reason picked", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=702393",
	  "spin:4242 unparked on cpu 1 after 0.702 ms: picked to run on an idle CPU"),
	LINE("unpark reason signal", "sched_batch_unpark",
	  TASK "cpu=1 reason=1 parked_ns=25000000",
	  "spin:4242 unparked on cpu 1 after 25.000 ms: to handle a signal"),
	LINE("unpark reason pi", "sched_batch_unpark",
	  TASK "cpu=1 reason=2 parked_ns=1",
	  "spin:4242 unparked on cpu 1 after 0.000 ms: boosted by a PI waiter"),
	LINE("unpark reason policy", "sched_batch_unpark",
	  TASK "cpu=1 reason=3 parked_ns=3000000000",
	  "spin:4242 unparked on cpu 1 after 3000.000 ms: policy changed"),
	LINE("an unknown reason (4, a newer kernel's) prints as its number", "sched_batch_unpark",
	  TASK "cpu=1 reason=4 parked_ns=1000",
	  "spin:4242 unparked on cpu 1 after 0.001 ms: unknown reason 4"),

	/* Durations: rounded to the microsecond, exact for any u64 */
	LINE("ms are rounded: 499 ns is 0.000 ms", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=499",
	  "spin:4242 unparked on cpu 1 after 0.000 ms: picked to run on an idle CPU"),
	LINE("ms are rounded: 500 ns is 0.001 ms", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=500",
	  "spin:4242 unparked on cpu 1 after 0.001 ms: picked to run on an idle CPU"),
	LINE("ms are rounded: 1999999999 ns is 2000.000 ms", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=1999999999",
	  "spin:4242 unparked on cpu 1 after 2000.000 ms: picked to run on an idle CPU"),
	LINE("the largest u64 in ms", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=18446744073709551615",
	  "spin:4242 unparked on cpu 1 after 18446744073709.552 ms: picked to run on an idle CPU"),

	/* sched_batch_migrate: every kind */
	LINE("migrate kind balance", "sched_batch_migrate",
	  TASK "src_cpu=1 dst_cpu=3 src_nr=4 dst_nr=1 src_idle_avg=524 dst_idle_avg=654 kind=0",
	  "spin:4242 moved cpu 1 -> cpu 3 (balance pass): cpu 1 had 4 tasks, 52.4% idle; cpu 3 had 1 task, 65.4% idle"),
	LINE("migrate kind pull", "sched_batch_migrate",
	  TASK "src_cpu=1 dst_cpu=0 src_nr=5 dst_nr=0 src_idle_avg=413 dst_idle_avg=1000 kind=1",
	  "spin:4242 moved cpu 1 -> cpu 0 (pulled by an idle CPU): cpu 1 had 5 tasks, 41.3% idle; cpu 0 had 0 tasks, 100.0% idle"),
	LINE("migrate kind swap", "sched_batch_migrate",
	  TASK "src_cpu=0 dst_cpu=3 src_nr=2 dst_nr=2 src_idle_avg=0 dst_idle_avg=7 kind=2",
	  "spin:4242 moved cpu 0 -> cpu 3 (swapped for fairness): cpu 0 had 2 tasks, 0.0% idle; cpu 3 had 2 tasks, 0.7% idle"),
	LINE("an unknown migrate kind (3) prints as its number", "sched_batch_migrate",
	  TASK "src_cpu=0 dst_cpu=3 src_nr=2 dst_nr=2 src_idle_avg=500 dst_idle_avg=500 kind=3",
	  "spin:4242 moved cpu 0 -> cpu 3 (unknown kind 3): cpu 0 had 2 tasks, 50.0% idle; cpu 3 had 2 tasks, 50.0% idle"),

	LINE("slice expired", "sched_batch_slice_expired",
	  TASK "cpu=3 slice=1500000000",
	  "spin:4242 on cpu 3 used up its slice, new slice 1500.000 ms"),
	LINE("queue swap, one task", "sched_batch_queue_swap", "cpu=1 nr_queued=1",
	  "cpu 1: active queue ran dry, swapped in the expired one (1 task)"),
	LINE("queue swap, none", "sched_batch_queue_swap", "cpu=2 nr_queued=0",
	  "cpu 2: active queue ran dry, swapped in the expired one (0 tasks)"),

	/* The comm fills its 16 bytes with no NUL: not a byte more is printed */
	LINE("a 16-character comm", "sched_batch_slice_expired",
	  "comm=abcdefghijklmnop pid=7 cpu=0 slice=1000000",
	  "abcdefghijklmnop:7 on cpu 0 used up its slice, new slice 1.000 ms"),
	LINE_OPT("a 16-character comm in the raw fields", "sched_batch_slice_expired",
	  "comm=abcdefghijklmnop pid=7 cpu=0 slice=1000000",
	  "abcdefghijklmnop:7 on cpu 0 used up its slice, new slice 1.000 ms"
	  " | comm=abcdefghijklmnop pid=7 cpu=0 slice=1000000", "raw"),
	LINE("a negative cpu prints signed", "sched_batch_queue_swap", "cpu=-1 nr_queued=3",
	  "cpu -1: active queue ran dry, swapped in the expired one (3 tasks)"),

	/* Options */
	LINE_OPT("option ns: durations in ns (unpark)", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=702393",
	  "spin:4242 unparked on cpu 1 after 702393 ns: picked to run on an idle CPU", "ns"),
	LINE_OPT("option ns: durations in ns (park)", "sched_batch_park",
	  TASK "cpu=3 queue=0 nr_queued=1 slice_left=18446744073709551615",
	  "spin:4242 parked on cpu 3 in the active queue, 1 queued, 18446744073709551615 ns of its slice left",
	  "ns"),
	LINE_OPT("option ns: durations in ns (slice expired)", "sched_batch_slice_expired",
	  TASK "cpu=3 slice=1500000000",
	  "spin:4242 on cpu 3 used up its slice, new slice 1500000000 ns", "ns"),
	LINE_OPT("option raw: the kernel's fields follow", "sched_batch_unpark",
	  TASK "cpu=1 reason=1 parked_ns=702393",
	  "spin:4242 unparked on cpu 1 after 0.702 ms: to handle a signal"
	  " | comm=spin pid=4242 cpu=1 reason=1 parked_ns=702393", "raw"),
	LINE_OPT("options raw and ns together", "sched_batch_migrate",
	  TASK "src_cpu=1 dst_cpu=3 src_nr=4 dst_nr=1 src_idle_avg=524 dst_idle_avg=654 kind=0",
	  "spin:4242 moved cpu 1 -> cpu 3 (balance pass): cpu 1 had 4 tasks, 52.4% idle; cpu 3 had 1 task, 65.4% idle"
	  " | comm=spin pid=4242 src_cpu=1 dst_cpu=3 src_nr=4 dst_nr=1 src_idle_avg=524 dst_idle_avg=654 kind=0",
	  "raw,ns"),
	LINE("options are off again: ms, no fields", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=702393",
	  "spin:4242 unparked on cpu 1 after 0.702 ms: picked to run on an idle CPU"),

	/* Records cut short: the fields that are there, nothing read beyond */
	LINE_SHORT("a record that ends before 'cpu'", "sched_batch_unpark",
	  TASK "cpu=1 reason=0 parked_ns=702393",
	  "<cannot decode: field 'cpu' lies beyond the end of the record> comm=spin pid=4242"
	  " cpu=<beyond the record> reason=<beyond the record> parked_ns=<beyond the record>", 30),
	LINE_SHORT("a record that ends in the middle of 'slice_left'", "sched_batch_park",
	  TASK "cpu=3 queue=1 nr_queued=2 slice_left=5",
	  "<cannot decode: field 'slice_left' lies beyond the end of the record> comm=spin pid=4242"
	  " cpu=3 queue=1 nr_queued=2 slice_left=<beyond the record>", 44),
	LINE_SHORT("a record with only the common fields", "sched_batch_queue_swap", "cpu=1 nr_queued=1",
	  "<cannot decode: field 'cpu' lies beyond the end of the record>"
	  " cpu=<beyond the record> nr_queued=<beyond the record>", 8),
};

/* The same record in a big-endian trace prints the same */
static const struct expect big_endian_lines[] = {
	LINE("big-endian trace: unpark", "sched_batch_unpark",
	  TASK "cpu=1 reason=1 parked_ns=702393",
	  "spin:4242 unparked on cpu 1 after 0.702 ms: to handle a signal"),
	LINE("big-endian trace: migrate", "sched_batch_migrate",
	  TASK "src_cpu=1 dst_cpu=3 src_nr=4 dst_nr=1 src_idle_avg=524 dst_idle_avg=654 kind=2",
	  "spin:4242 moved cpu 1 -> cpu 3 (swapped for fairness): cpu 1 had 4 tasks, 52.4% idle; cpu 3 had 1 task, 65.4% idle"),
	LINE("big-endian trace: a negative cpu", "sched_batch_queue_swap", "cpu=-1 nr_queued=3",
	  "cpu -1: active queue ran dry, swapped in the expired one (3 tasks)"),
};

/* A kernel whose unpark event names the reason field differently */
static const struct expect missing_field_lines[] = {
	LINE("a format without 'reason': the fields as they are", "sched_batch_unpark",
	  TASK "cpu=1 why=1 parked_ns=702393",
	  "<cannot decode: field 'reason' is not in the event's format> comm=spin pid=4242"
	  " cpu=1 why=1 parked_ns=702393"),
	LINE("a format without 'reason': the other events still decode", "sched_batch_park",
	  TASK "cpu=3 queue=0 nr_queued=1 slice_left=1000000",
	  "spin:4242 parked on cpu 3 in the active queue, 1 queued, 1.000 ms of its slice left"),
};

/*
 * A newer kernel's unpark: a field added in front, the others moved and
 * reordered.  Read by name, it decodes the same.
 */
static const char newer_unpark[] =
	"name: sched_batch_unpark\n"
	"ID: 401\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:u64 parked_ns;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 generation;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:int reason;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int cpu;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t pid;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:36;\tsize:16;\tsigned:0;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d cpu=%d reason=%d parked_ns=%llu generation=%llu\", "
	"REC->comm, REC->pid, REC->cpu, REC->reason, REC->parked_ns, REC->generation\n";

static const struct expect newer_lines[] = {
	LINE("a newer kernel's unpark, fields moved: decoded by name", "sched_batch_unpark",
	  TASK "cpu=1 reason=2 parked_ns=702393 generation=99",
	  "spin:4242 unparked on cpu 1 after 0.702 ms: boosted by a PI waiter"),
	LINE_OPT("a newer kernel's unpark, with raw: the new field is listed", "sched_batch_unpark",
	  TASK "cpu=1 reason=2 parked_ns=702393 generation=99",
	  "spin:4242 unparked on cpu 1 after 0.702 ms: boosted by a PI waiter"
	  " | parked_ns=702393 generation=99 reason=2 cpu=1 pid=4242 comm=spin", "raw"),
};

static void check_all(struct tep *t, const struct expect *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		check(t, &e[i]);
}

/* The plugins that tep_load_plugins() loaded: only the one under test */
static void check_loaded(struct tep *t)
{
	struct trace_seq s;
	char want[4096];
	bool pass;

	snprintf(want, sizeof(want), "[%s/plugin_sched_batch.so]", plugin_dir);
	trace_seq_init(&s);
	tep_print_plugins(&s, "[", "]", t->plugins);
	trace_seq_terminate(&s);
	pass = !strcmp(s.buffer, want);
	ok(pass, "the plugin under test is the only one loaded");
	if (!pass)
		printf("#   want: %s\n#   got:  %s\n", want, s.buffer);
	trace_seq_destroy(&s);
}

/* How often "sched_batch:<option>" is in the registered options */
static int options_listed(const char *option)
{
	char want[128], *at;
	struct trace_seq s;
	int n = 0;

	/*
	 * tep_plugin_print_options(), not tep_plugin_list_options(): in
	 * libtraceevent 1.7 the latter reallocs its array in bytes, not
	 * pointers, and writes past it.
	 */
	snprintf(want, sizeof(want), "plugin:\tsched_batch\n  option:\t%s\n", option);
	trace_seq_init(&s);
	tep_plugin_print_options(&s);
	trace_seq_terminate(&s);
	for (at = s.buffer; (at = strstr(at, want)); at++)
		n++;
	trace_seq_destroy(&s);
	return n;
}

static void check_options(const char *when, int want)
{
	char what[256];
	int raw = options_listed("raw"), ns = options_listed("ns");

	snprintf(what, sizeof(what), "%s: options raw and ns listed %d time%s",
		 when, want, want == 1 ? "" : "s");
	ok(raw == want && ns == want, what);
	if (raw != want || ns != want)
		printf("#   raw listed %d times, ns %d times\n", raw, ns);
}

int main(int argc, char **argv)
{
	struct tep little, big, missing, newer;

	if (argc != 3) {
		fprintf(stderr, "usage: plugin_check FORMATS_DIR PLUGIN_DIR\n");
		return 2;
	}
	formats_dir = argv[1];
	plugin_dir = argv[2];
	/*
	 * libtraceevent also loads $TRACEEVENT_PLUGIN_DIR's plugins and those
	 * in ~/.local/lib/traceevent/plugins, after ours: an installed copy
	 * would replace the plugin under test
	 */
	unsetenv("TRACEEVENT_PLUGIN_DIR");
	unsetenv("HOME");

	little = setup_tep(&(struct setup){ .big_endian = false });
	check_loaded(&little);
	check_options("one handle", 1);
	check_all(&little, lines, ARRAY_SIZE(lines));

	big = setup_tep(&(struct setup){ .big_endian = true });
	check_all(&big, big_endian_lines, ARRAY_SIZE(big_endian_lines));

	missing = setup_tep(&(struct setup){
		.edit_event = "sched_batch_unpark",
		.from = "int reason;", .to = "int why;",
		.from2 = "REC->reason", .to2 = "REC->why" });
	check_all(&missing, missing_field_lines, ARRAY_SIZE(missing_field_lines));

	newer = setup_tep(&(struct setup){ .extra = newer_unpark });
	check_all(&newer, newer_lines, ARRAY_SIZE(newer_lines));
	/* Loaded into four handles, registered once (or -O toggles undo) */
	check_options("four handles", 1);

	free_tep(&newer);
	free_tep(&missing);
	free_tep(&big);
	check_options("one handle left", 1);
	check(&little, &(struct expect)LINE(
		"the first handle still decodes after the others unloaded",
		"sched_batch_unpark", TASK "cpu=1 reason=3 parked_ns=2000",
		"spin:4242 unparked on cpu 1 after 0.002 ms: policy changed"));
	free_tep(&little);
	check_options("all unloaded", 0);

	return failures ? 1 : 0;
}
