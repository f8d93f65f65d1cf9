/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Background workloads of every kind an idle-batch task may run: user-mode
 * spinning, napping, long read() calls, mprotect() storms, short system
 * calls, file-tree walks and fork/exec/exit loops, yielding.  Each runs in
 * a child process that sets its own policy, nice value and CPU first, so
 * it is in the policy before it does any work.
 */
#ifndef TESTS_WORKLOADS_H
#define TESTS_WORKLOADS_H

#include "idlebatch.h"

#include <linux/io_uring.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

enum work_kind {
	WORK_SPIN,		/* pure user-mode spinner */
	WORK_NAP,		/* spins 2 ms, sleeps 200 us */
	WORK_READ,		/* 1 MiB read() calls from /dev/zero */
	WORK_READ_BIG,		/* 16 MiB read() calls from /dev/zero */
	WORK_MPROTECT,		/* mprotect() of a touched 64 MiB mapping, back and forth */
	WORK_SYSCALLS,		/* a storm of short system calls (getppid()) */
	WORK_TREE_WALK,		/* stat() and getdents() over a tmpfs tree */
	WORK_FORK_EXEC,		/* fork, exec busybox true, wait, over and over */
	WORK_YIELD,		/* sched_yield() in a loop */
	WORK_TMPFS_RW,		/* 4 MiB written to a tmpfs file and read back */
	WORK_READ_HUGE,		/* 64 MiB read() calls from /dev/zero */
	WORK_FAULTS,		/* map 16 MiB, fault every page in, unmap */
	WORK_IO_URING,		/* 64 MiB reads from /dev/zero by io_uring's io-wq */
	WORK_KVM,		/* a one-page VM spinning in guest mode: KVM_RUN never returns */
	WORK_NR
};

static const char *const work_names[WORK_NR] = {
	[WORK_SPIN]	 = "user spinner",
	[WORK_NAP]	 = "spin 2 ms, sleep 200 us",
	[WORK_READ]	 = "1 MiB read()s",
	[WORK_READ_BIG]	 = "16 MiB read()s",
	[WORK_MPROTECT]	 = "mprotect() 64 MiB",
	[WORK_SYSCALLS]	 = "short syscall storm",
	[WORK_TREE_WALK] = "stat()+getdents() walk",
	[WORK_FORK_EXEC] = "fork/exec/exit loop",
	[WORK_YIELD]	 = "sched_yield() loop",
	[WORK_TMPFS_RW]	 = "4 MiB tmpfs write+read",
	[WORK_READ_HUGE] = "64 MiB read()s",
	[WORK_FAULTS]	 = "page-fault storm",
	[WORK_IO_URING]	 = "io_uring reads via io-wq",
	[WORK_KVM]	 = "KVM guest in guest mode",
};

/*
 * Why @kind cannot run on this machine, or NULL if it can: a VM needs
 * /dev/kvm (a kernel with KVM, a CPU or an emulator with SVM or VMX).
 */
static inline const char *work_unavailable(enum work_kind kind)
{
	int fd;

	if (kind != WORK_KVM)
		return NULL;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return "no /dev/kvm: a kernel without KVM, or a CPU without SVM or VMX";
	close(fd);
	return NULL;
}

#define WORK_TREE "/dev/shm/idlebatch-tree"

/*
 * WORK_FORK_EXEC runs a static busybox from tmpfs: the guest's root is the
 * host's over 9p without a cache, where every page fault of an exec'd
 * program waits for the host, which measures the test bed, not the policy.
 */
#define WORK_EXEC "/dev/shm/idlebatch-busybox"

static inline int work_exec_create(void)
{
	return system("cp /bin/busybox " WORK_EXEC);
}

