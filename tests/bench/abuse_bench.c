// SPDX-License-Identifier: GPL-2.0
/*
 * abuse_bench: N tasks of an unprivileged user (nobody) do their worst to
 * kernel resources a normal task also needs, and the normal task times
 * each of its own uses of them.  The abusers run under each peer in turn:
 * none (no abusers: the baseline), nice 19 (SCHED_OTHER) and
 * SCHED_IDLEBATCH, all in one run and interleaved, so the host's noise
 * falls on every peer alike.  The promise under test: idle-batch abusers
 * never stall the normal task more than the same abuse at nice 19 does,
 * because an idle-batch task is only parked in pure user mode and competes
 * as a normal task (with its nice value) in the kernel.
 *
 * The kinds of abuse, and what the normal probe times:
 *
 *  fork    abusers fork children that exit at once and reap them (the
 *          tasklist lock, pid allocation, exit); the probe forks and
 *          waits for a child
 *  mmap    abusers are threads of one process that map, fault in,
 *          mprotect and unmap memory (its mmap_lock); the probe is a
 *          normal thread of the same process that maps, touches and
 *          unmaps 64 KiB
 *  flock   abusers take and drop one file's flock(), holding it for a
 *          moment in user mode; the probe waits for the same lock
 *  fcntl   the same with a POSIX record lock (F_SETLKW) on the file
 *  pipe    abusers write and read 16 KiB at a time on one FIFO (its
 *          pipe mutex is held while the data is copied); the probe
 *          writes and reads one byte on it
 *  futex   abusers lock a process-shared mutex, hold it for a moment
 *          in user mode and unlock it (a futex wait and wake storm);
 *          the probe times its own acquisitions of that mutex
 *  pifutex the same with a priority-inheriting mutex (FUTEX_LOCK_PI)
 *
 * Runs as root in the guest; prints each cell, a Markdown table of the
 * medians over the rounds, and TAP: one point per kind (idle-batch's
 * stall against nice 19's), one for the kill latency, one that no abuser
 * is left.  Exit status 0, 1 if a point failed, 2 if it could not run.
 *
 * Usage: abuse_bench [--short] [-n ABUSERS] [-s SECONDS] [-r ROUNDS]
 *                    [-k KIND[,KIND...]]
 */
#include "peers.h"

#include <getopt.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/prctl.h>

#define NOBODY		65534
#define MAX_SAMPLES	(1 << 18)
#define MAX_ABUSERS	256
#define MAX_ROUNDS	50
#define PROBE_GAP_NS	500000		/* the probe's pause between operations */
#define WARMUP_US	200000		/* abusers at full tilt before probing */
#define HOLD_NS		50000		/* a lock held in user mode this long */
#define START_TIMEOUT_S	30		/* abusers must all be running by then */

/*
 * The verdict's tolerance.  A cell's figure is its worst probe operation,
 * and a verdict compares the median over the rounds of each round's worst:
 * one round that the host disturbed (QEMU's vCPU threads share two host
 * cores with a kernel build) then moves nothing.  The maximum, not p99 or
 * p99.9, because a stall is what the promise is about and a cell of a
 * second holds only about a thousand operations, so p99.9 is its maximum
 * anyway.  The additive part is one tick of the host (HZ=250): a vCPU
 * thread descheduled by the host once makes any one operation that much
 * longer, whatever the guest does; the factor covers the rest of the
 * rounds' spread, which is proportional to the figure.
 */
#define TOL_FACTOR	1.5
#define TOL_MS		4.0

/* Kills: the peers' medians are compared the same way, and none may exceed */
#define KILL_TOL_MS	50.0
#define KILL_BOUND_MS	2000.0

enum cell_peer { CP_NONE, CP_NICE19, CP_IDLEBATCH, CP_NR };

static const struct peer *const cell_peers[CP_NR] = {
	[CP_NONE] = &peers[PEER_NONE],
	[CP_NICE19] = &peers[PEER_NICE19],
	[CP_IDLEBATCH] = &peers[PEER_IDLEBATCH],
};

/* Memory shared with the abusers and the mmap kind's process */
struct shared {
	pthread_mutex_t mutex;		/* the futex kinds' lock */
	int ready;			/* abusers that entered their peer */
	int failed;			/* an abuser or the probe thread failed */
	int probing;			/* the mmap kind's probe has begun */
	int done;			/* the mmap kind's probe has finished */
	unsigned int n;			/* samples */
	uint64_t ns[MAX_SAMPLES];	/* the probe's operations, in ns */
};

