/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long a normal task waits for a kernel resource that a task of a
 * given policy holds now and then, beside a nice-0 hog that leaves it 5%
 * of its CPU: one kind of resource at a time, those the policy's promise
 * is about.  The holder works in a loop on CPU @cpu and is preempted by
 * the hog, inside the kernel now and then, with the resource held; the
 * waiter, the caller on CPU 0, takes the resource every millisecond and
 * keeps its worst wait.  Used by the in-guest tests (idlebatch_locks) and
 * by make bench (policy_bench).
 *
 * Kinds and what holds the resource (the waiter's side in brackets):
 *   i_rwsem      write()s of 256 KiB to a tmpfs file [a 1-byte write]
 *   pipe         write()s of 1 MiB to a pipe [a non-blocking read]
 *   mmap-write   mprotect() of 64 MiB, which takes mmap_lock for writing
 *                [madvise() on a page: mmap_lock for reading]
 *   mmap-read    page faults over 64 MiB and madvise(MADV_DONTNEED) of
 *                it, mmap_lock and the VMA's lock for reading
 *                [mprotect(), for writing]
 *   folio        write()s of 64 KiB to a tmpfs file, which lock each
 *                page's folio while they copy [a fault on the first page,
 *                mapped shared]
 *   pi-futex     a PI futex held for 50 us at a time in user mode
 *                [pthread_mutex_lock()]
 *   journal      appends to a file on ext4 ($VM_DISK), each in a jbd2
 *                handle, truncated now and then [a 1-byte write and
 *                fsync() of another file: the commit waits for every
 *                running handle]
 * mmap-write and mmap-read need the waiter's mm: the holder is a process
 * that shares it (clone(CLONE_VM)), so it must not call into malloc.
 */
#ifndef TESTS_LOCK_WAITS_H
#define TESTS_LOCK_WAITS_H

#include "idlebatch.h"

#include <sched.h>
#include <sys/ioctl.h>

enum lock_kind {
	LOCK_I_RWSEM,
	LOCK_PIPE,
	LOCK_MMAP_WRITE,
	LOCK_MMAP_READ,
	LOCK_FOLIO,
	LOCK_PI_FUTEX,
	LOCK_JOURNAL,
	LOCK_KINDS
};

static const char *const lock_kind_names[LOCK_KINDS] = {
	"i_rwsem", "pipe", "mmap-write", "mmap-read", "folio", "pi-futex", "journal",
};

#define LOCK_HOLDER_REGION	(64ul << 20)
#define LOCK_HOLDER_WRITE	(256ul << 10)

/* What the holder and the waiter share; set up before the holder starts */
struct lock_ctx {
	enum lock_kind kind;
	int fd, fd2, pipe[2];
	char *region, *page;
	struct pi_shared *pi;
	char path[300], path2[300];
	const char *cgroup;
	int cpu, policy, nice;
	char *stack;
};

/* Where the journal kind's files go: the virtio disk's ext4, or NULL */
static inline const char *lock_journal_dir(void)
{
	const char *dir = getenv("VM_DISK");

	return dir && *dir ? dir : NULL;
}

/* A kind that cannot run here says why, else NULL */
static inline const char *lock_kind_unavailable(enum lock_kind kind)
{
	if (kind == LOCK_JOURNAL && !lock_journal_dir())
		return "no ext4 disk: $VM_DISK is unset (tests/vm/run --disk)";
	return NULL;
}

static inline void lock_spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/*
 * Enter the holder's cgroup, CPU, nice value and policy with system calls
 * only: a CLONE_VM holder shares the waiter's malloc state.
 */
static inline int lock_holder_enter(const struct lock_ctx *c)
{
	cpu_set_t set;

	if (c->cgroup) {
		char procs[320];
		int fd;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", c->cgroup);
		fd = open(procs, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			return -1;
		close(fd);
	}
	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    setpriority(PRIO_PROCESS, 0, c->nice))
		return -1;
	return set_policy(0, c->policy);
}

