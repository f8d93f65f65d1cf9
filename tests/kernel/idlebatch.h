/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the in-guest scheduler tests: CPU-bound children with
 * a chosen policy, nice value and CPU, and what /proc says about them.
 */
#ifndef TESTS_IDLEBATCH_H
#define TESTS_IDLEBATCH_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../tools/sched_attr.h"

#ifndef SCHED_IDLEBATCH
#define SCHED_IDLEBATCH 8
#endif

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The running kernel's tick in ns, from its configuration (every guest
 * kernel has CONFIG_IKCONFIG_PROC).  A bound that rests on when a tick
 * comes is written in ticks, so that it means the same on the test
 * kernel (HZ=1000) and on a distribution's (Debian: HZ=250, a 4 ms
 * tick).  sysconf(_SC_CLK_TCK) would not do: it is USER_HZ, always 100.
 */
static inline uint64_t tick_ns(void)
{
	static uint64_t tick;
	char line[128];
	long hz = 0;
	FILE *p;

	if (tick)
		return tick;
	p = popen("zcat /proc/config.gz 2>/dev/null", "r");
	while (p && fgets(line, sizeof(line), p))
		if (!strncmp(line, "CONFIG_HZ=", 10))
			hz = strtol(line + 10, NULL, 10);
	if (p)
		pclose(p);
	if (hz <= 0) {
		fprintf(stderr, "tick_ns: no CONFIG_HZ in /proc/config.gz\n");
		abort();
	}
	tick = 1000000000ull / hz;
	return tick;
}

/* @ns, or @ticks ticks of the running kernel if that is more */
static inline uint64_t ns_or_ticks(uint64_t ns, unsigned int ticks)
{
	uint64_t t = ticks * tick_ns();

	return t > ns ? t : ns;
}

/*
 * The most CPU a task that should get none may show over @window_s, in
 * percent: @percent, or one tick if that is more.  A parked task next to
 * a busy normal one never runs, but a task that has just become
 * idle-batch, or was woken, runs in normal scheduling until its next
 * user-mode tick parks it: up to a tick, 1 ms at HZ=1000 and 4 ms at 250.
 */
static inline double starved_share_bound(double percent, double window_s)
{
	double tick = 100.0 * (double)tick_ns() / (window_s * 1e9);

	return tick > percent ? tick : percent;
}

/* CPU time the calling thread has used, in ns */
static inline double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* qsort() comparison of doubles, ascending */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Move @t on by @ns (less than a second) */
static inline void timespec_add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	if (t->tv_nsec >= 1000000000) {
		t->tv_nsec -= 1000000000;
		t->tv_sec++;
	}
}

static inline int pin_to_cpu(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

static inline int allow_all_cpus(pid_t pid)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (long cpu = 0; cpu < n; cpu++)
		CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

static inline int set_policy(pid_t pid, int policy)
{
	struct sched_param sp = { 0 };

	return sched_setscheduler(pid, policy, &sp);
}

/* The first line of @path, without its newline, in @buf; "" on error. */
static inline char *read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/*
 * The value on the first line of @path that @fmt, a scanf() format with
 * one %lld ("voluntary_ctxt_switches: %lld"), matches; -1 if none does or
 * the file cannot be read.  For /proc and cgroup files of "label value"
 * lines.
 */
static inline long long labelled_value(const char *path, const char *fmt)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Empty a file as `: > path` does: tracefs' trace file clears on O_TRUNC. */
static inline int truncate_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Write @s to the file at @path in one write(); 0, or -1 on error. */
static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = -1;

	if (fd >= 0) {
		ret = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
		close(fd);
	}
	return ret;
}

/* Take CPU @cpu offline (@online 0) or bring it back: 0, or -1 */
static inline int set_cpu_online(int cpu, int online)
{
	char path[80];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return write_file(path, online ? "1" : "0");
}

/*
 * In a child just forked: move to @cpu (or stay if @cpu < 0), take @nice
 * and enter @policy, or exit with 101, 102 or 103.
 */
static inline void enter_policy_or_exit(int policy, int nice, int cpu)
{
	if (cpu >= 0 && pin_to_cpu(0, cpu))
		_exit(101);
	if (setpriority(PRIO_PROCESS, 0, nice))
		_exit(102);
	if (set_policy(0, policy))
		_exit(103);
}

/* Spin in user space for ever; the parent kills us. */
static inline void __attribute__((noreturn)) spin_forever(void)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
}

/*
 * Start a CPU-bound child on @cpu (or anywhere if @cpu < 0) with @policy
 * and @nice.  The child sets its own policy, so it starts in the policy.
 */
