/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The background jobs of foreground_bench, each a process group started
 * under a peer's way of running low-priority work, and the accounting of
 * a measuring window: the background's progress (units of its work done),
 * its CPU time, and the CPU time everything else used.
 */
#ifndef TESTS_BENCH_BACKGROUNDS_H
#define TESTS_BENCH_BACKGROUNDS_H

#include "peers.h"
#include "../kernel/workloads.h"

#include <limits.h>
#include <stdatomic.h>

enum bg_id {
	BG_CPU,			/* one user-mode spinner per CPU */
	BG_KERNEL,		/* one worker per CPU: large reads, tmpfs writes,
				 * mprotect() storms, a file-tree walk */
	BG_BUILD,		/* make -jN compiling the kernel tree's dtc */
	BG_LONG_READ,		/* one worker per CPU: one 64 MiB read() after another */
	BG_FAULTS,		/* one worker per CPU: page-fault storms */
	BG_FORK_EXEC,		/* one worker per CPU: fork, exec, exit */
	BG_IO_URING,		/* one worker per CPU: 64 MiB reads by io_uring's io-wq */
	BG_BACKUP,		/* tar | xz of a source tree, over and over */
	BG_THREADS_10,		/* N spinning threads in one process */
	BG_THREADS_100,
	BG_THREADS_1000,
	BG_THREADS_10000,
	BG_NR,
};

static const char *const bg_names[BG_NR] = {
	[BG_CPU]	   = "CPU spinners",
	[BG_KERNEL]	   = "kernel-heavy",
	[BG_BUILD]	   = "make -jN",
	[BG_LONG_READ]	   = "64 MiB read()s",
	[BG_FAULTS]	   = "page-fault storm",
	[BG_FORK_EXEC]	   = "fork/exec/exit",
	[BG_IO_URING]	   = "io_uring via io-wq",
	[BG_BACKUP]	   = "tar | xz",
	[BG_THREADS_10]	   = "10 threads",
	[BG_THREADS_100]   = "100 threads",
	[BG_THREADS_1000]  = "1000 threads",
	[BG_THREADS_10000] = "10000 threads",
};

static const int bg_threads[BG_NR] = {
	[BG_THREADS_10] = 10, [BG_THREADS_100] = 100,
	[BG_THREADS_1000] = 1000, [BG_THREADS_10000] = 10000,
};

/* The build's scratch folder (tmpfs in the guest) and its objects */
#define BG_BUILD_DIR "/dev/shm/bench-build"
/* A link to the build's sources, which the backup archives */
#define BG_BUILD_SRC_LINK BG_BUILD_DIR "/src"

#define BG_SLOTS 64

/* Progress counters the background's tasks share with the benchmark */
struct bg_shared {
	struct {
		atomic_ulong n;
		char pad[64 - sizeof(atomic_ulong)];
	} slot[BG_SLOTS];
	atomic_ulong started;	/* threads up and running */
};

static struct bg_shared *bg_shared;
static enum bg_id bg_running;

static inline void bg_count(int slot)
{
	atomic_fetch_add_explicit(&bg_shared->slot[slot % BG_SLOTS].n, 1, memory_order_relaxed);
}

static inline unsigned long bg_progress(void)
{
	unsigned long sum = 0;

	for (int i = 0; i < BG_SLOTS; i++)
		sum += atomic_load_explicit(&bg_shared->slot[i].n, memory_order_relaxed);
	return sum;
}

/* A unit of CPU work: 100,000 loop iterations */
static inline void bg_spin_unit(void)
{
	for (volatile int i = 0; i < 100000; i++)
		;
}

/*
 * Shared counters, the file tree and the busybox of workloads.h, and the
 * build's Makefile for the C files of @src (the kernel tree's dtc), built
 * once if @build so that the compiler and the sources are in the page
 * cache: 0, or -1 with a message.
 */