static inline void __attribute__((noreturn)) lock_hold(struct lock_ctx *c)
{
	static char buf[1 << 20];
	unsigned long n = 0;

	if (lock_holder_enter(c))
		_exit(104);
	for (;; n++) {
		switch (c->kind) {
		case LOCK_I_RWSEM:
			if (pwrite(c->fd, buf, LOCK_HOLDER_WRITE, 0) < 0)
				_exit(1);
			break;
		case LOCK_PIPE:
			if (write(c->pipe[1], buf, sizeof(buf)) < 0)
				_exit(1);
			break;
		case LOCK_MMAP_WRITE:
			if (mprotect(c->region, LOCK_HOLDER_REGION, (n & 1) ? PROT_READ | PROT_WRITE
								     : PROT_READ))
				_exit(1);
			break;
		case LOCK_MMAP_READ:
			for (size_t off = 0; off < LOCK_HOLDER_REGION; off += 4096)
				c->region[off] = 1;
			if (madvise(c->region, LOCK_HOLDER_REGION, MADV_DONTNEED))
				_exit(1);
			break;
		case LOCK_FOLIO:
			if (pwrite(c->fd, buf, 64 << 10, 0) < 0)
				_exit(1);
			break;
		case LOCK_PI_FUTEX:
			pthread_mutex_lock(&c->pi->lock);
			lock_spin_ns(50000);
			pthread_mutex_unlock(&c->pi->lock);
			lock_spin_ns(50000);
			break;
		case LOCK_JOURNAL:
			if (write(c->fd, buf, 64 << 10) < 0)
				_exit(1);
			if (n % 64 == 63 && (ftruncate(c->fd, 0) || lseek(c->fd, 0, SEEK_SET)))
				_exit(1);
			break;
		default:
			_exit(1);
		}
	}
}

static inline int lock_hold_clone_fn(void *arg)
{
	lock_hold(arg);
}

/* The waiter takes the resource once: 0, or -1 on an error */
static inline int lock_wait_once(struct lock_ctx *c, unsigned long n)
{
	static char drain[1 << 20];
	pthread_mutex_t *m;
	int avail;

	switch (c->kind) {
	case LOCK_I_RWSEM:
		return pwrite(c->fd, "x", 1, LOCK_HOLDER_WRITE + n) == 1 ? 0 : -1;
	case LOCK_PIPE:
		/* Only the mutex, not the writer's progress: full or empty is fine */
		if (read(c->pipe[0], drain, sizeof(drain)) < 0 && errno != EAGAIN)
			return -1;
		return ioctl(c->pipe[0], FIONREAD, &avail);
	case LOCK_MMAP_WRITE:
		return madvise(c->page, 4096, MADV_DONTNEED);
	case LOCK_MMAP_READ:
		return mprotect(c->page, 4096, PROT_READ | PROT_WRITE);
	case LOCK_FOLIO:
		if (madvise(c->page, 4096, MADV_DONTNEED))
			return -1;
		(void)*(volatile char *)c->page;
		return 0;
	case LOCK_PI_FUTEX:
		m = &c->pi->lock;
		if (pthread_mutex_lock(m))
			return -1;
		return pthread_mutex_unlock(m);
	case LOCK_JOURNAL:
		if (pwrite(c->fd2, "x", 1, n % 4096) != 1)
			return -1;
		return fsync(c->fd2);
	default:
		return -1;
	}
}

