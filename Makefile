# SCHED_IDLEBATCH: an idle-priority scheduling policy for Linux 6.12 that
# never parks a task inside the kernel.  See README.md.
#
#   make demo     build everything and show the policy at work in a guest
#   make check    build everything and run every test (host and guest)
#
# Variables:
#   KSRC=DIR      use your own clean Linux 6.12 tree instead of Debian's
#                 linux-source-6.12 (it is copied, never modified)
#   PREEMPT=M     kernel preemption model: full (default), voluntary, none
#   T=PATTERN     with 'make check': run only tests whose path matches
#   SANITIZE=S    with 'make kernel': the test kernel with a sanitizer,
#                 kasan, kcsan or ubsan (+KFENCE): build/bzImage-san-S

BUILD   := build
PREEMPT ?= full
KSRC    ?=
T       ?=
SANITIZE ?=

TREE    := $(BUILD)/linux
KERNEL  := $(BUILD)/bzImage-$(PREEMPT)

.PHONY: all deps kernel-tree kernel kernel-distro check-distro deb check-deb kernel-ext check-ext kernel-soak series export-patches tools plugins install install-system install-user uninstall uninstall-system uninstall-user fixture screenshot tests check check-preempt stress fuzz trinity abuse selftests selftests-ext sanitize soak demo bench bench-scale vm clean distclean

all: kernel tools plugins tests

deps:
	@scripts/deps.sh

kernel-tree: deps
	@scripts/kernel-tree.sh $(BUILD) $(KSRC)

kernel: kernel-tree
ifeq ($(SANITIZE),)
	@scripts/kernel-build.sh $(BUILD) $(PREEMPT)
else
	@[ -f tests/config/sanitize-$(SANITIZE).config ] || \
		{ echo "make kernel: SANITIZE must be kasan, kcsan or ubsan (got '$(SANITIZE)')" >&2; exit 2; }
	@scripts/kernel-build.sh $(BUILD) $(PREEMPT) san-$(SANITIZE) tests/config/sanitize-$(SANITIZE).config
	@echo "make kernel: $(BUILD)/bzImage-san-$(SANITIZE) (run the suites on it: VM_KERNEL=$(BUILD)/bzImage-san-$(SANITIZE) tests/run-all tests/kernel/)"
endif

# The distribution's kernel: Debian's own configuration (linux-config-6.12,
# or DISTRO_CONFIG=FILE) with the series and the policy on, the 9p and
# virtio drivers the guest needs built in, nothing else changed:
# build/bzImage-distro.  No modules are built (make bzImage); Debian's
# 4,000 modules would all be built in with CONFIG_MODULES off.
DISTRO_CONFIG ?= /usr/src/linux-config-6.12/config.amd64_none_amd64.xz
kernel-distro: kernel-tree
	@scripts/deps.sh --distro
	@BASE_CONFIG=$(DISTRO_CONFIG) DEBUG_CONFIG=0 scripts/kernel-build.sh $(BUILD) asis distro tests/config/distro.config

# On that kernel: the policy's in-guest suites under each preemption
# model chosen at boot (voluntary, full, none) and with nohz_full=, and
# work started by crun and systemd (tests/distro/): about four
# test-kernel suite runs, so not part of 'make check'.
check-distro: deps kernel-distro tools tests
	@scripts/deps.sh --distro
	@tests/run-all tests/distro/

# Debian packages of the patched kernel (linux-image, linux-headers,
# linux-libc-dev) in build/deb/, from KCONFIG=FILE, or by default the
# running kernel's configuration when it is a 6.12 one, otherwise
# Debian's own (scripts/deb-build.sh).
KCONFIG ?=
deb: kernel-tree
	@scripts/deps.sh --deb
	@scripts/deb-build.sh $(BUILD) $(KCONFIG)

# make deb's packages from the small test configuration, unpacked and
# booted in the guest (tests/deb/package.t); not in make check: a cold
# package build is as long as a test-kernel build.
check-deb: kernel tools
	@scripts/deps.sh --deb
	@tests/run-all tests/deb/

# The test kernel with sched_ext and BTF (twice as long to build):
# build/bzImage-ext, for make check-ext.
kernel-ext: kernel-tree
	@scripts/kernel-build.sh $(BUILD) full ext tests/config/ext.config

# One patch series, new files included, for 'git am' on a clean 6.12 tree.
series: kernel-tree
	@scripts/series.sh $(BUILD)

# Write the commits made in build/linux back into patch/ (developers).
export-patches:
	@scripts/export-patches.sh $(BUILD)

# The tools (setbatch): build/tools/, and sanitized builds for the tests.
tools:
	@$(MAKE) -s -C tools BUILD=$(abspath $(BUILD))

