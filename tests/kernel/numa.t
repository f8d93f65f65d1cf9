#!/usr/bin/env bash
# The in-guest tests that need NUMA nodes (tests/kernel/numa/*.c): the
# balancer across nodes.  The variant kernel (make kernel-variant) has NUMA;
# the guest has 4 CPUs in 2 nodes, CPUs 0-1 and 2-3.
top=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${VM_KERNEL_VARIANT:-$top/build/bzImage-variant}
if [ ! -f "$kernel" ]; then
	echo "not ok 1 - variant kernel $kernel is missing: run 'make kernel-variant'"
	echo "1..1"
	exit 1
fi
exec env VM_KERNEL="$kernel" GUEST_SMP=4 GUEST_NUMA=2 \
	GUEST_BIN="$top/build/tests/kernel-numa" "$(dirname "$0")/guest.t" "$@"
