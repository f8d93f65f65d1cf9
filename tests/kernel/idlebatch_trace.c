// SPDX-License-Identifier: GPL-2.0
/*
 * Observability of SCHED_IDLEBATCH: the sched_batch trace events fire
 * where they should with the right fields, /proc/batchstat and
 * /proc/PID/batchstat agree with them, and trace-cmd, perf and bpftrace
 * can use the events.  Tracing is done in a private tracefs instance.
 */
#include "idlebatch.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "kselftest_harness.h"

#define TRACEFS		"/sys/kernel/tracing"
#define INSTANCE	TRACEFS "/instances/idlebatch_test"
#define CPU		1
#define MAX_EVENTS	200000

struct event {
	double ts;			/* seconds */
	int ctx_pid;			/* the task the event was recorded in */
	char name[40];			/* without the sched_batch_ prefix */
	char fields[200];		/* "key=value key=value" */
};

static struct event *events;
static int nr_events;

static int instance_write(const char *file, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), INSTANCE "/%s", file);
	return write_file(path, text);
}

static int trace_start(const char *const *event_dirs, const char *syscall_filter)
{
	rmdir(INSTANCE);
	if (mkdir(INSTANCE, 0755))
		return -1;
	for (int i = 0; event_dirs[i]; i++) {
		char file[128];

		snprintf(file, sizeof(file), "events/%s/enable", event_dirs[i]);
		if (instance_write(file, "1"))
			return -1;
	}
	if (syscall_filter &&
	    (instance_write("events/raw_syscalls/filter", syscall_filter) ||
	     instance_write("events/raw_syscalls/enable", "1")))
		return -1;
	if (instance_write("buffer_size_kb", "8192"))
		return -1;
	return instance_write("tracing_on", "1");
}

/* Stop tracing and parse the instance's buffer into events[]. */
static int trace_stop(void)
{
	char line[512];
	FILE *f;

	instance_write("tracing_on", "0");
	f = fopen(INSTANCE "/trace", "r");
	if (!f)
		return -1;
	nr_events = 0;
	while (fgets(line, sizeof(line), f) && nr_events < MAX_EVENTS) {
		struct event *e = &events[nr_events];
		char *colon, *name, *dash, *bracket;

		if (line[0] == '#')
			continue;
		bracket = strstr(line, " [");
		colon = bracket ? strstr(bracket, ": ") : NULL;
		if (!colon)
			continue;
		/* "comm-pid [cpu] flags ts: name: fields" */
		*bracket = 0;
		dash = strrchr(line, '-');
		e->ctx_pid = dash ? atoi(dash + 1) : -1;
		*colon = 0;
		e->ts = atof(strrchr(bracket + 1, ' ') + 1);
		name = colon + 2;
		colon = strstr(name, ": ");
		if (!colon)
			continue;
		*colon = 0;
		if (!strncmp(name, "sched_batch_", 12))
			name += 12;
		snprintf(e->name, sizeof(e->name), "%s", name);
		snprintf(e->fields, sizeof(e->fields), "%s", colon + 2);
		e->fields[strcspn(e->fields, "\n")] = 0;
		nr_events++;
	}
	fclose(f);
	rmdir(INSTANCE);
	return 0;
}

/* Value of "key=" in @e's fields, as a number or into @buf */
static long long field_num(const struct event *e, const char *key)
{
	char pat[48];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(e->fields, pat);
	if (!p && !strncmp(e->fields, pat + 1, strlen(pat) - 1))
		p = e->fields - 1;
	return p ? atoll(p + strlen(pat)) : -1;
}

static const char *field_str(const struct event *e, const char *key, char *buf, size_t size)
{
	char pat[48];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(e->fields, pat);
	if (!p)
		return "";
	p += strlen(pat);
	snprintf(buf, size, "%.*s", (int)strcspn(p, " "), p);
	return buf;
}

static int is_event(const struct event *e, const char *name, pid_t pid)
{
	return !strcmp(e->name, name) && (pid < 0 || field_num(e, "pid") == pid);
}

static int count_events(const char *name, pid_t pid, const char *key, const char *value)
{
	char buf[64];
	int n = 0;

	for (int i = 0; i < nr_events; i++)
		if (is_event(&events[i], name, pid) &&
		    (!key || !strcmp(field_str(&events[i], key, buf, sizeof(buf)), value)))
			n++;
	return n;
}

