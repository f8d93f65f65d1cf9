#!/usr/bin/env bash
# The in-guest tests that need NUMA nodes (tests/kernel/numa/*.c): the
# balancer across nodes.  The test kernel has NUMA; the guest has 4 CPUs
# in 2 nodes, CPUs 0-1 and 2-3.
exec env GUEST_SMP=4 GUEST_NUMA=2 \
	GUEST_BIN="$(cd "$(dirname "$0")/../.." && pwd)/build/tests/kernel-numa" \
	"$(dirname "$0")/guest.t" "$@"
