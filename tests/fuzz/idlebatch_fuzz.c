// SPDX-License-Identifier: GPL-2.0
/*
 * idlebatch_fuzz: a seeded concurrent fuzzer of SCHED_IDLEBATCH's state
 * machine, for the test guest (tests/fuzz/run boots one and runs it).
 *
 * A pool of processes and threads (idle-batch spinners in user mode,
 * kernel-heavy system call loops, sleepers and yielders, multi-threaded
 * processes, PI futex lockers, fork/vfork/exec loops) is worked on by
 * several operator threads for --seconds: policy and attribute changes
 * (valid and invalid), nice, affinity, cgroup v2 moves and cpu/freeze
 * knobs, SIGSTOP/SIGCONT/SIGKILL and other signals, ptrace seize and
 * interrupt, PI futex contention, fork/vfork/exec/exit, CPU hotplug,
 * sched_batch trace events and the function tracer, the timeslice knob.
 *
 * Each operator thread draws its operations from its own PRNG, seeded from
 * --seed and the thread's index, with a fixed number of draws per
 * operation: a seed gives every operator the same sequence of choices.
 * What the choices meet (timing, which task is alive) is not reproducible.
 *
 * It checks the kernel, not the system calls' results: an errno is fine,
 * a state the kernel must never show is not.  The invariants are listed
 * in report() (one TAP line each).
 *
 * Destructive (CPU hotplug, cgroups, tracing): it refuses to run outside
 * the test guest ($VM_SCRATCH unset) unless given --force.
 */
#define _GNU_SOURCE
#include "../kernel/idlebatch.h"

#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#define SCHED_FLAG_RESET_ON_FORK	0x01
#define SCHED_FLAG_RECLAIM		0x02
#define SCHED_FLAG_DL_OVERRUN		0x04
#define SCHED_FLAG_KEEP_POLICY		0x08
#define SCHED_FLAG_KEEP_PARAMS		0x10
#define SCHED_FLAG_UTIL_CLAMP_MIN	0x20
#define SCHED_FLAG_UTIL_CLAMP_MAX	0x40
#define SCHED_ATTR_SIZE_VER0		48

#define MAX_SLOTS	64
#define MAX_TIDS	8
#define MAX_TRANSIENT	24
#define MAX_OPERATORS	16
#define MAX_CPUS	64
#define NR_PILOCKS	4
#define NR_CGROUPS	5	/* base, c0..c3: processes start in base */
#define KILL_UNPARK_NS	1000000000ull

/* ------------------------------------------------------------------ */
/* PRNG: splitmix64 to seed, xoshiro256** to draw */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed * 0x2545f4914f6cdd1dull + stream * 0x9e3779b97f4a7c15ull + 1;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Below @n, from one draw */
static inline unsigned int pick(uint64_t r, unsigned int n)
{
	return n ? (unsigned int)((r >> 11) % n) : 0;
}

/* ------------------------------------------------------------------ */
/* Output */

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int verbose;

/* A mutex that inherits priority: the fuzzer's threads run at several */
static void pi_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
}

static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/*
 * The fuzzer's own threads run SCHED_FIFO above every RT priority the pool
 * gets (1..50), so that no pool task starves them (a nice -20 hog would),
 * and with SCHED_RESET_ON_FORK, so that what they fork starts as a normal
 * task.  They sleep often enough to leave the pool most of the CPUs.
 */
enum {
	PRIO_CHECKER = 54, PRIO_OPERATOR = 55, PRIO_SPAWNER = 57, PRIO_MAIN = 58,
	PRIO_FREEZE_WATCH = 59, PRIO_REAPER = 60, PRIO_WATCHDOG = 61,
};

static void control_thread(int prio, const char *name)
{
	struct sched_param sp = { .sched_priority = prio };

	prctl(PR_SET_NAME, name);
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		note("cannot make a fuzzer thread SCHED_FIFO %d: %s", prio, strerror(errno));
}

/* CPU time of the fuzzer's own threads, by role, and of its reaped children */
enum {
	CR_MAIN, CR_REAPER, CR_WATCHDOG, CR_SPAWNER, CR_OPERATORS, CR_CHECKER, CR_FREEZE_WATCH,
	NR_CR
};
static const char *const cr_name[NR_CR] = {
	"main", "reaper", "watchdog", "spawner", "operators", "checker", "freeze watcher"
};
static atomic_ullong cpu_by_role[NR_CR];

static void account_thread(int role)
{
	atomic_fetch_add(&cpu_by_role[role], (unsigned long long)thread_cpu_ns());
}

/* ------------------------------------------------------------------ */
/* Configuration and global state */

static uint64_t opt_seed;
static int opt_seconds = 60;
static int opt_operators = 4;
static int opt_pool;		/* default: 4 per CPU, at least 8 */
static int opt_kill_bound_ms = 5000;
static int opt_hang_ms = 60000;
static int opt_no_hotplug, opt_no_trace, opt_no_cgroup;
static int opt_dl_hotplug;	/* DEADLINE tasks and CPU hotplug at the same time */
static int opt_no_idlebatch;	/* every SCHED_IDLEBATCH becomes SCHED_OTHER: a baseline */

/* The policy to use for @pol: the same, or without idle-batch for a baseline */
static int use_policy(int pol)
{
	if (opt_no_idlebatch && (pol & ~SCHED_RESET_ON_FORK) == SCHED_IDLEBATCH)
		return SCHED_OTHER | (pol & SCHED_RESET_ON_FORK);
	return pol;
}
static int opt_phase_s = 10;
static int ncpus;		/* configured CPUs */
static int rt_cap;		/* most pool threads with an RT or DL policy */
static char self_exe[512];
static int self_copied;
static char repro[512];
static pid_t fuzzer_pid;

static atomic_int stopping;	/* operators and spawner stop */
static atomic_int reaper_stop;
static atomic_int fatal;	/* a hang: stop early */
static uint64_t t_start, t_end;

/* Invariant violations by class, and how many checks each class made */
enum inv {
	INV_POLICY,		/* sched_getscheduler/getattr report a valid policy */
	INV_STATE,		/* /proc/PID/batchstat state agrees with the policy */
	INV_PARKED_RUNNABLE,	/* a parked task is runnable */
	INV_PARKS_MONO,		/* per-task parks never decrease */
	INV_CPU_MONO,		/* per-CPU counters never decrease, format sane */
	INV_PARKS_SUM,		/* sum of task parks <= sum of CPU parks */
	INV_KILL_PARKED,	/* a task with SIGKILL is not parked */
	INV_KILL,		/* every SIGKILL is reaped within the hang bound */
	INV_LOST,		/* every task created is reaped, none left over */
	INV_FINAL,		/* parks == unparks, queues empty at the end */
	INV_FREEZE,		/* cgroup.freeze completes */
	INV_CLEANUP,		/* CPUs online, tracing off, cgroups gone */
	NR_INV
};

static const char *const inv_name[NR_INV] = {
	[INV_POLICY] = "sched_getscheduler()/sched_getattr() report only valid policies and parameters",
	[INV_STATE] = "/proc/PID/batchstat state agrees with the policy (and /proc/PID/stat's)",
	[INV_PARKED_RUNNABLE] = "a task seen parked throughout a read of /proc/PID/stat is runnable",
	[INV_PARKS_MONO] = "per-task PARKS never decrease",
	[INV_CPU_MONO] = "/proc/batchstat is well-formed and its per-CPU counters never decrease",
	[INV_PARKS_SUM] = "sum of per-task PARKS <= increase of the per-CPU park counters",
	[INV_KILL_PARKED] = "a task is never seen parked 1 s after its SIGKILL",
	[INV_KILL] = "every SIGKILL completes (the task is reaped): none hangs",
	[INV_LOST] = "no task lost: every task created is reaped, no child or idle-batch task left",
	[INV_FINAL] = "at the end /proc/batchstat has parks == unparks and no queued or running task",
	[INV_FREEZE] = "cgroup.freeze=1 reaches frozen within the bound",
	[INV_CLEANUP] = "cleanup: all CPUs online, tracing off, cgroups removed",
};

static atomic_long inv_checks[NR_INV], inv_fails[NR_INV];
/* Zombie DEADLINE tasks seen with the parameters the kernel cleared */
static atomic_long dead_dl_cleared;

static void __attribute__((format(printf, 2, 3))) violation(enum inv k, const char *fmt, ...)
{
	long n = atomic_fetch_add(&inv_fails[k], 1);
	va_list ap;

	if (n >= 10)	/* enough of one kind */
		return;
	pthread_mutex_lock(&out_lock);
	printf("# VIOLATION [%s] t=%.3fs: ", inv_name[k], (now_ns() - t_start) / 1e9);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* Operations */
enum op {
	OP_SETATTR, OP_SETSCHED, OP_SETPARAM, OP_SETPRIO, OP_CHECK, OP_AFFINITY,
	OP_CG_MOVE, OP_CG_KNOB, OP_CG_FREEZE, OP_STOP, OP_CONT, OP_KILL,
	OP_EXIT, OP_EXEC, OP_ALRM, OP_PTRACE, OP_PI, OP_FORK, OP_VFORK,
	OP_HOTPLUG, OP_TRACE, OP_SLICE, NR_OPS
};

static const struct {
	const char *name;
	int weight;
} ops[NR_OPS] = {
	[OP_SETATTR] = { "sched_setattr", 22 },
	[OP_SETSCHED] = { "sched_setscheduler", 8 },
	[OP_SETPARAM] = { "sched_setparam", 3 },
	[OP_SETPRIO] = { "setpriority", 6 },
	[OP_CHECK] = { "check", 6 },
	[OP_AFFINITY] = { "sched_setaffinity", 8 },
	[OP_CG_MOVE] = { "cgroup_move", 6 },
	[OP_CG_KNOB] = { "cgroup_knob", 4 },
	[OP_CG_FREEZE] = { "cgroup_freeze", 3 },
	[OP_STOP] = { "sigstop", 4 },
	[OP_CONT] = { "sigcont", 5 },
	[OP_KILL] = { "sigkill", 3 },
	[OP_EXIT] = { "exit(sigusr1)", 1 },
	[OP_EXEC] = { "exec(sigusr2)", 2 },
	[OP_ALRM] = { "sigalrm", 3 },
	[OP_PTRACE] = { "ptrace", 3 },
	[OP_PI] = { "pi_futex", 4 },
	[OP_FORK] = { "fork", 3 },
	[OP_VFORK] = { "vfork", 2 },
	[OP_HOTPLUG] = { "cpu_hotplug", 1 },
	[OP_TRACE] = { "tracing", 1 },
	[OP_SLICE] = { "slice_ms", 1 },
};

static atomic_long op_count[NR_OPS], op_ok[NR_OPS];

/* Statistics */
static atomic_long st_spawned, st_transients, st_reaped, st_orphans, st_traced_exits;
static void atomic_max_u64(atomic_ullong *a, uint64_t v)
{
	unsigned long long old = atomic_load(a);

	while (v > old && !atomic_compare_exchange_weak(a, &old, v))
		;
}

static atomic_long st_kills, st_kills_done, st_slow_kills;
static atomic_long st_kills_by_pol[10], st_slow_by_pol[10];
static atomic_ullong st_kill_worst_by_pol[10];

/* A completed kill of a task of @pol that took @lat */
static void kill_done(int pol, uint64_t lat)
{
	int k = pol >= 0 && pol < 10 ? pol : 9;

	atomic_fetch_add(&st_kills_by_pol[k], 1);
	atomic_max_u64(&st_kill_worst_by_pol[k], lat);
	if (lat > (uint64_t)opt_kill_bound_ms * 1000000ull)
		atomic_fetch_add(&st_slow_by_pol[k], 1);
}
static atomic_long st_end_sig[65];
static atomic_ullong st_kill_worst_ns;
static atomic_long st_hp_off, st_hp_on, st_hp_cycles;
static atomic_ullong st_hp_worst_ns;
static atomic_long st_ptrace_stops, st_ptrace_slow, st_ptrace_abandoned;
static atomic_ullong st_ptrace_worst_ns;
static atomic_long st_freezes_measured;
static atomic_ullong st_freeze_worst_ns;
/* The checker's longest pass, from one pass's start to the next's */
static atomic_ullong st_checker_gap_worst_ns;
/*
 * The freeze watcher's longest gap between two looks: the most by which a
 * freeze's measure can exceed the truth, or its bound be enforced late.
 */
static atomic_ullong st_freeze_watch_gap_worst_ns;
static atomic_long st_freezes_slow;
/* Threads not frozen yet when a freeze became slow, by policy and state */
static atomic_long st_freeze_laggards[10], st_freeze_laggards_running[10];
/* ... and of the idle-batch ones, those still parked: each a violation */
static atomic_long st_freeze_laggards_parked;
static atomic_long st_pi_acq, st_pi_timeout, st_pi_dead, st_pi_err;
static atomic_long st_rt_capped, st_unsettled;
static atomic_long st_exits_voluntary, st_exits_signal;


/* ------------------------------------------------------------------ */
/* Memory shared with pool processes: PI futexes and counters */

struct pilock {
	struct robust_list node;	/* robust list entry, futex_offset 8 */
	uint32_t word;
	uint32_t pad;
};

struct shared {
	struct pilock locks[NR_PILOCKS];
	atomic_long forks, vforks, execs, pool_pi_acq, pool_pi_err, alarms;
	atomic_long progress[8];	/* loop turns, by role */
	atomic_int ready[MAX_SLOTS];	/* pid of the slot's process once it runs */
};

static struct shared *shm;
static int shm_fd = -1;

static __thread struct robust_list_head rhead;
static __thread int rhead_set;

static void robust_init(void)
{
	rhead.list.next = &rhead.list;
	rhead.futex_offset = offsetof(struct pilock, word) - offsetof(struct pilock, node);
	rhead.list_op_pending = NULL;
	rhead_set = syscall(SYS_set_robust_list, &rhead, sizeof(rhead)) == 0;
}

static inline struct robust_list *pi_entry(struct pilock *l)
{
	return (struct robust_list *)((uintptr_t)&l->node | 1);	/* bit 0: PI */
}

/* 0 when taken (maybe with FUTEX_OWNER_DIED), else -errno */
static int pi_lock(struct pilock *l, int timeout_ms)
{
	uint32_t tid = gettid(), zero = 0;
	struct timespec ts;

	if (!rhead_set)
		robust_init();
	rhead.list_op_pending = pi_entry(l);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_compare_exchange_n(&l->word, &zero, tid, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout_ms / 1000;
		timespec_add_ns(&ts, (timeout_ms % 1000) * 1000000L);
		if (syscall(SYS_futex, &l->word, FUTEX_LOCK_PI, 0, &ts, NULL, 0)) {
			int e = errno;

			rhead.list_op_pending = NULL;
			return -e;
		}
	}
	l->node.next = &rhead.list;
	rhead.list.next = pi_entry(l);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rhead.list_op_pending = NULL;
	return 0;
}

static void pi_unlock(struct pilock *l)
{
	uint32_t tid = gettid();

	rhead.list_op_pending = pi_entry(l);
	rhead.list.next = &rhead.list;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_compare_exchange_n(&l->word, &tid, 0, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		syscall(SYS_futex, &l->word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rhead.list_op_pending = NULL;
}

/* ------------------------------------------------------------------ */
/* Pool processes (run after exec as "--pool KIND FD SEED") */

enum kind { K_SPIN, K_SYSCALL, K_SLEEP, K_MT, K_PI, K_FORKER, NR_KINDS };
static const char *const kind_name[NR_KINDS] = {
	"spin", "syscall", "sleep", "mt", "pi", "forker"
};
/* The pool's kinds, in slot order: spinners first */
static const enum kind kind_pattern[] = {
	K_SPIN, K_SYSCALL, K_MT, K_SPIN, K_SLEEP, K_PI, K_SPIN, K_FORKER,
	K_SYSCALL, K_MT, K_SPIN, K_PI, K_SLEEP, K_SPIN, K_SYSCALL, K_MT,
};

static volatile unsigned long spin_sink;
static char pool_argv_kind[16], pool_argv_fd[16], pool_argv_seed[32], pool_argv_slot[16];

static void spin_us(unsigned int us)
{
	uint64_t end = now_ns() + us * 1000ull;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			spin_sink++;
}

static void on_usr1(int sig)
{
	(void)sig;
	_exit(0);
}

/* Exec ourselves again, as the same kind: the leader gets this (tgkill). */
static void on_usr2(int sig)
{
	char *argv[] = { "idlebatch_fuzz", "--pool", pool_argv_kind, pool_argv_fd,
			 pool_argv_seed, pool_argv_slot, NULL };

	(void)sig;
	if (shm)
		atomic_fetch_add(&shm->execs, 1);
	/* Ignored until the new image installs its handlers (exec keeps SIG_IGN) */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	signal(SIGALRM, SIG_IGN);
	execv("/proc/self/exe", argv);
	_exit(97);
}

static void on_alrm(int sig)
{
	(void)sig;
	if (shm)
		atomic_fetch_add(&shm->alarms, 1);
}

static void pool_signals(void)
{
	struct sigaction sa = { 0 };
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_NODEFER;	/* exec resets the mask anyway */
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	sigaction(SIGXCPU, &sa, NULL);	/* DL overrun: dies, is replaced */
}

struct pool_thread {
	int role;
	uint64_t seed;
};

enum role { R_SPIN, R_SYSCALL, R_SLEEP, R_PI, R_FORK, R_PI_FAIR };
static const char *const role_name[] = { "spin", "syscall", "sleep", "pi", "fork", "pi2" };

static void role_spin(struct rng *r)
{
	for (;;) {
		unsigned int k = pick(rng_next(r), 16);

		spin_us(1000 + pick(rng_next(r), 20000));
		atomic_fetch_add(&shm->progress[R_SPIN], 1);
		/* Mostly user mode; now and then a pause, so that there is idle time */
		if (k == 0)
			sched_yield();
		else if (k < 4)
			usleep(1000 + pick(rng_next(r), 10000));
	}
}

static void role_syscall(struct rng *r)
{
	static __thread char buf[65536];
	size_t map_len = 1 << 20;
	char *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC), p[2] = { -1, -1 };

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		p[0] = p[1] = -1;
	for (;;) {
		atomic_fetch_add(&shm->progress[R_SYSCALL], 1);
		if (pick(rng_next(r), 64) == 0)
			usleep(pick(rng_next(r), 5000));
		switch (pick(rng_next(r), 9)) {
		case 0:
			if (read(zero, buf, sizeof(buf)) < 0)
				spin_sink++;
			break;
		case 1:
			for (int i = 0; i < 200; i++)
				syscall(SYS_getppid);
			break;
		case 2:
			if (map != MAP_FAILED) {
				mprotect(map, map_len, PROT_READ);
				mprotect(map, map_len, PROT_READ | PROT_WRITE);
			}
			break;
		case 3: {
			int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) < 0)
					spin_sink++;
				close(fd);
			}
			break;
		}
		case 4:
			if (p[1] >= 0 && write(p[1], buf, 4096) > 0 && read(p[0], buf, 4096) < 0)
				spin_sink++;
			break;
		case 5:
			sched_yield();
			break;
		case 6:
			if (map != MAP_FAILED) {
				madvise(map, map_len, MADV_DONTNEED);
				for (size_t i = 0; i < map_len; i += 4096)
					map[i] = 1;
			}
			break;
		case 7: {
			struct rusage ru;

			getrusage(RUSAGE_SELF, &ru);
			break;
		}
		default: {
			cpu_set_t set;

			sched_getaffinity(0, sizeof(set), &set);
			break;
		}
		}
	}
}