/* One per-CPU line of /proc/batchstat, its fields as numbers */
#define BATCHSTAT_FIELDS	23
struct batchstat {
	int version, ncpu;
	long long cpu[16][BATCHSTAT_FIELDS];	/* fields 2..24 */
	int fields[16];
};

static int read_batchstat(struct batchstat *b)
{
	FILE *f = fopen("/proc/batchstat", "r");
	char line[1024];
	long long ts;

	memset(b, 0, sizeof(*b));
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "version %d", &b->version) != 1 ||
	    !fgets(line, sizeof(line), f) || sscanf(line, "timestamp %lld", &ts) != 1) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f) && b->ncpu < 16) {
		char *p = line, *end;
		int cpu;

		if (sscanf(line, "cpu%d", &cpu) != 1 || cpu != b->ncpu)
			break;
		p = strchr(line, ' ');
		while (p && *p && *p != '\n' && b->fields[cpu] < BATCHSTAT_FIELDS + 1) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			if (b->fields[cpu] < BATCHSTAT_FIELDS)
				b->cpu[cpu][b->fields[cpu]] = v;
			b->fields[cpu]++;
			p = end;
		}
		b->ncpu++;
	}
	fclose(f);
	return 0;
}

/* Field n (1-based, as documented) of CPU @cpu's line */
#define BS(b, c, n)	((b)->cpu[c][(n) - 2])

/* An idle-batch task on @cpu that makes a system call now and then */
static pid_t start_syscall_spinner(int cpu)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (pin_to_cpu(0, cpu) || set_policy(0, SCHED_IDLEBATCH))
		_exit(101);
	for (;;) {
		volatile unsigned long n;

		for (n = 0; n < 200000; n++)
			;
		getppid();
	}
}

static int run_quiet(const char *cmd)
{
	int status = system(cmd);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int output_has(const char *cmd, const char *needle)
{
	char line[1024];
	int found = 0;
	FILE *p = popen(cmd, "r");

	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, needle) != NULL;
	pclose(p);
	return found;
}

FIXTURE(trace) {
	pid_t pids[8];
	int n;
	char old_slice[32];
};

FIXTURE_SETUP(trace)
{
	REQUIRE_IDLEBATCH();
	if (access(TRACEFS "/events/sched_batch", F_OK))
		SKIP(return, "no sched_batch events in %s", TRACEFS);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	events = calloc(MAX_EVENTS, sizeof(*events));
	ASSERT_NE(NULL, events);
	self->n = 0;
	ASSERT_NE(0, read_line("/proc/sys/kernel/sched_idlebatch_slice_ms", self->old_slice,
			       sizeof(self->old_slice))[0]);
	/* Short timeslices, so expiries and queue swaps happen in seconds */
	ASSERT_EQ(0, write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", "100"));
}

FIXTURE_TEARDOWN(trace)
{
	for (int i = 0; i < self->n; i++)
		stop_task(self->pids[i]);
	instance_write("tracing_on", "0");
	rmdir(INSTANCE);
	write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", self->old_slice);
	free(events);
}

static const char *const batch_events[] = { "sched_batch", NULL };

TEST_F(trace, events_and_fields)
{
	static const char *const want[][8] = {
		{ "sched_batch_user_preempt", "pid", "cpu", "decision" },
		{ "sched_batch_park", "pid", "cpu", "queue", "nr_queued", "slice_left" },
		{ "sched_batch_unpark", "pid", "cpu", "reason", "parked_ns" },
		{ "sched_batch_migrate", "pid", "src_cpu", "dst_cpu", "src_nr", "dst_nr",
		  "src_idle_avg", "dst_idle_avg" },
		{ "sched_batch_slice_expired", "pid", "cpu", "slice" },
		{ "sched_batch_queue_swap", "cpu", "nr_queued" },
	};

	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char path[160], cmd[256];

		snprintf(path, sizeof(path), TRACEFS "/events/sched_batch/%s/format", want[i][0]);
		ASSERT_EQ(0, access(path, R_OK)) TH_LOG("%s missing", path);
		for (int j = 1; j < 8 && want[i][j]; j++) {
			snprintf(cmd, sizeof(cmd), "grep -q 'field:.* %s;' %s", want[i][j], path);
			EXPECT_EQ(0, run_quiet(cmd)) TH_LOG("%s has no field %s", want[i][0], want[i][j]);
		}
	}
	/* Symbolic values are printed as words, with their numbers exported */
	EXPECT_EQ(0, run_quiet("grep -q '\"picked\"' " TRACEFS
			       "/events/sched_batch/sched_batch_unpark/format"));
}