# The trace-cmd (libtraceevent) and KernelShark plugins: build/plugins/.
plugins:
	@$(MAKE) -s -C plugins BUILD=$(abspath $(BUILD))

# make install: as root system-wide (the tools in /usr/local, the plugins
# where trace-cmd and KernelShark look for them), otherwise for this user
# (~/.local); install-system and install-user pick one.
install:
	@if [ "$$(id -u)" -eq 0 ]; then $(MAKE) -s install-system; else $(MAKE) -s install-user; fi

install-system install-user uninstall-system uninstall-user: tools plugins
	@$(MAKE) -s -C tools BUILD=$(abspath $(BUILD)) $@
	@$(MAKE) -s -C plugins BUILD=$(abspath $(BUILD)) $@

uninstall:
	@if [ "$$(id -u)" -eq 0 ]; then $(MAKE) -s uninstall-system; else $(MAKE) -s uninstall-user; fi

# docs/kernelshark-sched_batch.png: KernelShark with the plugin, under Xvfb.
screenshot: plugins
	@scripts/deps.sh --gui
	@scripts/kernelshark-screenshot.sh

# Record a new small trace of the policy for the plugins' host tests.
fixture: deps kernel tests
	@VM_KERNEL=$(abspath $(KERNEL)) tests/trace/record tests/fixtures/sched_batch.dat

# Test programs: host-side unit tests and the in-guest kernel tests.
tests: kernel-tree
	@$(MAKE) -s -C tests BUILD=$(abspath $(BUILD))

check: deps kernel tools plugins tests
	@VM_KERNEL=$(abspath $(KERNEL)) tests/run-all $(T)

# The in-guest kernel tests under each preemption model: three kernels,
# so not part of 'make check'.
check-preempt: deps kernel-tree tests
	@failed=""; for m in full voluntary none; do \
		scripts/kernel-build.sh $(BUILD) $$m || exit 1; \
		echo "# ==== PREEMPT=$$m"; \
		VM_KERNEL=$(abspath $(BUILD))/bzImage-$$m tests/run-all tests/kernel/ || failed="$$failed $$m"; \
	done; \
	[ -z "$$failed" ] || { echo "# FAILED under PREEMPT:$$failed"; exit 1; }

# Idle-batch tasks under sched_ext BPF schedulers (tools/sched_ext's
# scx_simple and scx_qmap, built with Debian's clang-19): its own kernel,
# so not part of 'make check'.
check-ext: deps kernel-ext tests
	@scripts/build-scx.sh $(BUILD)/obj-ext $(BUILD)/scx $(TREE)
	@tests/kernel/ext-check

demo: deps kernel tools tests
	@VM_KERNEL=$(abspath $(KERNEL)) tests/demo/run

# Suites written by others and a CPU hotplug storm, long versions (make
# check runs short ones): stress-ng's scheduler stressors with idle-batch
# workers, all at once and each alone, STRESS_SECONDS each, on idle CPUs
# and next to normal hogs, plus pi_stress and cyclictest, on a 4-CPU guest
# under each preemption model: one PREEMPT_DYNAMIC build of the test
# kernel (lockdep and all) booted with preempt=full, voluntary and none,
# each boot checking the model in force; then HOTPLUG_CYCLES
# offline/online cycles of each of CPUs 1-3 under idle-batch tasks of
# every kind.
STRESS_SECONDS ?= 30
HOTPLUG_CYCLES ?= 100
STRESS_MODELS ?= full voluntary none
stress: deps kernel-tree tools tests
	@scripts/kernel-build.sh $(BUILD) dynamic
	@failed=""; for m in $(STRESS_MODELS); do \
		echo "# ==== preempt=$$m"; \
		STRESS_SMP=4 STRESS_APPEND=preempt=$$m VM_KERNEL=$(abspath $(BUILD))/bzImage-dynamic \
			tests/kernel/stress.t --seconds $(STRESS_SECONDS) --sequential \
			--expect-preempt $$m || failed="$$failed $$m"; \
	done; \
	echo "# ==== hotplug storm: $(HOTPLUG_CYCLES) cycles of each CPU"; \
	VM_KERNEL=$(abspath $(BUILD))/bzImage-dynamic GUEST_ENV=HOTPLUG_CYCLES=$(HOTPLUG_CYCLES) \
		tests/kernel/balance.t idlebatch_hotplug || failed="$$failed hotplug"; \
	[ -z "$$failed" ] || { echo "# FAILED:$$failed"; exit 1; }