static inline pid_t start_spinner(int policy, int nice, int cpu)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	enter_policy_or_exit(policy, nice, cpu);
	spin_forever();
}

/*
 * Start a nice-0 task on @cpu that spins for @busy_us and sleeps for
 * @idle_us, over and over: it leaves a little idle time in which a
 * low-priority task runs, enters the kernel and takes locks, and then
 * preempts it there.
 */
static inline pid_t start_duty_hog(int cpu, unsigned int busy_us, unsigned int idle_us)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (pin_to_cpu(0, cpu))
		_exit(101);
	for (;;) {
		uint64_t end = now_ns() + busy_us * 1000ull;

		while (now_ns() < end)
			;
		usleep(idle_us);
	}
}

static inline void stop_task(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * /proc/PID/batchstat, "STATE PARKS PARKED_NS": the state letter (P parked,
 * R running in the idle-batch class, N in fair, - not idle-batch), the
 * times the task was parked and its time parked.  0, or -1 (state '?').
 */
static inline int task_batchstat(pid_t pid, char *state, long long *parks,
				 long long *parked_ns)
{
	char path[64];
	FILE *f;
	int n;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/batchstat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, " %c %lld %lld", state, parks, parked_ns);
	fclose(f);
	return n == 3 ? 0 : -1;
}

/* Times @pid was parked, or -1; its state letter in *@state */
static inline long task_parks_and_state(pid_t pid, char *state)
{
	long long parks, parked_ns;

	return task_batchstat(pid, state, &parks, &parked_ns) ? -1 : (long)parks;
}

/* Times @pid was parked, or -1 */
static inline long task_parks(pid_t pid)
{
	char state;

	return task_parks_and_state(pid, &state);
}

/* @pid's state letter in /proc/PID/batchstat: P parked, R running in the class, B boosted, N in fair, - none */
static inline char batch_state(pid_t pid)
{
	char state;

	task_parks_and_state(pid, &state);
	return state;
}

/* The CPU time in ns a schedstat file (its first field) gives, or 0 */
static inline uint64_t schedstat_ns(const char *path)
{
	unsigned long long ns = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/* Total CPU time of a task in ns: the first field of /proc/PID/schedstat. */
static inline uint64_t cputime_ns(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	return schedstat_ns(path);
}

/*
 * Read /proc/PID/stat into @buf and return where field 3 (the state)
 * starts, after the command name, which may hold spaces; NULL on error.
 */
static inline char *stat_fields(pid_t pid, char *buf, size_t size)
{
	char path[64], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	p = fgets(buf, size, f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return NULL;
	return p + 2;
}

/* Field @n (1-based, as in proc(5)) of /proc/PID/stat, from field 3 on. */
static inline long long stat_field(pid_t pid, int n)
{
	char buf[4096], *p = stat_fields(pid, buf, sizeof(buf));
	long long value = -1;

	for (int field = 3; field < n && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		sscanf(p, "%lld", &value);
	return value;
}

/*
 * Is a signal pending for @pid, its own or its thread group's (SigPnd or
 * ShdPnd in /proc/PID/status)?  1 or 0, -1 if unreadable.
 */
static inline int pending_signals(pid_t pid)
{
	char path[64], line[256];
	unsigned long long pnd = 0, shd = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigPnd: %llx", &v) == 1)
			pnd = v;
		if (sscanf(line, "ShdPnd: %llx", &v) == 1)
			shd = v;
	}
	fclose(f);
	return pnd || shd;
}

static inline char task_state(pid_t pid)
{
	char buf[4096], *p = stat_fields(pid, buf, sizeof(buf));

	return p ? *p : '?';
}

/* Share of one CPU that @pid used over @seconds, in percent. */
static inline double cpu_share(pid_t pid, double seconds)
{
	uint64_t t0 = now_ns(), c0 = cputime_ns(pid), c1, t1;

	usleep((useconds_t)(seconds * 1e6));
	c1 = cputime_ns(pid);
	t1 = now_ns();
	return 100.0 * (double)(c1 - c0) / (double)(t1 - t0);
}

/* A process-shared PI mutex and a flag, in memory shared with children */
struct pi_shared {
	pthread_mutex_t lock;
	volatile int locked;
};

static inline struct pi_shared *pi_shared_create(void)
{
	struct pi_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_t attr;

	if (sh == MAP_FAILED)
		return NULL;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	if (pthread_mutex_init(&sh->lock, &attr)) {
		munmap(sh, sizeof(*sh));
		return NULL;
	}
	sh->locked = 0;
	return sh;
}

/*
 * A file of the project's build folder, build/@rel, found from this test's
 * own path (build/tests/...): 0 if it is there and executable, else -1.
 */
static inline int build_program(const char *rel, char *path, size_t size)
{
	char self[400], *build;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return -1;
	self[len] = 0;
	build = strstr(self, "/build/tests/");
	if (!build)
		return -1;
	*build = 0;
	if (snprintf(path, size, "%s/build/%s", self, rel) >= (int)size)
		return -1;
	return access(path, X_OK);
}

/* The sanitized build of a project tool, build/tools/sanitized/@name */
static inline int sanitized_tool(const char *name, char *path, size_t size)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "tools/sanitized/%s", name);
	return build_program(rel, path, size);
}