/*
 * Two idle-batch tasks share CPU 1 with a nice-0 task that is busy half
 * the time: parked when it runs, picked when it sleeps, in turns.
 */
TEST_F(trace, park_unpark_pairs)
{
	int parks = 0, unparks = 0, bad_pairs = 0, bad_cpu = 0, bad_time = 0;
	uint64_t overrun;
	char buf[64];

	ASSERT_EQ(0, trace_start(batch_events, NULL));
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	self->pids[self->n++] = start_duty_hog(CPU, 20000, 20000);
	sleep(3);
	stop_task(self->pids[0]);
	stop_task(self->pids[1]);
	ASSERT_EQ(0, trace_stop());

	for (int t = 0; t < 2; t++) {
		pid_t pid = self->pids[t];
		double parked_ts = -1;

		for (int i = 0; i < nr_events; i++) {
			struct event *e = &events[i];

			if (is_event(e, "park", pid)) {
				parks++;
				bad_pairs += parked_ts >= 0;
				bad_cpu += field_num(e, "cpu") != CPU;
				parked_ts = e->ts;
			} else if (is_event(e, "unpark", pid)) {
				double took = field_num(e, "parked_ns") / 1e9;

				unparks++;
				bad_pairs += parked_ts < 0;
				bad_cpu += field_num(e, "cpu") != CPU;
				double diff = took - (e->ts - parked_ts);

				/*
				 * parked_ns comes from the rq clock, updated when
				 * __schedule() starts; the event's time stamp is
				 * taken later, after new-idle balancing, which
				 * can take milliseconds under TCG.
				 */
				if (parked_ts >= 0 && (diff > 0.005 || diff < -0.005)) {
					TH_LOG("pid %d: parked_ns %.3f ms, time stamps %.3f ms apart",
					       pid, took * 1e3, (e->ts - parked_ts) * 1e3);
					bad_time++;
				}
				parked_ts = -1;
			}
		}
	}
	TH_LOG("%d events: %d parks, %d unparks (%d picked, %d signal), %d user-mode "
	       "preemptions (%d parked), %d slice expiries, %d queue swaps",
	       nr_events, parks, unparks, count_events("unpark", -1, "reason", "picked"),
	       count_events("unpark", -1, "reason", "signal"),
	       count_events("user_preempt", -1, NULL, NULL),
	       count_events("user_preempt", -1, "decision", "parked"),
	       count_events("slice_expired", -1, NULL, NULL),
	       count_events("queue_swap", -1, NULL, NULL));
	ASSERT_GE(parks, 20);
	EXPECT_EQ(0, bad_pairs);
	EXPECT_EQ(0, bad_cpu);
	EXPECT_EQ(0, bad_time);
	EXPECT_GE(count_events("user_preempt", -1, "decision", "parked"), 1);
	EXPECT_GE(count_events("unpark", -1, "reason", "picked"), 10);
	EXPECT_GE(count_events("slice_expired", -1, NULL, NULL), 1);
	EXPECT_GE(count_events("queue_swap", -1, NULL, NULL), 1);
	/*
	 * A swap counts every task of the class on the CPU, the one about to
	 * run included: 2 when neither is in fair at the moment, never 0.
	 */
	EXPECT_EQ(0, count_events("queue_swap", -1, "nr_queued", "0"));
	EXPECT_GE(count_events("queue_swap", -1, "nr_queued", "2"), 1);
	/*
	 * A task that used up its slice waits in the expired list with a new
	 * one, charged with what it ran between the tick that ended the old
	 * one and its way out of the kernel: a few ms at most, 15 ms or three
	 * ticks (12 ms at HZ=250), whichever is more.  (11 ms was seen once in
	 * a full run, when the host held up the guest's CPU.)
	 */
	overrun = ns_or_ticks(15000000, 3);
	for (int i = 0; i < nr_events; i++)
		if (is_event(&events[i], "park", -1) &&
		    !strcmp(field_str(&events[i], "queue", buf, sizeof(buf)), "expired")) {
			EXPECT_LE(field_num(&events[i], "slice_left"), 100000000);
			EXPECT_GT(field_num(&events[i], "slice_left"), 100000000 - (long long)overrun);
		}
}

