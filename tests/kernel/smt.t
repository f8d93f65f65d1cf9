#!/usr/bin/env bash
# The in-guest tests that need SMT siblings (tests/kernel/smt/*.c): core
# scheduling.  The variant kernel (make kernel-variant) has SCHED_SMT and
# SCHED_CORE; the guest is one core with two threads, CPUs 0 and 1.
# QEMU warns that its AMD-like TCG CPU "doesn't support hyperthreading";
# the guest sees the two siblings all the same, and the tests check that.
top=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${VM_KERNEL_VARIANT:-$top/build/bzImage-variant}
if [ ! -f "$kernel" ]; then
	echo "not ok 1 - variant kernel $kernel is missing: run 'make kernel-variant'"
	echo "1..1"
	exit 1
fi
exec env VM_KERNEL="$kernel" GUEST_SMP=2 GUEST_TOPOLOGY=sockets=1,cores=1,threads=2 \
	GUEST_BIN="$top/build/tests/kernel-smt" "$(dirname "$0")/guest.t" "$@"