static struct shared *sh;

/* The kinds' files, on the guest's own tmpfs (the host root is read-only) */
static const char lock_path[] = "/dev/shm/abuse-lock";
static const char fifo_path[] = "/dev/shm/abuse-fifo";
static int probe_fd = -1;

struct kind {
	const char *name;
	bool threads;			/* abusers are threads of the probe's process */
	int (*setup)(void);		/* 0, or -1 with errno */
	void (*abuse)(void);		/* in an abuser, as nobody; never returns */
	int64_t (*probe)(void);		/* one timed operation: ns, or -1 */
	void (*teardown)(void);
};

/* Spin in user mode for @ns: the moment a lock is held */
static void hold(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* --- fork/exit storm --------------------------------------------------- */

static void __attribute__((noreturn)) fork_abuse(void)
{
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

static int64_t fork_probe(void)
{
	uint64_t t0 = now_ns();
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return -1;
	return now_ns() - t0;
}

/* --- mmap_lock of a shared mm ------------------------------------------ */

#define ABUSE_MAP	(256 << 10)
#define PROBE_MAP	(64 << 10)

/* Map, fault in, mprotect and unmap: each takes the mm's mmap_lock */
static void __attribute__((noreturn)) mmap_abuse(void)
{
	for (;;) {
		char *p = mmap(NULL, ABUSE_MAP, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			continue;
		for (size_t off = 0; off < ABUSE_MAP; off += 4096)
			p[off] = 1;
		mprotect(p, ABUSE_MAP / 2, PROT_READ);
		mprotect(p, ABUSE_MAP / 2, PROT_READ | PROT_WRITE);
		munmap(p, ABUSE_MAP);
	}
}

static int64_t mmap_probe(void)
{
	uint64_t t0 = now_ns();
	char *p = mmap(NULL, PROBE_MAP, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	for (size_t off = 0; off < PROBE_MAP; off += 4096)
		p[off] = 1;
	if (munmap(p, PROBE_MAP))
		return -1;
	return now_ns() - t0;
}

/* --- a shared file's locks --------------------------------------------- */

/*
 * The file is made by root and opened by each abuser, as nobody, on its
 * own: flock() locks belong to an open file description, so abusers that
 * shared the probe's would never wait for one another.
 */
static int lock_setup(void)
{
	probe_fd = open(lock_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (probe_fd < 0 || fchmod(probe_fd, 0666))
		return -1;
	return 0;
}

static void lock_teardown(void)
{
	close(probe_fd);
	probe_fd = -1;
	unlink(lock_path);
}

static int open_lock_file_or_exit(void)
{
	int fd = open(lock_path, O_RDWR);

	if (fd < 0)
		_exit(106);
	return fd;
}

static void __attribute__((noreturn)) flock_abuse(void)
{
	int fd = open_lock_file_or_exit();

	for (;;) {
		if (flock(fd, LOCK_EX))
			_exit(107);
		hold(HOLD_NS);
		flock(fd, LOCK_UN);
	}
}

static int64_t flock_probe(void)
{
	uint64_t t0 = now_ns(), d;

	if (flock(probe_fd, LOCK_EX))
		return -1;
	d = now_ns() - t0;
	flock(probe_fd, LOCK_UN);
	return d;
}

/* A write lock, or its release, on the whole file; waits for it */
static int posix_lock(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };

	return fcntl(fd, F_SETLKW, &fl);
}

static void __attribute__((noreturn)) fcntl_abuse(void)
{
	int fd = open_lock_file_or_exit();

	for (;;) {
		if (posix_lock(fd, F_WRLCK))
			_exit(107);
		hold(HOLD_NS);
		posix_lock(fd, F_UNLCK);
	}
}

static int64_t fcntl_probe(void)
{
	uint64_t t0 = now_ns(), d;

	if (posix_lock(probe_fd, F_WRLCK))
		return -1;
	d = now_ns() - t0;
	posix_lock(probe_fd, F_UNLCK);
	return d;
}

/* --- pipe storm -------------------------------------------------------- */

#define PIPE_CHUNK	(16 << 10)

/*
 * Everyone opens the FIFO non-blocking, each on its own: no one ever
 * waits for data or room, which another side could withhold (that would
 * be a stall of the program's making, not the kernel's), so what the
 * probe waits for is the pipe's mutex and the CPU.  Abusers copy 16 KiB
 * under the mutex each time; the probe one byte each way.
 */
static int pipe_setup(void)
{
	unlink(fifo_path);
	if (mkfifo(fifo_path, 0666) || chmod(fifo_path, 0666))
		return -1;
	probe_fd = open(fifo_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	return probe_fd < 0 ? -1 : 0;
}

static void pipe_teardown(void)
{
	close(probe_fd);
	probe_fd = -1;
	unlink(fifo_path);
}

static void __attribute__((noreturn)) pipe_abuse(void)
{
	static char buf[PIPE_CHUNK];
	int fd = open(fifo_path, O_RDWR | O_NONBLOCK);

	if (fd < 0)
		_exit(106);
	for (;;) {
		if (write(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN)
			_exit(107);
		if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN)
			_exit(107);
	}
}

static int64_t pipe_probe(void)
{
	uint64_t t0 = now_ns();
	char c = 'p';

	if (write(probe_fd, &c, 1) < 0 && errno != EAGAIN)
		return -1;
	if (read(probe_fd, &c, 1) < 0 && errno != EAGAIN)
		return -1;
	return now_ns() - t0;
}

/* --- futex storm ------------------------------------------------------- */

/* The cell's process-shared mutex, in sh */
static pthread_mutex_t *cell_mutex;

/*
 * A fresh mutex for each cell (the last one died with a holder): a plain
 * one, whose waiters the kernel wakes in turn while user space hands the
 * lock over, or a priority-inheriting one, whose hand-over the kernel
 * does (and a normal waiter unparks an idle-batch owner).  Both, because
 * they differ: a plain mutex's woken waiter must get back to user space
 * and mark the lock contended before the next unlock wakes anyone, so a
 * woken waiter that waits for CPU time leaves every other waiter asleep
 * while running abusers pass the lock among themselves.
 */
static int mutex_setup(int protocol)
{
	pthread_mutexattr_t attr;
	int err;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setprotocol(&attr, protocol);
	err = pthread_mutex_init(&sh->mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	cell_mutex = &sh->mutex;
	errno = err;
	return err ? -1 : 0;
}

static int futex_setup(void)
{
	return mutex_setup(PTHREAD_PRIO_NONE);
}

static int pifutex_setup(void)
{
	return mutex_setup(PTHREAD_PRIO_INHERIT);
}

static void __attribute__((noreturn)) futex_abuse(void)
{
	for (;;) {
		pthread_mutex_lock(cell_mutex);
		hold(HOLD_NS);
		pthread_mutex_unlock(cell_mutex);
	}
}

static int64_t futex_probe(void)
{
	uint64_t t0 = now_ns(), d;

	if (pthread_mutex_lock(cell_mutex))
		return -1;
	d = now_ns() - t0;
	pthread_mutex_unlock(cell_mutex);
	return d;
}

static int no_setup(void)
{
	return 0;
}

static void no_teardown(void)
{
}

static const struct kind kinds[] = {
	{ "fork", false, no_setup, fork_abuse, fork_probe, no_teardown },
	{ "mmap", true, no_setup, mmap_abuse, mmap_probe, no_teardown },
	{ "flock", false, lock_setup, flock_abuse, flock_probe, lock_teardown },
	{ "fcntl", false, lock_setup, fcntl_abuse, fcntl_probe, lock_teardown },
	{ "pipe", false, pipe_setup, pipe_abuse, pipe_probe, pipe_teardown },
	{ "futex", false, futex_setup, futex_abuse, futex_probe, no_teardown },
	{ "pifutex", false, pifutex_setup, futex_abuse, futex_probe, no_teardown },
};

#define NR_KINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

/* --- abusers ----------------------------------------------------------- */

/*
 * Become nobody for good (no supplementary groups either), as an
 * unprivileged user's own processes are, or exit with 105.  A parent
 * death signal after the change, which clears it: abusers must not
 * outlive a bench that was killed.
 */
static void drop_to_nobody_or_exit(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		_exit(105);
	if (getuid() != NOBODY || geteuid() != NOBODY || getegid() != NOBODY)
		_exit(105);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(105);
}

/* Put the calling thread (only it) under @p: 0, or -1 */
static int enter_peer(const struct peer *p)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = p->policy,
		.sched_nice = p->nice,
	};

	return sched_setattr(0, &attr, 0);
}

static void __attribute__((noreturn)) abuser_process(const struct kind *k,
						     const struct peer *p, pid_t pgid)
{
	setpgid(0, pgid);
	drop_to_nobody_or_exit();
	if (enter_peer(p))
		_exit(103);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	k->abuse();
	_exit(111);		/* abuse() never returns */
}

struct thread_arg {
	const struct kind *kind;
	const struct peer *peer;
};

static void *abuser_thread(void *varg)
{
	struct thread_arg *arg = varg;

	if (enter_peer(arg->peer)) {
		__atomic_store_n(&sh->failed, 103, __ATOMIC_SEQ_CST);
		return NULL;
	}
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	arg->kind->abuse();
	return NULL;
}

/* Is the calling thread a SCHED_OTHER nice-0 one, as the probe must be? */
static bool normal_thread(void)
{
	struct sched_attr attr;

	return sched_getattr(0, &attr, sizeof(attr), 0) == 0 &&
	       attr.sched_policy == SCHED_OTHER && attr.sched_nice == 0;
}

static int probe_loop(const struct kind *k, double seconds);

/*
 * The mmap kind's process, as nobody: @n abuser threads, each of which
 * puts only itself under @p, and the main thread, which stays a normal
 * one and probes.  The privileges go before the threads exist, so the
 * whole process is nobody's.  It waits for the kill after probing.
 */
static void __attribute__((noreturn)) thread_host(const struct kind *k, const struct peer *p,
						  int n, double seconds)
{
	static struct thread_arg arg;
	pthread_t t;

	setpgid(0, 0);
	drop_to_nobody_or_exit();
	arg = (struct thread_arg){ k, p };
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, abuser_thread, &arg))
			_exit(108);
	}
	while (__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) < n) {
		if (__atomic_load_n(&sh->failed, __ATOMIC_SEQ_CST))
			_exit(103);
		usleep(1000);
	}
	if (!normal_thread())
		_exit(109);
	__atomic_store_n(&sh->probing, 1, __ATOMIC_SEQ_CST);
	usleep(WARMUP_US);
	if (probe_loop(k, seconds))
		_exit(110);
	__atomic_store_n(&sh->done, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
}

/* --- one cell ---------------------------------------------------------- */

struct result {
	unsigned int n;
	double p50, p99, max;		/* ms */
	double kill_ms;			/* SIGKILL to the last abuser reaped */
};

struct cell {
	const struct kind *kind;
	const struct peer *peer;
	int n;				/* abusers */
	pid_t pids[MAX_ABUSERS];	/* the abuser processes (mmap: one) */
	int nr_pids;
	pid_t pgid;			/* their process group */
};

/* Time the probe's operations for @seconds into sh->ns: 0, or -1 */
static int probe_loop(const struct kind *k, double seconds)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	struct timespec gap = { 0, PROBE_GAP_NS };

	sh->n = 0;
	while (now_ns() < end && sh->n < MAX_SAMPLES) {
		int64_t ns = k->probe();

		if (ns < 0)
			return -1;
		sh->ns[sh->n++] = ns;
		nanosleep(&gap, NULL);
	}
	return sh->n ? 0 : -1;
}