/* The reasons: signal after a kill, policy after sched_setscheduler() */
TEST_F(trace, unpark_reasons)
{
	struct sched_param sp = { 0 };

	self->pids[self->n++] = start_spinner(SCHED_OTHER, 0, CPU);
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	usleep(500000);
	ASSERT_EQ('R', task_state(self->pids[1]));
	ASSERT_EQ(0, trace_start(batch_events, NULL));
	kill(self->pids[1], SIGKILL);
	ASSERT_EQ(0, sched_setscheduler(self->pids[2], SCHED_OTHER, &sp));
	usleep(200000);
	ASSERT_EQ(0, trace_stop());
	EXPECT_EQ(1, count_events("unpark", self->pids[1], "reason", "signal"));
	EXPECT_EQ(1, count_events("unpark", self->pids[2], "reason", "policy"));
}

/* A PI futex waiter unparks the parked owner, for reason "pi" */
TEST_F(trace, unpark_for_pi)
{
	struct timespec deadline;
	struct pi_shared *sh;
	pid_t owner;

	sh = pi_shared_create();
	ASSERT_NE(NULL, sh);
	self->pids[self->n++] = start_spinner(SCHED_OTHER, 0, CPU);

	owner = fork();
	if (owner == 0) {
		pthread_mutex_lock(&sh->lock);
		sh->locked = 1;
		pin_to_cpu(0, CPU);
		set_policy(0, SCHED_IDLEBATCH);
		/* Spin in user space holding it: parked next to the hog */
		for (volatile unsigned long n = 0; n < 2000000000ul; n++)
			;
		pthread_mutex_unlock(&sh->lock);
		spin_forever();
	}
	self->pids[self->n++] = owner;
	while (!sh->locked)
		usleep(1000);
	usleep(300000);
	pin_to_cpu(0, 0);
	ASSERT_EQ(0, trace_start(batch_events, NULL));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	/* Times out: the owner holds it far longer; the boost is what counts */
	pthread_mutex_timedlock(&sh->lock, &deadline);
	ASSERT_EQ(0, trace_stop());
	allow_all_cpus(0);
	EXPECT_GE(count_events("unpark", owner, "reason", "pi"), 1);
	munmap(sh, sizeof(*sh));
}

/*
 * Every park happens on the way back to user mode: never between a
 * task's sys_enter and its sys_exit.
 */
TEST_F(trace, parks_only_outside_syscalls)
{
	int in_syscall = 0, parks = 0, bad = 0, syscalls = 0;
	char filter[64];
	pid_t pid;

	self->pids[self->n++] = start_duty_hog(CPU, 3000, 3000);
	pid = start_syscall_spinner(CPU);
	self->pids[self->n++] = pid;
	snprintf(filter, sizeof(filter), "common_pid == %d", pid);
	ASSERT_EQ(0, trace_start(batch_events, filter));
	sleep(3);
	ASSERT_EQ(0, trace_stop());
	for (int i = 0; i < nr_events; i++) {
		struct event *e = &events[i];

		if (!strcmp(e->name, "sys_enter") && e->ctx_pid == pid) {
			in_syscall = 1;
			syscalls++;
		} else if (!strcmp(e->name, "sys_exit") && e->ctx_pid == pid) {
			in_syscall = 0;
		} else if (is_event(e, "park", pid)) {
			parks++;
			bad += in_syscall;
		}
	}
	TH_LOG("%d system calls, %d parks, %d inside a system call", syscalls, parks, bad);
	ASSERT_GE(syscalls, 100);
	ASSERT_GE(parks, 10);
	EXPECT_EQ(0, bad);
}

