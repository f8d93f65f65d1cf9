#!/usr/bin/env bash
# The idle-batch balancer's tests (tests/kernel/smp4/*.c) in one boot of a
# 4-CPU guest, the machine the seed's demonstration assumes.
exec env GUEST_SMP=4 GUEST_BIN="$(cd "$(dirname "$0")/../.." && pwd)/build/tests/kernel-smp4" \
	"$(dirname "$0")/guest.t" "$@"