/* Fork an abuser process into the cell's group (the first one makes it) */
static pid_t start_abuser(struct cell *c)
{
	pid_t pid = fork();

	if (pid == 0)
		abuser_process(c->kind, c->peer, c->pgid);
	if (pid < 0)
		return -1;
	/* Both sides set the group, so it exists before the next fork */
	if (!c->pgid)
		c->pgid = pid;
	setpgid(pid, c->pgid);
	c->pids[c->nr_pids++] = pid;
	return pid;
}

/* Has an abuser died before the kill?  Its status in *@status */
static bool abuser_died(const struct cell *c, int *status)
{
	for (int i = 0; i < c->nr_pids; i++) {
		siginfo_t si = { 0 };

		if (waitid(P_PID, c->pids[i], &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid) {
			*status = si.si_status;
			return true;
		}
	}
	return false;
}

/* Wait until @want abusers run under their peer: 0, or -1 */
static int wait_ready(const struct cell *c, int want)
{
	uint64_t end = now_ns() + START_TIMEOUT_S * 1000000000ull;
	int status = 0;

	while (__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) < want) {
		if (abuser_died(c, &status)) {
			fprintf(stderr, "abuse_bench: %s/%s: an abuser exited with %d\n",
				c->kind->name, c->peer->name, status);
			return -1;
		}
		if (now_ns() > end) {
			fprintf(stderr, "abuse_bench: %s/%s: %d of %d abusers started in %d s\n",
				c->kind->name, c->peer->name, sh->ready, want, START_TIMEOUT_S);
			return -1;
		}
		usleep(5000);
	}
	return 0;
}