/*
 * A copy of the program @path that any user can run, in a new folder on
 * one of the guest's own tmpfs mounts, for a test that runs it as another
 * user: the checkout may be in a folder only its owner can enter (mode
 * 0700, as /root and the folders of mktemp -d are), and the guest sees it
 * with the host's permissions.  Not under /tmp, which is the host's,
 * read-only, when the checkout is in /tmp (tests/vm/init).  The copy's
 * path in @copy; remove it with remove_reachable_copy().  0, or -1 with
 * errno set.
 */
static inline int reachable_copy(const char *path, char *copy, size_t size)
{
	static const char *const places[] = { "/run", "/dev/shm", "/tmp" };
	const char *base = strrchr(path, '/');
	int in = -1, out = -1, ret = -1;
	char dir[64], buf[65536];
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/idlebatch-tool.XXXXXX", places[i]);
		if (mkdtemp(dir))
			break;
	}
	if (i == sizeof(places) / sizeof(places[0]))
		return -1;
	if (snprintf(copy, size, "%s/%s", dir, base ? base + 1 : path) >= (int)size) {
		errno = ENAMETOOLONG;
		goto out;
	}
	in = open(path, O_RDONLY | O_CLOEXEC);
	out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (in < 0 || out < 0 || chmod(dir, 0755))
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, n) != n)
			goto out;
	}
	/* The mode again: the umask may have taken bits from open()'s */
	ret = n < 0 || fchmod(out, 0755) ? -1 : 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ret = -1;
	if (ret) {
		int saved = errno;

		unlink(copy);
		rmdir(dir);
		errno = saved;
	}
	return ret;
}

/* Remove a copy made by reachable_copy(), and its folder */
static inline void remove_reachable_copy(const char *copy)
{
	char dir[600];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", copy);
	slash = strrchr(dir, '/');
	if (unlink(copy) == 0 && slash) {
		*slash = 0;
		rmdir(dir);
	}
}

/* A test helper program, build/tests/bin/@name */
static inline int test_helper(const char *name, char *path, size_t size)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "tests/bin/%s", name);
	return build_program(rel, path, size);
}

/*
 * Run "@tool @args" through the shell, a sanitizer report making it fail
 * with status 99; its standard output (and with @with_stderr its errors)
 * in @out.  Returns its exit status, or -1.
 */
static inline int run_tool(const char *tool, const char *args, bool with_stderr,
			   char *out, size_t size)
{
	char cmd[1024];
	size_t len = 0;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=99 %s %s%s",
		 tool, args, with_stderr ? " 2>&1" : "");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	out[0] = 0;
	while (len + 1 < size && fgets(out + len, (int)(size - len), p))
		len = strlen(out);
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Was the guest kernel built with CONFIG_SCHED_IDLEBATCH=y? */
static inline int config_has(const char *option)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "zcat /proc/config.gz | grep -qx '%s=y'", option);
	return system(cmd) == 0;
}

/* Does sched_setscheduler() accept SCHED_IDLEBATCH? */
static inline int kernel_has_idlebatch(void)
{
	struct sched_param sp = { 0 };
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(sched_setscheduler(0, SCHED_IDLEBATCH, &sp) ? 1 : 0);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Call @fn(tid, @arg) for every thread of process @pid, as listed in
 * /proc/PID/task.  Returns how many threads there were, or -1 if the
 * process is gone.
 */
static inline int for_each_thread(pid_t pid, void (*fn)(pid_t tid, void *arg), void *arg)
{
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		n++;
		fn(tid, arg);
	}
	closedir(dir);
	return n;
}

/*
 * For a fixture's setup: skip where the kernel was built without the
 * policy; where it was built with it, the policy must work.
 */
#define REQUIRE_IDLEBATCH()							\
	do {									\
		if (!config_has("CONFIG_SCHED_IDLEBATCH"))			\
			SKIP(return, "kernel built without CONFIG_SCHED_IDLEBATCH"); \
		ASSERT_TRUE(kernel_has_idlebatch());				\
	} while (0)

#endif