/* Balancer moves: where the task shows up afterwards, with the counts */
TEST_F(trace, migrate_matches_proc)
{
	int moves = 0, checked = 0;
	long long cpu_now[8];

	for (int i = 0; i < 4; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			if (pin_to_cpu(0, 0) || set_policy(0, SCHED_IDLEBATCH))
				_exit(101);
			spin_forever();
		}
		self->pids[self->n++] = pid;
	}
	usleep(300000);
	ASSERT_EQ(0, trace_start(batch_events, NULL));
	for (int i = 0; i < self->n; i++)
		ASSERT_EQ(0, allow_all_cpus(self->pids[i]));
	sleep(4);
	/* Where they are, and a mark in the trace: moves after it do not count */
	for (int i = 0; i < self->n; i++)
		cpu_now[i] = stat_field(self->pids[i], 39);
	ASSERT_EQ(0, instance_write("trace_marker", "positions read"));
	ASSERT_EQ(0, trace_stop());
	for (int t = 0; t < self->n; t++) {
		long long last_dst = -1;

		for (int i = 0; i < nr_events; i++) {
			struct event *e = &events[i];

			if (!strcmp(e->name, "tracing_mark_write"))
				break;
			if (!is_event(e, "migrate", self->pids[t]))
				continue;
			moves++;
			EXPECT_NE(field_num(e, "src_cpu"), field_num(e, "dst_cpu"));
			EXPECT_GE(field_num(e, "src_nr"), 1);
			EXPECT_LE(field_num(e, "src_idle_avg"), 1000);
			last_dst = field_num(e, "dst_cpu");
		}
		if (last_dst >= 0) {
			EXPECT_EQ(last_dst, cpu_now[t]);
			checked++;
		}
	}
	TH_LOG("%d balancer moves of 4 tasks started on CPU 0; %d checked against /proc",
	       moves, checked);
	ASSERT_GE(moves, 2);
}

TEST_F(trace, batchstat_format)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct batchstat b;
	struct stat st;

	ASSERT_EQ(0, read_batchstat(&b));
	ASSERT_EQ(1, b.version);
	ASSERT_EQ(cpus, b.ncpu);
	for (int c = 0; c < b.ncpu; c++) {
		ASSERT_EQ(BATCHSTAT_FIELDS, b.fields[c]);
		ASSERT_LE(BS(&b, c, 4), 1000);
		for (int n = 5; n <= 14; n++)
			ASSERT_LE(BS(&b, c, n), 1000);
		ASSERT_LE(BS(&b, c, 3), 1);
	}
	/* Readable by any user */
	ASSERT_EQ(0, stat("/proc/batchstat", &st));
	ASSERT_EQ(0444u, st.st_mode & 0444);
}

/* Parks and unparks counted in /proc/batchstat equal the traced events. */
TEST_F(trace, batchstat_counts_match_trace)
{
	long long parks = 0, unparks[4] = { 0 };
	static const char *const reasons[4] = { "picked", "signal", "pi", "policy" };
	struct batchstat before, after;

	ASSERT_EQ(0, trace_start(batch_events, NULL));
	ASSERT_EQ(0, read_batchstat(&before));
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	self->pids[self->n++] = start_duty_hog(CPU, 10000, 10000);
	sleep(2);
	stop_task(self->pids[0]);
	stop_task(self->pids[1]);
	ASSERT_EQ(0, read_batchstat(&after));
	ASSERT_EQ(0, trace_stop());
	for (int c = 0; c < after.ncpu; c++) {
		parks += BS(&after, c, 15) - BS(&before, c, 15);
		for (int r = 0; r < 4; r++)
			unparks[r] += BS(&after, c, 16 + r) - BS(&before, c, 16 + r);
	}
	TH_LOG("/proc/batchstat: %lld parks, %lld/%lld/%lld/%lld unparks; trace: %d parks",
	       parks, unparks[0], unparks[1], unparks[2], unparks[3],
	       count_events("park", -1, NULL, NULL));
	ASSERT_GE(parks, 10);
	EXPECT_EQ(parks, count_events("park", -1, NULL, NULL));
	for (int r = 0; r < 4; r++)
		EXPECT_EQ(unparks[r], count_events("unpark", -1, "reason", reasons[r]));
}

/*
 * The median over 1 s of @cpu's utilisation as schedutil reads it
 * (/proc/batchstat field 24), sampled every 100 ms
 */