/* The real and effective uid of process @pid, from /proc/PID/status, or -1 */
static long proc_uid(pid_t pid)
{
	char path[64], line[256];
	long ruid = -1, euid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %ld %ld", &ruid, &euid) == 2)
			break;
	}
	fclose(f);
	return ruid == euid ? ruid : -1;
}

struct policy_count {
	const struct peer *peer;
	int in_peer, normal;
};

static void count_thread(pid_t tid, void *varg)
{
	struct policy_count *pc = varg;
	struct sched_attr attr;

	if (sched_getattr(tid, &attr, sizeof(attr), 0))
		return;
	if ((int)attr.sched_policy == pc->peer->policy && attr.sched_nice == pc->peer->nice)
		pc->in_peer++;
	else if (attr.sched_policy == SCHED_OTHER && attr.sched_nice == 0)
		pc->normal++;
}

/*
 * Check from outside what the abusers did to themselves: every abuser
 * process is nobody's, @c->n threads are under the peer, and in the mmap
 * kind's process one more, the probe, is a normal one.  0, or -1.
 */
static int verify_abusers(const struct cell *c)
{
	struct policy_count pc = { .peer = c->peer };

	for (int i = 0; i < c->nr_pids; i++) {
		if (proc_uid(c->pids[i]) != NOBODY) {
			fprintf(stderr, "abuse_bench: abuser %d is not nobody's\n", c->pids[i]);
			return -1;
		}
		for_each_thread(c->pids[i], count_thread, &pc);
	}
	if (c->peer->policy == SCHED_OTHER && c->peer->nice == 0)
		pc.normal = pc.in_peer;	/* none: no abuser to tell apart */
	if ((c->n && pc.in_peer != c->n) || (c->kind->threads && pc.normal != 1)) {
		fprintf(stderr, "abuse_bench: %s/%s: %d threads under the peer (want %d), %d normal\n",
			c->kind->name, c->peer->name, pc.in_peer, c->n, pc.normal);
		return -1;
	}
	return 0;
}

