#!/usr/bin/env bash
# The in-guest tests for idle-batch tasks on a nohz_full CPU
# (tests/kernel/nohz/*.c): the test kernel has NO_HZ_FULL built in, and
# this guest boots with nohz_full=1 so that the tests have their CPU.
exec env GUEST_APPEND="nohz_full=1 ${GUEST_APPEND:-}" \
	GUEST_BIN="$(cd "$(dirname "$0")/../.." && pwd)/build/tests/kernel-nohz" \
	"$(dirname "$0")/guest.t" "$@"