static inline int backgrounds_setup(const char *src_arg, bool build)
{
	char path[PATH_MAX + 32], src[PATH_MAX];
	FILE *f;

	bg_shared = mmap(NULL, sizeof(*bg_shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (bg_shared == MAP_FAILED || work_tree_create() || work_exec_create()) {
		fprintf(stderr, "backgrounds: setup failed: %s\n", strerror(errno));
		return -1;
	}
	/* Absolute: the build runs in its own folder, and the backup's link points there */
	if (!realpath(src_arg, src)) {
		fprintf(stderr, "backgrounds: %s: %s\n", src_arg, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/dtc.c", src);
	if (access(path, R_OK)) {
		fprintf(stderr, "backgrounds: no %s (--build-src wants the kernel tree's "
			"scripts/dtc)\n", path);
		return -1;
	}
	if (mkdir(BG_BUILD_DIR, 0755) && errno != EEXIST)
		return -1;
	unlink(BG_BUILD_SRC_LINK);
	if (symlink(src, BG_BUILD_SRC_LINK))
		return -1;
	f = fopen(BG_BUILD_DIR "/Makefile", "w");
	if (!f)
		return -1;
	/* dtc and libfdt without the generated parser, fdtget/fdtput, yaml */
	fprintf(f, "SRC := %s\n"
		"SRCS := $(filter-out %%/fdtget.c %%/fdtput.c %%/yamltree.c,"
		"$(wildcard $(SRC)/*.c $(SRC)/libfdt/*.c))\n"
		"OBJS := $(patsubst $(SRC)/%%.c,%%.o,$(SRCS))\n"
		"all: $(OBJS)\n"
		"%%.o: $(SRC)/%%.c\n"
		"\tgcc -O2 -I$(SRC) -I$(SRC)/libfdt -c -o $@ $<\n"
		"libfdt/%%.o: $(SRC)/libfdt/%%.c\n"
		"\t@mkdir -p libfdt\n"
		"\tgcc -O2 -I$(SRC) -I$(SRC)/libfdt -c -o $@ $<\n", src);
	if (fclose(f))
		return -1;
	if (build) {
		char cmd[256];
		uint64_t t0 = now_ns();

		snprintf(cmd, sizeof(cmd), "make -s -B -j%ld -C " BG_BUILD_DIR,
			 sysconf(_SC_NPROCESSORS_ONLN));
		if (system(cmd)) {
			fprintf(stderr, "backgrounds: the build failed: %s\n", cmd);
			return -1;
		}
		fprintf(stderr, "backgrounds: one build alone took %.1f s\n", (now_ns() - t0) / 1e9);
	}
	return 0;
}

/* Objects in the build folder (and libfdt/) newer than @since_ns (CLOCK_REALTIME) */
static inline unsigned long bg_build_objects_since(uint64_t since_ns)
{
	static const char *const dirs[] = { BG_BUILD_DIR, BG_BUILD_DIR "/libfdt" };
	unsigned long n = 0;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		struct stat st;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);

			if (len < 3 || strcmp(e->d_name + len - 2, ".o") ||
			    fstatat(dirfd(d), e->d_name, &st, 0))
				continue;
			if ((uint64_t)st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec > since_ns)
				n++;
		}
		closedir(d);
	}
	return n;
}

/* Held by the creator while it creates the threads, which wait for it */
static pthread_rwlock_t bg_threads_go = PTHREAD_RWLOCK_INITIALIZER;
static const struct peer *bg_threads_peer;

static void *bg_thread(void *arg)
{
	int slot = (int)(long)arg;

	pthread_rwlock_rdlock(&bg_threads_go);
	pthread_rwlock_unlock(&bg_threads_go);
	/*
	 * Counted before it enters the policy: an idle-batch thread parked
	 * on its way back from sched_setattr() may wait a round of 1.5 s
	 * timeslices, one per parked thread, before it runs again.  A
	 * cgroup peer's threads are in the group from the start and were
	 * counted by their creator.
	 */
	if (!bg_threads_peer->cgroup) {
		atomic_fetch_add(&bg_shared->started, 1);
		if (setpriority(PRIO_PROCESS, gettid(), bg_threads_peer->nice) ||
		    set_policy(0, bg_threads_peer->policy))
			_exit(103);
	}
	for (;;) {
		bg_spin_unit();
		bg_count(slot);
	}
	return NULL;
}

/*
 * Run background @id with @ncpu workers where it has workers.  The
 * caller has entered @peer, except for the threads, which enter it each
 * for itself once all are created: created by a thread already at low
 * priority, 10,000 spinning threads take minutes to start.
 */
static inline void __attribute__((noreturn)) bg_run(enum bg_id id, int ncpu,
						    const struct peer *peer)
{
	static const enum work_kind kernel_kinds[] = {
		WORK_READ_BIG, WORK_TMPFS_RW, WORK_MPROTECT, WORK_TREE_WALK,
	};

	switch (id) {
	case BG_CPU:
	case BG_KERNEL:
	case BG_LONG_READ:
	case BG_FAULTS:
	case BG_FORK_EXEC:
	case BG_IO_URING:
		for (int i = 0; i < ncpu; i++) {
			if (fork() == 0) {
				enum work_kind kind = id == BG_LONG_READ ? WORK_READ_HUGE :
						      id == BG_FAULTS ? WORK_FAULTS :
						      id == BG_FORK_EXEC ? WORK_FORK_EXEC :
						      id == BG_IO_URING ? WORK_IO_URING :
						      kernel_kinds[i % 4];
				struct work_ctx ctx;

				if (id == BG_CPU)
					for (;;) {
						bg_spin_unit();
						bg_count(i);
					}
				work_prepare(kind, &ctx);
				for (;;) {
					work_step(kind, &ctx);
					bg_count(i);
				}
			}
		}
		for (;;)
			pause();
	case BG_BACKUP:
		/* A backup pipeline: the build's sources archived and compressed */
		for (int i = 0;; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				execl("/bin/sh", "sh", "-c", "tar cf - -C " BG_BUILD_SRC_LINK
				      " . | xz -1 -T1 > /dev/null", (char *)NULL);
				_exit(123);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				_exit(124);
			bg_count(i);
		}
	case BG_BUILD:
		for (;;) {
			char jobs[16];
			pid_t pid = fork();

			snprintf(jobs, sizeof(jobs), "-j%d", ncpu);
			if (pid == 0) {
				execlp("make", "make", "-s", "-B", jobs, "-C", BG_BUILD_DIR,
				       (char *)NULL);
				_exit(120);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				_exit(121);
		}
	default: {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10);
		bg_threads_peer = peer;
		pthread_rwlock_wrlock(&bg_threads_go);
		for (int i = 0; i < bg_threads[id]; i++) {
			pthread_t t;

			if (pthread_create(&t, &attr, bg_thread, (void *)(long)i))
				_exit(122);
			if (peer->cgroup)
				atomic_fetch_add(&bg_shared->started, 1);
		}
		pthread_rwlock_unlock(&bg_threads_go);
		enter_policy_or_exit(peer->policy, peer->nice, -1);
		for (;;)
			pause();
	}
	}
}

/*
 * Start background @id run as @peer says, as a process group of its own;
 * returns its leader once it is up (every thread started), or -1.
 */
static inline pid_t bg_start(enum bg_id id, const struct peer *peer)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), polls = 0;
	uint64_t t0;
	pid_t pid;

	for (int i = 0; i < BG_SLOTS; i++)
		atomic_store(&bg_shared->slot[i].n, 0);
	atomic_store(&bg_shared->started, 0);
	bg_running = id;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (bg_threads[id])
			peer_join_cgroup_or_exit(peer);
		else
			peer_enter_or_exit(peer);
		bg_run(id, ncpu, peer);
	}
	setpgid(pid, pid);
	t0 = now_ns();
	while (bg_threads[id] && atomic_load(&bg_shared->started) < (unsigned long)bg_threads[id]) {
		if (now_ns() - t0 > 600000000000ull || waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "backgrounds: %s under %s did not start: %lu running\n",
				bg_names[id], peer->name, atomic_load(&bg_shared->started));
			kill(-pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -1;
		}
		usleep(10000);
		if (++polls % 1000 == 0)
			fprintf(stderr, "backgrounds: %s under %s: %lu started after %.0f s\n",
				bg_names[id], peer->name, atomic_load(&bg_shared->started),
				(now_ns() - t0) / 1e9);
	}
	if (bg_threads[id] >= 1000)
		fprintf(stderr, "backgrounds: %s under %s started in %.1f s\n", bg_names[id],
			peer->name, (now_ns() - t0) / 1e9);
	/* Let it reach its steady state (and idle-batch tasks their first park) */
	usleep(500000);
	if (waitpid(pid, NULL, WNOHANG) == pid) {
		fprintf(stderr, "backgrounds: %s under %s exited\n", bg_names[id], peer->name);
		return -1;
	}
	return pid;
}