static void role_sleep(struct rng *r)
{
	for (;;) {
		struct timespec ts = { 0, 1000L * pick(rng_next(r), 3000) };

		atomic_fetch_add(&shm->progress[R_SLEEP], 1);
		switch (pick(rng_next(r), 4)) {
		case 0:
			nanosleep(&ts, NULL);
			break;
		case 1:
			sched_yield();
			break;
		case 2:
			spin_us(pick(rng_next(r), 500));
			break;
		default:
			usleep(pick(rng_next(r), 2000));
			break;
		}
	}
}

static void role_pi(struct rng *r, int fair)
{
	robust_init();
	for (;;) {
		struct pilock *l = &shm->locks[pick(rng_next(r), NR_PILOCKS)];
		int ret = pi_lock(l, 50);

		atomic_fetch_add(&shm->progress[fair ? R_PI_FAIR : R_PI], 1);
		if (ret == 0) {
			atomic_fetch_add(&shm->pool_pi_acq, 1);
			switch (pick(rng_next(r), 3)) {
			case 0:	/* hold it in user mode: parked owners */
				spin_us(pick(rng_next(r), 3000));
				break;
			case 1:
				usleep(pick(rng_next(r), 2000));
				break;
			default:
				for (int i = 0; i < 100; i++)
					syscall(SYS_getppid);
				break;
			}
			pi_unlock(l);
		} else if (ret != -ETIMEDOUT && ret != -EINTR && ret != -EAGAIN) {
			atomic_fetch_add(&shm->pool_pi_err, 1);
			usleep(1000);
		}
		spin_us(pick(rng_next(r), 2000));
	}
}

static void __attribute__((noreturn)) run_role(int role, uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed, role + 1000);
	switch (role) {
	case R_SPIN:
		role_spin(&r);
		break;
	case R_SYSCALL:
		role_syscall(&r);
		break;
	case R_SLEEP:
		role_sleep(&r);
		break;
	case R_PI:
		role_pi(&r, 0);
		break;
	default:
		role_pi(&r, 1);
		break;
	}
	_exit(0);
}

static void *pool_thread_fn(void *arg)
{
	struct pool_thread *pt = arg;

	run_role(pt->role, pt->seed);
}

static void start_threads(const int *roles, int n, uint64_t seed)
{
	static struct pool_thread pts[MAX_TIDS];
	pthread_t th;

	for (int i = 0; i < n && i < MAX_TIDS; i++) {
		pts[i].role = roles[i];
		pts[i].seed = seed + i + 1;
		pthread_create(&th, NULL, pool_thread_fn, &pts[i]);
	}
}

static void __attribute__((noreturn)) forker_loop(uint64_t seed)
{
	static char *const true_argv[] = { "true", NULL };
	struct rng r;

	rng_seed(&r, seed, 77);
	for (;;) {
		unsigned int how = pick(rng_next(&r), 5), us = pick(rng_next(&r), 3000);
		pid_t pid;

		atomic_fetch_add(&shm->progress[R_FORK], 1);
		if (how <= 1) {
			atomic_fetch_add(&shm->forks, 1);
			pid = fork();
			if (pid == 0) {
				spin_us(us);
				if (how == 0)
					execv("/bin/true", true_argv);
				_exit(0);
			}
		} else if (how <= 3) {
			atomic_fetch_add(&shm->vforks, 1);
			pid = vfork();
			if (pid == 0) {
				if (how == 2)
					execv("/bin/true", true_argv);
				_exit(0);
			}
		} else {
			atomic_fetch_add(&shm->forks, 1);
			pid = fork();
			if (pid == 0) {
				char arg[16];
				char *argv[] = { "idlebatch_fuzz", "--transient", arg, NULL };

				snprintf(arg, sizeof(arg), "%u", us);
				execv("/proc/self/exe", argv);
				_exit(0);
			}
		}
		/* Reap anything, including children of an image before exec */
		while (waitpid(-1, NULL, __WALL | (pid > 0 ? 0 : WNOHANG)) > 0 && pid > 0) {
			if (waitpid(-1, NULL, __WALL | WNOHANG) <= 0)
				break;
		}
		spin_us(pick(rng_next(&r), 2000));
	}
}

/* Tell the spawner that our threads are up: it gives us our policy then */
static void pool_ready(int slot)
{
	if (slot >= 0 && slot < MAX_SLOTS)
		atomic_store(&shm->ready[slot], getpid());
}

static int __attribute__((noreturn)) pool_main(enum kind kind, int fd, uint64_t seed, int slot)
{
	static const int mt_roles[] = { R_SPIN, R_SYSCALL, R_SLEEP };
	static const int pi_roles[] = { R_PI_FAIR, R_PI };

	snprintf(pool_argv_kind, sizeof(pool_argv_kind), "%d", kind);
	snprintf(pool_argv_fd, sizeof(pool_argv_fd), "%d", fd);
	snprintf(pool_argv_seed, sizeof(pool_argv_seed), "%llu", (unsigned long long)seed + 1);
	snprintf(pool_argv_slot, sizeof(pool_argv_slot), "%d", slot);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED) {
		shm = NULL;
		_exit(96);
	}
	pool_signals();
	if (kind == K_MT)
		start_threads(mt_roles, 3, seed);
	else if (kind == K_PI)
		start_threads(pi_roles, 2, seed);
	pool_ready(slot);
	switch (kind) {
	case K_SPIN:
		run_role(R_SPIN, seed);
	case K_SYSCALL:
		run_role(R_SYSCALL, seed);
	case K_SLEEP:
		run_role(R_SLEEP, seed);
	case K_MT:
		run_role(R_SPIN, seed);
	case K_PI:
		run_role(R_PI, seed);
	case K_FORKER:
		forker_loop(seed);
	default:
		_exit(95);
	}
}

/* ------------------------------------------------------------------ */
/* The pool's bookkeeping */

enum slot_state { S_EMPTY, S_ALIVE };

struct tidrec {
	pid_t tid;
	long long max_parks;
};

struct slot {
	pthread_mutex_t lock;	/* policy changes, signals, checks, reaping */
	int idx;
	enum kind kind;
	enum slot_state state;
	pid_t pid;
	int pidfd;
	unsigned int gen;
	uint64_t kill_t0;	/* first SIGKILL, 0 if none */
	int kill_reported;
	int kill_parked_reported;
	int init_policy;	/* -1 once given */
	int kill_policy;	/* the leader's policy when killed */
	uint64_t init_at;
	int ntids;
	struct tidrec tids[MAX_TIDS];
};

static struct slot slots[MAX_SLOTS];
static int nslots;