/* A tmpfs tree of 20 directories with 20 files each, for WORK_TREE_WALK. */
static inline int work_tree_create(void)
{
	char path[128];

	if (mkdir(WORK_TREE, 0700) && errno != EEXIST)
		return -1;
	for (int d = 0; d < 20; d++) {
		snprintf(path, sizeof(path), WORK_TREE "/d%02d", d);
		if (mkdir(path, 0700) && errno != EEXIST)
			return -1;
		for (int f = 0; f < 20; f++) {
			int fd;

			snprintf(path, sizeof(path), WORK_TREE "/d%02d/f%02d", d, f);
			fd = open(path, O_CREAT | O_WRONLY, 0600);
			if (fd < 0)
				return -1;
			close(fd);
		}
	}
	return 0;
}

static inline void work_tree_walk(void)
{
	char path[128];
	struct stat st;
	struct dirent *e;
	DIR *dir;

	for (int d = 0; d < 20; d++) {
		snprintf(path, sizeof(path), WORK_TREE "/d%02d", d);
		dir = opendir(path);
		if (!dir)
			_exit(110);
		while ((e = readdir(dir)))
			fstatat(dirfd(dir), e->d_name, &st, 0);
		closedir(dir);
	}
}

/*
 * An io_uring of one entry, set up with the raw system calls (no liburing
 * in the guest): reads flagged IOSQE_ASYNC go to an io-wq worker, a
 * kernel thread of the task's that never returns to user mode.
 */
struct work_uring {
	int fd;
	unsigned int *sq_tail, *sq_array, *cq_head, *cq_tail;
	struct io_uring_sqe *sqe;
};

static inline int work_uring_setup(struct work_uring *u)
{
	struct io_uring_params p = { 0 };
	char *sq, *cq;

	u->fd = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (u->fd < 0)
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
	u->sqe = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqe == MAP_FAILED)
		return -1;
	u->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	u->sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_head = (unsigned int *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	return 0;
}

/* One read of @len bytes of @fd into @buf by an io-wq worker, waited for */
static inline int work_uring_read(struct work_uring *u, int fd, void *buf, unsigned int len)
{
	unsigned int tail = *u->sq_tail;

	memset(u->sqe, 0, sizeof(*u->sqe));
	u->sqe->opcode = IORING_OP_READ;
	u->sqe->flags = IOSQE_ASYNC;
	u->sqe->fd = fd;
	u->sqe->addr = (unsigned long)buf;
	u->sqe->len = len;
	u->sqe->off = -1;	/* the file position, as read() */
	u->sq_array[0] = 0;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1;
	if (__atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE) == *u->cq_head)
		return -1;
	__atomic_store_n(u->cq_head, *u->cq_head + 1, __ATOMIC_RELEASE);
	return 0;
}

/* What a kind of work sets up once and then uses on each step. */
struct work_ctx {
	struct work_uring uring;	/* for WORK_IO_URING */
	int zero;		/* /dev/zero, for the reads */
	int file;		/* an unlinked tmpfs file, for WORK_TMPFS_RW */
	char *map;		/* the touched mapping, for WORK_MPROTECT */
	size_t map_len;
	int vcpu;		/* the VM's one vCPU, for WORK_KVM */
	struct kvm_run *kvm_run;
};

/*
 * WORK_KVM's VM: one page of memory at guest address 0 holding "jmp .",
 * run in real mode from there.  The vCPU thread never leaves KVM_RUN: the
 * host's interrupts exit to the kernel and re-enter the guest.  Exits on
 * failure with 123-125.
 */