# The policy's concurrent fuzzer (tests/fuzz/idlebatch_fuzz.c), long:
# FUZZ_RUNS runs of FUZZ_SECONDS each on the test kernel, each with a new
# seed (printed with the command that reproduces it); SEED=N for one run
# with that seed.  make check runs 30 s with seed 7 (tests/kernel/fuzz.t).
FUZZ_SECONDS ?= 300
FUZZ_RUNS ?= 3
fuzz: deps kernel tests
	@failed=""; for i in $$(seq $(FUZZ_RUNS)); do \
		seed=$${SEED:-$$(( $$(date +%s%N) / 1000 % 1000000 ))}; \
		tests/fuzz/run --seed $$seed --seconds $(FUZZ_SECONDS) --smp 4 || failed="$$failed $$seed"; \
		[ -z "$(SEED)" ] || break; \
	done; \
	[ -z "$$failed" ] || { echo "# FAILED seeds:$$failed"; exit 1; }

# trinity, the system-call fuzzer, as nobody with idle-batch processes
# behind a normal load, aimed at the scheduler's system calls, for
# TRINITY_SECONDS (default 600) on 4 CPUs; SEED=N picks trinity's seed
# (default: a new one, printed: the same seed repeats the calls each child
# makes, not their interleaving).  make check runs 30 s (tests/kernel/trinity.t).
TRINITY_SECONDS ?= 600
trinity: deps kernel tools tests
	@seed=$${SEED:-$$(( $$(date +%s%N) / 1000 % 1000000 ))}; \
	echo "# trinity seed $$seed: make trinity SEED=$$seed reproduces it"; \
	TRINITY_SMP=4 VM_KERNEL=$(abspath $(KERNEL)) tests/kernel/trinity.t \
		--seconds $(TRINITY_SECONDS) --seed $$seed --children 8

# The kernel's own selftests (scripts/build-selftests.sh: sched, futex,
# rseq, timers, cgroup, ptrace, sigaltstack, pidfd, proc, membarrier,
# clone3; sched_ext's need their own kernels: make selftests-ext), the
# whole list, three times: on a kernel built without the policy, on the
# test kernel as usual, and there with every test process idle-batch;
# then the three result sets side by side, tests and subtests
# (tests/selftests/compare, with the differences tests/selftests/excuses.sh
# excuses).  The tests
# that need SMT siblings (core scheduling's) run the same three ways in a
# guest of one core's two threads.
# About 70 minutes under TCG.  make check runs the short subset in the
# last two ways (tests/kernel/selftests.t).
selftests: deps kernel tools tests
	@SCHED_EXT=0 scripts/build-selftests.sh $(BUILD)
	@scripts/kernel-build.sh $(BUILD) $(PREEMPT) idlebatch-off tests/config/idlebatch-off.config
	@r=$(BUILD)/selftests/results f=0; \
	tests/selftests/run --kernel $(BUILD)/bzImage-idlebatch-off normal $$r/off-normal || f=1; \
	tests/selftests/run --kernel $(abspath $(KERNEL)) normal $$r/on-normal || f=1; \
	tests/selftests/run --kernel $(abspath $(KERNEL)) idlebatch $$r/on-idlebatch || f=1; \
	tests/selftests/compare-excused --subtests \
		off=$$r/off-normal on=$$r/on-normal on-idlebatch=$$r/on-idlebatch || f=1; \
	tests/selftests/run --kernel $(BUILD)/bzImage-idlebatch-off --smt normal $$r/off-smt || f=1; \
	tests/selftests/run --kernel $(abspath $(KERNEL)) --smt normal $$r/on-smt || f=1; \
	tests/selftests/run --kernel $(abspath $(KERNEL)) --smt idlebatch $$r/on-idlebatch-smt || f=1; \
	tests/selftests/compare-excused --subtests \
		off=$$r/off-smt on=$$r/on-smt on-idlebatch=$$r/on-idlebatch-smt || f=1; \
	exit $$f

# sched_ext's selftests (tools/testing/selftests/sched_ext, built with
# clang-19 against the BTF of make kernel-ext's kernel) the same three
# ways: on that kernel built without the policy (bzImage-ext-off), on it
# as usual, and there with every test process idle-batch, whose tasks the
# tests' BPF schedulers then take over.  Two kernels with debug info and
# BTF: about 20 minutes each to build here, then 2 minutes each to run.
selftests-ext: deps kernel-ext tools tests
	@scripts/kernel-build.sh $(BUILD) full ext-off tests/config/ext.config tests/config/idlebatch-off.config
	@SELFTESTS_DIR=$(BUILD)/selftests-ext TARGETS=sched scripts/build-selftests.sh $(BUILD)
	@test -x $(BUILD)/selftests-ext/install/sched_ext/runner || \
		{ echo "selftests-ext: sched_ext's selftests did not build (see $(BUILD)/selftests-ext/build.log)" >&2; exit 1; }
	@r=$(BUILD)/selftests/results i=$(BUILD)/selftests-ext/install f=0; \
	tests/selftests/run --install $$i --tests sched_ext --test-timeout 1200 --kernel $(BUILD)/bzImage-ext-off normal $$r/ext-off-normal || f=1; \
	tests/selftests/run --install $$i --tests sched_ext --test-timeout 1200 --kernel $(BUILD)/bzImage-ext normal $$r/ext-normal || f=1; \
	tests/selftests/run --install $$i --tests sched_ext --test-timeout 1200 --kernel $(BUILD)/bzImage-ext idlebatch $$r/ext-idlebatch || f=1; \
	tests/selftests/compare-excused --subtests \
		off=$$r/ext-off-normal on=$$r/ext-normal on-idlebatch=$$r/ext-idlebatch || f=1; \
	exit $$f