static int start_cell(struct cell *c, double seconds)
{
	sh->ready = sh->failed = sh->probing = sh->done = 0;
	sh->n = 0;
	if (c->kind->threads) {
		pid_t pid = fork();

		if (pid == 0)
			thread_host(c->kind, c->peer, c->n, seconds);
		if (pid < 0)
			return -1;
		c->pgid = pid;
		setpgid(pid, pid);
		c->pids[c->nr_pids++] = pid;
		return wait_ready(c, c->n);
	}
	for (int i = 0; i < c->n; i++) {
		if (start_abuser(c) < 0)
			return -1;
	}
	return wait_ready(c, c->n);
}

/*
 * Wait for the mmap kind's process to set @flag (its probe began, or
 * ended), for at most @seconds: 0, or -1 if it failed or took too long.
 */
static int wait_flag(const struct cell *c, int *flag, double seconds)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	int status = 0;

	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST)) {
		if (abuser_died(c, &status) || sh->failed || now_ns() > end) {
			fprintf(stderr, "abuse_bench: %s/%s: the probe's process failed (%d, %d)\n",
				c->kind->name, c->peer->name, status, sh->failed);
			return -1;
		}
		usleep(5000);
	}
	return 0;
}

/*
 * SIGKILL the whole group (the abusers and any child of theirs) and reap
 * the abusers: the milliseconds that took, or -1 if one had died before.
 */
static double kill_cell(struct cell *c)
{
	uint64_t t0 = now_ns();
	bool early = false;

	if (c->pgid)
		kill(-c->pgid, SIGKILL);
	for (int i = 0; i < c->nr_pids; i++) {
		int status = 0;

		if (waitpid(c->pids[i], &status, 0) != c->pids[i] ||
		    !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
			fprintf(stderr, "abuse_bench: abuser %d ended with status %#x, not by the kill\n",
				c->pids[i], status);
			early = true;
		}
	}
	return early ? -1 : (now_ns() - t0) / 1e6;
}