static inline void work_kvm_setup(struct work_ctx *ctx)
{
	struct kvm_userspace_memory_region region = { .slot = 0, .memory_size = 4096 };
	struct kvm_regs regs = { .rip = 0, .rflags = 2 };
	struct kvm_sregs sregs;
	int kvm, vm, size;
	unsigned char *mem;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	vm = kvm < 0 ? -1 : ioctl(kvm, KVM_CREATE_VM, 0);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (vm < 0 || mem == MAP_FAILED)
		_exit(123);
	mem[0] = 0xeb;	/* jmp . */
	mem[1] = 0xfe;
	region.userspace_addr = (unsigned long)mem;
	ctx->vcpu = -1;
	if (!ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region))
		ctx->vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	size = ctx->vcpu < 0 ? -1 : ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size <= 0)
		_exit(124);
	ctx->kvm_run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->vcpu, 0);
	if (ctx->kvm_run == MAP_FAILED || ioctl(ctx->vcpu, KVM_GET_SREGS, &sregs))
		_exit(124);
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(ctx->vcpu, KVM_SET_SREGS, &sregs) || ioctl(ctx->vcpu, KVM_SET_REGS, &regs))
		_exit(124);
}

static char work_buf[64 << 20];

/* Set up @kind in the calling process; exits on failure (it is a child). */
static inline void work_prepare(enum work_kind kind, struct work_ctx *ctx)
{
	ctx->zero = open("/dev/zero", O_RDONLY);
	if (ctx->zero < 0)
		_exit(111);
	ctx->file = -1;
	if (kind == WORK_TMPFS_RW) {
		char path[64];

		snprintf(path, sizeof(path), "/dev/shm/idlebatch-rw.%d", getpid());
		ctx->file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (ctx->file < 0 || unlink(path))
			_exit(118);
	}
	memset(&ctx->uring, 0, sizeof(ctx->uring));
	if (kind == WORK_IO_URING && work_uring_setup(&ctx->uring))
		_exit(121);
	if (kind == WORK_KVM)
		work_kvm_setup(ctx);
	ctx->map = NULL;
	ctx->map_len = 64 << 20;
	if (kind == WORK_MPROTECT) {
		ctx->map = mmap(NULL, ctx->map_len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ctx->map == MAP_FAILED)
			_exit(112);
		for (size_t i = 0; i < ctx->map_len; i += 4096)
			ctx->map[i] = 1;
	}
}

/* One step of @kind (WORK_SPIN's never ends); exits on failure. */
static inline void work_step(enum work_kind kind, struct work_ctx *ctx)
{
	switch (kind) {
	case WORK_SPIN:
		spin_forever();
	case WORK_NAP: {
		uint64_t end = now_ns() + 2000000;

		while (now_ns() < end)
			;
		usleep(200);
		break;
	}
	case WORK_READ:
		if (read(ctx->zero, work_buf, 1 << 20) < 0)
			_exit(113);
		break;
	case WORK_READ_BIG:
		if (read(ctx->zero, work_buf, 16 << 20) < 0)
			_exit(113);
		break;
	case WORK_READ_HUGE:
		if (read(ctx->zero, work_buf, sizeof(work_buf)) < 0)
			_exit(113);
		break;
	case WORK_IO_URING:
		if (work_uring_read(&ctx->uring, ctx->zero, work_buf, sizeof(work_buf)))
			_exit(122);
		break;
	case WORK_KVM:
		/* Back only for a signal: anything else means the guest stopped */
		if (ioctl(ctx->vcpu, KVM_RUN, 0) < 0 ? errno != EINTR
						       : ctx->kvm_run->exit_reason != KVM_EXIT_INTR)
			_exit(125);
		break;
	case WORK_FAULTS: {
		const size_t len = 16 << 20;
		char *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (map == MAP_FAILED)
			_exit(120);
		for (size_t i = 0; i < len; i += 4096)
			map[i] = 1;
		munmap(map, len);
		break;
	}
	case WORK_MPROTECT:
		if (mprotect(ctx->map, ctx->map_len, PROT_READ) ||
		    mprotect(ctx->map, ctx->map_len, PROT_READ | PROT_WRITE))
			_exit(114);
		break;
	case WORK_SYSCALLS:
		syscall(SYS_getppid);
		break;
	case WORK_TREE_WALK:
		work_tree_walk();
		break;
	case WORK_FORK_EXEC: {
		pid_t pid = fork();

		if (pid == 0) {
			execl(WORK_EXEC, "true", (char *)NULL);
			_exit(115);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			_exit(116);
		break;
	}
	case WORK_YIELD:
		sched_yield();
		break;
	case WORK_TMPFS_RW:
		if (pwrite(ctx->file, work_buf, 4 << 20, 0) != 4 << 20 ||
		    pread(ctx->file, work_buf, 4 << 20, 0) != 4 << 20)
			_exit(119);
		break;
	default:
		_exit(117);
	}
}

static inline void __attribute__((noreturn)) work_run(enum work_kind kind)
{
	struct work_ctx ctx;

	work_prepare(kind, &ctx);
	for (;;)
		work_step(kind, &ctx);
}

/*
 * The mean wall time, in ns, of one step of @kind (not WORK_SPIN), run
 * alone as a nice-0 task on @cpu: for a kind whose step is a system call,
 * how long the kernel stretches of that kind are.  Returns 0 on failure.
 */
static inline double work_step_ns(enum work_kind kind, int cpu)
{
	const int steps = 20;
	double mean = 0;
	int fds[2];
	pid_t pid;

	if (kind == WORK_SPIN || pipe(fds))
		return 0;
	pid = fork();
	if (pid == 0) {
		struct work_ctx ctx;
		uint64_t t0;

		close(fds[0]);
		enter_policy_or_exit(SCHED_OTHER, 0, cpu);
		work_prepare(kind, &ctx);
		for (int i = 0; i < 3; i++)
			work_step(kind, &ctx);
		t0 = now_ns();
		for (int i = 0; i < steps; i++)
			work_step(kind, &ctx);
		mean = (double)(now_ns() - t0) / steps;
		if (write(fds[1], &mean, sizeof(mean)) != sizeof(mean))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &mean, sizeof(mean)) != sizeof(mean))
		mean = 0;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return mean;
}