struct transient {
	pid_t pid;	/* 0: free */
	int pidfd;
	uint64_t born, kill_t0;
	int kill_reported, kill_parked_reported;
	int kill_policy;	/* its policy when killed */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;	/* transients, pid lookup */
static struct transient transients[MAX_TRANSIENT];
static long long retired_parks;	/* under reg_lock: parks of threads gone */
static atomic_int rt_count;	/* pool threads with policy 1, 2 or 6, as last counted */

static int pidfd_open_(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* cgroups */

static char cg_top[128];
static char cg_path[NR_CGROUPS][160];
static int cg_ok;
static int cg_root_enabled_cpu;	/* we enabled +cpu in the root's subtree_control */

/*
 * A cgroup's freeze request, and which request the freeze watcher has
 * measured, counted slow or reported (@gen changes with each), under
 * freeze_lock.  Nobody holds freeze_lock across a write to a cgroup file,
 * which can wait for cgroup_mutex: cg_lock orders the operators' writes,
 * and is taken before freeze_lock.  freeze_lock inherits priority, for
 * the watcher above the operators.
 */
struct cg_freeze {
	int requested;
	unsigned int gen;
	uint64_t t0;
	unsigned int measured_gen, slow_gen, reported_gen;
};
static struct cg_freeze cg_freeze[NR_CGROUPS];
static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t freeze_lock;
static void check_freeze(int cg, int at_thaw);
static void freeze_request(int cg);

static int cg_write(int cg, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", cg_path[cg], file);
	return write_file(path, val);
}

static int cg_setup(void)
{
	char buf[256], path[256];
	static const char *const names[NR_CGROUPS] = { "base", "c0", "c1", "c2", "c3" };

	read_line("/sys/fs/cgroup/cgroup.controllers", buf, sizeof(buf));
	if (!strstr(buf, "cpu")) {
		note("cgroup: no cpu controller in /sys/fs/cgroup (%s): cgroup operations off", buf);
		return -1;
	}
	read_line("/sys/fs/cgroup/cgroup.subtree_control", buf, sizeof(buf));
	if (!strstr(buf, "cpu ") && strcmp(buf + (strlen(buf) >= 3 ? strlen(buf) - 3 : 0), "cpu")) {
		if (write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu")) {
			note("cgroup: cannot enable +cpu at the root: %s", strerror(errno));
			return -1;
		}
		cg_root_enabled_cpu = 1;
	}
	snprintf(cg_top, sizeof(cg_top), "/sys/fs/cgroup/idlebatch-fuzz.%d", getpid());
	if (mkdir(cg_top, 0755)) {
		note("cgroup: mkdir %s: %s", cg_top, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg_top);
	if (write_file(path, "+cpu"))
		note("cgroup: +cpu in %s: %s", path, strerror(errno));
	for (int i = 0; i < NR_CGROUPS; i++) {
		snprintf(cg_path[i], sizeof(cg_path[i]), "%s/%s", cg_top, names[i]);
		if (mkdir(cg_path[i], 0755)) {
			note("cgroup: mkdir %s: %s", cg_path[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Tracing */

static const char tr[] = "/sys/kernel/tracing";
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_ok, ftrace_filter_ok;
static char slice_orig[32];

static int tr_write(const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tr, file);
	return write_file(path, val);
}

static void trace_setup(void)
{
	static const char *const funcs[] = {
		"pick_task_batch", "enqueue_task_batch", "dequeue_task_batch",
		"put_prev_task_batch", "set_next_task_batch", "task_tick_batch",
		"__idlebatch_schedule", "idlebatch_request_park", "sched_idlebatch_unpark",
		"idlebatch_tick_fair", "idlebatch_switch_in_fair", "sched_idlebatch_exit_to_user",
		"idlebatch_fork",
	};
	char path[256], buf[4096];
	int n = 0;

	snprintf(path, sizeof(path), "%s/events/sched_batch/enable", tr);
	if (access(path, W_OK)) {
		note("tracing: no %s: tracing operations off", path);
		return;
	}
	trace_ok = 1;
	snprintf(path, sizeof(path), "%s/set_ftrace_filter", tr);
	truncate_file(path);
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		int fd = open(path, O_WRONLY | O_APPEND);

		if (fd < 0)
			break;
		if (write(fd, funcs[i], strlen(funcs[i])) > 0)
			n++;
		close(fd);
	}
	/* An empty filter traces every function: far too slow, so never that */
	buf[0] = 0;
	{
		FILE *f = fopen(path, "r");
		size_t len = 0;

		if (f) {
			len = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[len] = 0;
	}
	ftrace_filter_ok = n > 0 && buf[0] && buf[0] != '#';
	note("tracing: sched_batch events%s; function filter: %d functions", ftrace_filter_ok ?
	     " and the function tracer" : " only", n);
}

static void trace_cleanup(void)
{
	char path[256];

	if (!trace_ok)
		return;
	tr_write("current_tracer", "nop");
	tr_write("events/sched_batch/enable", "0");
	tr_write("tracing_on", "1");
	snprintf(path, sizeof(path), "%s/set_ftrace_filter", tr);
	truncate_file(path);
	snprintf(path, sizeof(path), "%s/trace", tr);
	truncate_file(path);
}

/* ------------------------------------------------------------------ */
/* /proc readers */

struct cpustat {
	int present;
	long long queued, running, parks, unparks[4], mig_in, mig_out, run_ns;
};

/* /proc/batchstat into @cs (indexed by CPU); how many CPU lines, -1 on error */
static int read_batchstat(struct cpustat *cs, char *why, size_t whylen)
{
	FILE *f = fopen("/proc/batchstat", "r");
	char line[1024];
	int n = 0, version = -1;

	memset(cs, 0, sizeof(*cs) * MAX_CPUS);
	if (!f) {
		snprintf(why, whylen, "cannot open /proc/batchstat: %s", strerror(errno));
		return -1;
	}
	if (!fgets(line, sizeof(line), f) || sscanf(line, "version %d", &version) != 1 ||
	    version != 1) {
		snprintf(why, whylen, "first line is not 'version 1': %s", line);
		fclose(f);
		return -1;
	}
	if (!fgets(line, sizeof(line), f) || strncmp(line, "timestamp ", 10)) {
		snprintf(why, whylen, "second line is not 'timestamp N': %s", line);
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		long long v[32];
		int cpu, k = 0, off = 0, used;
		char *p;

		if (sscanf(line, "cpu%d%n", &cpu, &off) != 1 || cpu < 0 || cpu >= MAX_CPUS) {
			snprintf(why, whylen, "bad line: %s", line);
			fclose(f);
			return -1;
		}
		p = line + off;
		while (k < 32 && sscanf(p, "%lld%n", &v[k], &used) == 1) {
			p += used;
			k++;
		}
		/* fields 2..23 of the documentation: 22 numbers */
		if (k < 22) {
			snprintf(why, whylen, "cpu%d has %d fields, want 22: %s", cpu, k, line);
			fclose(f);
			return -1;
		}
		cs[cpu].present = 1;
		cs[cpu].queued = v[0];
		cs[cpu].running = v[1];
		cs[cpu].parks = v[13];
		for (int i = 0; i < 4; i++)
			cs[cpu].unparks[i] = v[14 + i];
		cs[cpu].mig_in = v[18];
		cs[cpu].mig_out = v[19];
		cs[cpu].run_ns = v[20];
		if (v[1] < 0 || v[1] > 1 || v[0] < 0 || v[2] < 0 || v[2] > 1000) {
			snprintf(why, whylen, "cpu%d: a field out of range: %s", cpu, line);
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

static int cpu_online(int cpu)
{
	char path[80], buf[16];

	if (cpu == 0)
		return 1;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	read_line(path, buf, sizeof(buf));
	return buf[0] != '0';
}

static int nr_online(void)
{
	int n = 0;

	for (int c = 0; c < ncpus; c++)
		n += cpu_online(c);
	return n;
}

static void dump_file(const char *path, const char *label)
{
	char buf[2048];
	FILE *f = fopen(path, "r");
	size_t len = 0;

	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		printf("#     %s: %s\n", label, line);
}

/* What the kernel says about every thread of @pid: for a stuck task */
static void dump_task(pid_t pid)
{
	char path[384], dirpath[64];
	struct dirent *d;
	DIR *dir;

	pthread_mutex_lock(&out_lock);
	printf("#   task %d:\n", pid);
	snprintf(dirpath, sizeof(dirpath), "/proc/%d/task", pid);
	dir = opendir(dirpath);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		printf("#    thread %s\n", d->d_name);
		snprintf(path, sizeof(path), "%s/%s/stat", dirpath, d->d_name);
		dump_file(path, "stat");
		snprintf(path, sizeof(path), "%s/%s/batchstat", dirpath, d->d_name);
		dump_file(path, "batchstat");
		snprintf(path, sizeof(path), "%s/%s/wchan", dirpath, d->d_name);
		dump_file(path, "wchan");
		snprintf(path, sizeof(path), "%s/%s/stack", dirpath, d->d_name);
		dump_file(path, "stack");
		snprintf(path, sizeof(path), "%s/%s/sched", dirpath, d->d_name);
		dump_file(path, "sched");
	}
	if (dir)
		closedir(dir);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	dump_file(path, "status");
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	dump_file(path, "cgroup");
	dump_file("/proc/batchstat", "batchstat");
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* ------------------------------------------------------------------ */
/* Checks of one thread: under its slot's lock, so no policy change of
 * ours races with them (the pool never changes its own policies). */

static int valid_policy(int p)
{
	return p == SCHED_OTHER || p == SCHED_FIFO || p == SCHED_RR || p == SCHED_BATCH ||
	       p == SCHED_IDLE || p == SCHED_DEADLINE || p == SCHED_IDLEBATCH;
}

static struct tidrec *tidrec_of(struct slot *s, pid_t tid)
{
	for (int i = 0; i < s->ntids; i++)
		if (s->tids[i].tid == tid)
			return &s->tids[i];
	return NULL;
}

static void check_tid(struct slot *s, pid_t tid)
{
	long long parks1, parks2, pns1, pns2;
	char st1, st2, pstate;
	struct sched_attr a;
	struct tidrec *rec;
	int p1, p2, pol, spol;
	char buf[4096], *f;

	p1 = sched_getscheduler(tid);
	if (p1 < 0)
		return;
	atomic_fetch_add(&inv_checks[INV_POLICY], 1);
	if (!valid_policy(p1 & ~SCHED_RESET_ON_FORK))
		violation(INV_POLICY, "sched_getscheduler(%d) = %#x, a policy never set", tid, p1);
	memset(&a, 0, sizeof(a));
	if (sched_getattr(tid, &a, sizeof(a), 0) == 0) {
		int ap = (int)a.sched_policy;

		if (!valid_policy(ap) || a.sched_nice < -20 || a.sched_nice > 19 ||
		    ((ap == SCHED_FIFO || ap == SCHED_RR) &&
		     (a.sched_priority < 1 || a.sched_priority > 99)) ||
		    (ap != SCHED_FIFO && ap != SCHED_RR && a.sched_priority != 0) ||
		    (ap == SCHED_DEADLINE && (!a.sched_runtime || a.sched_runtime > a.sched_deadline)) ||
		    a.sched_util_min > 1024 || a.sched_util_max > 1024) {
			f = stat_fields(tid, buf, sizeof(buf));
			pstate = f ? *f : '?';
			/*
			 * A dead DEADLINE task keeps its policy, but the kernel
			 * clears its DL parameters when it leaves the runqueue
			 * for good (__dl_clear_params()), so an unreaped zombie
			 * reports 0/0/0 (tests/fuzz/dl_zombie_params.c, on a
			 * kernel without the policy too).
			 */
			if (ap == SCHED_DEADLINE && (pstate == 'Z' || pstate == 'X') &&
			    !a.sched_runtime && !a.sched_deadline && !a.sched_period)
				atomic_fetch_add(&dead_dl_cleared, 1);
			else
				violation(INV_POLICY,
					  "sched_getattr(%d, /proc state %c): policy %u flags %#llx nice %d prio %u dl %llu/%llu/%llu util %u..%u",
					  tid, pstate, a.sched_policy, (unsigned long long)a.sched_flags,
					  a.sched_nice, a.sched_priority, (unsigned long long)a.sched_runtime,
					  (unsigned long long)a.sched_deadline,
					  (unsigned long long)a.sched_period, a.sched_util_min,
					  a.sched_util_max);
		}
	}
	if (task_batchstat(tid, &st1, &parks1, &pns1))
		return;
	f = stat_fields(tid, buf, sizeof(buf));
	pstate = f ? *f : '?';
	spol = (int)stat_field(tid, 41);
	if (task_batchstat(tid, &st2, &parks2, &pns2))
		return;
	p2 = sched_getscheduler(tid);
	if (p2 < 0 || p1 != p2)
		return;
	pol = p1 & ~SCHED_RESET_ON_FORK;
	atomic_fetch_add(&inv_checks[INV_STATE], 1);
	if (pol == SCHED_IDLEBATCH ? (!strchr("PRNB", st1) || !strchr("PRNB", st2))
				   : (st1 != '-' || st2 != '-'))
		violation(INV_STATE, "tid %d (%s): policy %d but batchstat states %c, %c",
			  tid, kind_name[s->kind], pol, st1, st2);
	if (spol >= 0 && spol != pol && pstate != 'Z' && pstate != 'X')
		violation(INV_STATE, "tid %d: sched_getscheduler says %d, /proc/PID/stat field 41 says %d",
			  tid, pol, spol);
	if (st1 == 'P' && st2 == 'P' && parks1 == parks2) {
		atomic_fetch_add(&inv_checks[INV_PARKED_RUNNABLE], 1);
		if (pstate != 'R')
			violation(INV_PARKED_RUNNABLE,
				  "tid %d (%s) stayed parked (P, %lld parks) while /proc/PID/stat says '%c'",
				  tid, kind_name[s->kind], parks1, pstate);
	}
	atomic_fetch_add(&inv_checks[INV_PARKS_MONO], 1);
	if (parks2 < parks1)
		violation(INV_PARKS_MONO, "tid %d: parks went from %lld to %lld", tid, parks1, parks2);
	rec = tidrec_of(s, tid);
	if (rec) {
		if (parks2 < rec->max_parks)
			violation(INV_PARKS_MONO, "tid %d (%s): parks %lld, earlier %lld",
				  tid, kind_name[s->kind], parks2, rec->max_parks);
		else
			rec->max_parks = parks2;
	}
}

/* Bring @s's thread list up to date with /proc; under its lock */
static void rescan_tids(struct slot *s)
{
	pid_t seen[64];
	int nseen = 0;
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", s->pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)) && nseen < 64) {
		pid_t tid = atoi(d->d_name);

		if (tid > 0)
			seen[nseen++] = tid;
	}
	closedir(dir);
	/* Threads gone: their parks so far are retired */
	for (int i = 0; i < s->ntids;) {
		int found = 0;

		for (int j = 0; j < nseen; j++)
			found |= seen[j] == s->tids[i].tid;
		if (found) {
			i++;
			continue;
		}
		pthread_mutex_lock(&reg_lock);
		retired_parks += s->tids[i].max_parks;
		pthread_mutex_unlock(&reg_lock);
		s->tids[i] = s->tids[--s->ntids];
	}
	for (int j = 0; j < nseen && s->ntids < MAX_TIDS; j++) {
		if (!tidrec_of(s, seen[j])) {
			s->tids[s->ntids].tid = seen[j];
			s->tids[s->ntids].max_parks = 0;
			s->ntids++;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Spawning */

static struct rng spawn_rng;	/* the spawner's own: initial policies */

static int spawn_slot(struct slot *s)
{
	static const int init_pol[] = {
		SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_IDLEBATCH,
		SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_OTHER, SCHED_OTHER, SCHED_BATCH, SCHED_IDLE,
	};
	uint64_t r1 = rng_next(&spawn_rng), r2 = rng_next(&spawn_rng);
	int go[2], pidfd, policy = use_policy(init_pol[pick(r1, 10)]), nice = (int)pick(r2, 40) - 20;
	uint64_t seed = opt_seed ^ ((uint64_t)s->idx << 32) ^ (s->gen + 1);
	char procs[256], pidstr[16];
	struct sched_param sp = { 0 };
	sigset_t block, old;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -1;
	/* No SIGUSR1/2 or SIGALRM before the child ignores them */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid != 0)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (pid == 0) {
		char kind[16], fd[16], sd[32], sl[16], c;
		char *argv[] = { "idlebatch_fuzz", "--pool", kind, fd, sd, sl, NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpgid(0, 0);
		/* Ignored until the new image installs its handlers (exec keeps SIG_IGN) */
		signal(SIGUSR1, SIG_IGN);
		signal(SIGUSR2, SIG_IGN);
		signal(SIGALRM, SIG_IGN);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close(go[1]);
		/* Wait until the parent has set our policy and cgroup */
		if (read(go[0], &c, 1) != 1)
			_exit(94);
		snprintf(kind, sizeof(kind), "%d", s->kind);
		snprintf(fd, sizeof(fd), "%d", shm_fd);
		snprintf(sd, sizeof(sd), "%llu", (unsigned long long)seed);
		snprintf(sl, sizeof(sl), "%d", s->idx);
		execv(self_exe, argv);
		_exit(93);
	}
	close(go[0]);
	pidfd = pidfd_open_(pid);
	if (cg_ok) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_path[0]);
		snprintf(pidstr, sizeof(pidstr), "%d", pid);
		write_file(procs, pidstr);
	}
	/*
	 * It starts as a normal task (we are SCHED_RESET_ON_FORK): an idle-batch
	 * process would wait for idle time in the dynamic linker, before its
	 * threads exist.  Its policy comes when it says it is ready.
	 */
	(void)sp;
	setpriority(PRIO_PROCESS, pid, nice);
	atomic_store(&shm->ready[s->idx], 0);
	pthread_mutex_lock(&s->lock);
	s->init_policy = policy;
	s->init_at = now_ns();
	s->pid = pid;
	s->pidfd = pidfd;
	s->gen++;
	s->kill_t0 = 0;
	s->kill_reported = 0;
	s->kill_parked_reported = 0;
	s->ntids = 1;
	s->tids[0].tid = pid;
	s->tids[0].max_parks = 0;
	s->state = S_ALIVE;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&st_spawned, 1);
	if (write(go[1], "g", 1) != 1)
		note("spawn: cannot release pid %d", pid);
	close(go[1]);
	return 0;
}

static atomic_int spawner_exit;

/*
 * The process of @s is ready (or very slow to be: stopped or frozen before
 * it started its threads): every thread gets its first policy
 */
static void give_policy(struct slot *s)
{
	struct sched_param sp = { 0 };

	pthread_mutex_lock(&s->lock);
	if (s->state == S_ALIVE && s->init_policy >= 0 &&
	    (atomic_load(&shm->ready[s->idx]) == s->pid || now_ns() - s->init_at > 30000000000ull)) {
		rescan_tids(s);
		for (int j = 0; j < s->ntids; j++)
			sched_setscheduler(s->tids[j].tid, s->init_policy, &sp);
		s->init_policy = -1;
	}
	pthread_mutex_unlock(&s->lock);
}

/*
 * Refills the pool.  It lives until the pool is reaped: a pool process
 * dies with the thread that forked it (PR_SET_PDEATHSIG).
 */
static void *spawner_fn(void *arg)
{
	(void)arg;
	control_thread(PRIO_SPAWNER, "spawner");
	while (!atomic_load(&spawner_exit)) {
		for (int i = 0; i < nslots && !atomic_load(&stopping); i++) {
			struct slot *s = &slots[i];

			if (s->state == S_EMPTY && spawn_slot(s))
				usleep(10000);
			give_policy(s);
		}
		usleep(50000);
	}
	account_thread(CR_SPAWNER);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The reaper: every child's end, with kill latencies */

static void reaped_slot(struct slot *s, pid_t pid, int status, uint64_t t)
{
	if (s->kill_t0) {
		/*
		 * 0: it ended before the SIGKILL was sent (@t is when the
		 * reaper saw the end, before it took the locks the killer
		 * holds while it records kill_t0)
		 */
		uint64_t lat = t > s->kill_t0 ? t - s->kill_t0 : 0;

		atomic_fetch_add(&st_kills_done, 1);
		atomic_max_u64(&st_kill_worst_ns, lat);
		kill_done(s->kill_policy, lat);
		atomic_fetch_add(&inv_checks[INV_KILL], 1);
		if (lat > (uint64_t)opt_hang_ms * 1000000ull)
			violation(INV_KILL, "pid %d (%s) took %.3f s from SIGKILL to its end",
				  pid, kind_name[s->kind], lat / 1e9);
		if (lat > (uint64_t)opt_kill_bound_ms * 1000000ull)
			note("slow kill: pid %d (%s, policy %d) took %.3f s from SIGKILL to its end",
			     pid, kind_name[s->kind], s->kill_policy, lat / 1e9);
	} else if (WIFSIGNALED(status)) {
		atomic_fetch_add(&st_exits_signal, 1);
		atomic_fetch_add(&st_end_sig[WTERMSIG(status) & 63], 1);
	} else {
		atomic_fetch_add(&st_exits_voluntary, 1);
	}
	pthread_mutex_lock(&reg_lock);
	for (int i = 0; i < s->ntids; i++)
		retired_parks += s->tids[i].max_parks;
	pthread_mutex_unlock(&reg_lock);
	s->ntids = 0;
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	s->pid = 0;
	s->state = S_EMPTY;
	atomic_fetch_add(&st_reaped, 1);
}

/* The thread group of @tid, or -1 */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
}

static void *reaper_fn(void *arg)
{
	(void)arg;
	control_thread(PRIO_REAPER, "reaper");
	for (;;) {
		siginfo_t si;
		int status;
		pid_t pid;
		uint64_t t;
		int handled = 0;

		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT | __WALL)) {
			if (errno == ECHILD) {
				if (atomic_load(&reaper_stop))
					break;
				usleep(5000);
			}
			continue;
		}
		t = now_ns();
		pid = si.si_pid;
		if (pid <= 0)
			continue;
		/*
		 * One event of @pid: an exit, or a ptrace stop of a tracee of an
		 * operator (reported to the tracer's whole thread group).  Take
		 * it with the owner's lock held, and account for an end.
		 */
		for (int i = 0; i < nslots && !handled; i++) {
			struct slot *s = &slots[i];

			if (s->pid != pid)
				continue;
			pthread_mutex_lock(&s->lock);
			if (s->pid == pid && s->state == S_ALIVE) {
				handled = 1;
				if (waitpid(pid, &status, __WALL | WNOHANG) == pid) {
					if (WIFEXITED(status) || WIFSIGNALED(status))
						reaped_slot(s, pid, status, t);
				} else {
					handled = 2;
				}
			}
			pthread_mutex_unlock(&s->lock);
		}
		if (!handled) {
			pthread_mutex_lock(&reg_lock);
			for (int i = 0; i < MAX_TRANSIENT && !handled; i++) {
				struct transient *tr = &transients[i];

				if (tr->pid != pid)
					continue;
				handled = 1;
				if (waitpid(pid, &status, __WALL | WNOHANG) != pid) {
					handled = 2;
					break;
				}
				if (!WIFEXITED(status) && !WIFSIGNALED(status))
					break;
				if (tr->kill_t0) {
					/* 0: it ended before the SIGKILL was sent */
					uint64_t lat = t > tr->kill_t0 ? t - tr->kill_t0 : 0;

					atomic_fetch_add(&st_kills_done, 1);
					atomic_max_u64(&st_kill_worst_ns, lat);
					kill_done(tr->kill_policy, lat);
					atomic_fetch_add(&inv_checks[INV_KILL], 1);
					if (lat > (uint64_t)opt_hang_ms * 1000000ull)
						violation(INV_KILL, "transient pid %d took %.3f s from SIGKILL to its end",
							  pid, lat / 1e9);
					if (lat > (uint64_t)opt_kill_bound_ms * 1000000ull)
						note("slow kill: transient pid %d (policy %d) took %.3f s from SIGKILL to its end",
						     pid, tr->kill_policy, lat / 1e9);
				}
				if (tr->pidfd >= 0)
					close(tr->pidfd);
				tr->pid = 0;
				tr->pidfd = -1;
				atomic_fetch_add(&st_reaped, 1);
			}
			pthread_mutex_unlock(&reg_lock);
		}
		if (!handled) {
			/* An orphan the pool left us (we are its subreaper), or a traced thread */
			int thread = tgid_of(pid) != pid;

			if (waitpid(pid, &status, __WALL | WNOHANG) == pid) {
				if (WIFEXITED(status) || WIFSIGNALED(status))
					atomic_fetch_add(thread ? &st_traced_exits : &st_orphans, 1);
			} else {
				handled = 2;
			}
		}
		/* Reported but not there to take: do not spin at RT priority */
		if (handled == 2)
			usleep(1000);
	}
	account_thread(CR_REAPER);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Operators */

struct draws {
	uint64_t r[8];
};

/* Lock a live slot picked by @r; NULL if none */
static struct slot *lock_target(uint64_t r)
{
	struct slot *s = &slots[pick(r, nslots)];

	pthread_mutex_lock(&s->lock);
	if (s->state != S_ALIVE) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	return s;
}

/*
 * Has the process of @s (locked) started its threads and been given its
 * first policy?  Until then no operator changes a policy in it.  Linux
 * copies a new thread's scheduling parameters from its creator without
 * the creator's locks (dup_task_struct()), so a thread created while
 * sched_setattr() changes its creator can be born with a mix of the two:
 * SCHED_FIFO with priority 0, measured on the host's own kernel too
 * (7 of 218,458 threads, 6.18, none of this series).  That is not this
 * policy's to test, and it would read as an invalid policy.  Of the pool's
 * processes only the multi-threaded kinds create threads, and only at
 * start and after an exec (SIGUSR2).
 */
static bool slot_settled(struct slot *s)
{
	if (s->kind != K_MT && s->kind != K_PI)
		return true;	/* never creates a thread */
	if (s->init_policy < 0 && atomic_load(&shm->ready[s->idx]) == s->pid)
		return true;
	atomic_fetch_add(&st_unsettled, 1);
	return false;
}

/* Lock a live, settled slot picked by @r, for a policy change; NULL if none */
static struct slot *lock_policy_target(uint64_t r)
{
	struct slot *s = lock_target(r);

	if (s && !slot_settled(s)) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	return s;
}

static pid_t target_tid(struct slot *s, uint64_t r)
{
	return s->ntids ? s->tids[pick(r, s->ntids)].tid : s->pid;
}

static int draw_policy(uint64_t r)
{
	static const int table[] = {
		SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_IDLEBATCH,
		SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_IDLEBATCH,
		SCHED_OTHER, SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR,
		SCHED_DEADLINE, SCHED_DEADLINE, 7, 9, -1, 4, 0x7fffffff,
	};

	return use_policy(table[pick(r, sizeof(table) / sizeof(table[0]))]);
}

static int is_rt(int pol)
{
	pol &= ~SCHED_RESET_ON_FORK;
	return pol == SCHED_FIFO || pol == SCHED_RR || pol == SCHED_DEADLINE;
}

/*
 * Phases.  A task that leaves SCHED_DEADLINE (or dies) with its inactive
 * timer armed, asleep on a CPU that goes offline before the timer fires,
 * crashes this kernel: inactive_task_timer() divides by dl_bw_cpus() of
 * the offline CPU, 0 (an upstream deadline.c problem; no idle-batch task
 * is needed).  So unless --dl-hotplug, the run alternates phases of
 * --phase seconds: valid DEADLINE policies without hotplug, then hotplug
 * without DEADLINE tasks (switched away, their timers left to expire).
 */
static atomic_int dl_allowed = 1, hotplug_allowed = 0;
static pthread_rwlock_t policy_rw = PTHREAD_RWLOCK_INITIALIZER;	/* read: a policy op */
static atomic_long st_phases, st_dl_phase_off, st_dl_switched;

/* An RT or DL policy beyond the cap becomes SCHED_IDLEBATCH: keep the guest alive */
static int cap_policy(int pol)
{
	if ((pol & ~SCHED_RESET_ON_FORK) == SCHED_DEADLINE && !atomic_load(&dl_allowed)) {
		atomic_fetch_add(&st_dl_phase_off, 1);
		return use_policy(SCHED_IDLEBATCH | (pol & SCHED_RESET_ON_FORK));
	}
	if (is_rt(pol) && atomic_load(&rt_count) >= rt_cap) {
		atomic_fetch_add(&st_rt_capped, 1);
		return use_policy(SCHED_IDLEBATCH | (pol & SCHED_RESET_ON_FORK));
	}
	return pol;
}

static int draw_rtprio(uint64_t r, int pol)
{
	static const int odd[] = { 0, 99, 100, -1, 1000 };
	unsigned int k = pick(r, 16);

	if (pol == SCHED_FIFO || pol == SCHED_RR)
		return k < 13 ? 1 + (int)pick(r >> 8, 50) : odd[pick(r >> 16, 5)];
	return k < 14 ? 0 : odd[pick(r >> 16, 5)];
}

static int draw_nice(uint64_t r)
{
	return pick(r, 10) == 0 ? (int)pick(r >> 8, 51) - 25 : (int)pick(r >> 8, 40) - 20;
}

static void after_policy_change(pid_t tid, int pol)
{
	int now = sched_getscheduler(tid);

	if (now >= 0 && !valid_policy(now & ~SCHED_RESET_ON_FORK))
		violation(INV_POLICY, "after setting %d, sched_getscheduler(%d) = %#x", pol, tid, now);
	if (is_rt(pol) && now >= 0 && is_rt(now))
		atomic_fetch_add(&rt_count, 1);
}

static int op_setattr(struct draws *d)
{
	unsigned char buf[128];
	struct sched_attr a;
	struct slot *s;
	uint64_t flags = 0;
	unsigned int size;
	int pol, ret;
	pid_t tid;

	memset(&a, 0, sizeof(a));
	switch (pick(d->r[2], 16)) {
	case 0:
		size = SCHED_ATTR_SIZE_VER0;
		break;
	case 1:
		size = 20;	/* too small: EINVAL */
		break;
	case 2:
		size = sizeof(buf);	/* bigger, zero tail: fine */
		break;
	default:
		size = sizeof(a);
		break;
	}
	pthread_rwlock_rdlock(&policy_rw);
	pol = draw_policy(d->r[3]);
	{
		static const uint64_t bits[] = {
			SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_RECLAIM, SCHED_FLAG_DL_OVERRUN,
			SCHED_FLAG_KEEP_POLICY, SCHED_FLAG_KEEP_PARAMS, SCHED_FLAG_UTIL_CLAMP_MIN,
			SCHED_FLAG_UTIL_CLAMP_MAX,
		};
		for (int i = 0; i < 7; i++)
			if (pick(d->r[4] >> (i * 6), 7) == 0)
				flags |= bits[i];
		if (pick(d->r[4] >> 50, 64) == 0)
			flags |= 0x100ull << pick(d->r[4] >> 56, 8);	/* unknown */
	}
	if (!(flags & SCHED_FLAG_KEEP_POLICY))
		pol = cap_policy(pol);
	a.sched_flags = flags;
	a.sched_nice = draw_nice(d->r[5]);
	a.sched_priority = (uint32_t)draw_rtprio(d->r[6], pol);
	if (pol == SCHED_DEADLINE) {
		uint64_t rt = 100000 + pick(d->r[7], 900000);		/* 0.1..1 ms */
		uint64_t dl = rt + pick(d->r[7] >> 20, 10000000);	/* ..11 ms */
		uint64_t per = dl + pick(d->r[7] >> 40, 50000000);	/* ..61 ms */

		switch (pick(d->r[6] >> 32, 12)) {
		case 0:
			rt = dl + 1;		/* runtime > deadline */
			break;
		case 1:
			per = dl - 1;		/* period < deadline */
			break;
		case 2:
			rt = 512;		/* below 1024 ns */
			break;
		case 3:
			per = 0;		/* period = deadline */
			break;
		case 4:
			per = 5000000000ull;	/* above the 4 s maximum */
			break;
		case 5:
			rt = 0;
			break;
		default:
			break;
		}
		a.sched_runtime = rt;
		a.sched_deadline = dl;
		a.sched_period = per;
	}
	a.sched_util_min = pick(d->r[7] >> 8, 8) == 0 ? 1025 : pick(d->r[7] >> 16, 1025);
	a.sched_util_max = pick(d->r[7] >> 28, 8) == 0 ? UINT32_MAX : pick(d->r[7] >> 36, 1025);
	a.sched_policy = (uint32_t)pol;
	a.size = size;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &a, sizeof(a) < size ? sizeof(a) : size);
	s = lock_policy_target(d->r[0]);
	if (!s) {
		pthread_rwlock_unlock(&policy_rw);
		return -1;
	}
	tid = target_tid(s, d->r[1]);
	ret = sched_setattr(tid, (struct sched_attr *)buf, 0);
	if (ret == 0)
		after_policy_change(tid, pol);
	pthread_mutex_unlock(&s->lock);
	pthread_rwlock_unlock(&policy_rw);
	return ret;
}

static int op_setsched(struct draws *d)
{
	int pol = draw_policy(d->r[2]), ret;
	struct sched_param sp;
	struct slot *s;
	pid_t tid;

	if (pick(d->r[3], 4) == 0 && pol >= 0)
		pol |= SCHED_RESET_ON_FORK;
	pthread_rwlock_rdlock(&policy_rw);
	pol = cap_policy(pol);
	sp.sched_priority = draw_rtprio(d->r[4], pol & ~SCHED_RESET_ON_FORK);
	s = lock_policy_target(d->r[0]);
	if (!s) {
		pthread_rwlock_unlock(&policy_rw);
		return -1;
	}
	tid = target_tid(s, d->r[1]);
	ret = sched_setscheduler(tid, pol, &sp);
	if (ret == 0)
		after_policy_change(tid, pol);
	pthread_mutex_unlock(&s->lock);
	pthread_rwlock_unlock(&policy_rw);
	return ret;
}

static int op_setparam(struct draws *d)
{
	struct sched_param sp = { .sched_priority = draw_rtprio(d->r[2], SCHED_FIFO) };
	struct slot *s = lock_target(d->r[0]);
	int ret;

	if (pick(d->r[3], 3) == 0)
		sp.sched_priority = 0;
	if (!s)
		return -1;
	ret = sched_setparam(target_tid(s, d->r[1]), &sp);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static int op_setprio(struct draws *d)
{
	struct slot *s = lock_target(d->r[0]);
	int nice = draw_nice(d->r[2]), ret;

	if (!s)
		return -1;
	if (pick(d->r[3], 5) == 0)
		ret = setpriority(PRIO_PGRP, s->pid, nice);	/* the pool process's group */
	else
		ret = setpriority(PRIO_PROCESS, target_tid(s, d->r[1]), nice);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static int op_check(struct draws *d)
{
	struct slot *s = lock_target(d->r[0]);
	struct timespec ts;
	cpu_set_t set;
	pid_t tid;

	if (!s)
		return -1;
	rescan_tids(s);
	tid = target_tid(s, d->r[1]);
	check_tid(s, tid);
	/* Empty when its CPUs went offline while it slept: not checked */
	sched_getaffinity(tid, sizeof(set), &set);
	if (sched_rr_get_interval(tid, &ts) == 0 && (ts.tv_sec < 0 || ts.tv_sec > 121))
		violation(INV_POLICY, "sched_rr_get_interval(%d) = %ld.%09ld s", tid,
			  (long)ts.tv_sec, ts.tv_nsec);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int op_affinity(struct draws *d)
{
	cpu_set_t *set = CPU_ALLOC(1024);
	size_t size = CPU_ALLOC_SIZE(1024);
	struct slot *s;
	int ret;

	CPU_ZERO_S(size, set);
	switch (pick(d->r[2], 9)) {
	case 0:
	case 1:
		CPU_SET_S(pick(d->r[3], ncpus), size, set);
		break;
	case 2:
		for (int c = 0; c < ncpus; c++)
			if (d->r[3] & (1ull << c))
				CPU_SET_S(c, size, set);
		break;
	case 3:
		for (int c = 0; c < ncpus; c++)
			CPU_SET_S(c, size, set);
		break;
	case 4:		/* empty */
		break;
	case 5:		/* offline CPUs only, or a CPU that does not exist */
		for (int c = 1; c < ncpus; c++)
			if (!cpu_online(c))
				CPU_SET_S(c, size, set);
		if (!CPU_COUNT_S(size, set))
			CPU_SET_S(ncpus + (int)pick(d->r[3], 900), size, set);
		break;
	case 6:		/* all bits */
		for (int c = 0; c < 1024; c++)
			CPU_SET_S(c, size, set);
		break;
	default:
		CPU_SET_S(pick(d->r[3], ncpus), size, set);
		CPU_SET_S(pick(d->r[3] >> 16, ncpus), size, set);
		break;
	}
	s = lock_target(d->r[0]);
	if (!s) {
		CPU_FREE(set);
		return -1;
	}
	ret = sched_setaffinity(target_tid(s, d->r[1]),
				pick(d->r[4], 4) == 0 ? sizeof(unsigned long) : size, set);
	pthread_mutex_unlock(&s->lock);
	CPU_FREE(set);
	return ret;
}

static int op_cg_move(struct draws *d)
{
	char path[256], pidstr[16];
	struct slot *s;
	int ret, cg;

	if (!cg_ok)
		return -1;
	s = lock_target(d->r[0]);
	if (!s)
		return -1;
	/* A thread's TID moves its whole process */
	snprintf(pidstr, sizeof(pidstr), "%d", target_tid(s, d->r[1]));
	cg = pick(d->r[2], NR_CGROUPS);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg_path[cg]);
	ret = write_file(path, pidstr);
	pthread_mutex_unlock(&s->lock);
	/*
	 * A process moved into a frozen cgroup must freeze as well: once the
	 * freeze was measured, the move is a new request, with the bound
	 */
	if (ret == 0) {
		pthread_mutex_lock(&freeze_lock);
		if (cg_freeze[cg].requested && cg_freeze[cg].measured_gen == cg_freeze[cg].gen)
			freeze_request(cg);
		pthread_mutex_unlock(&freeze_lock);
	}
	return ret;
}

static int op_cg_knob(struct draws *d)
{
	int cg = pick(d->r[0], NR_CGROUPS);
	char val[64];

	if (!cg_ok)
		return -1;
	switch (pick(d->r[1], 4)) {
	case 0: {
		static const int odd[] = { 0, 10001, -1 };
		int w = pick(d->r[2], 8) == 0 ? odd[pick(d->r[3], 3)] : 1 + (int)pick(d->r[3], 10000);

		snprintf(val, sizeof(val), "%d", w);
		return cg_write(cg, "cpu.weight", val);
	}
	case 1:
		snprintf(val, sizeof(val), "%d", (int)pick(d->r[2], 44) - 22);
		return cg_write(cg, "cpu.weight.nice", val);
	case 2:
		return cg_write(cg, "cpu.idle", pick(d->r[2], 5) == 0 ? "2" : pick(d->r[3], 2) ? "1" : "0");
	default: {
		static const char *const maxes[] = {
			"max 100000", "50000 100000", "10000 100000", "1000 10000", "max", "0 0",
		};
		/* ENOENT without CONFIG_CFS_BANDWIDTH */
		return cg_write(cg, "cpu.max", maxes[pick(d->r[2], 6)]);
	}
	}
}

static int op_cg_freeze(struct draws *d)
{
	int cg = 1 + pick(d->r[0], NR_CGROUPS - 1), on = pick(d->r[1], 2), ret;

	if (!cg_ok)
		return -1;
	pthread_mutex_lock(&cg_lock);
	if (!on) {
		/*
		 * The request is judged and withdrawn before the thaw: a freeze
		 * that completed late, or never, is seen before it goes.
		 */
		pthread_mutex_lock(&freeze_lock);
		check_freeze(cg, 1);
		cg_freeze[cg].requested = 0;
		cg_freeze[cg].gen++;
		pthread_mutex_unlock(&freeze_lock);
	}
	ret = cg_write(cg, "cgroup.freeze", on ? "1" : "0");
	if (ret == 0 && on) {
		pthread_mutex_lock(&freeze_lock);
		if (!cg_freeze[cg].requested)
			freeze_request(cg);
		pthread_mutex_unlock(&freeze_lock);
	}
	pthread_mutex_unlock(&cg_lock);
	return ret;
}

static int op_signal(struct draws *d, int sig)
{
	struct slot *s = lock_target(d->r[0]);
	int ret;

	if (!s)
		return -1;
	if (sig == SIGKILL && !s->kill_t0) {
		s->kill_policy = sched_getscheduler(s->pid) & ~SCHED_RESET_ON_FORK;
		s->kill_t0 = now_ns();
		atomic_fetch_add(&st_kills, 1);
	}
	if (sig == SIGUSR2) {	/* to the leader, which execs */
		/* Unsettled until the new image's threads are up: slot_settled() */
		atomic_store(&shm->ready[s->idx], 0);
		ret = syscall(SYS_tgkill, s->pid, s->pid, SIGUSR2);
	} else if (sig == SIGALRM && pick(d->r[2], 2))
		ret = syscall(SYS_tgkill, s->pid, target_tid(s, d->r[1]), SIGALRM);
	else
		ret = pidfd_signal(s->pidfd, sig);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static char proc_state(pid_t tid)
{
	return task_state(tid);
}

static int op_ptrace(struct draws *d)
{
	struct slot *s = lock_target(d->r[0]);
	uint64_t t0, lat;
	int ret, warned = 0, interrupted;
	pid_t tid;

	if (!s)
		return -1;
	tid = target_tid(s, d->r[1]);
	ret = ptrace(PTRACE_SEIZE, tid, NULL, NULL);
	pthread_mutex_unlock(&s->lock);
	if (ret)
		return ret;
	/*
	 * Seized and running: a signal now (another operator's SIGSTOP,
	 * SIGALRM) gives a signal-delivery stop.  Then PTRACE_INTERRUPT, once
	 * or twice; the stop it asks for is timed.
	 */
	if (pick(d->r[2], 4) == 0)
		usleep(pick(d->r[3], 2000));
	t0 = now_ns();
	interrupted = 1;
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	if (pick(d->r[2] >> 8, 4) == 0)
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	/* Detach works once it is in a ptrace stop; keep trying until then */
	for (;;) {
		char st;

		if (ptrace(PTRACE_DETACH, tid, NULL, NULL) == 0)
			break;
		st = proc_state(tid);
		if (errno != ESRCH || st == '?' || st == 'Z' || st == 'X')
			break;
		lat = now_ns() - t0;
		if (lat > 10000000000ull && !warned) {
			warned = 1;
			note("ptrace: tid %d not stopped %.1f s after PTRACE_SEIZE%s (state %c); still trying",
			     tid, lat / 1e9, interrupted ? "+INTERRUPT" : "", st);
			if (atomic_fetch_add(&st_ptrace_slow, 1) < 3 || verbose)
				dump_task(tid);
		}
		/* Our exit detaches it */
		if (atomic_load(&stopping)) {
			atomic_fetch_add(&st_ptrace_abandoned, 1);
			return -1;
		}
		usleep(1000);
	}
	lat = now_ns() - t0;
	atomic_fetch_add(&st_ptrace_stops, 1);
	atomic_max_u64(&st_ptrace_worst_ns, lat);
	return 0;
}

static int op_pi(struct draws *d)
{
	struct pilock *l = &shm->locks[pick(d->r[0], NR_PILOCKS)];
	int ret = pi_lock(l, 100);

	if (ret == 0) {
		if (l->word & FUTEX_OWNER_DIED)
			atomic_fetch_add(&st_pi_dead, 1);
		atomic_fetch_add(&st_pi_acq, 1);
		if (pick(d->r[1], 2))
			usleep(pick(d->r[2], 1000));
		pi_unlock(l);
		return 0;
	}
	if (ret == -ETIMEDOUT)
		atomic_fetch_add(&st_pi_timeout, 1);
	else
		atomic_fetch_add(&st_pi_err, 1);
	return -1;
}

/* Kill the oldest transient: a full table */
static void kill_oldest_transient(void)
{
	struct transient *old = NULL;

	pthread_mutex_lock(&reg_lock);
	for (int i = 0; i < MAX_TRANSIENT; i++)
		if (transients[i].pid && !transients[i].kill_t0 &&
		    (!old || transients[i].born < old->born))
			old = &transients[i];
	if (old) {
		old->kill_policy = sched_getscheduler(old->pid) & ~SCHED_RESET_ON_FORK;
		old->kill_t0 = now_ns();
		atomic_fetch_add(&st_kills, 1);
		pidfd_signal(old->pidfd, SIGKILL);
	}
	pthread_mutex_unlock(&reg_lock);
}

static struct transient *transient_slot(void)
{
	for (int i = 0; i < MAX_TRANSIENT; i++)
		if (!transients[i].pid)
			return &transients[i];
	return NULL;
}

/* fork: the child takes a policy, spins, then execs /bin/true, itself, or exits */
static int op_fork(struct draws *d, int use_vfork)
{
	static char *const true_argv[] = { "true", NULL };
	static const int pols[] = { SCHED_IDLEBATCH, SCHED_IDLEBATCH, SCHED_OTHER, SCHED_BATCH, SCHED_IDLE };
	int pol = use_policy(pols[pick(d->r[0], 5)]), how = pick(d->r[1], 3);
	unsigned int us = pick(d->r[2], 5000);
	char arg[16];
	char *self_argv[] = { "idlebatch_fuzz", "--transient", arg, NULL };
	struct transient *t;
	pid_t pid;

	snprintf(arg, sizeof(arg), "%u", us);
	pthread_mutex_lock(&reg_lock);
	t = transient_slot();
	pthread_mutex_unlock(&reg_lock);
	if (!t) {
		kill_oldest_transient();
		return -1;
	}
	/*
	 * The table entry is claimed only after fork: the reaper looks pids up
	 * there, so hold reg_lock across fork() and the claim.  A vfork()
	 * child runs before the parent returns, so it must not need the lock.
	 */
	pthread_mutex_lock(&reg_lock);
	t = transient_slot();
	if (!t) {
		pthread_mutex_unlock(&reg_lock);
		return -1;
	}
	if (use_vfork) {
		pid = vfork();
		if (pid == 0) {
			if (how == 0)
				execv("/bin/true", true_argv);
			else if (how == 1)
				execv(self_exe, self_argv);
			_exit(0);
		}
	} else {
		pid = fork();
		if (pid == 0) {
			struct sched_param sp = { 0 };

			sched_setscheduler(0, pol, &sp);
			spin_us(us);
			if (how == 0)
				execv("/bin/true", true_argv);
			else if (how == 1)
				execv(self_exe, self_argv);
			_exit(0);
		}
	}
	if (pid > 0) {
		t->pid = pid;
		t->pidfd = pidfd_open_(pid);
		t->born = now_ns();
		t->kill_t0 = 0;
		t->kill_reported = 0;
		t->kill_parked_reported = 0;
		atomic_fetch_add(&st_transients, 1);
	}
	pthread_mutex_unlock(&reg_lock);
	return pid > 0 ? 0 : -1;
}

static pthread_mutex_t hotplug_lock = PTHREAD_MUTEX_INITIALIZER;
static int offlined_by_us[MAX_CPUS];

/* set_cpu_online(), timed and counted, with the CPUs this run took down */
static int fuzz_set_cpu_online(int cpu, int on)
{
	uint64_t t0 = now_ns();
	int ret;

	ret = set_cpu_online(cpu, on);
	atomic_max_u64(&st_hp_worst_ns, now_ns() - t0);
	if (ret == 0) {
		if (on) {
			atomic_fetch_add(&st_hp_on, 1);
			if (offlined_by_us[cpu])
				atomic_fetch_add(&st_hp_cycles, 1);
			offlined_by_us[cpu] = 0;
		} else {
			atomic_fetch_add(&st_hp_off, 1);
			offlined_by_us[cpu] = 1;
		}
	}
	return ret;
}

static int op_hotplug(struct draws *d)
{
	int cpu, ret;

	if (opt_no_hotplug || ncpus < 2)
		return -1;
	if (pthread_mutex_trylock(&hotplug_lock))
		return -1;
	if (!atomic_load(&hotplug_allowed)) {
		pthread_mutex_unlock(&hotplug_lock);
		return -1;
	}
	cpu = 1 + pick(d->r[0], ncpus - 1);
	if (cpu_online(cpu)) {
		/* Keep two CPUs online where there are three or more */
		ret = nr_online() > (ncpus >= 3 ? 2 : 1) ? fuzz_set_cpu_online(cpu, 0) : -1;
	} else {
		ret = fuzz_set_cpu_online(cpu, 1);
	}
	pthread_mutex_unlock(&hotplug_lock);
	return ret;
}

static int op_trace(struct draws *d)
{
	int ret = -1;

	if (!trace_ok || opt_no_trace)
		return -1;
	if (pthread_mutex_trylock(&trace_lock))
		return -1;
	switch (pick(d->r[0], 7)) {
	case 0:
	case 1:
		ret = tr_write("events/sched_batch/enable", "1");
		break;
	case 2:
		ret = tr_write("events/sched_batch/enable", "0");
		break;
	case 3:
		if (ftrace_filter_ok)
			ret = tr_write("current_tracer", "function");
		break;
	case 4:
		ret = tr_write("current_tracer", "nop");
		break;
	case 5:
		ret = tr_write("tracing_on", pick(d->r[1], 2) ? "1" : "0");
		break;
	default: {
		char path[128];

		snprintf(path, sizeof(path), "%s/trace", tr);
		ret = truncate_file(path);
		break;
	}
	}
	pthread_mutex_unlock(&trace_lock);
	return ret;
}

static int op_slice(struct draws *d)
{
	static const char *const vals[] = { "1", "10", "100", "1500", "1500", "60000", "0", "60001", "-5" };

	return write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", vals[pick(d->r[0], 9)]);
}

/* Hotplug phase: no task of ours may be SCHED_DEADLINE or have just left it */
static void phase_hotplug(void)
{
	struct sched_param sp = { 0 };

	pthread_rwlock_wrlock(&policy_rw);
	atomic_store(&dl_allowed, 0);
	pthread_rwlock_unlock(&policy_rw);
	for (int i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];

		pthread_mutex_lock(&s->lock);
		if (s->state == S_ALIVE)
			for (int j = 0; j < s->ntids; j++) {
				pid_t tid = s->tids[j].tid;

				if ((sched_getscheduler(tid) & ~SCHED_RESET_ON_FORK) != SCHED_DEADLINE)
					continue;
				atomic_fetch_add(&st_dl_switched, 1);
				if (sched_setscheduler(tid, use_policy(SCHED_IDLEBATCH), &sp) && errno != ESRCH)
					note("phase: cannot move tid %d out of SCHED_DEADLINE: %s",
					     tid, strerror(errno));
			}
		pthread_mutex_unlock(&s->lock);
	}
	/* The 0-lag timers of the tasks that left, or died, fire meanwhile */
	usleep(1000000);
	atomic_store(&hotplug_allowed, 1);
	atomic_fetch_add(&st_phases, 1);
}

static void phase_deadline(void)
{
	pthread_mutex_lock(&hotplug_lock);
	atomic_store(&hotplug_allowed, 0);
	pthread_mutex_unlock(&hotplug_lock);
	atomic_store(&dl_allowed, 1);
	atomic_fetch_add(&st_phases, 1);
}

struct operator {
	int idx;
	pthread_t th;
	struct rng rng;
	long ops;
};

static struct operator operators[MAX_OPERATORS];

static void *operator_fn(void *arg)
{
	struct operator *o = arg;
	int total = 0;

	for (int i = 0; i < NR_OPS; i++)
		total += ops[i].weight;
	{
		char name[16];

		snprintf(name, sizeof(name), "operator%d", o->idx);
		control_thread(PRIO_OPERATOR, name);
	}
	robust_init();
	while (!atomic_load(&stopping) && now_ns() < t_end) {
		uint64_t r = rng_next(&o->rng);
		struct draws d;
		int k = pick(r, total), op = 0, ret = -1;

		while (k >= ops[op].weight)
			k -= ops[op++].weight;
		for (int i = 0; i < 8; i++)
			d.r[i] = rng_next(&o->rng);
		switch (op) {
		case OP_SETATTR: ret = op_setattr(&d); break;
		case OP_SETSCHED: ret = op_setsched(&d); break;
		case OP_SETPARAM: ret = op_setparam(&d); break;
		case OP_SETPRIO: ret = op_setprio(&d); break;
		case OP_CHECK: ret = op_check(&d); break;
		case OP_AFFINITY: ret = op_affinity(&d); break;
		case OP_CG_MOVE: ret = op_cg_move(&d); break;
		case OP_CG_KNOB: ret = op_cg_knob(&d); break;
		case OP_CG_FREEZE: ret = op_cg_freeze(&d); break;
		case OP_STOP: ret = op_signal(&d, SIGSTOP); break;
		case OP_CONT: ret = op_signal(&d, SIGCONT); break;
		case OP_KILL: ret = op_signal(&d, SIGKILL); break;
		case OP_EXIT: ret = op_signal(&d, SIGUSR1); break;
		case OP_EXEC: ret = op_signal(&d, SIGUSR2); break;
		case OP_ALRM: ret = op_signal(&d, SIGALRM); break;
		case OP_PTRACE: ret = op_ptrace(&d); break;
		case OP_PI: ret = op_pi(&d); break;
		case OP_FORK: ret = op_fork(&d, 0); break;
		case OP_VFORK: ret = op_fork(&d, 1); break;
		case OP_HOTPLUG: ret = op_hotplug(&d); break;
		case OP_TRACE: ret = op_trace(&d); break;
		case OP_SLICE: ret = op_slice(&d); break;
		}
		atomic_fetch_add(&op_count[op], 1);
		if (ret == 0)
			atomic_fetch_add(&op_ok[op], 1);
		o->ops++;
		/* a pause, from the same draws: the pool gets the CPUs meanwhile */
		usleep(200 + pick(d.r[7] >> 48, pick(d.r[7] >> 44, 4) == 0 ? 20000 : 3000));
	}
	account_thread(CR_OPERATORS);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The checker: every thread's invariants, /proc/batchstat, freezes */

static struct cpustat cpu_last[MAX_CPUS];
static struct cpustat cpu_first[MAX_CPUS];
static int have_cpu_first;

static long long sum_parks(const struct cpustat *cs, long long *unparks)
{
	long long p = 0, u = 0;

	for (int c = 0; c < MAX_CPUS; c++) {
		p += cs[c].parks;
		for (int i = 0; i < 4; i++)
			u += cs[c].unparks[i];
	}
	if (unparks)
		*unparks = u;
	return p;
}

/* Read /proc/batchstat, check it and its counters against the last read */
static int check_cpu_counters(struct cpustat *cs)
{
	char why[1200];
	int n = read_batchstat(cs, why, sizeof(why));

	atomic_fetch_add(&inv_checks[INV_CPU_MONO], 1);
	if (n < 0) {
		violation(INV_CPU_MONO, "/proc/batchstat: %s", why);
		return -1;
	}
	for (int c = 0; c < MAX_CPUS; c++) {
		struct cpustat *a = &cpu_last[c], *b = &cs[c];
		int bad = 0;

		if (!b->present)
			continue;
		if (a->present) {
			bad |= b->parks < a->parks || b->mig_in < a->mig_in ||
			       b->mig_out < a->mig_out || b->run_ns < a->run_ns;
			for (int i = 0; i < 4; i++)
				bad |= b->unparks[i] < a->unparks[i];
			if (bad)
				violation(INV_CPU_MONO,
					  "cpu%d: a counter decreased: parks %lld->%lld unparks %lld,%lld,%lld,%lld->%lld,%lld,%lld,%lld migs %lld/%lld->%lld/%lld run %lld->%lld",
					  c, a->parks, b->parks, a->unparks[0], a->unparks[1], a->unparks[2],
					  a->unparks[3], b->unparks[0], b->unparks[1], b->unparks[2],
					  b->unparks[3], a->mig_in, a->mig_out, b->mig_in, b->mig_out,
					  a->run_ns, b->run_ns);
		}
		*a = *b;
	}
	return n;
}

/* Sum of the parks of every thread the pool had, as last seen */
static long long task_parks_sum(void)
{
	long long sum;

	pthread_mutex_lock(&reg_lock);
	sum = retired_parks;
	pthread_mutex_unlock(&reg_lock);
	for (int i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];

		pthread_mutex_lock(&s->lock);
		if (s->state == S_ALIVE)
			for (int j = 0; j < s->ntids; j++)
				sum += s->tids[j].max_parks;
		pthread_mutex_unlock(&s->lock);
	}
	return sum;
}

static void check_parks_sum(int final)
{
	struct cpustat cs[MAX_CPUS];
	long long tasks, cpus, base;
	int n;

	tasks = task_parks_sum();
	n = check_cpu_counters(cs);
	if (n < 0 || !have_cpu_first)
		return;
	/* Offline CPUs are not listed: only compare when every CPU is */
	for (int c = 0; c < ncpus; c++)
		if (!cs[c].present)
			return;
	cpus = sum_parks(cs, NULL);
	base = sum_parks(cpu_first, NULL);
	atomic_fetch_add(&inv_checks[INV_PARKS_SUM], 1);
	/* A park in progress on each CPU may be counted in the task only yet */
	if (tasks > cpus - base + (final ? 0 : ncpus))
		violation(INV_PARKS_SUM, "%s: tasks' parks sum to %lld, CPUs' parks grew by %lld",
			  final ? "at the end" : "while running", tasks, cpus - base);
}

/*
 * Count the threads of cgroup @cg that have not reached the freezer yet,
 * by policy, and those of them that are runnable (state R): waiting for a
 * CPU, like a task that must die.  A thread in do_freezer_trap() is
 * frozen; a stopped or traced one counts as frozen for cgroup.events.
 * An idle-batch laggard still parked is a violation: the freezer's
 * signal_wake_up() unparks it, and with the freeze pending it cannot be
 * parked again, so a freeze would wait for idle time.
 */
static void count_freeze_laggards(int cg)
{
	char path[256], buf[64];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.threads", cg_path[cg]);
	fp = fopen(path, "r");
	while (fp && fgets(buf, sizeof(buf), fp)) {
		char spath[64], sbuf[4096], wchan[64] = "", *f, state;
		pid_t tid = atoi(buf);
		int pol, fd, len;

		snprintf(spath, sizeof(spath), "/proc/%d/wchan", tid);
		fd = open(spath, O_RDONLY);
		if (fd >= 0) {
			len = read(fd, wchan, sizeof(wchan) - 1);
			wchan[len > 0 ? len : 0] = '\0';
			close(fd);
		}
		if (!strcmp(wchan, "do_freezer_trap") || !strcmp(wchan, "do_signal_stop") ||
		    !strcmp(wchan, "ptrace_stop"))
			continue;
		f = stat_fields(tid, sbuf, sizeof(sbuf));
		state = f ? *f : '?';
		pol = (int)stat_field(tid, 41);
		if (pol < 0 || pol > 9)
			continue;
		atomic_fetch_add(&st_freeze_laggards[pol], 1);
		if (state == 'R')
			atomic_fetch_add(&st_freeze_laggards_running[pol], 1);
		if (pol == SCHED_IDLEBATCH) {
			long long parks, parked_ns;
			char bst;

			if (task_batchstat(tid, &bst, &parks, &parked_ns) == 0 && bst == 'P') {
				atomic_fetch_add(&st_freeze_laggards_parked, 1);
				violation(INV_FREEZE, "idle-batch thread %d of %s still parked %d ms after cgroup.freeze=1",
					  tid, cg_path[cg], opt_kill_bound_ms);
				dump_task(tid);
			}
		}
	}
	if (fp)
		fclose(fp);
}

/* cgroup.events says "frozen 1".  CG */
static int cg_frozen(int cg)
{
	char path[256], buf[256];
	int frozen = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg_path[cg]);
	fp = fopen(path, "r");
	while (fp && fgets(buf, sizeof(buf), fp))
		sscanf(buf, "frozen %d", &frozen);
	if (fp)
		fclose(fp);
	return frozen == 1;
}

/*
 * A freeze needs what a SIGKILL needs: each thread of the cgroup must run
 * to its signal path.  So it has the kill's bounds: one slower than
 * --kill-bound-ms is counted, with the policies of the threads it still
 * waits for; one slower than --hang-ms is a hang, whether it is seen still
 * thawed past the bound, frozen only after it, or withdrawn (@at_thaw)
 * unfrozen past it.  A frozen look gives the latency's upper bound, a
 * thawed one its lower.  Under freeze_lock.
 */
static void check_freeze(int cg, int at_thaw)
{
	struct cg_freeze *f = &cg_freeze[cg];
	uint64_t before, after;
	int frozen;

	if (!f->requested || f->measured_gen == f->gen)
		return;
	before = now_ns() - f->t0;
	frozen = cg_frozen(cg);
	after = now_ns() - f->t0;
	if (frozen) {
		f->measured_gen = f->gen;
		atomic_fetch_add(&st_freezes_measured, 1);
		atomic_fetch_add(&inv_checks[INV_FREEZE], 1);
		atomic_max_u64(&st_freeze_worst_ns, after);
		if (f->slow_gen == f->gen)
			atomic_fetch_add(&st_freezes_slow, 1);
		if (after > (uint64_t)opt_hang_ms * 1000000ull && f->reported_gen != f->gen) {
			f->reported_gen = f->gen;
			violation(INV_FREEZE, "%s frozen only %.1f s after cgroup.freeze=1",
				  cg_path[cg], after / 1e9);
		}
		return;
	}
	if (before > (uint64_t)opt_kill_bound_ms * 1000000ull && f->slow_gen != f->gen) {
		f->slow_gen = f->gen;
		count_freeze_laggards(cg);
	}
	if (before > (uint64_t)opt_hang_ms * 1000000ull && f->reported_gen != f->gen) {
		char path[256], buf[64];
		FILE *fp;

		f->reported_gen = f->gen;
		atomic_fetch_add(&inv_checks[INV_FREEZE], 1);
		violation(INV_FREEZE, "%s not frozen %.1f s after cgroup.freeze=1%s",
			  cg_path[cg], before / 1e9, at_thaw ? ", when thawed" : "");
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg_path[cg]);
		fp = fopen(path, "r");
		while (fp && fgets(buf, sizeof(buf), fp)) {
			pid_t pid = atoi(buf);

			if (pid > 0)
				dump_task(pid);
		}
		if (fp)
			fclose(fp);
	}
}

/* A new freeze request of @cg, from now.  Under freeze_lock. */
static void freeze_request(int cg)
{
	cg_freeze[cg].requested = 1;
	cg_freeze[cg].t0 = now_ns();
	cg_freeze[cg].gen++;
}

/* Freeze requests neither measured nor reported yet.  Under freeze_lock. */
static int freezes_pending(void)
{
	int n = 0;

	for (int cg = 1; cg < NR_CGROUPS; cg++) {
		struct cg_freeze *f = &cg_freeze[cg];

		n += f->requested && f->measured_gen != f->gen && f->reported_gen != f->gen;
	}
	return n;
}

static atomic_int freeze_watch_stop;

/*
 * The freeze watcher looks at every requested freeze each 50 ms, above
 * every thread of the fuzzer that works (operators, spawner, main) and
 * every pool task, and takes only freeze_lock: a freeze is measured to
 * within its longest gap, which the report prints.
 */
static void *freeze_watch_fn(void *arg)
{
	uint64_t last = now_ns();

	(void)arg;
	control_thread(PRIO_FREEZE_WATCH, "freezewatch");
	while (cg_ok && !atomic_load(&freeze_watch_stop)) {
		uint64_t t = now_ns();

		atomic_max_u64(&st_freeze_watch_gap_worst_ns, t - last);
		last = t;
		pthread_mutex_lock(&freeze_lock);
		for (int cg = 1; cg < NR_CGROUPS; cg++)
			check_freeze(cg, 0);
		pthread_mutex_unlock(&freeze_lock);
		usleep(50000);
	}
	account_thread(CR_FREEZE_WATCH);
	return NULL;
}

static void census_rt(void)
{
	int n = 0;

	for (int i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];

		pthread_mutex_lock(&s->lock);
		if (s->state == S_ALIVE)
			for (int j = 0; j < s->ntids; j++) {
				int p = sched_getscheduler(s->tids[j].tid);

				n += p >= 0 && is_rt(p);
			}
		pthread_mutex_unlock(&s->lock);
	}
	atomic_store(&rt_count, n);
}

static void check_all_slots(void)
{
	for (int i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];

		pthread_mutex_lock(&s->lock);
		if (s->state == S_ALIVE) {
			rescan_tids(s);
			for (int j = 0; j < s->ntids; j++)
				check_tid(s, s->tids[j].tid);
		}
		pthread_mutex_unlock(&s->lock);
	}
}

static atomic_int checker_stop;

static void *checker_fn(void *arg)
{
	(void)arg;
	uint64_t last = now_ns();

	control_thread(PRIO_CHECKER, "checker");
	while (!atomic_load(&checker_stop)) {
		uint64_t t = now_ns();

		atomic_max_u64(&st_checker_gap_worst_ns, t - last);
		last = t;
		check_all_slots();
		census_rt();
		check_parks_sum(0);
		usleep(500000);
	}
	account_thread(CR_CHECKER);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The watchdog: kills that take too long */

static atomic_int watchdog_stop;

static void *watchdog_fn(void *arg)
{
	uint64_t bound = (uint64_t)opt_kill_bound_ms * 1000000ull,
		 hang = (uint64_t)opt_hang_ms * 1000000ull;

	(void)arg;
	control_thread(PRIO_WATCHDOG, "watchdog");
	while (!atomic_load(&watchdog_stop)) {
		uint64_t now;

		for (int i = 0; i < nslots; i++) {
			struct slot *s = &slots[i];
			pid_t pid = 0, parked = 0;
			int level = 0;

			pthread_mutex_lock(&s->lock);
			now = now_ns();
			if (s->state == S_ALIVE && s->kill_t0 && now > s->kill_t0) {
				uint64_t age = now - s->kill_t0;

				if (age > bound && s->kill_reported == 0) {
					s->kill_reported = 1;
					level = 1;
				} else if (age > hang && s->kill_reported == 1) {
					s->kill_reported = 2;
					level = 2;
				}
				/* SIGKILL unparks, and a task with it pending never parks */
				if (age > KILL_UNPARK_NS && !s->kill_parked_reported) {
					for (int j = 0; j < s->ntids && !parked; j++) {
						long long parks, pns;
						char st;

						if (task_batchstat(s->tids[j].tid, &st, &parks, &pns) == 0 &&
						    st == 'P')
							parked = s->tids[j].tid;
					}
					atomic_fetch_add(&inv_checks[INV_KILL_PARKED], 1);
					if (parked)
						s->kill_parked_reported = 1;
				}
				pid = s->pid;
			}
			pthread_mutex_unlock(&s->lock);
			if (parked) {
				violation(INV_KILL_PARKED, "tid %d of pid %d (%s) is parked %.1f s after SIGKILL",
					  parked, pid, kind_name[s->kind], (now - s->kill_t0) / 1e9);
				dump_task(pid);
			}
			if (level == 1) {
				note("slow kill: pid %d (%s) not reaped %.1f s after SIGKILL:",
				     pid, kind_name[s->kind], bound / 1e9);
				atomic_fetch_add(&st_slow_kills, 1);
				if (atomic_load(&st_slow_kills) <= 3)
					dump_task(pid);
			} else if (level == 2) {
				violation(INV_KILL, "pid %d (%s) still not reaped %.0f s after SIGKILL: a hang",
					  pid, kind_name[s->kind], hang / 1e9);
				dump_task(pid);
				write_file("/proc/sysrq-trigger", "w");
				atomic_store(&fatal, 1);
			}
		}
		now = now_ns();
		pthread_mutex_lock(&reg_lock);
		for (int i = 0; i < MAX_TRANSIENT; i++) {
			struct transient *t = &transients[i];

			if (t->pid && t->kill_t0 && now > t->kill_t0 + KILL_UNPARK_NS &&
			    !t->kill_parked_reported) {
				long long parks, pns;
				char st;

				atomic_fetch_add(&inv_checks[INV_KILL_PARKED], 1);
				if (task_batchstat(t->pid, &st, &parks, &pns) == 0 && st == 'P') {
					t->kill_parked_reported = 1;
					violation(INV_KILL_PARKED, "transient pid %d is parked %.1f s after SIGKILL",
						  t->pid, (now - t->kill_t0) / 1e9);
				}
			}
			if (t->pid && t->kill_t0 && now > t->kill_t0 + hang && !t->kill_reported) {
				t->kill_reported = 1;
				violation(INV_KILL, "transient pid %d not reaped %.0f s after SIGKILL: a hang",
					  t->pid, hang / 1e9);
			}
		}
		pthread_mutex_unlock(&reg_lock);
		usleep(200000);
	}
	account_thread(CR_WATCHDOG);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setup, cleanup, report */


/* Any task in the system with an idle-batch state, other than @except's? */
static int idlebatch_tasks_left(int print)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	int n = 0;

	while (proc && (d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);
		char path[64];
		struct dirent *t;
		DIR *task;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		task = opendir(path);
		while (task && (t = readdir(task))) {
			pid_t tid = atoi(t->d_name);
			char st;
			long long parks, pns;

			if (tid <= 0 || task_batchstat(tid, &st, &parks, &pns) || st == '-')
				continue;
			n++;
			if (print)
				note("  idle-batch task left: %d/%d state %c", pid, tid, st);
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
	return n;
}

/* Children of ours that /proc still shows */
static int children_left(int print)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	int n = 0;

	while (proc && (d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);

		if (pid <= 0 || pid == fuzzer_pid)
			continue;
		if (stat_field(pid, 4) == fuzzer_pid) {
			n++;
			if (print)
				note("  child left: pid %d state %c", pid, task_state(pid));
		}
	}
	if (proc)
		closedir(proc);
	return n;
}

static int outstanding(void)
{
	int n = 0;

	for (int i = 0; i < nslots; i++)
		n += slots[i].state == S_ALIVE;
	pthread_mutex_lock(&reg_lock);
	for (int i = 0; i < MAX_TRANSIENT; i++)
		n += transients[i].pid != 0;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

static void kill_everything(void)
{
	char path[256];

	if (cg_ok) {
		for (int cg = 1; cg < NR_CGROUPS; cg++)
			cg_write(cg, "cgroup.freeze", "0");
	}
	for (int i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];

		pthread_mutex_lock(&s->lock);
		if (s->state == S_ALIVE) {
			if (!s->kill_t0) {
				s->kill_policy = sched_getscheduler(s->pid) & ~SCHED_RESET_ON_FORK;
				s->kill_t0 = now_ns();
				atomic_fetch_add(&st_kills, 1);
			}
			pidfd_signal(s->pidfd, SIGKILL);
		}
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_lock(&reg_lock);
	for (int i = 0; i < MAX_TRANSIENT; i++) {
		struct transient *t = &transients[i];

		if (t->pid) {
			if (!t->kill_t0) {
				t->kill_policy = sched_getscheduler(t->pid) & ~SCHED_RESET_ON_FORK;
				t->kill_t0 = now_ns();
				atomic_fetch_add(&st_kills, 1);
			}
			pidfd_signal(t->pidfd, SIGKILL);
		}
	}
	pthread_mutex_unlock(&reg_lock);
	/* Grandchildren (the forkers' children) */
	if (cg_ok) {
		snprintf(path, sizeof(path), "%s/cgroup.kill", cg_top);
		write_file(path, "1");
	}
}

static int cleanup_system(void)
{
	int bad = 0;
	char path[1024];

	/* CPUs back online */
	for (int c = 1; c < ncpus; c++) {
		for (int tries = 0; tries < 5 && !cpu_online(c); tries++) {
			if (fuzz_set_cpu_online(c, 1))
				usleep(200000);
		}
		if (!cpu_online(c)) {
			note("cleanup: cpu%d stays offline: %s", c, strerror(errno));
			bad++;
		}
	}
	trace_cleanup();
	if (slice_orig[0])
		write_file("/proc/sys/kernel/sched_idlebatch_slice_ms", slice_orig);
	if (self_copied)
		remove_reachable_copy(self_exe);
	if (cg_ok || cg_top[0]) {
		for (int cg = 0; cg < NR_CGROUPS; cg++) {
			if (!cg_path[cg][0])
				continue;
			for (int tries = 0; tries < 50 && rmdir(cg_path[cg]) && errno == EBUSY; tries++)
				usleep(100000);
			if (access(cg_path[cg], F_OK) == 0) {
				note("cleanup: cannot remove %s: %s", cg_path[cg], strerror(errno));
				snprintf(path, sizeof(path), "%s/cgroup.procs", cg_path[cg]);
				dump_file(path, "procs");
				bad++;
			}
		}
		if (cg_top[0] && rmdir(cg_top) && errno != ENOENT) {
			note("cleanup: cannot remove %s: %s", cg_top, strerror(errno));
			bad++;
		}
		if (cg_root_enabled_cpu)
			write_file("/sys/fs/cgroup/cgroup.subtree_control", "-cpu");
	}
	return bad;
}

static void cpu_report(double secs)
{
	double own = 0, rest;
	struct rusage ru;

	account_thread(CR_MAIN);
	printf("#   CPU time of the fuzzer's threads:");
	for (int i = 0; i < NR_CR; i++) {
		printf(" %s %.1fs", cr_name[i], cpu_by_role[i] / 1e9);
		own += cpu_by_role[i] / 1e9;
	}
	getrusage(RUSAGE_CHILDREN, &ru);
	rest = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("\n#   CPU time: fuzzer threads %.1f s, reaped tasks %.1f s (user %.1f s), of %.0f CPU-seconds\n",
	       own, rest, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, secs * ncpus);
}

static int report(double secs)
{
	int failed = 0, n = 0;
	long total = 0;

	pthread_mutex_lock(&out_lock);
	printf("# summary: seed %llu, %.1f s of operations, %d operators, %d pool slots, %d CPUs\n",
	       (unsigned long long)opt_seed, secs, opt_operators, nslots, ncpus);
	printf("#   operations (done/ok):");
	for (int i = 0; i < NR_OPS; i++) {
		total += op_count[i];
		printf("%s %s %ld/%ld", i % 6 ? "," : "\n#    ", ops[i].name,
		       (long)op_count[i], (long)op_ok[i]);
	}
	printf("\n#   operations in all: %ld (%.0f/s)\n", total, total / (secs > 0 ? secs : 1));
	for (int i = 0; i < opt_operators; i++)
		printf("#   operator %d: %ld operations\n", i, operators[i].ops);
	cpu_report(secs);
	printf("#   tasks created: %ld pool processes, %ld transients (fork/vfork from operators), "
	       "%ld forks, %ld vforks and %ld self-execs in the pool\n",
	       (long)st_spawned, (long)st_transients, shm ? (long)shm->forks : 0,
	       shm ? (long)shm->vforks : 0, shm ? (long)shm->execs : 0);
	if (shm) {
		printf("#   pool progress (loop turns):");
		for (int i = 0; i <= R_PI_FAIR; i++)
			printf(" %s %ld", role_name[i], (long)shm->progress[i]);
		printf("\n");
	}
	printf("#   reaped: %ld of ours, %ld orphans, %ld traced threads; ends: %ld voluntary, %ld by other signals\n",
	       (long)st_reaped, (long)st_orphans, (long)st_traced_exits,
	       (long)st_exits_voluntary, (long)st_exits_signal);
	printf("#   SIGKILLs: %ld sent, %ld completed, worst latency %.1f ms; %ld took over %d ms (a hang: over %d ms)\n",
	       (long)st_kills, (long)st_kills_done, st_kill_worst_ns / 1e6, (long)st_slow_kills,
	       opt_kill_bound_ms, opt_hang_ms);
	printf("#   kills by policy at the kill (done, over %d ms, worst ms):", opt_kill_bound_ms);
	for (int i = 0; i < 10; i++)
		if (st_kills_by_pol[i])
			printf(" [%d] %ld, %ld, %.0f", i, (long)st_kills_by_pol[i], (long)st_slow_by_pol[i],
			       st_kill_worst_by_pol[i] / 1e6);
	printf("\n");
	printf("#   ends by a signal other than ours:");
	for (int i = 1; i < 65; i++)
		if (st_end_sig[i])
			printf(" %s %ld", strsignal(i), (long)st_end_sig[i]);
	printf("\n");
	printf("#   CPU hotplug: %ld offline, %ld online, %ld full cycles, slowest %.1f ms\n",
	       (long)st_hp_off, (long)st_hp_on, (long)st_hp_cycles, st_hp_worst_ns / 1e6);
	printf("#   ptrace: %ld seize..detach rounds, slowest %.1f ms, %ld over 10 s, %ld given up at the end\n",
	       (long)st_ptrace_stops, st_ptrace_worst_ns / 1e6, (long)st_ptrace_slow,
	       (long)st_ptrace_abandoned);
	printf("#   cgroup freezes measured: %ld, slowest %.1f ms; %ld took over %d ms (a hang: over %d ms)\n",
	       (long)st_freezes_measured, st_freeze_worst_ns / 1e6, (long)st_freezes_slow,
	       opt_kill_bound_ms, opt_hang_ms);
	printf("#   the checker's longest pass, start to start: %.1f ms; the freeze watcher's longest gap: %.1f ms (freezes are measured to within it)\n",
	       st_checker_gap_worst_ns / 1e6, st_freeze_watch_gap_worst_ns / 1e6);
	printf("#   threads a freeze still waited for at %d ms, by policy (all, runnable):",
	       opt_kill_bound_ms);
	for (int i = 0; i < 10; i++)
		if (st_freeze_laggards[i])
			printf(" [%d] %ld, %ld", i, (long)st_freeze_laggards[i],
			       (long)st_freeze_laggards_running[i]);
	printf("; idle-batch ones still parked: %ld", (long)st_freeze_laggards_parked);
	printf("\n");
	printf("#   PI futex: operators %ld taken (%ld owner-died), %ld timeouts, %ld errors; pool %ld taken, %ld errors\n",
	       (long)st_pi_acq, (long)st_pi_dead, (long)st_pi_timeout, (long)st_pi_err,
	       shm ? (long)shm->pool_pi_acq : 0, shm ? (long)shm->pool_pi_err : 0);
	printf("#   RT/DL policies turned into idle-batch by the cap of %d: %ld\n",
	       rt_cap, (long)st_rt_capped);
	printf("#   policy changes left out while a process was starting its threads: %ld\n",
	       (long)st_unsettled);
	printf("#   zombie DEADLINE threads seen with the DL parameters the kernel cleared (not violations): %ld\n",
	       (long)dead_dl_cleared);
	printf("#   phases: %ld switches; DL policies turned into idle-batch in hotplug phases %ld, DL tasks switched out %ld%s\n",
	       (long)st_phases, (long)st_dl_phase_off, (long)st_dl_switched,
	       opt_dl_hotplug ? " (--dl-hotplug: no phases)" : "");
	for (int k = 0; k < NR_INV; k++) {
		n++;
		if (inv_fails[k])
			failed++;
		printf("%s %d - %s (%ld checks%s)\n", inv_fails[k] ? "not ok" : "ok", n,
		       inv_name[k], (long)inv_checks[k],
		       inv_fails[k] ? ", FAILED" : "");
		if (inv_fails[k])
			printf("#   %ld violations\n", (long)inv_fails[k]);
	}
	printf("1..%d\n", n);
	if (failed)
		printf("# FAILED: reproduce with: %s\n", repro);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return failed;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: idlebatch_fuzz [--seed N] [--seconds S] [--operators N] [--pool N]\n"
		"                      [--kill-bound-ms MS] [--hang-ms MS] [--no-hotplug] [--no-trace]\n"
		"                      [--no-cgroup] [--dl-hotplug] [--phase S] [--no-idlebatch]\n"
		"                      [--verbose] [--force]\n"
		"Fuzz SCHED_IDLEBATCH in the test guest (destructive: CPU hotplug, cgroups,\n"
		"tracing; refuses to run without $VM_SCRATCH unless --force).\n"
		"A kill slower than --kill-bound-ms (5000) is reported with what the kernel\n"
		"says of the task; one slower than --hang-ms (60000) fails the run.  A cgroup\n"
		"freeze has the same bounds.\n"
		"Valid SCHED_DEADLINE policies and CPU hotplug take turns, --phase S (10)\n"
		"each, unless --dl-hotplug: together they crash this kernel in\n"
		"inactive_task_timer() (a division by zero, not idle-batch's).\n"
		"--no-idlebatch uses SCHED_OTHER wherever it would use SCHED_IDLEBATCH:\n"
		"a baseline run, to tell the policy's problems from the kernel's.\n");
}

/* A transient: spin a while, exit */
static int transient_main(const char *arg)
{
	spin_us((unsigned int)atoi(arg));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "operators", required_argument, NULL, 'o' },
		{ "pool", required_argument, NULL, 'p' },
		{ "kill-bound-ms", required_argument, NULL, 'k' },
		{ "hang-ms", required_argument, NULL, 'K' },
		{ "no-hotplug", no_argument, NULL, 'H' },
		{ "no-trace", no_argument, NULL, 'T' },
		{ "no-cgroup", no_argument, NULL, 'C' },
		{ "dl-hotplug", no_argument, NULL, 'D' },
		{ "no-idlebatch", no_argument, NULL, 'N' },
		{ "phase", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	pthread_t reaper, spawner, checker, watchdog, freeze_watch;
	int force = 0, opt, failed, seed_given = 0;
	struct cpustat cs0[MAX_CPUS];
	char why[1200];
	uint64_t t_ops_end;
	struct rlimit nocore = { 0, 0 };
	pthread_mutexattr_t mattr;
	uint64_t next_note, next_phase, last_progress = 0;
	long last_total = -1;
	int stall_dumped = 0;
	long long p0, u0;

	if (argc >= 6 && !strcmp(argv[1], "--pool"))
		pool_main(atoi(argv[2]), atoi(argv[3]), strtoull(argv[4], NULL, 0), atoi(argv[5]));
	if (argc >= 3 && !strcmp(argv[1], "--transient"))
		return transient_main(argv[2]);

	/* note() and violation() are called at every priority the threads run at */
	pi_mutex_init(&out_lock);
	while ((opt = getopt_long(argc, argv, "s:t:o:p:k:K:HTCDNP:vfh", lopts, NULL)) != -1) {
		switch (opt) {
		case 's': opt_seed = strtoull(optarg, NULL, 0); seed_given = 1; break;
		case 't': opt_seconds = atoi(optarg); break;
		case 'o': opt_operators = atoi(optarg); break;
		case 'p': opt_pool = atoi(optarg); break;
		case 'k': opt_kill_bound_ms = atoi(optarg); break;
		case 'K': opt_hang_ms = atoi(optarg); break;
		case 'H': opt_no_hotplug = 1; break;
		case 'T': opt_no_trace = 1; break;
		case 'C': opt_no_cgroup = 1; break;
		case 'D': opt_dl_hotplug = 1; break;
		case 'N': opt_no_idlebatch = 1; break;
		case 'P': opt_phase_s = atoi(optarg) > 0 ? atoi(optarg) : 10; break;
		case 'v': verbose = 1; break;
		case 'f': force = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || opt_seconds < 1 || opt_operators < 1 || opt_operators > MAX_OPERATORS) {
		usage(stderr);
		return 2;
	}
	if (!getenv("VM_SCRATCH") && !force) {
		fprintf(stderr, "idlebatch_fuzz: not in the test guest ($VM_SCRATCH unset): "
			"it offlines CPUs and changes cgroups and tracing; --force to run anyway\n");
		return 2;
	}
	if (!seed_given)
		opt_seed = now_ns() % 1000000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	fuzzer_pid = getpid();
	ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	if (!opt_pool)
		opt_pool = ncpus * 4 < 8 ? 8 : ncpus * 4;
	nslots = opt_pool > MAX_SLOTS ? MAX_SLOTS : opt_pool;
	rt_cap = ncpus / 4 < 1 ? 1 : ncpus / 4;
	{
		char extra[128];

		/* Fuzzer options the run script passes after "--" (it adds --no-trace for --mttcg) */
		snprintf(extra, sizeof(extra), "%s%s%s%s", opt_no_hotplug ? " --no-hotplug" : "",
			 opt_no_cgroup ? " --no-cgroup" : "", opt_dl_hotplug ? " --dl-hotplug" : "",
			 opt_no_idlebatch ? " --no-idlebatch" : "");
		snprintf(repro, sizeof(repro),
			 "tests/fuzz/run --seed %llu --seconds %d --smp %d%s%s%s (in the guest: idlebatch_fuzz --seed %llu --seconds %d --operators %d --pool %d%s%s)",
			 (unsigned long long)opt_seed, opt_seconds, ncpus, opt_no_trace ? " --mttcg" : "",
			 extra[0] ? " --" : "", extra, (unsigned long long)opt_seed, opt_seconds,
			 opt_operators, nslots, opt_no_trace ? " --no-trace" : "", extra);
	}
	/*
	 * The pool execs us again and again: from a copy on a tmpfs, not over
	 * the guest's slow 9p share of the host (a kill that finds a task in a
	 * 9p request waits for the host).
	 */
	{
		char orig[400];
		ssize_t len = readlink("/proc/self/exe", orig, sizeof(orig) - 1);

		if (len < 0) {
			perror("readlink /proc/self/exe");
			return 2;
		}
		orig[len] = 0;
		if (reachable_copy(orig, self_exe, sizeof(self_exe))) {
			note("cannot copy %s to a tmpfs (%s): the pool execs it from there", orig,
			     strerror(errno));
			snprintf(self_exe, sizeof(self_exe), "%s", orig);
		} else {
			self_copied = 1;
		}
	}
	note("idlebatch_fuzz: seed %llu, %d s, %d operators, %d pool slots, %d CPUs, kill bound %d ms, hang %d ms",
	     (unsigned long long)opt_seed, opt_seconds, opt_operators, nslots, ncpus, opt_kill_bound_ms,
	     opt_hang_ms);
	note("reproduce: %s", repro);

	if (access("/proc/batchstat", R_OK)) {
		printf("not ok 1 - /proc/batchstat missing: kernel without SCHED_IDLEBATCH?\n1..1\n");
		return 1;
	}
	if (sched_get_priority_min(SCHED_IDLEBATCH) != 0 || sched_get_priority_max(SCHED_IDLEBATCH) != 0)
		violation(INV_POLICY, "sched_get_priority_min/max(SCHED_IDLEBATCH) = %d/%d, want 0/0",
			  sched_get_priority_min(SCHED_IDLEBATCH), sched_get_priority_max(SCHED_IDLEBATCH));
	setrlimit(RLIMIT_CORE, &nocore);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	read_line("/proc/sys/kernel/sched_idlebatch_slice_ms", slice_orig, sizeof(slice_orig));

	shm_fd = memfd_create("idlebatch-fuzz", 0);	/* no CLOEXEC: the pool maps it */
	if (shm_fd < 0 || ftruncate(shm_fd, sizeof(*shm))) {
		perror("memfd");
		return 2;
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	if (shm == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	memset(shm, 0, sizeof(*shm));

	if (!opt_no_cgroup)
		cg_ok = cg_setup() == 0;
	if (!opt_no_trace)
		trace_setup();
	for (int c = 1; c < ncpus; c++)
		if (!cpu_online(c))
			note("cpu%d is offline at the start", c);
	/* Nothing of ours parked yet: the counters' baseline */
	if (read_batchstat(cs0, why, sizeof(why)) < 0) {
		violation(INV_CPU_MONO, "/proc/batchstat at the start: %s", why);
	} else {
		memcpy(cpu_first, cs0, sizeof(cs0));
		memcpy(cpu_last, cs0, sizeof(cs0));
		have_cpu_first = 1;
		p0 = sum_parks(cs0, &u0);
		if (idlebatch_tasks_left(0) == 0 && p0 != u0)
			violation(INV_FINAL, "at the start, with no idle-batch task: %lld parks, %lld unparks",
				  p0, u0);
	}

	rng_seed(&spawn_rng, opt_seed, 999);
	pthread_mutexattr_init(&mattr);
	pthread_mutexattr_setprotocol(&mattr, PTHREAD_PRIO_INHERIT);
	for (int i = 0; i < nslots; i++) {
		pthread_mutex_init(&slots[i].lock, &mattr);
		slots[i].idx = i;
		slots[i].kind = kind_pattern[i % (sizeof(kind_pattern) / sizeof(kind_pattern[0]))];
		slots[i].pidfd = -1;
	}
	for (int i = 0; i < MAX_TRANSIENT; i++)
		transients[i].pidfd = -1;

	t_start = now_ns();
	t_end = t_start + (uint64_t)opt_seconds * 1000000000ull;
	pi_mutex_init(&freeze_lock);
	control_thread(PRIO_MAIN, "main");
	pthread_create(&reaper, NULL, reaper_fn, NULL);
	pthread_create(&watchdog, NULL, watchdog_fn, NULL);
	/* The pool first, then the operators */
	for (int i = 0; i < nslots; i++)
		spawn_slot(&slots[i]);
	pthread_create(&spawner, NULL, spawner_fn, NULL);
	pthread_create(&checker, NULL, checker_fn, NULL);
	pthread_create(&freeze_watch, NULL, freeze_watch_fn, NULL);
	for (int i = 0; i < opt_operators; i++) {
		operators[i].idx = i;
		rng_seed(&operators[i].rng, opt_seed, i);
		pthread_create(&operators[i].th, NULL, operator_fn, &operators[i]);
	}

	if (opt_dl_hotplug || opt_no_hotplug) {
		atomic_store(&hotplug_allowed, !opt_no_hotplug);
		atomic_store(&dl_allowed, 1);
	}
	next_note = t_start + 10000000000ull;
	next_phase = t_start + (uint64_t)opt_phase_s * 1000000000ull;
	while (now_ns() < t_end && !atomic_load(&fatal)) {
		usleep(100000);
		if (!opt_dl_hotplug && !opt_no_hotplug && now_ns() >= next_phase) {
			if (atomic_load(&hotplug_allowed))
				phase_deadline();
			else
				phase_hotplug();
			next_phase = now_ns() + (uint64_t)opt_phase_s * 1000000000ull;
		}
		{
			long total = 0;

			for (int i = 0; i < NR_OPS; i++)
				total += op_count[i];
			if (total != last_total) {
				last_total = total;
				last_progress = now_ns();
			} else if (now_ns() - last_progress > 30000000000ull && !stall_dumped) {
				/* Reads of /proc only: no grace period, no cgroup or hotplug lock */
				stall_dumped = 1;
				note("STALL: no operation finished for 30 s; every pool task follows");
				for (int i = 0; i < nslots; i++)
					if (slots[i].state == S_ALIVE)
						dump_task(slots[i].pid);
				write_file("/proc/sysrq-trigger", "w");
			}
		}
		if (now_ns() >= next_note) {
			long total = 0;

			for (int i = 0; i < NR_OPS; i++)
				total += op_count[i];
			note("t=%.0fs: %ld operations, %ld tasks created, %ld kills (worst %.0f ms), %ld hotplug cycles, %d CPUs online, %s phase",
			     (now_ns() - t_start) / 1e9, total, (long)(st_spawned + st_transients),
			     (long)st_kills, st_kill_worst_ns / 1e6, (long)st_hp_cycles, nr_online(),
			     opt_dl_hotplug ? "mixed" : atomic_load(&hotplug_allowed) ? "hotplug" : "deadline");
			next_note += 10000000000ull;
		}
	}
	t_ops_end = now_ns();
	atomic_store(&stopping, 1);
	note("stopping the operators");
	for (int i = 0; i < opt_operators; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 120;
		if (pthread_timedjoin_np(operators[i].th, NULL, &ts)) {
			violation(INV_CLEANUP, "operator %d did not stop within 120 s", i);
			atomic_store(&fatal, 1);
		}
	}
	atomic_store(&checker_stop, 1);
	pthread_join(checker, NULL);
	/*
	 * Each freeze still pending is judged before the pool's end thaws it:
	 * the watcher goes on until it is frozen or past the hang bound
	 */
	for (uint64_t t = now_ns(); cg_ok && now_ns() - t < ((uint64_t)opt_hang_ms + 1000) * 1000000ull;) {
		int n;

		pthread_mutex_lock(&freeze_lock);
		n = freezes_pending();
		pthread_mutex_unlock(&freeze_lock);
		if (!n)
			break;
		usleep(100000);
	}
	atomic_store(&freeze_watch_stop, 1);
	pthread_join(freeze_watch, NULL);
	/* A last look at every thread, then the end of the pool */
	check_all_slots();
	note("killing the pool");
	kill_everything();
	for (int i = 0; i < 1200 && outstanding(); i++) {
		usleep(100000);
		if (i % 50 == 49)
			kill_everything();	/* a forker may have forked meanwhile */
	}
	if (outstanding()) {
		violation(INV_LOST, "%d of our tasks not reaped 120 s after SIGKILL", outstanding());
		for (int i = 0; i < nslots; i++)
			if (slots[i].state == S_ALIVE)
				dump_task(slots[i].pid);
	}
	/* Orphans the cgroup.kill took: wait until no child is left */
	atomic_store(&reaper_stop, 1);
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 60;
		if (pthread_timedjoin_np(reaper, NULL, &ts))
			violation(INV_LOST, "children still not reaped 60 s after the pool was killed");
	}
	atomic_store(&watchdog_stop, 1);
	pthread_join(watchdog, NULL);
	atomic_store(&spawner_exit, 1);
	pthread_join(spawner, NULL);

	atomic_fetch_add(&inv_checks[INV_LOST], 1);
	if (children_left(1))
		violation(INV_LOST, "/proc shows children of the fuzzer after the end");
	if (atomic_load(&st_reaped) != atomic_load(&st_spawned) + atomic_load(&st_transients))
		violation(INV_LOST, "created %ld tasks, reaped %ld",
			  (long)(st_spawned + st_transients), (long)st_reaped);

	atomic_fetch_add(&inv_checks[INV_CLEANUP], 1);
	if (cleanup_system())
		violation(INV_CLEANUP, "the system was not restored (see above)");

	/* Final counters, every CPU online, nothing of ours left */
	{
		struct cpustat cs[MAX_CPUS];
		int left = idlebatch_tasks_left(1), n;
		long long parks, unparks;

		check_parks_sum(1);
		n = read_batchstat(cs, why, sizeof(why));
		atomic_fetch_add(&inv_checks[INV_FINAL], 1);
		if (n < 0) {
			violation(INV_FINAL, "/proc/batchstat: %s", why);
		} else {
			parks = sum_parks(cs, &unparks);
			note("/proc/batchstat: %lld parks and %lld unparks during the run (%d CPUs listed)",
			     parks - sum_parks(cpu_first, NULL), unparks, n);
			if (left)
				note("%d idle-batch tasks not ours are left: parks == unparks not checked", left);
			else if (n == ncpus && parks != unparks)
				violation(INV_FINAL, "no idle-batch task left, but %lld parks and %lld unparks since boot",
					  parks, unparks);
			for (int c = 0; c < MAX_CPUS; c++)
				if (cs[c].present && (cs[c].queued || cs[c].running) && !left)
					violation(INV_FINAL, "cpu%d: %lld queued and %lld running with no idle-batch task",
						  c, cs[c].queued, cs[c].running);
			if (verbose)
				dump_file("/proc/batchstat", "final");
		}
		if (!left) {
			atomic_fetch_add(&inv_checks[INV_LOST], 1);
		}
	}
	failed = report((t_ops_end - t_start) / 1e9);
	return failed ? 1 : 0;
}