/*
 * Reap what the abusers' deaths handed to us (this process is a child
 * subreaper), then count the processes of nobody still in /proc: there
 * must be none.
 */
static int leftovers(void)
{
	struct dirent *d;
	int left = 0;
	DIR *dir;

	while (waitpid(-1, NULL, 0) > 0)
		;
	dir = opendir("/proc");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		pid_t pid = atoi(d->d_name);

		if (pid > 0 && proc_uid(pid) == NOBODY)
			left++;
	}
	closedir(dir);
	return left;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double percentile_ms(const uint64_t *sorted, unsigned int n, double q)
{
	unsigned int i = (unsigned int)(q * (n - 1) + 0.5);

	return sorted[i] / 1e6;
}

static void summarize(struct result *r)
{
	qsort(sh->ns, sh->n, sizeof(sh->ns[0]), cmp_u64);
	r->n = sh->n;
	r->p50 = percentile_ms(sh->ns, sh->n, 0.50);
	r->p99 = percentile_ms(sh->ns, sh->n, 0.99);
	r->max = sh->ns[sh->n - 1] / 1e6;
}

/*
 * One cell: @n abusers of @k under @p (none: no abusers) for @seconds of
 * probing.  Fills @r; returns 0, or -1 if it could not be measured, and
 * counts abusers left over in *@left.
 */
static int run_cell(const struct kind *k, const struct peer *p, int n, double seconds,
		    struct result *r, int *left)
{
	struct cell c = { .kind = k, .peer = p, .n = p == cell_peers[CP_NONE] ? 0 : n };
	int ret = -1, l;

	if (k->setup()) {
		fprintf(stderr, "abuse_bench: %s: setup: %s\n", k->name, strerror(errno));
		return -1;
	}
	if (start_cell(&c, seconds))
		goto out;
	if (k->threads) {
		if (wait_flag(&c, &sh->probing, START_TIMEOUT_S) || verify_abusers(&c) ||
		    wait_flag(&c, &sh->done, seconds + 120))
			goto out;
	} else {
		if (verify_abusers(&c))
			goto out;
		usleep(WARMUP_US);
		if (probe_loop(k, seconds)) {
			fprintf(stderr, "abuse_bench: %s: probe: %s\n", k->name, strerror(errno));
			goto out;
		}
	}
	summarize(r);
	ret = 0;
out:
	r->kill_ms = kill_cell(&c);
	if (r->kill_ms < 0)
		ret = -1;
	l = leftovers();
	if (l)
		fprintf(stderr, "abuse_bench: %s/%s: %d processes of nobody left\n",
			k->name, p->name, l);
	*left += l;
	k->teardown();
	return ret;
}

/* --- the run ----------------------------------------------------------- */

struct options {
	int abusers, rounds;
	double seconds;
	bool kind_on[NR_KINDS];
};

/* results[round][kind][peer] */
static struct result results[MAX_ROUNDS][NR_KINDS][CP_NR];