static inline int lock_setup(struct lock_ctx *c)
{
	const char *dir;

	c->fd = c->fd2 = c->pipe[0] = c->pipe[1] = -1;
	c->region = c->page = c->stack = NULL;
	c->pi = NULL;
	switch (c->kind) {
	case LOCK_I_RWSEM:
	case LOCK_FOLIO:
		snprintf(c->path, sizeof(c->path), "/dev/shm/idlebatch-lock-%d", getpid());
		c->fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (c->fd < 0 || ftruncate(c->fd, 1 << 20))
			return -1;
		if (c->kind == LOCK_FOLIO) {
			c->page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, c->fd, 0);
			if (c->page == MAP_FAILED)
				return c->page = NULL, -1;
		}
		return 0;
	case LOCK_PIPE:
		if (pipe2(c->pipe, O_NONBLOCK) || fcntl(c->pipe[1], F_SETPIPE_SZ, 1 << 20) < 0)
			return -1;
		/* The holder blocks on a full pipe: it waits for the waiter there. */
		return fcntl(c->pipe[1], F_SETFL, 0);
	case LOCK_MMAP_WRITE:
	case LOCK_MMAP_READ:
		c->region = mmap(NULL, LOCK_HOLDER_REGION, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		c->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		c->stack = mmap(NULL, 256 << 10, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (c->region == MAP_FAILED || c->page == MAP_FAILED || c->stack == MAP_FAILED)
			return -1;
		return 0;
	case LOCK_PI_FUTEX:
		c->pi = pi_shared_create();
		return c->pi ? 0 : -1;
	case LOCK_JOURNAL:
		dir = lock_journal_dir();
		if (!dir)
			return -1;
		snprintf(c->path, sizeof(c->path), "%s/idlebatch-journal-a", dir);
		snprintf(c->path2, sizeof(c->path2), "%s/idlebatch-journal-b", dir);
		c->fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		c->fd2 = open(c->path2, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		return c->fd < 0 || c->fd2 < 0 ? -1 : 0;
	default:
		return -1;
	}
}

static inline void lock_teardown(struct lock_ctx *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->fd2 >= 0)
		close(c->fd2);
	if (c->pipe[0] >= 0)
		close(c->pipe[0]);
	if (c->pipe[1] >= 0)
		close(c->pipe[1]);
	if (c->region && c->region != MAP_FAILED)
		munmap(c->region, LOCK_HOLDER_REGION);
	if (c->page && c->page != MAP_FAILED)
		munmap(c->page, 4096);
	if (c->stack && c->stack != MAP_FAILED)
		munmap(c->stack, 256 << 10);
	if (c->pi)
		munmap(c->pi, sizeof(*c->pi));
	if (c->kind == LOCK_I_RWSEM || c->kind == LOCK_FOLIO || c->kind == LOCK_JOURNAL)
		unlink(c->path);
	if (c->kind == LOCK_JOURNAL)
		unlink(c->path2);
}

/*
 * The worst wait in ns of a normal task on CPU 0 for a resource of @kind
 * that a task of @policy and @nice (in @cgroup, if not NULL) holds now and
 * then on @cpu beside a duty-cycled nice-0 hog, over @seconds; the
 * holder's CPU time in *@holder_ns.  UINT64_MAX if it could not be set up.
 */
static inline uint64_t lock_worst_wait(enum lock_kind kind, int cpu, int policy, int nice,
				       const char *cgroup, double seconds, uint64_t *holder_ns)
{
	struct lock_ctx c = { .kind = kind, .cpu = cpu, .policy = policy, .nice = nice,
			      .cgroup = cgroup };
	uint64_t worst = 0, t_end;
	pid_t holder, hog;
	unsigned long n = 0;
	int err = 0;

	*holder_ns = 0;
	if (lock_setup(&c)) {
		lock_teardown(&c);
		return UINT64_MAX;
	}
	pin_to_cpu(0, 0);
	hog = start_duty_hog(cpu, 19000, 1000);
	if (kind == LOCK_MMAP_WRITE || kind == LOCK_MMAP_READ) {
		holder = clone(lock_hold_clone_fn, c.stack + (256 << 10), CLONE_VM | SIGCHLD, &c);
	} else {
		holder = fork();
		if (holder == 0)
			lock_hold(&c);
	}
	if (holder < 0) {
		stop_task(hog);
		lock_teardown(&c);
		return UINT64_MAX;
	}
	usleep(300000);
	t_end = now_ns() + (uint64_t)(seconds * 1e9);
	while (!err && now_ns() < t_end) {
		uint64_t t0 = now_ns(), d;

		err = lock_wait_once(&c, n++);
		d = now_ns() - t0;
		if (d > worst)
			worst = d;
		usleep(1000);
	}
	*holder_ns = cputime_ns(holder);
	/* A holder that failed has exited: its waits mean nothing. */
	if (waitpid(holder, NULL, WNOHANG) == holder)
		err = -1, holder = 0;
	/* A starved holder may still hold the resource: kill it first. */
	if (holder)
		stop_task(holder);
	stop_task(hog);
	lock_teardown(&c);
	return err ? UINT64_MAX : worst;
}

#endif /* TESTS_LOCK_WAITS_H */
