#!/usr/bin/env bash
# The in-guest tests that need NUMA nodes (tests/kernel/numa/*.c): the
# balancer across nodes.  The variant kernel has NUMA; the guest has 4
# CPUs in 2 nodes, CPUs 0-1 and 2-3.
exec "$(dirname "$0")/on-variant" numa GUEST_SMP=4 GUEST_NUMA=2 -- "$@"