/*
 * Start @kind as a process of its own group with @policy and @nice on @cpu
 * (or anywhere if @cpu < 0).  Returns its pid.
 */
static inline pid_t start_work(enum work_kind kind, int policy, int nice, int cpu)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* Its own group, for stop_work(); and gone with the test that started it */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	enter_policy_or_exit(policy, nice, cpu);
	work_run(kind);
}

/* Stop a workload started by start_work(), its children too. */
static inline void stop_work(pid_t pid)
{
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* CPU time, in ns, of every thread of process @pid (io_uring's workers too) */
static inline uint64_t threads_cputime_ns(pid_t pid)
{
	uint64_t sum = 0;
	struct dirent *d;
	char path[64];
	DIR *task;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	task = opendir(path);
	if (!task)
		return 0;
	while ((d = readdir(task))) {
		pid_t tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
		sum += schedstat_ns(path);
	}
	closedir(task);
	return sum;
}

/*
 * CPU time, in ns, of process group @pgid: every live thread's
 * schedstat, plus what its leader has reaped (cutime and cstime, in
 * clock ticks).
 */
static inline uint64_t group_cputime_ns(pid_t pgid)
{
	uint64_t sum = 0;
	struct dirent *d;
	DIR *proc = opendir("/proc");

	if (!proc)
		return 0;
	while ((d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);

		if (pid > 0 && stat_field(pid, 5) == pgid)
			sum += threads_cputime_ns(pid);
	}
	closedir(proc);
	sum += (uint64_t)(stat_field(pgid, 16) + stat_field(pgid, 17)) *
	       (1000000000ull / sysconf(_SC_CLK_TCK));
	return sum;
}

/* A child of @parent found in /proc (field 4 of its stat is @parent), or 0 */
static inline pid_t find_child(pid_t parent)
{
	struct dirent *d;
	DIR *proc = opendir("/proc");
	pid_t child = 0;

	if (!proc)
		return 0;
	while (!child && (d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);

		if (pid > 0 && stat_field(pid, 4) == parent)
			child = pid;
	}
	closedir(proc);
	return child;
}

#endif