static inline void bg_stop(pid_t pid)
{
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* The build's make and compilers, reparented, die with the group */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void add_runtime(pid_t tid, void *sum)
{
	*(uint64_t *)sum += cputime_ns(tid);
}

/* The runtime, in ns, of every thread of process @pid */
static inline uint64_t process_runtime_ns(pid_t pid)
{
	uint64_t sum = 0;

	for_each_thread(pid, add_runtime, &sum);
	return sum;
}

/*
 * CPU time, in ns, of every thread of every process in group @pgid (the
 * scheduler's runtime), with what each process has reaped (in clock ticks:
 * the build's compilers, counted once make has waited for them).
 */
static inline uint64_t bg_cputime_ns(pid_t pgid)
{
	uint64_t ns = 0, ticks = 0;
	struct dirent *d;
	DIR *proc = opendir("/proc");

	if (!proc)
		return 0;
	while ((d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);
		long long pgrp, cutime, cstime;
		char buf[1024], *p;

		if (pid <= 0 || !(p = stat_fields(pid, buf, sizeof(buf))))
			continue;
		/* p points at field 3; fields 5 (pgrp), 16 and 17 (reaped times) */
		if (sscanf(p, "%*c %*d %lld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %lld %lld",
			   &pgrp, &cutime, &cstime) != 3 || pgrp != pgid)
			continue;
		ns += process_runtime_ns(pid);
		ticks += cutime + cstime;
	}
	closedir(proc);
	return ns + ticks * (1000000000ull / sysconf(_SC_CLK_TCK));
}

/*
 * Time all CPUs together spent idle, in ns: field 23 of /proc/batchstat,
 * from the same clock as the runtimes above (the tick-sampled idle time
 * of /proc/stat loses ticks when the host starves a virtual CPU).
 */
static inline uint64_t cpus_idle_ns(void)
{
	unsigned long long sum = 0;
	char line[1024];
	FILE *f = fopen("/proc/batchstat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[23];
		char *p = line;
		int n = 0;

		if (strncmp(line, "cpu", 3))
			continue;
		/* Skip "cpuN", then read fields 2 to 23 */
		p = strchr(p, ' ');
		while (p && n < 22) {
			char *end;

			v[n] = strtoull(p, &end, 10);
			if (end == p)
				break;
			n++;
			p = end;
		}
		if (n == 22)
			sum += v[21];
	}
	fclose(f);
	return sum;
}

/* One measuring window over a running background */
struct window {
	pid_t bg;
	uint64_t t0, t1, real0;
	uint64_t count0, count1, bgcpu0, bgcpu1, idle0, idle1;
};

static inline uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The progress counters and the clock are read next to each other, and
 * the slow reads (a /proc file per thread: seconds for 10,000 threads
 * under TCG) outside them; the CPU time and the idle time, read next to
 * each other, then span a little more than the window, which their ratio
 * does not mind.
 */
static inline void window_begin(struct window *w, pid_t bg)
{
	w->bg = bg;
	w->bgcpu0 = bg_cputime_ns(bg);
	w->idle0 = cpus_idle_ns();
	w->real0 = realtime_ns();
	w->count0 = bg_running == BG_BUILD ? 0 : bg_progress();
	w->t0 = now_ns();
}

static inline void window_end(struct window *w)
{
	w->t1 = now_ns();
	w->count1 = bg_running == BG_BUILD ? bg_build_objects_since(w->real0) : bg_progress();
	w->idle1 = cpus_idle_ns();
	w->bgcpu1 = bg_cputime_ns(w->bg);
}

#endif
