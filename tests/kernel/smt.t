#!/usr/bin/env bash
# The in-guest tests that need SMT siblings (tests/kernel/smt/*.c): core
# scheduling.  The test kernel has SCHED_SMT and SCHED_CORE; the guest is
# one core with two threads, CPUs 0 and 1.  QEMU warns that its AMD-like
# TCG CPU "doesn't support hyperthreading"; the guest sees the two siblings
# all the same, and the tests check that.
exec env GUEST_SMP=2 GUEST_TOPOLOGY=sockets=1,cores=1,threads=2 \
	GUEST_BIN="$(cd "$(dirname "$0")/../.." && pwd)/build/tests/kernel-smt" \
	"$(dirname "$0")/guest.t" "$@"