# The suites on sanitizer kernels: for each of SANITIZERS (default kasan
# kcsan ubsan), build the test kernel with it (make kernel SANITIZE=...)
# and run the fuzzer, the stress mix, trinity (SAN_SECONDS each, default
# 60) and the in-guest kernel tests on it (tests/sanitize/run).  Any
# KASAN or UBSAN report fails it, and a KCSAN report that involves the
# series (tests/sanitize/kcsan-triage).  Hours: each kernel builds from
# scratch.
SANITIZERS ?= kasan kcsan ubsan
SAN_SECONDS ?= 60
sanitize: deps kernel-tree tools tests
	@for s in $(SANITIZERS); do \
		$(MAKE) --no-print-directory kernel SANITIZE=$$s || exit 1; \
	done
	@tests/sanitize/run --seconds $(SAN_SECONDS) $(SANITIZERS)

# Unprivileged abuse: nobody's tasks storm fork/exit, a shared mm's
# mmap_lock, a file's flock and POSIX locks, a FIFO, plain and PI futexes,
# at nice 19 and as idle-batch in one run; a normal task's worst stall next
# to idle-batch must stay within nice 19's, and kills must be quick
# (tests/bench/abuse_bench.c, ABUSE_SECONDS a cell, ABUSE_ROUNDS rounds).
# make check runs 5 rounds of 0.75 s cells (tests/kernel/abuse.t).
ABUSE_SECONDS ?= 3
ABUSE_ROUNDS ?= 5
ABUSE_SMP ?= 2
abuse: deps kernel tests
	@ABUSE_SECONDS=$(ABUSE_SECONDS) ABUSE_ROUNDS=$(ABUSE_ROUNDS) ABUSE_SMP=$(ABUSE_SMP) \
		VM_KERNEL=$(abspath $(KERNEL)) tests/kernel/abuse.t

# The soak: the fuzzer, stress-ng rounds, a CPU hotplug storm and a
# normal-task latency probe together for DURATION seconds (default 1800),
# with a summary (tests/kernel/soak.t; make check runs 2 minutes on the
# test kernel).  It runs on the test kernel (lockdep and all) with RCU
# priority boosting, build/bzImage-soak (tests/config/rcu-boost.config
# says why).  SEED=N picks the fuzzer's seed (default 11); BASELINE=1
# runs it without the policy.
DURATION ?= 1800
kernel-soak: kernel-tree
	@scripts/kernel-build.sh $(BUILD) full soak tests/config/rcu-boost.config

soak: deps kernel-soak tools tests
	@SOAK_SECONDS=$(DURATION) SOAK_SEED=$(or $(SEED),11) SOAK_BASELINE=$(or $(BASELINE),0) VM_KERNEL=$(abspath $(BUILD))/bzImage-soak tests/kernel/soak.t

# Benchmarks (not tests): every peer against the foreground alone, measured
# in the same run, on kernels without the debug options; tables and plots
# in build/bench/report.md (tests/bench/run-all).  QUICK=1: fewer peers and
# shorter windows, under 5 minutes once the kernels are built.
bench: deps kernel-tree tests
	@tests/bench/run-all $(if $(filter 1 yes,$(QUICK)),--quick)

# The balancer on a bigger guest: 16 CPUs in 2 NUMA nodes, on the test
# kernel (which has NUMA); SCALE_KERNEL=path for another, such as the same
# configuration with the policy off.  Long under TCG: not in 'make bench'.
SCALE_KERNEL ?= $(KERNEL)
bench-scale: deps kernel tests
	@tests/vm/run --kernel $(SCALE_KERNEL) --smp 16 --numa 2 --mem 2048 --timeout 3000 -- build/tests/bin/balscale $(SCALE_ARGS)

vm: deps kernel
	@tests/vm/run --kernel $(KERNEL) --smp 4 --shell

clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/bzImage-* $(BUILD)/vm $(BUILD)/tests $(BUILD)/series

distclean:
	rm -rf $(BUILD)