static long long median_util(int cpu)
{
	double util[10];
	struct batchstat b;
	int n = 0;

	for (int i = 0; i < 10; i++) {
		usleep(100000);
		if (!read_batchstat(&b) && b.fields[cpu] == BATCHSTAT_FIELDS)
			util[n++] = BS(&b, cpu, 24);
	}
	if (!n)
		return -1;
	qsort(util, n, sizeof(util[0]), cmp_double);
	return (long long)util[n / 2];
}

/*
 * schedutil sees the time a CPU runs idle-batch tasks, as it sees a
 * SCHED_IDLE task's (which fair counts): the CPU's utilisation rises while
 * an idle-batch task runs there in its class and decays once it stops.
 * A nice-0 hog has the task parked first, so that it runs in the class
 * when the hog leaves, not in fair.
 */
TEST_F_TIMEOUT(trace, utilisation_counts_idle_batch_time, 60)
{
	long long quiet, sched_idle, idlebatch, after;
	pid_t hog;

	pin_to_cpu(0, 0);
	quiet = median_util(CPU);

	self->pids[self->n++] = start_spinner(SCHED_IDLE, 0, CPU);
	usleep(300000);
	sched_idle = median_util(CPU);
	stop_task(self->pids[--self->n]);

	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	hog = self->pids[self->n++] = start_spinner(SCHED_OTHER, 0, CPU);
	usleep(300000);
	EXPECT_EQ('P', batch_state(self->pids[0]));
	stop_task(hog);
	self->n--;
	usleep(300000);
	ASSERT_EQ('R', batch_state(self->pids[0]));
	idlebatch = median_util(CPU);
	ASSERT_EQ('R', batch_state(self->pids[0]));
	stop_task(self->pids[--self->n]);
	usleep(500000);
	after = median_util(CPU);

	TH_LOG("CPU %d utilisation: %lld quiet, %lld with a SCHED_IDLE spinner, %lld with an idle-batch one running in its class, %lld 0.5 s after it stopped",
	       CPU, quiet, sched_idle, idlebatch, after);
	ASSERT_GE(quiet, 0);
	EXPECT_GE(sched_idle, 512);
	EXPECT_GE(idlebatch, 512);
	EXPECT_GE(idlebatch * 10, sched_idle * 8);
	EXPECT_LE(after, 256);
	allow_all_cpus(0);
}

/* Idle history: near 100% on an idle CPU, near 0% under a normal hog */
TEST_F_TIMEOUT(trace, idle_history, 60)
{
	struct batchstat b;

	pin_to_cpu(0, 0);
	sleep(11);
	ASSERT_EQ(0, read_batchstat(&b));
	TH_LOG("idle CPU %d: idle average %lld permille, last second %lld",
	       CPU, BS(&b, CPU, 4), BS(&b, CPU, 5));
	EXPECT_GE(BS(&b, CPU, 4), 900);
	self->pids[self->n++] = start_spinner(SCHED_OTHER, 0, CPU);
	sleep(11);
	ASSERT_EQ(0, read_batchstat(&b));
	TH_LOG("CPU %d under a nice-0 hog: idle average %lld permille, last second %lld",
	       CPU, BS(&b, CPU, 4), BS(&b, CPU, 5));
	EXPECT_LE(BS(&b, CPU, 4), 100);
	allow_all_cpus(0);
}

TEST_F(trace, task_batchstat)
{
	long long parks, parked, parks2, parked2;
	char state;

	self->pids[self->n++] = start_spinner(SCHED_OTHER, 0, CPU);
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	usleep(500000);
	ASSERT_EQ(0, task_batchstat(self->pids[1], &state, &parks, &parked));
	EXPECT_EQ('P', state);
	EXPECT_GE(parks, 1);
	usleep(300000);
	ASSERT_EQ(0, task_batchstat(self->pids[1], &state, &parks2, &parked2));
	EXPECT_EQ(parks, parks2);
	EXPECT_GE(parked2 - parked, 250000000);
	ASSERT_EQ(0, task_batchstat(self->pids[0], &state, &parks, &parked));
	EXPECT_EQ('-', state);
	/*
	 * An idle-batch task asleep is in fair.  It goes to sleep on CPU 0,
	 * away from the spinners: beside them, a tick on its way back to user
	 * mode from sched_setattr() would park it once before it sleeps.
	 */
	self->pids[self->n] = fork();
	if (self->pids[self->n] == 0) {
		pin_to_cpu(0, 0);
		if (set_policy(0, SCHED_IDLEBATCH))
			_exit(101);
		for (;;)
			pause();
	}
	usleep(200000);
	ASSERT_EQ(0, task_batchstat(self->pids[self->n++], &state, &parks, &parked));
	EXPECT_EQ('N', state);
	EXPECT_EQ(0, parks);
}