static double median(double *v, int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median over the rounds of one figure of a (kind, peer) */
#define ROUND_MEDIAN(o, k, p, field)						\
	({									\
		double _v[MAX_ROUNDS];						\
		for (int _r = 0; _r < (o)->rounds; _r++)			\
			_v[_r] = results[_r][k][p].field;			\
		median(_v, (o)->rounds);					\
	})

static double round_worst(const struct options *o, int k, int p)
{
	double worst = 0;

	for (int r = 0; r < o->rounds; r++)
		if (results[r][k][p].kill_ms > worst)
			worst = results[r][k][p].kill_ms;
	return worst;
}

static void print_table(const struct options *o)
{
	printf("\n| kind | abusers | samples | p50 ms | p99 ms | max ms | p99 / none | max / none | kill ms (median, worst) |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (int k = 0; k < NR_KINDS; k++) {
		double base_p99, base_max;

		if (!o->kind_on[k])
			continue;
		base_p99 = ROUND_MEDIAN(o, k, CP_NONE, p99);
		base_max = ROUND_MEDIAN(o, k, CP_NONE, max);
		for (int p = 0; p < CP_NR; p++) {
			double p99 = ROUND_MEDIAN(o, k, p, p99), max = ROUND_MEDIAN(o, k, p, max);

			printf("| %s | %s | %.0f | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f, %.1f |\n",
			       kinds[k].name, cell_peers[p]->name, ROUND_MEDIAN(o, k, p, n),
			       ROUND_MEDIAN(o, k, p, p50), p99, max, p99 / base_p99,
			       max / base_max, ROUND_MEDIAN(o, k, p, kill_ms), round_worst(o, k, p));
		}
	}
	printf("\nFigures are medians over %d rounds of each round's figure; "
	       "ratios are to the no-abuse baseline.\n\n", o->rounds);
}

/* "a/b/c": one figure of each round, for a verdict's message */
static const char *per_round(const struct options *o, int k, int p, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (int r = 0; r < o->rounds && len < size; r++)
		len += snprintf(buf + len, size - len, "%s%.1f", r ? "/" : "", results[r][k][p].max);
	return buf;
}

/* One TAP point per kind, one for the kills; the number that failed */
static int verdicts(const struct options *o, int *tap)
{
	double ib_kill = 0, n19_kill = 0, worst_kill = 0;
	char a[256], b[256];
	int failed = 0;

	for (int k = 0; k < NR_KINDS; k++) {
		double ib, n19, bound;
		bool ok;

		if (!o->kind_on[k])
			continue;
		ib = ROUND_MEDIAN(o, k, CP_IDLEBATCH, max);
		n19 = ROUND_MEDIAN(o, k, CP_NICE19, max);
		bound = n19 * TOL_FACTOR + TOL_MS;
		ok = ib <= bound;
		failed += !ok;
		printf("%s %d - %s: the normal task's worst stall next to %d idle-batch abusers, "
		       "%.2f ms (rounds %s), %s nice 19's %.2f ms (rounds %s) x%.1f + %.0f ms = %.2f ms\n",
		       ok ? "ok" : "not ok", ++*tap, kinds[k].name, o->abusers, ib,
		       per_round(o, k, CP_IDLEBATCH, a, sizeof(a)), ok ? "is within" : "EXCEEDS", n19,
		       per_round(o, k, CP_NICE19, b, sizeof(b)), TOL_FACTOR, TOL_MS, bound);
		ib_kill = ib_kill > ROUND_MEDIAN(o, k, CP_IDLEBATCH, kill_ms) ?
			  ib_kill : ROUND_MEDIAN(o, k, CP_IDLEBATCH, kill_ms);
		n19_kill = n19_kill > ROUND_MEDIAN(o, k, CP_NICE19, kill_ms) ?
			   n19_kill : ROUND_MEDIAN(o, k, CP_NICE19, kill_ms);
		for (int p = CP_NICE19; p < CP_NR; p++)
			if (round_worst(o, k, p) > worst_kill)
				worst_kill = round_worst(o, k, p);
	}
	{
		bool ok = ib_kill <= n19_kill * TOL_FACTOR + KILL_TOL_MS &&
			  worst_kill <= KILL_BOUND_MS;

		failed += !ok;
		printf("%s %d - kills: the slowest kind's median SIGKILL-to-reaped of idle-batch "
		       "abusers, %.1f ms, %s nice 19's %.1f ms x%.1f + %.0f ms, and the worst "
		       "kill of all, %.1f ms, %s %.0f ms\n",
		       ok ? "ok" : "not ok", ++*tap, ib_kill,
		       ib_kill <= n19_kill * TOL_FACTOR + KILL_TOL_MS ? "is within" : "EXCEEDS",
		       n19_kill, TOL_FACTOR, KILL_TOL_MS, worst_kill,
		       worst_kill <= KILL_BOUND_MS ? "within" : "EXCEEDS", KILL_BOUND_MS);
	}
	return failed;
}

static void __attribute__((noreturn)) usage(const char *why)
{
	if (why)
		fprintf(stderr, "abuse_bench: %s\n", why);
	fprintf(stderr,
		"usage: abuse_bench [--short] [-n ABUSERS] [-s SECONDS] [-r ROUNDS] [-k KIND,...]\n"
		"  --short      0.75 s cells, 5 rounds (make check)\n"
		"  -n ABUSERS   abusers per cell (default 4 per CPU, at most %d)\n"
		"  -s SECONDS   probing time per cell (default 3)\n"
		"  -r ROUNDS    rounds of every cell, interleaved (default 5, at most %d)\n"
		"  -k KINDS     some of fork,mmap,flock,fcntl,pipe,futex,pifutex (default all)\n",
		MAX_ABUSERS, MAX_ROUNDS);
	exit(2);
}

static void parse_kinds(struct options *o, char *list)
{
	memset(o->kind_on, 0, sizeof(o->kind_on));
	for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
		int k;

		for (k = 0; k < NR_KINDS && strcmp(s, kinds[k].name); k++)
			;
		if (k == NR_KINDS)
			usage("unknown kind");
		o->kind_on[k] = true;
	}
}

