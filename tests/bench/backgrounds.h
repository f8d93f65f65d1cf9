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

#include <stdatomic.h>

enum bg_id {
	BG_CPU,			/* one user-mode spinner per CPU */
	BG_KERNEL,		/* one worker per CPU: large reads, tmpfs writes,
				 * mprotect() storms, a file-tree walk */
	BG_BUILD,		/* make -jN compiling the kernel tree's dtc */
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
 * build's Makefile for the C files of @src (the kernel tree's dtc): 0, or
 * -1 with a message.
 */
static inline int backgrounds_setup(const char *src)
{
	char path[512];
	FILE *f;

	bg_shared = mmap(NULL, sizeof(*bg_shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (bg_shared == MAP_FAILED || work_tree_create() || work_exec_create()) {
		fprintf(stderr, "backgrounds: setup failed: %s\n", strerror(errno));
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
		"\t@mkdir -p $(dir $@)\n"
		"\t@gcc -O2 -I$(SRC) -I$(SRC)/libfdt -c -o $@ $<\n", src);
	return fclose(f);
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

static void *bg_thread(void *arg)
{
	int slot = (int)(long)arg;

	atomic_fetch_add(&bg_shared->started, 1);
	for (;;) {
		bg_spin_unit();
		bg_count(slot);
	}
	return NULL;
}

static inline void __attribute__((noreturn)) bg_run(enum bg_id id, int ncpu)
{
	static const enum work_kind kernel_kinds[] = {
		WORK_READ_BIG, WORK_TMPFS_RW, WORK_MPROTECT, WORK_TREE_WALK,
	};

	switch (id) {
	case BG_CPU:
	case BG_KERNEL:
		for (int i = 0; i < ncpu; i++) {
			if (fork() == 0) {
				enum work_kind kind = kernel_kinds[i % 4];
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
		for (int i = 0; i < bg_threads[id]; i++) {
			pthread_t t;

			if (pthread_create(&t, &attr, bg_thread, (void *)(long)i))
				_exit(122);
		}
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
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t deadline;
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
		peer_enter_or_exit(peer);
		bg_run(id, ncpu);
	}
	setpgid(pid, pid);
	deadline = now_ns() + 120000000000ull;
	while (bg_threads[id] && atomic_load(&bg_shared->started) < (unsigned long)bg_threads[id]) {
		if (now_ns() > deadline || waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "backgrounds: %s under %s did not start\n",
				bg_names[id], peer->name);
			kill(-pid, SIGKILL);
			return -1;
		}
		usleep(10000);
	}
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

/* CPU time, in ns, of every process in group @pgid, with what each has reaped */
static inline uint64_t bg_cputime_ns(pid_t pgid)
{
	uint64_t ticks = 0;
	struct dirent *d;
	DIR *proc = opendir("/proc");

	if (!proc)
		return 0;
	while ((d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);
		char buf[1024], *p;
		long long f[18];

		if (pid <= 0 || !(p = stat_fields(pid, buf, sizeof(buf))))
			continue;
		/* p points at field 3; fields 5 (pgrp) and 14..17 (times) */
		if (sscanf(p, "%*c %lld %lld %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld",
			   &f[4], &f[5], &f[14], &f[15], &f[16], &f[17]) != 6 || f[5] != pgid)
			continue;
		ticks += f[14] + f[15] + f[16] + f[17];
	}
	closedir(proc);
	return ticks * (1000000000ull / sysconf(_SC_CLK_TCK));
}

/* Busy (not idle, not iowait) time of all CPUs together, in ns */
static inline uint64_t cpus_busy_ns(void)
{
	unsigned long long v[10] = { 0 }, total = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
		fclose(f);
		return 0;
	}
	fclose(f);
	for (int i = 0; i < 8; i++)
		total += i == 3 || i == 4 ? 0 : v[i];
	return total * (1000000000ull / sysconf(_SC_CLK_TCK));
}

/* One measuring window over a running background */
struct window {
	pid_t bg;
	int ncpu;
	uint64_t t0, t1, real0;
	uint64_t count0, count1, bgcpu0, bgcpu1, busy0, busy1;
};

static inline uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void window_begin(struct window *w, pid_t bg)
{
	w->bg = bg;
	w->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	w->real0 = realtime_ns();
	w->count0 = bg_running == BG_BUILD ? 0 : bg_progress();
	w->bgcpu0 = bg_cputime_ns(bg);
	w->busy0 = cpus_busy_ns();
	w->t0 = now_ns();
}

static inline void window_end(struct window *w)
{
	w->t1 = now_ns();
	w->busy1 = cpus_busy_ns();
	w->bgcpu1 = bg_cputime_ns(w->bg);
	w->count1 = bg_running == BG_BUILD ? bg_build_objects_since(w->real0) : bg_progress();
}

#endif