/* trace-cmd, perf and bpftrace see the events. */
TEST_F_TIMEOUT(trace, tools, 180)
{
	const char *scratch = getenv("VM_SCRATCH");
	char cmd[768];

	if (!scratch)
		SKIP(return, "no $VM_SCRATCH for the trace files");
	self->pids[self->n++] = start_spinner(SCHED_IDLEBATCH, 0, CPU);
	self->pids[self->n++] = start_duty_hog(CPU, 10000, 10000);

	snprintf(cmd, sizeof(cmd), "trace-cmd record -q -e sched_batch -o %s/t.dat sleep 2 "
		 ">/dev/null 2>&1 && trace-cmd report -i %s/t.dat 2>/dev/null", scratch, scratch);
	EXPECT_TRUE(output_has(cmd, "sched_batch_park:")) TH_LOG("trace-cmd: %s", cmd);

	snprintf(cmd, sizeof(cmd), "perf record -q -e 'sched_batch:*' -a -o %s/p.data sleep 2 "
		 ">/dev/null 2>&1 && perf script -i %s/p.data 2>/dev/null", scratch, scratch);
	EXPECT_TRUE(output_has(cmd, "sched_batch:sched_batch_park")) TH_LOG("perf: %s", cmd);

	if (access("/usr/bin/bpftrace", X_OK)) {
		TH_LOG("bpftrace is not installed");
		EXPECT_EQ(0, access("/usr/bin/bpftrace", X_OK));
	} else if (!access("/sys/kernel/btf/vmlinux", R_OK)) {
		/*
		 * A kernel with BTF (a distribution's): bpftrace reads the
		 * events' types, and the kernel's structures, from it.
		 * curtask is a struct task_struct * only through BTF, and
		 * the user-mode preemption point fires in the preempted
		 * idle-batch task's own context.
		 */
		snprintf(cmd, sizeof(cmd), "bpftrace -e "
			 "'tracepoint:sched_batch:sched_batch_park { @parks[args->cpu] = count(); } "
			 "tracepoint:sched_batch:sched_batch_user_preempt { @policy[curtask->policy] = count(); } "
			 "interval:s:2 { exit(); }' >%s/bt.out 2>&1; cat %s/bt.out", scratch, scratch);
		EXPECT_TRUE(output_has(cmd, "@parks[1]:")) TH_LOG("bpftrace: %s", cmd);
		snprintf(cmd, sizeof(cmd), "cat %s/bt.out", scratch);
		EXPECT_TRUE(output_has(cmd, "@policy[8]:")) TH_LOG("bpftrace: %s", cmd);
	} else {
		/* tests/kernel/bpftrace-types.h: the guest kernel has no BTF */
		char top[400] = "";
		ssize_t len = readlink("/proc/self/exe", top, sizeof(top) - 1);
		char *build = len > 0 ? strstr(top, "/build/tests/") : NULL;

		/* make check-distro boots a kernel that must have BTF */
		EXPECT_EQ(NULL, getenv("IDLEBATCH_EXPECT_BTF"))
			TH_LOG("this kernel has no /sys/kernel/btf/vmlinux");
		ASSERT_NE(NULL, build);
		*build = 0;
		snprintf(cmd, sizeof(cmd), "bpftrace --include %s/tests/kernel/bpftrace-types.h "
			 "-e 'tracepoint:sched_batch:sched_batch_park { @parks[args->cpu] = count(); } "
			 "interval:s:2 { exit(); }' 2>&1", top);
		EXPECT_TRUE(output_has(cmd, "@parks[1]:")) TH_LOG("bpftrace: %s", cmd);
	}
}

TEST_HARNESS_MAIN