static void parse_options(struct options *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "short", no_argument, NULL, 'S' },
		{ "abusers", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	o->abusers = 4 * (int)sysconf(_SC_NPROCESSORS_ONLN);
	o->seconds = 3;
	o->rounds = 5;
	for (int k = 0; k < NR_KINDS; k++)
		o->kind_on[k] = true;
	while ((c = getopt_long(argc, argv, "n:s:r:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->seconds = 0.75;
			o->rounds = 5;
			break;
		case 'n':
			o->abusers = strtol(optarg, &end, 10);
			if (*end || o->abusers < 1 || o->abusers > MAX_ABUSERS)
				usage("bad abuser count");
			break;
		case 's':
			o->seconds = strtod(optarg, &end);
			if (*end || o->seconds <= 0 || o->seconds > 3600)
				usage("bad seconds");
			break;
		case 'r':
			o->rounds = strtol(optarg, &end, 10);
			if (*end || o->rounds < 1 || o->rounds > MAX_ROUNDS)
				usage("bad rounds");
			break;
		case 'k':
			parse_kinds(o, optarg);
			break;
		default:
			usage(NULL);
		}
	}
	if (optind != argc)
		usage("unexpected argument");
	if (o->abusers > MAX_ABUSERS)
		o->abusers = MAX_ABUSERS;
}

static int setup_run(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "abuse_bench: run it as root (it starts the abusers as nobody)\n");
		return -1;
	}
	if (!kernel_has_idlebatch()) {
		fprintf(stderr, "abuse_bench: this kernel has no SCHED_IDLEBATCH\n");
		return -1;
	}
	/* Orphans of the fork storm come back to us, to be reaped and counted */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		perror("abuse_bench: PR_SET_CHILD_SUBREAPER");
		return -1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("abuse_bench: mmap");
		return -1;
	}
	if (leftovers()) {
		fprintf(stderr, "abuse_bench: processes of nobody are running already\n");
		return -1;
	}
	return 0;
}

/*
 * Every (kind, peer) cell, round after round; the peers' order turns
 * from round to round, so that none always follows another's kill.
 */
static int run_all(const struct options *o, int *left)
{
	for (int r = 0; r < o->rounds; r++) {
		for (int k = 0; k < NR_KINDS; k++) {
			if (!o->kind_on[k])
				continue;
			for (int i = 0; i < CP_NR; i++) {
				int p = (i + r) % CP_NR;
				struct result *res = &results[r][k][p];

				if (run_cell(&kinds[k], cell_peers[p], o->abusers, o->seconds, res, left))
					return -1;
				printf("round %d %-5s %-15s n %5u  p50 %7.3f  p99 %7.3f  max %8.3f ms  kill %7.1f ms\n",
				       r + 1, kinds[k].name, cell_peers[p]->name, res->n, res->p50,
				       res->p99, res->max, res->kill_ms);
				fflush(stdout);
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int tap = 0, failed, left = 0;

	parse_options(&o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup_run())
		return 2;
	printf("abuse_bench: %d abusers (uid %d) per cell, %ld CPUs, %d rounds of %.1f s cells\n",
	       o.abusers, NOBODY, sysconf(_SC_NPROCESSORS_ONLN), o.rounds, o.seconds);
	if (run_all(&o, &left)) {
		printf("not ok 1 - abuse_bench could not measure every cell (see above)\n");
		return 1;
	}
	print_table(&o);
	failed = verdicts(&o, &tap);
	printf("%s %d - every abuser was killed and reaped: %d processes of nobody left\n",
	       left ? "not ok" : "ok", ++tap, left);
	return failed || left ? 1 : 0;
}
